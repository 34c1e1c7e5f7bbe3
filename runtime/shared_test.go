package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// sharedChain is src(1) → upd(1→1) → chk(sinkRate): upd stages its firing
// index into "v" every firing; chk records the value it sees each firing.
func sharedChain(mode graph.SharedMode, sinkRate int) (*graph.Graph, *[]int64, *sync.Mutex) {
	g := graph.New("shared")
	g.AddShared("v", graph.MustTokenType("i64"), nil, mode, "")
	src := addSource(g, "src", 1, -1)
	ui, uo := addMap(g, "upd", 1, func(v int64) int64 { return v }, graph.Stateful())
	upd := g.Actor("upd")
	inner := upd.Impls[0].Func
	upd.Impls[0].Func = FireFunc(func(f *Firing) error {
		if err := UpdateShared(f, "v", f.Index()); err != nil {
			return err
		}
		fn, _ := normalize(upd, inner)
		return fn.(FireFunc)(f)
	})
	var mu sync.Mutex
	var seen []int64
	chk := g.AddActor("chk", graph.Stateful(), graph.WithFunc(func(f *Firing) error {
		v, err := SharedValue[int64](f, "v")
		if err != nil {
			return err
		}
		mu.Lock()
		seen = append(seen, v)
		mu.Unlock()
		return nil
	}))
	graph.Connect(g, src, ui)
	graph.Connect(g, uo, graph.AddInput[int64](chk, "in", graph.SDF(sinkRate)))
	return g, &seen, &mu
}

func TestSharedSyncVisibleAtFiringBoundary(t *testing.T) {
	t.Parallel()
	const n = 2000
	g, seen, _ := sharedChain(graph.SharedSync, 1)
	st, err := Run(context.Background(), g, Options{Iterations: n, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	prev := int64(-1)
	for k, v := range *seen {
		// chk's firing k reads upd's output k, committed after upd's
		// firing k returned and published its update.
		if v < int64(k) || v < prev {
			t.Fatalf("check %d saw %d (previous %d): want ≥ %d and never going back", k, v, prev, k)
		}
		prev = v
	}
	if len(st.Shared) != 1 || st.Shared[0].Value != int64(n-1) || st.Shared[0].Updates != n || st.Shared[0].Mode != "sync" {
		t.Errorf("Stats.Shared %+v, want v = %d after %d updates", st.Shared, n-1, n)
	}
}

func TestSharedAsyncAtEndOfIteration(t *testing.T) {
	t.Parallel()
	const n = 500 // iterations: upd fires 4 times per iteration
	g, seen, _ := sharedChain(graph.SharedAsync, 4)
	st, err := Run(context.Background(), g, Options{Iterations: n, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range *seen {
		if v%4 != 3 || v < int64(4*k+3) {
			t.Fatalf("check %d saw %d: want the last update of an iteration (≡ 3 mod 4), at least %d", k, v, 4*k+3)
		}
	}
	if s := st.Shared[0]; s.Value != int64(4*n-1) || s.Updates != n {
		t.Errorf("Stats.Shared %+v, want v = %d after %d applied updates", s, 4*n-1, n)
	}
}

func TestSharedErrors(t *testing.T) {
	t.Parallel()
	g := graph.New("bad")
	g.AddShared("x", graph.MustTokenType("f32"), nil, graph.SharedSync, "")
	src := addSource(g, "src", 1, -1)
	a := g.AddActor("a", graph.WithFunc(func(f *Firing) error {
		_, err := SharedValue[int64](f, "x")
		return err
	}))
	graph.Connect(g, src, graph.AddInput[int64](a, "in", graph.SDF(1)))
	_, err := Run(context.Background(), g, Options{Iterations: 1})
	if err == nil || !strings.Contains(err.Error(), `shared variable "x" is f32 (4 bytes): accessed as a 8-byte type`) {
		t.Fatalf("err = %v", err)
	}
	g.Shared = nil
	_, err = Run(context.Background(), g, Options{Iterations: 1})
	if err == nil || !strings.Contains(err.Error(), `shared variable "x" is not declared`) {
		t.Fatalf("err = %v", err)
	}
	g2 := graph.New("dup")
	g2.AddShared("x", graph.MustTokenType("f32"), []byte{1}, graph.SharedSync, "")
	if err := g2.Validate(); err == nil || !strings.Contains(err.Error(), "initial value has 1 bytes") {
		t.Fatalf("validate: %v", err)
	}
}
