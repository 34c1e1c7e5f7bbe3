package cluster

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// TestJetStreamStore: checkpoints saved in a broker's JetStream store
// outlive a restart of the broker; a broker without --store says so.
func TestJetStreamStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	b, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	url := b.ClientURL()
	cl := connect(t, url, Credentials{})
	s, err := NewJetStreamStore(ctx, cl, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if cp, err := s.Latest(ctx); cp != nil || err != nil {
		t.Fatalf("empty store: %v, %v", cp, err)
	}
	subs := cl.nc.NumSubscriptions()
	for id := int64(1); id <= 12; id++ {
		if err := s.Save(ctx, &runtime.Checkpoint{ID: id, Graph: "g", Iteration: 7 * id, Actors: map[string]runtime.ActorSnapshot{"a": {Firing: 7 * id, Impl: make([]byte, 3<<20)}}}); err != nil {
			t.Fatal(err)
		}
	}
	// One subscription for the acknowledgements, whatever the saves.
	if n := cl.nc.NumSubscriptions(); n > subs+1 {
		t.Fatalf("after 12 saves the client holds %d subscriptions, %d before: expected one more at most", n, subs)
	}
	cl.Close()
	b.Shutdown()

	listen := strings.TrimPrefix(url, "nats://")
	b2, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: listen, StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Shutdown()
	cl2 := connect(t, b2.ClientURL(), Credentials{})
	s2, err := NewJetStreamStore(ctx, cl2, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s2.Latest(ctx)
	if err != nil || cp == nil || cp.ID != 12 || cp.Actors["a"].Firing != 84 || len(cp.Actors["a"].Impl) != 3<<20 {
		t.Fatalf("after the broker's restart: %v, %v: expected checkpoint 12 of 3 MiB", cp, err)
	}

	plain, err := StartBroker(ctx, BrokerOptions{Name: "plain", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Shutdown()
	if _, err := NewJetStreamStore(ctx, connect(t, plain.ClientURL(), Credentials{}), "run-1"); err == nil || !strings.Contains(err.Error(), "start it with --store DIR") {
		t.Fatalf("store on a broker without JetStream: %v", err)
	}
}

// TestCheckpointsPerUser: under --auth, a client (not an admin) checkpoints
// a run into the broker's JetStream and resumes it from there: its bucket
// is its own, made by the broker on its first request, and the resumed
// run's output is the local run's. Another client has a bucket of its own
// and cannot read, write, purge or delete the first's, nor create a
// stream or a consumer (which could capture or redirect any subject): each
// attempt is a permission violation, and the first's checkpoint is intact.
func TestCheckpointsPerUser(t *testing.T) {
	auth := &Auth{Users: []User{
		{User: "alice", Password: "pa", Role: RoleClient},
		{User: "bob", Password: "pb", Role: RoleClient},
		{User: "w", Password: "pw", Role: RoleWorker},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	w1, err := StartWorker(ctx, WorkerOptions{Broker: b.ClientURL(), Creds: Credentials{User: "w", Password: "pw"}, Name: "w1", Devices: []device.Info{testCPU},
		HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w1.Close)
	alice := connect(t, b.ClientURL(), Credentials{User: "alice", Password: "pa"})
	for {
		if _, err := alice.Worker(ctx, "w1"); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("worker w1 not reachable")
		}
		time.Sleep(20 * time.Millisecond)
	}

	const count, rate = 40_000, 64
	ref := &fileSink{}
	if _, err := runtime.Run(ctx, recoverPipeline(count, rate, ref), runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	store, err := NewJetStreamStore(ctx, alice, "run-a")
	if err != nil {
		t.Fatalf("alice's store (a client, not an admin): %v", err)
	}
	if store.Bucket() != "sluice-ckpt-alice" {
		t.Fatalf("alice's bucket %q, want sluice-ckpt-alice", store.Bucket())
	}
	ex := NewExecutor(alice, ExecutorOptions{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second})
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"fir": {Device: "worker:w1/cpu"}}}
	sink := &fileSink{}
	rctx, stop := context.WithCancel(ctx)
	_, err = runtime.Run(rctx, recoverPipeline(count, rate, sink), runtime.Options{Mapping: mp, Remote: ex,
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: store, Completed: func(cp *runtime.Checkpoint) {
			if cp.ID == 2 {
				stop()
			}
		}}})
	stop()
	if err == nil {
		t.Fatal("the first run ended before its second checkpoint stopped it (a vacuous test): make it longer")
	}
	cp, err := store.Latest(ctx)
	if err != nil || cp == nil || cp.ID < 2 {
		t.Fatalf("alice's last checkpoint: %v, %v: expected checkpoint 2 or later", cp, err)
	}

	// bob, another client, tries alice's bucket.
	bob := connect(t, b.ClientURL(), Credentials{User: "bob", Password: "pb"})
	var berr asyncErrs
	bob.Conn().SetErrorHandler(berr.handler)
	bobStore, err := NewJetStreamStore(ctx, bob, "run-a")
	if err != nil {
		t.Fatalf("bob's own store: %v", err)
	}
	if mine, err := bobStore.Latest(ctx); mine != nil || err != nil {
		t.Fatalf("bob's run-a: %v, %v: expected none (alice's is in her bucket)", mine, err)
	}
	js, err := jetstream.New(bob.Conn())
	if err != nil {
		t.Fatal(err)
	}
	tryJS := func(what string, f func(ctx context.Context) error) {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		defer acancel()
		if err := f(actx); err == nil {
			t.Errorf("bob %s: succeeded, expected a refusal", what)
		}
	}
	const aliceStream, aliceBucket = "OBJ_sluice-ckpt-alice", "sluice-ckpt-alice"
	tryJS("reads alice's bucket", func(ctx context.Context) error {
		ob, err := js.ObjectStore(ctx, aliceBucket)
		if err == nil {
			_, err = ob.GetBytes(ctx, "run-a")
		}
		return err
	})
	tryJS("deletes alice's bucket", func(ctx context.Context) error { return js.DeleteObjectStore(ctx, aliceBucket) })
	tryJS("creates a stream on alice's subjects", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SPY", Subjects: []string{"sluice.u.alice.>"}})
		return err
	})
	tryJS("creates a consumer on his own bucket", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateConsumer(ctx, "OBJ_sluice-ckpt-bob", jetstream.ConsumerConfig{Name: "c"})
		return err
	})
	for _, s := range []string{"$JS.API.DIRECT.GET." + aliceStream, "$JS.API.STREAM.PURGE." + aliceStream, "$O." + aliceBucket + ".M.cnVuLWE=", ckptOpenSubject("alice")} {
		if err := bob.Conn().Publish(s, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bob.Conn().SubscribeSync("$O." + aliceBucket + ".>"); err != nil {
		t.Fatal(err)
	}
	if err := bob.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, v := range []struct{ kind, subject string }{
		{"Publish", "$JS.API.STREAM.INFO." + aliceStream},
		{"Publish", "$JS.API.STREAM.DELETE." + aliceStream},
		{"Publish", "$JS.API.STREAM.CREATE.SPY"},
		{"Publish", "$JS.API.CONSUMER.CREATE.OBJ_sluice-ckpt-bob.c"},
		{"Publish", "$JS.API.DIRECT.GET." + aliceStream},
		{"Publish", "$JS.API.STREAM.PURGE." + aliceStream},
		{"Publish", "$O." + aliceBucket + ".M.cnVuLWE="},
		{"Publish", ckptOpenSubject("alice")},
		{"Subscription", "$O." + aliceBucket + ".>"},
	} {
		for !berr.has(v.kind, v.subject) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !berr.has(v.kind, v.subject) {
			t.Errorf("bob's %s on %s: no permission violation reported", v.kind, v.subject)
		}
	}

	// alice resumes from her checkpoint, untouched by bob's attempts.
	again, err := store.Latest(ctx)
	if err != nil || again == nil || again.ID != cp.ID {
		t.Fatalf("alice's checkpoint after bob's attempts: %v, %v: expected checkpoint %d", again, err, cp.ID)
	}
	st, err := runtime.Run(ctx, recoverPipeline(count, rate, sink), runtime.Options{Mapping: mp, Remote: ex,
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: store, Resume: again}})
	if err != nil {
		t.Fatalf("alice's resumed run: %v", err)
	}
	if st.Checkpoints == nil || st.Checkpoints.ResumedFrom != again.ID {
		t.Fatalf("resumed run's checkpoint stats %+v: expected it resumed from %d", st.Checkpoints, again.ID)
	}
	if !slices.Equal(sink.got, ref.got) {
		t.Fatalf("alice's resumed output: %d tokens, expected %d equal to the local run's", sink.len(), ref.len())
	}
}

// TestJetStreamStoreStopBy: a store operation still waiting for a broker
// that went away ends at StopBy's time, not its caller's longer one.
func TestJetStreamStoreStopBy(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cl := connect(t, b.ClientURL(), Credentials{})
	s, err := NewJetStreamStore(ctx, cl, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	b.Shutdown()
	s.StopBy(time.Now().Add(time.Second))
	start := time.Now()
	err = s.Save(ctx, &runtime.Checkpoint{ID: 1, Graph: "g"})
	if err == nil {
		t.Fatal("a save to a broker that is gone succeeded")
	}
	if took := time.Since(start); took >= storeAPITimeout-time.Second {
		t.Fatalf("the save gave up after %s: expected about 1 s (StopBy), not %s (a request's bound) or the caller's 30 s", took, storeAPITimeout)
	}
}

// cutProxy forwards TCP connections from a loopback listener to target.
// The first time the client side sends bytes holding cut, it forwards
// them and what follows, stops passing anything back to the client and,
// after a moment (the broker has acted on them), closes that connection: what was sent
// is stored, its acknowledgement is lost. Later connections pass through.
type cutProxy struct {
	ln  net.Listener
	cut []byte
	hit atomic.Bool
}

func startCutProxy(t *testing.T, target string, cut []byte) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, cut: cut}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go p.serve(c, s)
		}
	}()
	return p
}

