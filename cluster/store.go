package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/runtime"
)

// StoreBucket is the JetStream object store bucket holding checkpoints.
const StoreBucket = "sluice-checkpoints"

// JetStreamStore keeps a run's checkpoints in the broker's JetStream
// object store (a broker started with --store DIR), one object per run
// name, replaced by each checkpoint: they outlive the workers and a
// restart of the broker.
type JetStreamStore struct {
	c    *Client
	name string
}

// NewJetStreamStore returns the store of the checkpoints named name on
// the broker c is connected to; it fails when the broker has no
// JetStream (no --store).
func NewJetStreamStore(ctx context.Context, c *Client, name string) (*JetStreamStore, error) {
	if name == "" || strings.ContainsAny(name, " \t\n*>") {
		return nil, fmt.Errorf("checkpoint store name %q: expected a name without spaces, * or >", name)
	}
	s := &JetStreamStore{c: c, name: name}
	if _, err := s.bucket(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *JetStreamStore) bucket(ctx context.Context) (jetstream.ObjectStore, error) {
	js, err := jetstream.New(s.c.nc)
	if err != nil {
		return nil, err
	}
	ob, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: StoreBucket, Description: "sluice checkpoints", Storage: jetstream.FileStorage})
	if err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("broker %s keeps no checkpoints: start it with --store DIR (JetStream): %w", redact(s.c.url), err)
		}
		return nil, fmt.Errorf("checkpoint store on broker %s: %w", redact(s.c.url), err)
	}
	return ob, nil
}

// Save replaces the run's checkpoint with cp.
func (s *JetStreamStore) Save(ctx context.Context, cp *runtime.Checkpoint) error {
	data, err := runtime.EncodeCheckpoint(cp)
	if err != nil {
		return err
	}
	ob, err := s.bucket(ctx)
	if err != nil {
		return err
	}
	if _, err := ob.PutBytes(ctx, s.name, data); err != nil {
		return fmt.Errorf("storing checkpoint %d as %s/%s: %w", cp.ID, StoreBucket, s.name, err)
	}
	return nil
}

// Latest returns the run's last checkpoint, nil when there is none.
func (s *JetStreamStore) Latest(ctx context.Context) (*runtime.Checkpoint, error) {
	ob, err := s.bucket(ctx)
	if err != nil {
		return nil, err
	}
	data, err := ob.GetBytes(ctx, s.name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s/%s: %w", StoreBucket, s.name, err)
	}
	return runtime.DecodeCheckpoint(data)
}

// finishedObject names the object that marks the run named name finished.
func finishedObject(name string) string { return name + ".finished" }

// SaveFinished stores data as the mark that the run finished (what
// `sluice run --resume` reads to refuse re-running a finished run).
func (s *JetStreamStore) SaveFinished(ctx context.Context, data []byte) error {
	ob, err := s.bucket(ctx)
	if err != nil {
		return err
	}
	if _, err := ob.PutBytes(ctx, finishedObject(s.name), data); err != nil {
		return fmt.Errorf("marking run %s/%s finished: %w", StoreBucket, s.name, err)
	}
	return nil
}

// LoadFinished returns the mark SaveFinished stored, nil when there is
// none.
func (s *JetStreamStore) LoadFinished(ctx context.Context) ([]byte, error) {
	ob, err := s.bucket(ctx)
	if err != nil {
		return nil, err
	}
	data, err := ob.GetBytes(ctx, finishedObject(s.name))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s/%s: %w", StoreBucket, finishedObject(s.name), err)
	}
	return data, nil
}
