package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// ckSource emits a fixed sequence of tokens (ckValue); its position is
// its snapshot.
type ckSource[T int64 | float32] struct{ next int64 }

func (s *ckSource[T]) Fire(f *Firing) error {
	for i, out := 0, Output[T](f, 0); i < len(out); i++ {
		out[i] = ckValue[T](s.next)
		s.next++
	}
	return nil
}

// ckValue is token n of ckSource's sequence.
func ckValue[T int64 | float32](n int64) T {
	v := n * 7 % 1009
	var z T
	if _, ok := any(z).(float32); ok {
		return T(float32(v)/1009 - 0.5)
	}
	return T(v)
}

func (s *ckSource[T]) Snapshot() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(s.next)), nil
}

func (s *ckSource[T]) Restore(b []byte) error {
	if len(b) != 8 {
		return errors.New("expected 8 bytes")
	}
	s.next = int64(binary.LittleEndian.Uint64(b))
	return nil
}

// ckFile is a sink's output that outlives a run, as a file does.
type ckFile[T any] struct {
	mu  sync.Mutex
	got []T
}

// ckSink appends to its file; its snapshot is the file's length, and a
// restore truncates the file to it (what the file sink does).
type ckSink[T any] struct{ file *ckFile[T] }

func (s *ckSink[T]) Fire(f *Firing) error {
	s.file.mu.Lock()
	s.file.got = append(s.file.got, Input[T](f, 0)...)
	s.file.mu.Unlock()
	return nil
}

func (s *ckSink[T]) Snapshot() ([]byte, error) {
	s.file.mu.Lock()
	defer s.file.mu.Unlock()
	return binary.LittleEndian.AppendUint64(nil, uint64(len(s.file.got))), nil
}

func (s *ckSink[T]) Restore(b []byte) error {
	s.file.mu.Lock()
	defer s.file.mu.Unlock()
	s.file.got = s.file.got[:binary.LittleEndian.Uint64(b)]
	return nil
}

// stopAfterCheckpoints runs g with opts and checkpoints every interval
// into a fresh directory until three are stored, then stops the run; it
// fails the test unless the run was stopped that way, and returns its
// statistics, the iterations of the checkpoints as they completed, and
// the store.
func stopAfterCheckpoints(t *testing.T, g *graph.Graph, opts Options, interval time.Duration) (*Stats, []int64, *DirStore) {
	t.Helper()
	store := &DirStore{Dir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []int64
	opts.Checkpoint = &CheckpointOptions{Interval: interval, Store: store, Completed: func(cp *Checkpoint) {
		if seen = append(seen, cp.Iteration); len(seen) == 3 {
			cancel()
		}
	}}
	st, err := Run(ctx, g, opts)
	if err == nil {
		t.Fatalf("the run ended (%d checkpoints: %v) before it was stopped: make it longer", len(seen), seen)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
	return st, seen, store
}

// checkpointGraph is a multi-rate graph with every kind of state: a
// source with a position, an input with history, declared state, a
// feedback loop with an initial token, and a sink writing to file.
func checkpointGraph(file *ckFile[int64]) *graph.Graph {
	g := graph.New("ckpt")
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(Actor(&ckSource[int64]{})))
	so := graph.AddOutput[int64](src, "y", graph.SDF(3))

	hist := g.AddActor("hist", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		in, out := Input[int64](f, 0), Output[int64](f, 0)
		for i := range out {
			out[i] = in[i] + 3*in[i+1] + 5*in[i+2]
		}
		return nil
	})))
	hi := graph.AddInput[int64](hist, "x", graph.SDF(2))
	hi.Port().History = 2
	ho := graph.AddOutput[int64](hist, "y", graph.SDF(2))

	init := make([]byte, 8)
	acc := g.AddActor("acc", graph.Stateful(), graph.WithState(8, init, graph.InitializeState), graph.WithFunc(FireFunc(func(f *Firing) error {
		st := f.State()
		s := int64(binary.LittleEndian.Uint64(st))
		x, fb := Input[int64](f, 0), Input[int64](f, 1)
		s = (s*31 + x[0] + x[1] + fb[0]) % 1_000_003
		binary.LittleEndian.PutUint64(st, uint64(s))
		y, loop := Output[int64](f, 0), Output[int64](f, 1)
		y[0], y[1] = s, s^x[0]
		loop[0] = s % 977
		return nil
	})))
	ax := graph.AddInput[int64](acc, "x", graph.SDF(2))
	afb := graph.AddInput[int64](acc, "fb", graph.SDF(1))
	ay := graph.AddOutput[int64](acc, "y", graph.SDF(2))
	aloop := graph.AddOutput[int64](acc, "loop", graph.SDF(1))

	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(Actor(&ckSink[int64]{file: file})))
	si := graph.AddInput[int64](sink, "x", graph.SDF(1))

	graph.Connect(g, so, hi)
	graph.Connect(g, ho, ax)
	graph.Connect(g, aloop, afb, graph.Initial(1), graph.InitialData(binary.LittleEndian.AppendUint64(nil, 5)))
	graph.Connect(g, ay, si)
	return g
}

