package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/sluicehq/sluice/runtime"
)

// JetStreamStore keeps a run's checkpoints in the broker's JetStream
// object store (a broker started with --store DIR), one object per run
// name, replaced by each checkpoint: they outlive the workers and a
// restart of the broker. Each user has a bucket of its own
// (CheckpointBucket), which the broker creates when the user first asks
// for it and which no other client may read, write or delete (the
// permissions of subjects.go), so a client needs no admin role to
// checkpoint.
type JetStreamStore struct {
	c      *Client
	js     jetstream.JetStream // one for the store's life: its acknowledgements' subscription too
	name   string
	bucket string
	stopBy time.Time // every operation ends by then (zero: no bound)
	// Logf, when set, is told while a checkpoint's save goes unanswered:
	// after StoreAttempt, then every 5 s (a broker restarted without its
	// store keeps a save waiting until StopBy's time).
	Logf func(format string, args ...any)

	mu sync.Mutex
	// orphans are, by object, the chunk ids of saves that failed: their
	// chunks may have reached the broker (and their meta message too, its
	// acknowledgement lost), so they are purged only once a later save of
	// the object has had its meta message acknowledged after them.
	orphans map[string][]string
}

// ErrCheckpointDamaged is the cause of reading a checkpoint whose stored
// chunks are missing or differ from what its description says: the
// broker answered, and the checkpoint cannot be resumed from.
var ErrCheckpointDamaged = errors.New("the checkpoint is damaged")

// errStopBy is the cause of a store operation that StopBy's time ended.
var errStopBy = errors.New("the checkpoint store's time is up (the run's time limit)")

// StopBy ends every operation of the store by t (a run's --max-time): one
// still waiting for the broker then fails. The runtime lets a checkpoint
// being saved go on after its run ends; this bounds that too.
func (s *JetStreamStore) StopBy(t time.Time) { s.stopBy = t }

// bound returns ctx ending by StopBy's time too.
func (s *JetStreamStore) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.stopBy.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadlineCause(ctx, s.stopBy, errStopBy)
}

// NewJetStreamStore returns the store of the checkpoints named name of
// the user c is connected as, on the broker c is connected to; it fails
// when the broker has no JetStream (no --store).
func NewJetStreamStore(ctx context.Context, c *Client, name string) (*JetStreamStore, error) {
	if name == "" || strings.ContainsAny(name, " \t\n*>") {
		return nil, fmt.Errorf("checkpoint store name %q: expected a name without spaces, * or >", name)
	}
	// A lost acknowledgement is given up after twice StoreAttempt's
	// request bound: putChunks has stopped waiting for it by then.
	js, err := jetstream.New(c.nc, jetstream.WithPublishAsyncTimeout(2*storeAPITimeout))
	if err != nil {
		return nil, err
	}
	s := &JetStreamStore{c: c, js: js, name: name, bucket: CheckpointBucket(c.user)}
	if _, err := s.open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Bucket names the store's JetStream object store bucket (its user's).
func (s *JetStreamStore) Bucket() string { return s.bucket }

// objects is the user's bucket: its object store and its stream.
type objects struct {
	js     jetstream.JetStream
	ob     jetstream.ObjectStore
	stream jetstream.Stream
}

// storeAPITimeout bounds the requests that find the user's bucket: a
// request sent just before the broker went away gets no answer, and a
// checkpoint being saved would otherwise hold the run's end (and its
// recovery) for the whole of its caller's time.
const storeAPITimeout = 5 * time.Second

// open binds to the user's bucket, asking the brokers to create it when
// it does not exist yet.
func (s *JetStreamStore) open(ctx context.Context) (*objects, error) {
	ctx, cancel := context.WithTimeout(ctx, storeAPITimeout)
	defer cancel()
	o, err := s.bind(ctx, s.js)
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrBucketNotFound) {
		if err = s.create(ctx, s.js); err == nil {
			o, err = s.bind(ctx, s.js)
		}
	}
	if err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("broker %s keeps no checkpoints: start it with --store DIR (JetStream): %w", redact(s.c.url), err)
		}
		return nil, fmt.Errorf("checkpoint store %s on broker %s: %w", s.bucket, redact(s.c.url), err)
	}
	return o, nil
}

func (s *JetStreamStore) bind(ctx context.Context, js jetstream.JetStream) (*objects, error) {
	st, err := js.Stream(ctx, checkpointStream(s.c.user))
	if err != nil {
		return nil, err
	}
	ob, err := js.ObjectStore(ctx, s.bucket)
	if err != nil {
		return nil, err
	}
	return &objects{js: js, ob: ob, stream: st}, nil
}

