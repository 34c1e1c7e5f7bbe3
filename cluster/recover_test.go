package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// fileSink is a Go sink whose output outlives a run, as a file does: its
// snapshot is the output's length and a restore cuts the output back.
type fileSink struct {
	mu  sync.Mutex
	got []float32
}

func (s *fileSink) Fire(f *runtime.Firing) error {
	s.mu.Lock()
	s.got = append(s.got, runtime.Input[float32](f, 0)...)
	s.mu.Unlock()
	return nil
}

func (s *fileSink) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return binary.LittleEndian.AppendUint64(nil, uint64(len(s.got))), nil
}

func (s *fileSink) Restore(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = s.got[:binary.LittleEndian.Uint64(b)]
	return nil
}

func (s *fileSink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// recoverPipeline is ramp → scale → fir (stateful) → sink, count firings
// of rate tokens.
func recoverPipeline(count, rate int, sink *fileSink) *graph.Graph {
	g := graph.New("recover")
	f32 := graph.MustTokenType("f32")
	r := graph.SDF(rate)
	src := g.AddActor("src", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "gen.ramp", Params: map[string]any{"count": count, "step": 0.001}}))
	so := src.AddPort("y", graph.Out, f32, r, "")
	sc := g.AddActor("scale", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "saxpy", Params: map[string]any{"a": 2, "y": 1}}))
	si := sc.AddPort("x", graph.In, f32, r, "")
	sco := sc.AddPort("z", graph.Out, f32, r, "")
	fi := g.AddActor("fir", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "fir", Params: map[string]any{"taps": []any{0.25, 0.5, 0.125, 0.0625, 0.03125}}}))
	fii := fi.AddPort("x", graph.In, f32, r, "")
	fio := fi.AddPort("y", graph.Out, f32, r, "")
	sk := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.Actor(sink)))
	ski := sk.AddPort("x", graph.In, f32, r, "")
	g.Join(so, si)
	g.Join(sco, fii)
	g.Join(fio, ski)
	return g
}

// TestRecoverLostWorker: the stateful FIR runs on w2 and scale on w1 (or
// the source on w2 and fir on w1);
// w2 drops off the network after the run's second checkpoint. The run
// re-places fir on another worker, resumes from the last checkpoint and
// ends with the output of a local run.
func TestRecoverLostWorker(t *testing.T) {
	t.Run("fir", func(t *testing.T) {
		testRecoverLostWorker(t, map[string]*graph.Placement{"scale": {Device: "worker:w1/cpu"}, "fir": {Device: "worker:w2/cpu"}})
	})
	// a remote source: held at each barrier by its worker (HoldActor)
	t.Run("source", func(t *testing.T) {
		testRecoverLostWorker(t, map[string]*graph.Placement{"src": {Device: "worker:w2/cpu"}, "fir": {Device: "worker:w1/cpu"}})
	})
}

