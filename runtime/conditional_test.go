package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// addControl adds a source of one control token per firing: fn(index).
func addControl[T any](g *graph.Graph, name string, fn func(i int64) T) graph.OutPort[T] {
	a := g.AddActor(name, graph.Stateful(), graph.WithFunc(func(f *Firing) error {
		Output[T](f, 0)[0] = fn(f.Index())
		return nil
	}))
	return graph.AddOutput[T](a, "out", graph.SDF(1))
}

// mapBranch is a branch of one actor out[i] = fn(in[i]) at rate n.
func mapBranch(name string, n int, fn func(int64) int64) *graph.Graph {
	b := graph.New(name)
	a := b.AddActor("f", graph.WithFunc(func(f *Firing) error {
		in, out := Input[int64](f, 0), Output[int64](f, 0)
		for i := range in {
			out[i] = fn(in[i])
		}
		return nil
	}))
	graph.AddInput[int64](a, "in", graph.SDF(n))
	graph.AddOutput[int64](a, "out", graph.SDF(n))
	b.Expose(graph.In, "in", "f", "in", "")
	b.Expose(graph.Out, "out", "f", "out", "")
	return b
}

// pairBranch sums pairs (rate 2→1) then emits each sum and its negation
// (1→2): its minimal iteration moves 2 tokens, so a pattern of rate 4 runs
// it twice per firing.
func pairBranch() *graph.Graph {
	b := graph.New("pairs")
	s := b.AddActor("sum", graph.WithFunc(func(f *Firing) error {
		in := Input[int64](f, 0)
		Output[int64](f, 0)[0] = in[0] + in[1]
		return nil
	}))
	si := graph.AddInput[int64](s, "in", graph.SDF(2))
	so := graph.AddOutput[int64](s, "out", graph.SDF(1))
	d := b.AddActor("dup", graph.WithFunc(func(f *Firing) error {
		v := Input[int64](f, 0)[0]
		out := Output[int64](f, 0)
		out[0], out[1] = v, -v
		return nil
	}))
	di := graph.AddInput[int64](d, "in", graph.SDF(1))
	graph.AddOutput[int64](d, "out", graph.SDF(2))
	graph.Connect(b, so, di)
	_ = si
	b.Expose(graph.In, "in", "sum", "in", "")
	b.Expose(graph.Out, "out", "dup", "out", "")
	return b
}