// create asks the brokers to make the user's bucket (a broker with
// --store answers); where none answers (a JetStream server that is not a
// sluice broker), the connection creates it itself, which only a user
// allowed to create streams (an admin, or any user without --auth) can.
func (s *JetStreamStore) create(ctx context.Context, js jetstream.JetStream) error {
	m, err := s.c.nc.RequestWithContext(ctx, ckptOpenSubject(s.c.user), nil)
	if errors.Is(err, nats.ErrNoResponders) {
		_, err = js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: s.bucket, Description: "sluice checkpoints of user " + s.c.user, Storage: jetstream.FileStorage})
		return err
	}
	if err != nil {
		return fmt.Errorf("asking the brokers for checkpoint bucket %s: %w", s.bucket, err)
	}
	var rep ckptOpenReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return fmt.Errorf("asking the brokers for checkpoint bucket %s: expected a JSON answer: %w", s.bucket, err)
	}
	if rep.Error != "" {
		return errors.New(rep.Error)
	}
	return nil
}

// Save replaces the run's checkpoint with cp.
func (s *JetStreamStore) Save(ctx context.Context, cp *runtime.Checkpoint) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	data, err := runtime.EncodeCheckpoint(cp)
	if err != nil {
		return err
	}
	defer s.watch(ctx, fmt.Sprintf("checkpoint %d", cp.ID))()
	o, err := s.open(ctx)
	if err != nil {
		return err
	}
	if err := s.put(ctx, o, s.name, data); err != nil {
		return fmt.Errorf("storing checkpoint %d as %s/%s: %w", cp.ID, s.bucket, s.name, err)
	}
	return nil
}

// chunkSubject is the subject of the chunks of an object of bucket whose
// chunks are named id, and metaSubject that of the description of the
// object named name (the object store's layout).
func chunkSubject(bucket, id string) string { return "$O." + bucket + ".C." + id }

func metaSubject(bucket, name string) string {
	return "$O." + bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(name))
}

// chunkSize is the size of the messages an object is stored in (the
// object store's default).
const chunkSize = 128 << 10

// put stores data as object name of the bucket in the object store's
// layout, safe against a broker lost at any moment: every chunk is
// acknowledged before the meta message that names them is sent, and
// nothing is purged that a stored meta message may name. (nats.go's
// ObjectStore.Put sends the meta message with the chunks and, when any
// acknowledgement is lost, purges the new chunks although the meta
// message naming them may have been stored: a broker killed then left a
// checkpoint naming chunks that were gone.) The object's previous chunks
// and those of failed saves are purged once the new meta message is
// acknowledged.
func (s *JetStreamStore) put(ctx context.Context, o *objects, name string, data []byte) error {
	prev, err := o.ob.GetInfo(ctx, name, jetstream.GetObjectInfoShowDeleted())
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return err
	}
	id := nuid.Next()
	if err := s.putChunks(ctx, o, id, data); err != nil {
		s.orphan(name, id)
		return err
	}
	sum := sha256.Sum256(data)
	info := jetstream.ObjectInfo{
		ObjectMeta: jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunkSize}},
		Bucket:     s.bucket, NUID: id, Size: uint64(len(data)),
		Chunks: uint32((len(data) + chunkSize - 1) / chunkSize),
		Digest: "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:]),
	}
	mm := nats.NewMsg(metaSubject(s.bucket, name))
	mm.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	if mm.Data, err = json.Marshal(info); err != nil {
		return err
	}
	if _, err := o.js.PublishMsg(ctx, mm); err != nil {
		// It may be stored all the same: its chunks stay until a later
		// save lands, and then go with the ones it replaced.
		s.orphan(name, id)
		if prev != nil && !prev.Deleted {
			s.orphan(name, prev.NUID)
		}
		return err
	}
	s.mu.Lock()
	stale := s.orphans[name]
	delete(s.orphans, name)
	s.mu.Unlock()
	if prev != nil && !prev.Deleted {
		stale = append(stale, prev.NUID)
	}
	for _, old := range stale {
		if old != id {
			// A purge that fails leaves unread chunks, not a damaged checkpoint.
			_ = o.stream.Purge(ctx, jetstream.WithPurgeSubject(chunkSubject(s.bucket, old)))
		}
	}
	return nil
}

// orphan notes the chunk id of a failed save of object name.
func (s *JetStreamStore) orphan(name, id string) {
	s.mu.Lock()
	if s.orphans == nil {
		s.orphans = map[string][]string{}
	}
	s.orphans[name] = append(s.orphans[name], id)
	s.mu.Unlock()
}

// chunkWindow is how many chunks a save has in flight at most (8 MiB).
const chunkWindow = 64