// TestCheckpointResume: a run stopped after some checkpoints, resumed from
// the last one, leaves its sink's file equal to an uninterrupted run's.
func TestCheckpointResume(t *testing.T) {
	t.Parallel()
	t.Run("pooled", func(t *testing.T) { testCheckpointResume(t, nil) })
	// hist and acc on their own goroutines, pinned to core 0
	// acc as a team of two replicas, each with its own (equal) state
	t.Run("team", func(t *testing.T) {
		testCheckpointResume(t, &graph.Mapping{Actors: map[string]*graph.Placement{"acc": {Replicas: 2, Team: graph.TeamReplicate}}})
	})
	t.Run("pinned", func(t *testing.T) {
		testCheckpointResume(t, &graph.Mapping{Actors: map[string]*graph.Placement{"hist": {Affinity: []int{0}}, "acc": {Affinity: []int{0}}}})
	})
}

func testCheckpointResume(t *testing.T, m *graph.Mapping) {
	// Long enough for three checkpoints 2 ms apart before the run ends
	// (at 9k–26k iterations without the race detector, which runs about
	// ten times slower).
	iters := int64(100_000)
	if raceEnabled {
		iters = 30_000
	}
	ref := &ckFile[int64]{}
	if _, err := Run(context.Background(), checkpointGraph(ref), Options{Iterations: iters, Workers: 2}); err != nil {
		t.Fatal(err)
	}

	file := &ckFile[int64]{}
	st, seen, store := stopAfterCheckpoints(t, checkpointGraph(file), Options{Iterations: iters, Workers: 2, Mapping: m}, 2*time.Millisecond)
	if st.Checkpoints == nil || st.Checkpoints.Completed < 3 || st.Checkpoints.LastBytes == 0 {
		t.Fatalf("checkpoint stats %+v: expected 3 or more completed, with bytes", st.Checkpoints)
	}
	if !slices.IsSorted(seen) || seen[0] == 0 {
		t.Fatalf("checkpoint iterations %v: expected increasing, past 0", seen)
	}
	cp, err := store.Latest(context.Background())
	if err != nil || cp == nil {
		t.Fatalf("latest checkpoint: %v, %v", cp, err)
	}
	if cp.Iteration >= iters {
		t.Fatalf("checkpoint at iteration %d of %d: nothing left to resume", cp.Iteration, iters)
	}
	if len(cp.Channels["acc.loop->acc.fb"]) != 8 {
		t.Fatalf("checkpoint channels %v: expected the feedback loop's token", cp.Channels)
	}
	if h := cp.Actors["hist"].History; len(h) != 1 || len(h[0]) != 16 {
		t.Fatalf("hist's history in the checkpoint: %v: expected one window of 2 tokens", h)
	}
	t.Logf("checkpoints at iterations %v; %d bytes; stopped with %d tokens in the file", seen, cp.Size(), len(file.got))
	if len(file.got) <= int(6*cp.Iteration) {
		t.Logf("the sink had %d tokens when stopped, the checkpoint %d", len(file.got), 6*cp.Iteration)
	}

	st, err = Run(context.Background(), checkpointGraph(file), Options{Iterations: iters, Workers: 2, Mapping: m,
		Checkpoint: &CheckpointOptions{Interval: time.Hour, Store: store, Resume: cp}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Checkpoints.ResumedFrom != cp.ID {
		t.Fatalf("resumed from %d: expected %d", st.Checkpoints.ResumedFrom, cp.ID)
	}
	if got := firings(t, st, "sink"); got != 6*(iters-cp.Iteration) {
		t.Fatalf("the resumed run fired the sink %d times: expected %d", got, 6*(iters-cp.Iteration))
	}
	if len(file.got) != len(ref.got) {
		t.Fatalf("resumed output has %d tokens: expected %d", len(file.got), len(ref.got))
	}
	for i := range ref.got {
		if file.got[i] != ref.got[i] {
			t.Fatalf("token %d = %d after resume: expected %d", i, file.got[i], ref.got[i])
		}
	}
}

// TestCheckpointRefusesHiddenState: a stateful actor whose state the
// runtime cannot snapshot is refused before the run starts.
func TestCheckpointRefusesHiddenState(t *testing.T) {
	t.Parallel()
	g := graph.New("hidden")
	src := addSource(g, "src", 1, 10)
	si, _ := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, si)
	_, err := Run(context.Background(), g, Options{Checkpoint: &CheckpointOptions{Interval: time.Second, Store: &DirStore{Dir: t.TempDir()}}})
	if err == nil || !strings.Contains(err.Error(), "checkpoints: actor src is stateful but its implementation (runtime.FireFunc) has no Snapshot/Restore methods") {
		t.Fatalf("run: %v", err)
	}
}

// TestDirStore: Latest returns the newest checkpoint; older files beyond
// Keep go.
func TestDirStore(t *testing.T) {
	t.Parallel()
	s := &DirStore{Dir: t.TempDir(), Keep: 2}
	ctx := context.Background()
	if cp, err := s.Latest(ctx); cp != nil || err != nil {
		t.Fatalf("empty store: %v, %v", cp, err)
	}
	for id := int64(1); id <= 3; id++ {
		if err := s.Save(ctx, &Checkpoint{ID: id, Graph: "g", Iteration: 10 * id, Channels: map[string][]byte{"c": {byte(id)}}}); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := s.Latest(ctx)
	if err != nil || cp.ID != 3 || cp.Iteration != 30 || cp.Channels["c"][0] != 3 {
		t.Fatalf("latest: %+v, %v", cp, err)
	}
	if ids, _ := s.ids(); !slices.Equal(ids, []int64{2, 3}) {
		t.Fatalf("files kept: %v: expected [2 3]", ids)
	}
}

// fusedCheckpointGraph is src → three stateless stages (fused into one
// chain) → sink.
func fusedCheckpointGraph(file *ckFile[int64]) *graph.Graph {
	g := graph.New("fusedckpt")
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(Actor(&ckSource[int64]{})))
	prev := graph.AddOutput[int64](src, "y", graph.SDF(4))
	for i, name := range []string{"s1", "s2", "s3"} {
		m := int64(i + 2)
		st := g.AddActor(name, graph.WithFunc(FireFunc(func(f *Firing) error {
			in, out := Input[int64](f, 0), Output[int64](f, 0)
			for j := range out {
				out[j] = (in[j]*m + f.Index()*4 + int64(j)) % 100_003
			}
			return nil
		})))
		in := graph.AddInput[int64](st, "x", graph.SDF(4))
		graph.Connect(g, prev, in)
		prev = graph.AddOutput[int64](st, "y", graph.SDF(4))
	}
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(Actor(&ckSink[int64]{file: file})))
	graph.Connect(g, prev, graph.AddInput[int64](sink, "x", graph.SDF(4)))
	return g
}

