package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// switchSelect wires src → switch → {double | negate} → select → sink by
// hand, with one control stream feeding both; block tokens per control
// token, n control tokens.
func switchSelect(block int, n int64, choose func(int64) uint8) (*graph.Graph, *collector) {
	g := graph.New("bdf")
	src := addSource(g, "src", block, int64(block)*n)
	c := g.AddActor("ctl", graph.Stateful(), graph.WithFunc(func(f *Firing) error {
		if f.Index() >= n {
			return ErrEndOfStream
		}
		Output[uint8](f, 0)[0] = choose(f.Index())
		return nil
	}))
	ctl := graph.AddOutput[uint8](c, "out", graph.SDF(1))
	params := map[string]any{"block": block}
	sw := g.AddActor("sw", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "switch", Params: params}))
	swc := graph.AddInput[uint8](sw, "ctl", graph.Dynamic())
	swi := graph.AddInput[int64](sw, "in", graph.Dynamic())
	sw0 := graph.AddOutput[int64](sw, "out0", graph.Dynamic())
	sw1 := graph.AddOutput[int64](sw, "out1", graph.Dynamic())
	se := g.AddActor("se", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "select", Params: params}))
	sec := graph.AddInput[uint8](se, "ctl", graph.Dynamic())
	se0 := graph.AddInput[int64](se, "in0", graph.Dynamic())
	se1 := graph.AddInput[int64](se, "in1", graph.Dynamic())
	seo := graph.AddOutput[int64](se, "out", graph.Dynamic())
	ai, ao := addMap(g, "double", block, func(v int64) int64 { return 2 * v })
	bi, bo := addMap(g, "negate", block, func(v int64) int64 { return -v })
	si, col := addSink(g, "sink", graph.SDF(block))
	graph.Connect(g, src, swi)
	graph.Connect(g, ctl, swc)
	graph.Connect(g, ctl, sec)
	graph.Connect(g, sw0, ai)
	graph.Connect(g, sw1, bi)
	graph.Connect(g, ao, se0)
	graph.Connect(g, bo, se1)
	graph.Connect(g, seo, si)
	return g, col
}

func TestSwitchSelectProcesses(t *testing.T) {
	t.Parallel()
	const block, n = 8, 500
	choose := func(i int64) uint8 { return uint8(i * 7 % 5 % 2) }
	g, col := switchSelect(block, n, choose)
	st, err := Run(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := col.values()
	if len(got) != block*n {
		t.Fatalf("got %d tokens, want %d", len(got), block*n)
	}
	var ones int64
	for k := int64(0); k < n; k++ {
		c := choose(k)
		ones += int64(c)
		for i := int64(0); i < block; i++ {
			v := k*block + i
			want := 2 * v
			if c == 1 {
				want = -v
			}
			if got[k*block+i] != want {
				t.Fatalf("block %d token %d = %d, want %d", k, i, got[k*block+i], want)
			}
		}
	}
	if f := firings(t, st, "negate"); f != ones {
		t.Errorf("negate fired %d times, want %d", f, ones)
	}
}

func TestSwitchBadShapeAndValue(t *testing.T) {
	t.Parallel()
	g := graph.New("bad")
	a := g.AddActor("sw", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "switch"}))
	graph.AddInput[float32](a, "ctl", graph.Dynamic())
	graph.AddInput[float32](a, "in", graph.Dynamic())
	graph.AddOutput[float32](a, "o", graph.Dynamic())
	if _, err := Resolve(a); err == nil || !strings.Contains(err.Error(), "control port of an integer type") {
		t.Fatalf("err = %v", err)
	}
	g2, _ := switchSelect(1, 10, func(i int64) uint8 { return uint8(i) })
	if _, err := Run(context.Background(), g2, Options{}); err == nil || !strings.Contains(err.Error(), "control token 2 has value 2: expected 0..1") {
		t.Fatalf("err = %v", err)
	}
}