func testRecoverLostWorker(t *testing.T, actors map[string]*graph.Placement) {
	const count, rate = 60_000, 64
	ref := &fileSink{}
	if _, err := runtime.Run(context.Background(), recoverPipeline(count, rate, ref), runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	tr := startTree(t, nil, Credentials{}, Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w3, err := StartWorker(ctx, WorkerOptions{Broker: tr.root.ClientURL(), Name: "w3", Devices: []device.Info{testCPU},
		HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w3.Close)
	cl := connect(t, tr.root.ClientURL(), Credentials{})
	for {
		if _, err := cl.Worker(ctx, "w3"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mp := &graph.Mapping{Actors: actors}
	sink := &fileSink{}
	store := &runtime.DirStore{Dir: t.TempDir()}
	var once sync.Once
	killed := make(chan time.Time, 1)
	var recs []Recovery
	st, err := RunRecovering(ctx, recoverPipeline(count, rate, sink), runtime.Options{Mapping: mp, Remote: fastExecutor(cl),
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: store, Completed: func(cp *runtime.Checkpoint) {
			if cp.ID == 2 {
				once.Do(func() {
					killed <- time.Now()
					tr.w2.nc.Close() // w2 vanishes without a word
				})
			}
		}}}, RecoveryOptions{Recovered: func(r Recovery) { recs = append(recs, r) }})
	if err != nil {
		t.Fatalf("run: %v (recoveries before: %s; the sink holds %d tokens of %d)", err, describeRecoveries(recs), sink.len(), ref.len())
	}
	var kill time.Time
	select {
	case kill = <-killed:
	default:
		t.Fatal("the run ended before w2 was killed (a vacuous test): make it longer")
	}
	if len(recs) != 1 || recs[0].Worker != "w2" || recs[0].From == nil || !errors.Is(recs[0].Err, ErrWorkerLost) {
		t.Fatalf("recoveries %+v: expected one, from w2's loss, from a checkpoint", recs)
	}
	if st.Checkpoints.Recoveries != 1 || st.Checkpoints.ResumedFrom != recs[0].From.ID {
		t.Fatalf("stats %+v: expected 1 recovery from checkpoint %d", st.Checkpoints, recs[0].From.ID)
	}
	t.Logf("w2 killed; loss reported after %s, first firing after restore %s after the kill; resumed from checkpoint %d (iteration %d, %d bytes)",
		recs[0].Failed.Sub(kill).Round(time.Millisecond), recs[0].Firing.Sub(kill).Round(time.Millisecond), recs[0].From.ID, recs[0].From.Iteration, recs[0].From.Size())
	if !slices.Equal(sink.got, ref.got) {
		t.Fatalf("output after recovery: %d tokens, expected %d equal to the local run's", sink.len(), ref.len())
	}
}

// describeRecoveries says, for a failure's message, what each recovery
// was and the firings its checkpoint restored.
func describeRecoveries(recs []Recovery) string {
	if len(recs) == 0 {
		return "none"
	}
	var parts []string
	for _, r := range recs {
		from := "the start"
		if r.From != nil {
			names := slices.Sorted(maps.Keys(r.From.Actors))
			firings := make([]string, len(names))
			for i, n := range names {
				firings[i] = fmt.Sprintf("%s@%d", n, r.From.Actors[n].Firing)
			}
			from = fmt.Sprintf("checkpoint %d (iteration %d: %s)", r.From.ID, r.From.Iteration, strings.Join(firings, " "))
		}
		parts = append(parts, fmt.Sprintf("worker %q lost (%v), resumed from %s", r.Worker, r.Err, from))
	}
	return fmt.Sprintf("%d: %s", len(recs), strings.Join(parts, "; "))
}

// TestRecoverStrict: an actor pinned with strict: true is not moved: the
// run fails naming it when its worker is lost.
func TestRecoverStrict(t *testing.T) {
	tr := startTree(t, nil, Credentials{}, Limits{})
	cl := connect(t, tr.root.ClientURL(), Credentials{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mp, err := spec.ParseMapping("strict.yaml", []byte("kind: mapping\nmapping:\n  fir: {device: worker:w2/cpu, strict: true}\n"))
	if err != nil || !mp.Actors["fir"].Strict {
		t.Fatalf("mapping with strict: true: %v, %+v", err, mp)
	}
	var once sync.Once
	killed := false
	_, err = RunRecovering(ctx, recoverPipeline(0, 64, &fileSink{}), runtime.Options{Mapping: mp, Remote: fastExecutor(cl),
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: &runtime.DirStore{Dir: t.TempDir()}, Completed: func(*runtime.Checkpoint) {
			once.Do(func() { killed = true; tr.w2.nc.Close() })
		}}}, RecoveryOptions{Recovered: func(r Recovery) { t.Errorf("recovered from %s's loss although fir is strict", r.Worker) }})
	if !killed {
		t.Fatalf("no checkpoint before the run ended: %v", err)
	}
	if err == nil || !errors.Is(err, ErrWorkerLost) || !strings.Contains(err.Error(), "actor fir is pinned to worker w2 with strict: true") {
		t.Fatalf("run: %v: expected the loss of w2, not recovered because fir is strict", err)
	}
}