// TestCheckpointFusedChain: a run whose stateless chain is fused takes
// checkpoints, is stopped and resumes from the last one with the output of
// an uninterrupted run.
func TestCheckpointFusedChain(t *testing.T) {
	t.Parallel()
	const iters = 400_000
	ref := &ckFile[int64]{}
	if _, err := Run(context.Background(), fusedCheckpointGraph(ref), Options{Iterations: iters, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	file := &ckFile[int64]{}
	st, _, store := stopAfterCheckpoints(t, fusedCheckpointGraph(file), Options{Iterations: iters, Workers: 2}, 2*time.Millisecond)
	for _, a := range st.Actors {
		if a.Name == "s2" && a.Fused == "" {
			t.Fatalf("s2 ran unfused in the checkpointed run: expected the chain s1..s3 fused")
		}
	}
	cp, err := store.Latest(context.Background())
	if err != nil || cp == nil {
		t.Fatalf("latest checkpoint: %v, %v", cp, err)
	}
	if _, err := Run(context.Background(), fusedCheckpointGraph(file), Options{Iterations: iters, Workers: 2,
		Checkpoint: &CheckpointOptions{Interval: time.Hour, Store: store, Resume: cp}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("resumed from checkpoint %d at iteration %d", cp.ID, cp.Iteration)
	if !slices.Equal(file.got, ref.got) {
		t.Fatalf("resumed output: %d tokens, expected %d equal to the uninterrupted run's", len(file.got), len(ref.got))
	}
}

// TestCheckpointSharedVariable: a shared variable that its one updater
// increments at each firing (read, then update) is in the checkpoint with
// its updater's snapshot, so the resumed run ends with the count of an
// uninterrupted one.
func TestCheckpointSharedVariable(t *testing.T) {
	t.Parallel()
	const iters = 200_000
	build := func(file *ckFile[int64]) *graph.Graph {
		g := graph.New("sharedckpt")
		g.AddShared("count", graph.MustTokenType("i64"), make([]byte, 8), graph.SharedSync, "")
		src := g.AddActor("src", graph.Stateful(), graph.WithFunc(Actor(&ckSource[int64]{})))
		so := graph.AddOutput[int64](src, "y", graph.SDF(1))
		cnt := g.AddActor("cnt", graph.WithFunc(FireFunc(func(f *Firing) error {
			n, err := SharedValue[int64](f, "count")
			if err != nil {
				return err
			}
			copy(Output[int64](f, 0), Input[int64](f, 0))
			return UpdateShared(f, "count", n+1)
		})))
		ci := graph.AddInput[int64](cnt, "x", graph.SDF(1))
		co := graph.AddOutput[int64](cnt, "y", graph.SDF(1))
		sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(Actor(&ckSink[int64]{file: file})))
		graph.Connect(g, so, ci)
		graph.Connect(g, co, graph.AddInput[int64](sink, "x", graph.SDF(1)))
		return g
	}
	count := func(st *Stats) any {
		for _, s := range st.Shared {
			if s.Name == "count" {
				return s.Value
			}
		}
		return nil
	}
	file := &ckFile[int64]{}
	_, _, store := stopAfterCheckpoints(t, build(file), Options{Iterations: iters, Workers: 2}, 2*time.Millisecond)
	cp, err := store.Latest(context.Background())
	if err != nil || cp == nil {
		t.Fatalf("latest checkpoint: %v, %v", cp, err)
	}
	if v := cp.Actors["cnt"].Shared["count"]; len(v) != 8 || int64(binary.LittleEndian.Uint64(v)) != cp.Iteration {
		t.Fatalf("checkpoint %d at iteration %d holds count %v: expected %d, recorded by cnt", cp.ID, cp.Iteration, v, cp.Iteration)
	}
	st, err := Run(context.Background(), build(file), Options{Iterations: iters, Workers: 2,
		Checkpoint: &CheckpointOptions{Interval: time.Hour, Store: store, Resume: cp}})
	if err != nil {
		t.Fatal(err)
	}
	if got := count(st); got != int64(iters) {
		t.Fatalf("the resumed run ended with count %v: expected %d (resumed from iteration %d)", got, iters, cp.Iteration)
	}
}