func TestConditionalBoolRoutesEachFiring(t *testing.T) {
	t.Parallel()
	const iters = 300
	g := graph.New("cond")
	src := addSource(g, "src", 4, -1)
	ctl := addControl(g, "ctl", func(i int64) uint8 { return uint8(i % 3 % 2) }) // 0,1,0, 0,1,0 ...
	p := g.AddIf("route", mapBranch("double", 4, func(v int64) int64 { return 2 * v }), pairBranch())
	pi := graph.AddInput[int64](p, "in", graph.SDF(4))
	po := graph.AddOutput[int64](p, "out", graph.SDF(4))
	graph.Connect(g, src, pi)
	g.Join(ctl.Port(), p.Port(graph.ControlPort))
	si, col := addSink(g, "sink", graph.SDF(4))
	graph.Connect(g, po, si)
	st, err := Run(context.Background(), g, Options{Iterations: iters, CheckEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	got := col.values()
	if len(got) != 4*iters {
		t.Fatalf("got %d tokens, want %d", len(got), 4*iters)
	}
	for k := int64(0); k < iters; k++ {
		in := []int64{4 * k, 4*k + 1, 4*k + 2, 4*k + 3}
		var want []int64
		if k%3%2 == 1 {
			for _, v := range in {
				want = append(want, 2*v)
			}
		} else {
			a, b := in[0]+in[1], in[2]+in[3]
			want = []int64{a, -a, b, -b}
		}
		for i, w := range want {
			if got[4*k+int64(i)] != w {
				t.Fatalf("firing %d token %d = %d, want %d (%v)", k, i, got[4*k+int64(i)], w, got[4*k:4*k+4])
			}
		}
	}
	b := st.Actor("route").Branches
	if len(b) != 2 || b[1] != iters/3 || b[0] != iters-iters/3 {
		t.Errorf("branch counts %v, want [%d %d]", b, iters-iters/3, iters/3)
	}
}

// accBranch is a running sum kept on an inner cycle with one initial
// token: its state must survive from one pattern firing to the next.
func accBranch() *graph.Graph {
	b := graph.New("acc")
	a := b.AddActor("acc", graph.WithFunc(func(f *Firing) error {
		s := Input[int64](f, 1)[0] + Input[int64](f, 0)[0]
		Output[int64](f, 0)[0] = s
		Output[int64](f, 1)[0] = s
		return nil
	}))
	graph.AddInput[int64](a, "in", graph.SDF(1))
	si := graph.AddInput[int64](a, "state", graph.SDF(1))
	graph.AddOutput[int64](a, "out", graph.SDF(1))
	so := graph.AddOutput[int64](a, "next", graph.SDF(1))
	graph.Connect(b, so, si, graph.Initial(1))
	b.Expose(graph.In, "in", "acc", "in", "")
	b.Expose(graph.Out, "out", "acc", "out", "")
	return b
}

func TestConditionalNWayKeepsBranchState(t *testing.T) {
	t.Parallel()
	const iters = 240
	g := graph.New("nway")
	src := addSource(g, "src", 2, -1)
	ctl := addControl(g, "ctl", func(i int64) int32 { return int32(i % 3) })
	p := g.AddConditional("case", graph.TypeOf[int32](), []*graph.Graph{
		mapBranch("neg", 2, func(v int64) int64 { return -v }),
		accBranch(),
		mapBranch("id", 2, func(v int64) int64 { return v }),
	})
	pi := graph.AddInput[int64](p, "in", graph.SDF(2))
	po := graph.AddOutput[int64](p, "out", graph.SDF(2))
	graph.Connect(g, src, pi)
	g.Join(ctl.Port(), p.Port(graph.ControlPort))
	si, col := addSink(g, "sink", graph.SDF(2))
	graph.Connect(g, po, si)
	st, err := Run(context.Background(), g, Options{Iterations: iters, CheckEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	got := col.values()
	var acc int64
	for k := int64(0); k < iters; k++ {
		for i := int64(0); i < 2; i++ {
			v := 2*k + i
			var want int64
			switch k % 3 {
			case 0:
				want = -v
			case 1:
				acc += v
				want = acc
			case 2:
				want = v
			}
			if got[2*k+i] != want {
				t.Fatalf("firing %d token %d = %d, want %d", k, i, got[2*k+i], want)
			}
		}
	}
	if b := st.Actor("case").Branches; len(b) != 3 || b[0] != iters/3 || b[1] != iters/3 || b[2] != iters/3 {
		t.Errorf("branch counts %v, want %d each", b, iters/3)
	}
}

func TestConditionalBadControlValue(t *testing.T) {
	t.Parallel()
	g := graph.New("bad")
	src := addSource(g, "src", 1, -1)
	ctl := addControl(g, "ctl", func(i int64) int32 { return int32(i) })
	p := g.AddConditional("case", graph.TypeOf[int32](), []*graph.Graph{
		mapBranch("a", 1, func(v int64) int64 { return v }),
		mapBranch("b", 1, func(v int64) int64 { return v }),
	})
	graph.Connect(g, src, graph.AddInput[int64](p, "in", graph.SDF(1)))
	g.Join(ctl.Port(), p.Port(graph.ControlPort))
	si, _ := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, graph.AddOutput[int64](p, "out", graph.SDF(1)), si)
	_, err := Run(context.Background(), g, Options{Iterations: 10})
	if err == nil || !strings.Contains(err.Error(), "control value 2 at firing 2 selects no branch") {
		t.Fatalf("err = %v, want a control value error", err)
	}
}

func TestConditionalRejectsRateMismatch(t *testing.T) {
	t.Parallel()
	g := graph.New("mismatch")
	src := addSource(g, "src", 3, -1)
	ctl := addControl(g, "ctl", func(i int64) uint8 { return 0 })
	p := g.AddIf("route", mapBranch("ok", 3, func(v int64) int64 { return v }), pairBranch())
	graph.Connect(g, src, graph.AddInput[int64](p, "in", graph.SDF(3)))
	g.Join(ctl.Port(), p.Port(graph.ControlPort))
	si, _ := addSink(g, "sink", graph.SDF(3))
	graph.Connect(g, graph.AddOutput[int64](p, "out", graph.SDF(3)), si)
	_, err := Run(context.Background(), g, Options{Iterations: 1})
	if err == nil || !strings.Contains(err.Error(), "route/branch[0]/sum.in") {
		t.Fatalf("err = %v, want a GSLD violation naming route/branch[0]/sum.in", err)
	}
}
