package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/runtime"
)

// A run with checkpoints that ends without an error marks its store
// finished: --resume of it then says so and exits 0, writing nothing,
// instead of running its tail again. The mark names the last checkpoint
// (its ID and when it was taken): a later run that checkpoints into the
// same store makes it stale, and that run can be resumed again.

// finishMark is what marks a store's run finished.
type finishMark struct {
	LastID    int64     `json:"last_id"`
	LastTaken time.Time `json:"last_taken"`
	Finished  time.Time `json:"finished"`
}

// markStore keeps a store's finish mark: a file beside a directory
// store's checkpoints, an object beside a JetStream store's.
type markStore interface {
	SaveFinished(ctx context.Context, data []byte) error
	LoadFinished(ctx context.Context) ([]byte, error)
}

// dirMarks keeps the finish mark of a runtime.DirStore.
type dirMarks struct{ dir string }

func (d dirMarks) path() string { return filepath.Join(d.dir, "finished.json") }

func (d dirMarks) SaveFinished(_ context.Context, data []byte) error {
	return os.WriteFile(d.path(), data, 0o644)
}

func (d dirMarks) LoadFinished(context.Context) ([]byte, error) {
	b, err := os.ReadFile(d.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// marksOf returns the mark store of a checkpoint store (nil: none).
func marksOf(s runtime.CheckpointStore) markStore {
	switch s := s.(type) {
	case *runtime.DirStore:
		return dirMarks{s.Dir}
	case markStore:
		return s
	}
	return nil
}

// markFinished records that the run with checkpoint options o finished.
func markFinished(ctx context.Context, o *runtime.CheckpointOptions) error {
	if o == nil || o.External || o.Store == nil {
		return nil
	}
	ms := marksOf(o.Store)
	if ms == nil {
		return nil
	}
	m := finishMark{Finished: time.Now().UTC()}
	cp, err := o.Store.Latest(ctx)
	if err != nil {
		return fmt.Errorf("marking the run finished: %w", err)
	}
	if cp != nil {
		m.LastID, m.LastTaken = cp.ID, cp.Taken.UTC()
	}
	data, _ := json.Marshal(m)
	if err := ms.SaveFinished(ctx, data); err != nil {
		return fmt.Errorf("marking the run finished: %w", err)
	}
	return nil
}

// finishedRun returns the mark of a store whose run finished and has not
// checkpointed since (nil otherwise).
func finishedRun(ctx context.Context, s runtime.CheckpointStore) (*finishMark, error) {
	ms := marksOf(s)
	if ms == nil {
		return nil, nil
	}
	data, err := ms.LoadFinished(ctx)
	if err != nil || data == nil {
		return nil, err
	}
	var m finishMark
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the run's finish mark: expected JSON: %w", err)
	}
	cp, err := s.Latest(ctx)
	if err != nil {
		return nil, err
	}
	if cp == nil && m.LastID == 0 || cp != nil && cp.ID == m.LastID && cp.Taken.Equal(m.LastTaken) {
		return &m, nil
	}
	return nil, nil // checkpointed again since: not finished
}

// resumeFinished reports (true) that --resume names a run that already
// finished, saying so on stderr, so that sluice run exits 0 and writes
// nothing. It connects to --broker for a nats: store.
func resumeFinished(cmd *cobra.Command, f runFlags) (bool, error) {
	if f.resume == "" {
		return false, nil
	}
	ctx := cmd.Context()
	var store runtime.CheckpointStore = &runtime.DirStore{Dir: f.resume}
	if name, ok := strings.CutPrefix(f.resume, "nats:"); ok {
		if f.broker == "" {
			return false, nil // checkpointOptions says what is missing
		}
		cl, err := cluster.Connect(ctx, f.broker, f.cred.creds())
		if err != nil {
			return false, fmt.Errorf("--resume %s: %w", f.resume, err)
		}
		defer cl.Close()
		js, err := cluster.NewJetStreamStore(ctx, cl, name)
		if err != nil {
			return false, fmt.Errorf("--resume %s: %w", f.resume, err)
		}
		store = js
	}
	m, err := finishedRun(ctx, store)
	if err != nil {
		return false, fmt.Errorf("--resume %s: %w", f.resume, err)
	}
	if m == nil {
		return false, nil
	}
	last := "no checkpoint"
	if m.LastID > 0 {
		last = fmt.Sprintf("last checkpoint %d", m.LastID)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "--resume %s: that run finished at %s (%s): nothing to resume, nothing written\n",
		f.resume, m.Finished.Format(time.RFC3339), last)
	return true, nil
}

// recoveryNote writes one line for each recovery of a run whose actors run
// on workers: from the loss of a worker, or of the broker's connection.
func recoveryNote(stderr io.Writer) func(cluster.Recovery) {
	return func(r cluster.Recovery) {
		from := "the start"
		if r.From != nil {
			from = fmt.Sprintf("checkpoint %d (iteration %d)", r.From.ID, r.From.Iteration)
		}
		what := "worker " + r.Worker
		if r.Broker != "" {
			what = "the connection to broker " + r.Broker + " (every worker stayed eligible)"
		}
		fmt.Fprintf(stderr, "recovered from the loss of %s: resumed from %s, firing again %s after the loss was reported (%v)\n",
			what, from, r.Firing.Sub(r.Failed).Round(time.Millisecond), r.Err)
	}
}
