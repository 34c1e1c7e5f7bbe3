package runtime

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// saxpyChain is source -> stages × saxpy (float32, rate samples per
// firing) -> sink, the chain of bench/chain.
func saxpyChain(stages, rate int, total int64) *graph.Graph {
	g := graph.New("saxpy")
	var made int64
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		if made >= total {
			return ErrEndOfStream
		}
		out := Output[float32](f, 0)
		for i := range out {
			out[i] = float32(i)
		}
		made += int64(len(out))
		return nil
	})))
	prev := graph.AddOutput[float32](src, "out", graph.SDF(rate))
	for s := range stages {
		a := g.AddActor(fmt.Sprintf("saxpy%02d", s), graph.WithFunc(FireFunc(func(f *Firing) error {
			in, out := Input[float32](f, 0), Output[float32](f, 0)
			out = out[:len(in)]
			for i, x := range in {
				out[i] = 1.0001*x + 0.5
			}
			return nil
		})))
		graph.Connect(g, prev, graph.AddInput[float32](a, "in", graph.SDF(rate)))
		prev = graph.AddOutput[float32](a, "out", graph.SDF(rate))
	}
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error { return nil })))
	graph.Connect(g, prev, graph.AddInput[float32](sink, "in", graph.SDF(rate)))
	return g
}

// BenchmarkFusedChain runs the 16-stage saxpy chain of bench/chain fused
// and unfused; an op is one sample through every stage.
func BenchmarkFusedChain(b *testing.B) {
	for _, no := range []bool{false, true} {
		b.Run(fmt.Sprintf("nofuse=%v", no), func(b *testing.B) {
			n := max(int64(b.N), 1<<20)
			st, err := Run(context.Background(), saxpyChain(16, 1024, n), Options{NoFuseCPU: no})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n)/st.Elapsed.Seconds(), "samples/s")
		})
	}
}