// putChunks publishes data as the chunks of id, chunkWindow at a time, and
// waits for every acknowledgement; it fails when ctx ends or when no
// acknowledgement comes for storeAPITimeout.
func (s *JetStreamStore) putChunks(ctx context.Context, o *objects, id string, data []byte) error {
	subj := chunkSubject(s.bucket, id)
	n := (len(data) + chunkSize - 1) / chunkSize
	stall := time.NewTimer(storeAPITimeout)
	defer stall.Stop()
	for first := 0; first < n; first += chunkWindow {
		acks := make([]jetstream.PubAckFuture, 0, chunkWindow)
		for i := first; i < min(first+chunkWindow, n); i++ {
			f, err := o.js.PublishAsync(subj, data[i*chunkSize:min((i+1)*chunkSize, len(data))])
			if err != nil {
				return fmt.Errorf("chunk %d of %d: %w", i+1, n, err)
			}
			acks = append(acks, f)
		}
		for k, f := range acks {
			select {
			case <-f.Ok():
				stall.Reset(storeAPITimeout)
			case err := <-f.Err():
				return fmt.Errorf("chunk %d of %d: %w", first+k+1, n, err)
			case <-stall.C:
				return fmt.Errorf("chunk %d of %d: no acknowledgement for %s", first+k+1, n, storeAPITimeout)
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
	}
	return nil
}

// watch reports through Logf, while the operation what goes on, that the
// store has not answered: after StoreAttempt, then every 5 s, until the
// returned stop is called or ctx ends.
func (s *JetStreamStore) watch(ctx context.Context, what string) (stop func()) {
	if s.Logf == nil {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(exited)
		t := time.NewTimer(StoreAttempt)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				s.Logf("%s: the checkpoint store does not answer (nothing for %s): %s", what,
					time.Since(start).Round(time.Second), strings.Replace(retryingFor(ctx, time.Time{}), "retrying", "waiting", 1))
				t.Reset(5 * time.Second)
			}
		}
	}()
	return func() { close(done); <-exited }
}

// Latest returns the run's last checkpoint, nil when there is none.
func (s *JetStreamStore) Latest(ctx context.Context) (*runtime.Checkpoint, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	o, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	data, err := o.get(ctx, s.bucket, s.name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s/%s: %w", s.bucket, s.name, err)
	}
	return runtime.DecodeCheckpoint(data)
}

// get reads object name of bucket chunk by chunk with direct gets (no
// consumer: a client may not create one, subjects.go says why) and checks
// its size and SHA-256 digest. A chunk missing because a save replaced
// the object meanwhile is read again from the new one; a chunk missing
// from the object still described, or the wrong size or digest, is
// ErrCheckpointDamaged.
func (o *objects) get(ctx context.Context, bucket, name string) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		info, err := o.ob.GetInfo(ctx, name)
		if err != nil {
			return nil, err
		}
		data, err := o.chunks(ctx, bucket, info)
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return data, err
		}
		now, ierr := o.ob.GetInfo(ctx, name)
		if ierr != nil || now.NUID == info.NUID || attempt == 2 {
			return nil, fmt.Errorf("object %s: %w: %w", name, ErrCheckpointDamaged, err)
		}
	}
}

// chunks reads and checks the chunks info describes.
func (o *objects) chunks(ctx context.Context, bucket string, info *jetstream.ObjectInfo) ([]byte, error) {
	subj := chunkSubject(bucket, info.NUID)
	// The description is the bucket's to say: room for at most 64 MiB up
	// front, whatever size it claims.
	data := make([]byte, 0, min(info.Size, 64<<20))
	h := sha256.New()
	seq := uint64(1)
	for i := uint32(0); i < info.Chunks; i++ {
		m, err := o.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		if err != nil {
			return nil, fmt.Errorf("chunk %d of %d: %w", i+1, info.Chunks, err)
		}
		if uint64(len(data))+uint64(len(m.Data)) > info.Size {
			return nil, fmt.Errorf("object %s: %w: expected %d bytes, found more", info.Name, ErrCheckpointDamaged, info.Size)
		}
		data = append(data, m.Data...)
		h.Write(m.Data)
		seq = m.Sequence + 1
	}
	if uint64(len(data)) != info.Size {
		return nil, fmt.Errorf("object %s: %w: expected %d bytes, found %d", info.Name, ErrCheckpointDamaged, info.Size, len(data))
	}
	if got := jetstream.GetObjectDigestValue(h); got != info.Digest {
		return nil, fmt.Errorf("object %s: %w: expected digest %s, found %s", info.Name, ErrCheckpointDamaged, info.Digest, got)
	}
	return data, nil
}

// finishedObject names the object that marks the run named name finished.
func finishedObject(name string) string { return name + ".finished" }

// SaveFinished stores data as the mark that the run finished (what
// `sluice run --resume` reads to refuse re-running a finished run).
func (s *JetStreamStore) SaveFinished(ctx context.Context, data []byte) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	o, err := s.open(ctx)
	if err != nil {
		return err
	}
	if err := s.put(ctx, o, finishedObject(s.name), data); err != nil {
		return fmt.Errorf("marking run %s/%s finished: %w", s.bucket, s.name, err)
	}
	return nil
}

// LoadFinished returns the mark SaveFinished stored, nil when there is
// none.
func (s *JetStreamStore) LoadFinished(ctx context.Context) ([]byte, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	o, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	data, err := o.get(ctx, s.bucket, finishedObject(s.name))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s/%s: %w", s.bucket, finishedObject(s.name), err)
	}
	return data, nil
}
