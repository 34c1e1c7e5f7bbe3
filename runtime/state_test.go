package runtime

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// accActor keeps a running sum in its declared state and finalizes it.
type accActor struct {
	mu        sync.Mutex
	finalized map[int]int64
}

func (a *accActor) Fire(f *Firing) error {
	s := f.State()
	sum := int64(binary.LittleEndian.Uint64(s))
	for _, v := range Input[int64](f, 0) {
		sum += v
	}
	binary.LittleEndian.PutUint64(s, uint64(sum))
	if f.Leader() {
		Output[int64](f, 0)[0] = sum
	}
	return nil
}

func (a *accActor) Finalize(replica int, state []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finalized == nil {
		a.finalized = map[int]int64{}
	}
	a.finalized[replica] = int64(binary.LittleEndian.Uint64(state))
	return nil
}

func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

func stateGraph(lt graph.Lifetime, init []byte) (*graph.Graph, *accActor, *collector) {
	g := graph.New("state")
	src := addSource(g, "src", 2, -1)
	acc := &accActor{}
	a := g.AddActor("acc", graph.Stateful(), graph.WithFunc(Actor(acc)), graph.WithState(8, init, lt))
	graph.Connect(g, src, graph.AddInput[int64](a, "in", graph.SDF(2)))
	si, col := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, graph.AddOutput[int64](a, "out", graph.SDF(1)), si)
	return g, acc, col
}

func TestStateLifetimes(t *testing.T) {
	t.Parallel()
	const n = 100
	sum := int64(2*n*(2*n-1)) / 2 // 0 + 1 + … + 2n−1
	t.Run("initialize+copyout+finalize", func(t *testing.T) {
		g, acc, col := stateGraph(graph.InitializeState|graph.CopyOutState|graph.FinalizeState, le64(1000))
		st, err := Run(context.Background(), g, Options{Iterations: n})
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(binary.LittleEndian.Uint64(st.State["acc"])); got != 1000+sum {
			t.Errorf("copied-out state %d, want %d", got, 1000+sum)
		}
		if v := col.values(); v[0] != 1001 || v[n-1] != 1000+sum {
			t.Errorf("outputs %d … %d, want 1001 … %d", v[0], v[n-1], 1000+sum)
		}
		if acc.finalized[0] != 1000+sum {
			t.Errorf("finalized %v", acc.finalized)
		}
	})
	t.Run("copyin", func(t *testing.T) {
		g, _, _ := stateGraph(graph.CopyInState|graph.CopyOutState, nil)
		st, err := Run(context.Background(), g, Options{Iterations: n, StateIn: map[string][]byte{"acc": le64(-5)}})
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(binary.LittleEndian.Uint64(st.State["acc"])); got != sum-5 {
			t.Errorf("copied-out state %d, want %d", got, sum-5)
		}
		g, _, _ = stateGraph(graph.CopyInState, nil)
		if _, err := Run(context.Background(), g, Options{Iterations: 1}); err == nil || !strings.Contains(err.Error(), "copyinstate but Options.StateIn has no value") {
			t.Errorf("missing copy-in: err = %v", err)
		}
	})
	t.Run("undefined", func(t *testing.T) {
		g, _, col := stateGraph(0, nil)
		st, err := Run(context.Background(), g, Options{Iterations: n})
		if err != nil {
			t.Fatal(err)
		}
		if st.State != nil || col.values()[n-1] != sum {
			t.Errorf("state %v, last output %d, want no copy-out and %d", st.State, col.values()[n-1], sum)
		}
	})
	t.Run("team", func(t *testing.T) {
		g, acc, col := stateGraph(graph.InitializeState|graph.CopyOutState|graph.FinalizeState, le64(0))
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"acc": {Replicas: 3, Team: graph.TeamReplicate}}}
		st, err := Run(context.Background(), g, Options{Iterations: n, Mapping: m, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(binary.LittleEndian.Uint64(st.State["acc"])); got != sum {
			t.Errorf("leader's state %d, want %d", got, sum)
		}
		if len(acc.finalized) != 3 || acc.finalized[2] != sum {
			t.Errorf("finalized per replica %v, want 3 × %d", acc.finalized, sum)
		}
		checkSeq(t, col.values(), n, func(i int64) int64 { return (2*i + 2) * (2*i + 1) / 2 })
	})
	t.Run("invalid", func(t *testing.T) {
		g, _, _ := stateGraph(graph.InitializeState, []byte{1})
		if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "initializestate with 1 bytes of initial value: expected 8") {
			t.Errorf("err = %v", err)
		}
	})
}
