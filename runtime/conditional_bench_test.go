package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// benchWork is the work of one firing: a degree-16 polynomial of each f32
// token (Horner), about 2 µs per 1024 tokens on the 2-core host.
func benchWork(f *Firing) error {
	in, out := Input[float32](f, 0), Output[float32](f, 0)
	for i := range in {
		x, y := in[i], float32(1)
		for k := 0; k < 16; k++ {
			y = y*x + 0.5
		}
		out[i] = y
	}
	return nil
}

func benchEnds(g *graph.Graph, n int) (graph.OutPort[float32], graph.InPort[float32]) {
	nop := func(f *Firing) error { return nil }
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(FireFunc(nop)))
	k := g.AddActor("sink", graph.Stateful(), graph.WithFunc(FireFunc(nop)))
	return graph.AddOutput[float32](s, "out", graph.SDF(n)), graph.AddInput[float32](k, "in", graph.SDF(n))
}

// workBranch is one actor doing benchWork at rate n.
func workBranch(name string, n int) *graph.Graph {
	b := graph.New(name)
	a := b.AddActor("work", graph.WithFunc(FireFunc(benchWork)))
	graph.AddInput[float32](a, "in", graph.SDF(n))
	graph.AddOutput[float32](a, "out", graph.SDF(n))
	b.Expose(graph.In, "in", "work", "in", "")
	b.Expose(graph.Out, "out", "work", "out", "")
	return b
}

// plainChain is src → work → sink at n tokens per firing.
func plainChain(n int) *graph.Graph {
	g := graph.New("plain")
	so, ki := benchEnds(g, n)
	a := g.AddActor("work", graph.WithFunc(FireFunc(benchWork)))
	graph.Connect(g, so, graph.AddInput[float32](a, "in", graph.SDF(n)))
	graph.Connect(g, graph.AddOutput[float32](a, "out", graph.SDF(n)), ki)
	return g
}

// condChain is src → if(ctl){work}else{work} → sink, the control
// alternating, at n tokens per firing.
func condChain(n int) *graph.Graph {
	g := graph.New("cond")
	so, ki := benchEnds(g, n)
	ctl := addControl(g, "ctl", func(i int64) uint8 { return uint8(i & 1) })
	p := g.AddIf("route", workBranch("a", n), workBranch("b", n))
	graph.Connect(g, so, graph.AddInput[float32](p, "in", graph.SDF(n)))
	g.Join(ctl.Port(), p.Port(graph.ControlPort))
	graph.Connect(g, graph.AddOutput[float32](p, "out", graph.SDF(n)), ki)
	return g
}

// BenchmarkConditionalOverhead compares one iteration of the conditional
// pattern (fused mode) with an unconditional chain of the same work, at
// 1024-token firings; the overhead is the ratio of their ns/op.
func BenchmarkConditionalOverhead(b *testing.B) {
	for _, c := range []struct {
		name string
		g    func(int) *graph.Graph
	}{{"plain", plainChain}, {"fused", condChain}} {
		b.Run(fmt.Sprint(c.name, "/n=1024"), func(b *testing.B) {
			g := c.g(1024)
			b.SetBytes(1024 * 4)
			b.ResetTimer()
			if _, err := Run(context.Background(), g, Options{Iterations: int64(b.N), Workers: 2}); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// processChain is the same conditional wired by hand: src → switch →
// {work | work} → select → sink, switch and select as processes moving
// n-token blocks, for iters control tokens.
func processChain(n int, iters int64) *graph.Graph {
	g := graph.New("processes")
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(func(f *Firing) error {
		if f.Index() >= iters {
			return ErrEndOfStream
		}
		return nil
	}))
	so := graph.AddOutput[float32](s, "out", graph.SDF(n))
	k := g.AddActor("sink", graph.Stateful(), graph.WithFunc(func(f *Firing) error { return nil }))
	ki := graph.AddInput[float32](k, "in", graph.SDF(n))
	c := g.AddActor("ctl", graph.Stateful(), graph.WithFunc(func(f *Firing) error {
		if f.Index() >= iters {
			return ErrEndOfStream
		}
		Output[uint8](f, 0)[0] = uint8(f.Index() & 1)
		return nil
	}))
	co := graph.AddOutput[uint8](c, "out", graph.SDF(1))
	params := map[string]any{"block": n}
	sw := g.AddActor("sw", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "switch", Params: params}))
	se := g.AddActor("se", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "select", Params: params}))
	graph.Connect(g, co, graph.AddInput[uint8](sw, "ctl", graph.Dynamic()))
	graph.Connect(g, co, graph.AddInput[uint8](se, "ctl", graph.Dynamic()))
	graph.Connect(g, so, graph.AddInput[float32](sw, "in", graph.Dynamic()))
	var outs []graph.OutPort[float32]
	for i, name := range []string{"a", "b"} {
		w := g.AddActor(name, graph.WithFunc(FireFunc(benchWork)))
		graph.Connect(g, graph.AddOutput[float32](sw, fmt.Sprint("out", i), graph.Dynamic()), graph.AddInput[float32](w, "in", graph.SDF(n)))
		outs = append(outs, graph.AddOutput[float32](w, "out", graph.SDF(n)))
	}
	for i, o := range outs {
		graph.Connect(g, o, graph.AddInput[float32](se, fmt.Sprint("in", i), graph.Dynamic()))
	}
	graph.Connect(g, graph.AddOutput[float32](se, "out", graph.Dynamic()), ki)
	return g
}

// BenchmarkConditionalProcesses runs the hand-wired switch/select form
// (processes mode); compare its ns/op with BenchmarkConditionalOverhead's.
func BenchmarkConditionalProcesses(b *testing.B) {
	g := processChain(1024, int64(b.N))
	b.SetBytes(1024 * 4)
	b.ResetTimer()
	if _, err := Run(context.Background(), g, Options{Workers: 2}); err != nil {
		b.Fatal(err)
	}
}
