package scenario_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device/scenario"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// The producer and consumer kernel actors around the benchmark's chain
// (the same source in OpenCL C and CUDA C: the actor API's macros only).
const (
	prodFire = `void FIRE() {
	FOREACH(b IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, b);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) y[j] = (float)(b * BLOCK_Y_SIZE + j);
	}
}
`
	consFire = `void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(b IN PORT_s) {
		TOKEN_S_t *s = RESERVE(PORT_s, b);
		float t = 0.0f;
		for (int j = 0; j < TOKEN_X_RATE; j++) t += x[j];
		s[0] = t;
	}
}
`
)

// kernelBoth adds an actor with the same FIRE source as its OpenCL and
// CUDA implementations.
func kernelBoth(g *graph.Graph, name, src string) *graph.Actor {
	return g.AddActor(name,
		graph.WithImpl(graph.Impl{Kind: graph.ImplOpenCL, Func: src}),
		graph.WithImpl(graph.Impl{Kind: graph.ImplCUDA, Func: src}))
}

// benchChainGraph is BenchmarkChain10's shape (runtime) with an
// element-wise middle: a producer kernel, n element-wise actors of rate
// tokens ("out[i] = 0.5f * in[i] + p;", p = k), a consumer kernel reducing
// each firing to one token, and a Go sink, every kernel on device dev with
// G work-groups of 32 work-items.
func benchChainGraph(b testing.TB, dev string, n, rate, G int) (*graph.Graph, *graph.Mapping) {
	g := graph.New("chain")
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{}}
	f32 := graph.MustTokenType("f32")
	place := func(name string) { mp.Actors[name] = &graph.Placement{Device: dev, WorkGroups: G, WorkItems: 32} }
	prod := kernelBoth(g, "prod", prodFire)
	prev := prod.AddPort("y", graph.Out, f32, graph.SDF(rate), "")
	place("prod")
	for k := range n {
		name := fmt.Sprintf("e%d", k)
		a := g.AddActor(name)
		in := a.AddPort("x", graph.In, f32, graph.SDF(rate), "")
		out := a.AddPort("y", graph.Out, f32, graph.SDF(rate), "")
		if err := scenario.Elementwise(a, "out[i] = 0.5f * in[i] + p;", float32(k)); err != nil {
			b.Fatal(err)
		}
		g.Join(prev, in, graph.Capacity(2*rate*G))
		prev = out
		place(name)
	}
	cons := kernelBoth(g, "cons", consFire)
	g.Join(prev, cons.AddPort("x", graph.In, f32, graph.SDF(rate), ""), graph.Capacity(2*rate*G))
	s := cons.AddPort("s", graph.Out, f32, graph.SDF(1), "")
	place("cons")
	sink := g.AddActor("sink", graph.WithFunc(runtime.FireFunc(func(*runtime.Firing) error { return nil })))
	g.Join(s, sink.AddPort("x", graph.In, f32, graph.SDF(1), ""))
	return g, mp
}

// runChain runs the benchmark chain, fused or not, for fires iterations
// and returns the run's time (device setup and kernel builds excluded).
func runChain(b *testing.B, dev string, G, fires int, fuse bool, opts runtime.Options) time.Duration {
	b.Helper()
	g, mp := benchChainGraph(b, dev, chainStages, 256, G)
	if fuse {
		var fused []scenario.Fused
		var err error
		if g, mp, fused, err = scenario.Fuse(g, mp); err != nil || len(fused) != 1 {
			b.Fatalf("fuse: %v, %d chains: expected one", err, len(fused))
		}
	}
	opts.Mapping, opts.Iterations = mp, int64(fires)
	st, err := runtime.Run(context.Background(), g, opts)
	if err != nil {
		b.Fatal(err)
	}
	return st.Elapsed
}

// BenchmarkFusedChain10 runs a graph whose middle is a chain of 10
// element-wise kernel actors (256 f32 tokens per firing) between a
// producer and a consumer kernel, all on one device, as it is (one launch
// per actor per invocation: on CUDA each recurring round replayed as a
// CUDA Graph, and with Options.NoGraphs launch by launch) and fused by
// scenario.Fuse (the ten actors one kernel walking a 10-step scenario). It
// reports µs per graph iteration, with G = 1 firing per invocation and
// G = 8 (the runtime's invocations then compute 8 firings of the whole
// chain in one launch).
func BenchmarkFusedChain10(b *testing.B) {
	b.Run("opencl", func(b *testing.B) { d, _ := openCL(b); benchFused(b, d.Info().ID) })
	b.Run("cuda", func(b *testing.B) { d, _ := openCUDA(b); benchFused(b, d.Info().ID) })
}

func benchFused(b *testing.B, dev string) {
	const fires = 2000
	for _, G := range []int{1, 8} {
		b.Run(fmt.Sprintf("G%d", G), func(b *testing.B) {
			runChain(b, dev, G, 10, true, runtime.Options{}) // warm-up: builds, driver caches
			var un, unNG, fu, fuNG time.Duration
			for b.Loop() {
				un = runChain(b, dev, G, fires, false, runtime.Options{})
				unNG = runChain(b, dev, G, fires, false, runtime.Options{NoGraphs: true})
				fu = runChain(b, dev, G, fires, true, runtime.Options{})
				fuNG = runChain(b, dev, G, fires, true, runtime.Options{NoGraphs: true})
			}
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / fires / 1e3 }
			b.ReportMetric(us(un), "unfused-µs/iteration")
			b.ReportMetric(us(unNG), "unfused-no-graphs-µs/iteration")
			b.ReportMetric(us(fu), "fused-µs/iteration")
			b.ReportMetric(us(fuNG), "fused-no-graphs-µs/iteration")
			b.ReportMetric(un.Seconds()/fu.Seconds(), "unfused/fused")
			b.ReportMetric(unNG.Seconds()/fu.Seconds(), "unfused-no-graphs/fused")
		})
	}
}