func (p *cutProxy) serve(c, s net.Conn) {
	var held atomic.Bool
	closeBoth := func() { c.Close(); s.Close() }
	go func() { // broker → client
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 && !held.Load() {
				if _, werr := c.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		closeBoth()
	}()
	buf := make([]byte, 64<<10)
	var tail []byte // the end of the last read: cut may straddle two
	// client → broker
	for {
		n, err := c.Read(buf)
		if n > 0 {
			seen := append(tail, buf[:n]...)
			trigger := !p.hit.Load() && bytes.Contains(seen, p.cut) && p.hit.CompareAndSwap(false, true)
			tail = append(tail[:0], seen[max(0, len(seen)-len(p.cut)+1):]...)
			if trigger { // the rest of the message may follow: go on forwarding it
				held.Store(true)
				time.AfterFunc(300*time.Millisecond, closeBoth)
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	closeBoth()
}

func (p *cutProxy) url() string { return "nats://" + p.ln.Addr().String() }

// TestJetStreamStoreLostAck: a checkpoint whose last message reached the
// broker but whose acknowledgement was lost with the connection (a broker
// killed at that moment) leaves a checkpoint that reads back whole — the
// new one or the one before — never one naming chunks that are gone.
func TestJetStreamStoreLostAck(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	bucket := CheckpointBucket("anonymous")
	p := startCutProxy(t, strings.TrimPrefix(b.ClientURL(), "nats://"), []byte("PUB $O."+bucket+".M."))
	// The first save's meta message cuts: save one directly first.
	direct, err := NewJetStreamStore(ctx, connect(t, b.ClientURL(), Credentials{}), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	cp := func(id int64) *runtime.Checkpoint {
		return &runtime.Checkpoint{ID: id, Graph: "g", Iteration: id, Actors: map[string]runtime.ActorSnapshot{"a": {Firing: id, Impl: make([]byte, 300<<10)}}}
	}
	if err := direct.Save(ctx, cp(1)); err != nil {
		t.Fatal(err)
	}
	cl := connect(t, p.url(), Credentials{})
	s, err := NewJetStreamStore(ctx, cl, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	// No deadline on the save's context: nats.go's own timeout for
	// acknowledgements applies, as in a run without --max-time.
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	saveErr := s.Save(sctx, cp(2))
	if !p.hit.Load() {
		t.Fatal("the proxy never saw the checkpoint's meta message")
	}
	got, err := direct.Latest(ctx)
	t.Logf("save: %v; latest: %v %v", saveErr, got != nil && got.ID == 2, err)
	if err != nil || got == nil || (got.ID != 1 && got.ID != 2) || len(got.Actors["a"].Impl) != 300<<10 {
		t.Fatalf("after a save whose acknowledgement was lost (save: %v): %v, %v: expected checkpoint 1 or 2, whole", saveErr, got, err)
	}
	// The store goes on: the next save lands and reads back.
	if err := s.Save(ctx, cp(3)); err != nil {
		t.Fatal(err)
	}
	if got, err := direct.Latest(ctx); err != nil || got == nil || got.ID != 3 {
		t.Fatalf("the save after: %v, %v: expected checkpoint 3", got, err)
	}
	// Only checkpoint 3's chunks are left: the failed save's and the
	// earlier ones were purged once it landed.
	js, err := jetstream.New(direct.c.nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, checkpointStream("anonymous"))
	if err != nil {
		t.Fatal(err)
	}
	si, err := st.Info(ctx, jetstream.WithSubjectFilter(chunkSubject(bucket, ">")))
	if err != nil {
		t.Fatal(err)
	}
	if len(si.State.Subjects) != 1 {
		t.Fatalf("chunks left in the bucket: %v: expected checkpoint 3's alone", si.State.Subjects)
	}
	// A checkpoint whose chunks are gone is damaged: a recovery says so at
	// once instead of waiting for the store to answer.
	for subj := range si.State.Subjects {
		if err := st.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	_, err = latest(ctx, direct, 0, t.Logf)
	if !errors.Is(err, ErrCheckpointDamaged) || !strings.Contains(err.Error(), "cannot resume from it") || time.Since(start) > StoreAttempt {
		t.Fatalf("reading a checkpoint whose chunks are gone: %v after %s: expected it damaged, at once", err, time.Since(start))
	}
	// A description claiming an impossible size is damage too, not a
	// crash of the reader.
	mm := nats.NewMsg(metaSubject(bucket, "run-1"))
	mm.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	mm.Data = []byte(`{"name":"run-1","bucket":"` + bucket + `","nuid":"x","size":4611686018427387904,"chunks":1,"digest":"SHA-256=AA=="}`)
	if _, err := js.PublishMsg(ctx, mm); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Latest(ctx); !errors.Is(err, ErrCheckpointDamaged) {
		t.Fatalf("reading a checkpoint described as 4 EiB: %v: expected it damaged", err)
	}
}
