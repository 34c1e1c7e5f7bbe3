package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// emptyChain is src -> empty -> sink, all rate 1 on 4-byte tokens, with
// firings that do nothing.
func emptyChain() *graph.Graph {
	g := graph.New("empty")
	nop := func(f *Firing) error { return nil }
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(FireFunc(nop)))
	so := graph.AddOutput[int32](s, "out", graph.SDF(1))
	e := g.AddActor("empty", graph.WithFunc(FireFunc(nop)))
	ei := graph.AddInput[int32](e, "in", graph.SDF(1))
	eo := graph.AddOutput[int32](e, "out", graph.SDF(1))
	k := g.AddActor("sink", graph.Stateful(), graph.WithFunc(FireFunc(nop)))
	ki := graph.AddInput[int32](k, "in", graph.SDF(1))
	graph.Connect(g, so, ei)
	graph.Connect(g, eo, ki)
	return g
}

// BenchmarkFiringOverhead measures the runtime's cost per firing of empty
// rate-1 SDF actors: one op is one iteration of src -> empty -> sink, that
// is three firings; ns/firing is the figure to hold against 300 ns.
func BenchmarkFiringOverhead(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprint("workers=", workers), func(b *testing.B) {
			g := emptyChain()
			b.ReportAllocs()
			b.ResetTimer()
			st, err := Run(context.Background(), g, Options{Iterations: int64(b.N), Workers: workers})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Elapsed.Nanoseconds())/float64(3*b.N), "ns/firing")
		})
	}
}

// TestFiringOverheadAllocs checks that the steady state allocates nothing:
// a run of 10× more firings allocates no more than a short one.
func TestFiringOverheadAllocs(t *testing.T) {
	// Not parallel: testing.AllocsPerRun refuses parallel tests.
	allocs := func(n int64) float64 {
		return testing.AllocsPerRun(3, func() {
			if _, err := Run(context.Background(), emptyChain(), Options{Iterations: n, Workers: 2}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(20000), allocs(200000)
	t.Logf("allocations per run: %v for 20k iterations, %v for 200k", small, large)
	// Allow a little slack for runtime-internal allocations (timers,
	// goroutine wakeups) that do not depend on the number of firings.
	if large > small+20 {
		t.Errorf("allocations grow with firings: %v for 20k iterations, %v for 200k", small, large)
	}
}

// workGraph is src -> work -> sink with work spinning for d per firing.
func workGraph(d time.Duration) *graph.Graph {
	g := graph.New("work")
	nop := func(f *Firing) error { return nil }
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(FireFunc(nop)))
	so := graph.AddOutput[float32](s, "out", graph.SDF(16))
	w := g.AddActor("work", graph.WithFunc(FireFunc(func(f *Firing) error {
		in, out := Input[float32](f, 0), Output[float32](f, 0)
		copy(out, in)
		work(d)
		return nil
	})))
	wi := graph.AddInput[float32](w, "in", graph.SDF(16))
	wo := graph.AddOutput[float32](w, "out", graph.SDF(16))
	k := g.AddActor("sink", graph.Stateful(), graph.WithFunc(FireFunc(nop)))
	ki := graph.AddInput[float32](k, "in", graph.SDF(16))
	graph.Connect(g, so, wi)
	graph.Connect(g, wo, ki)
	return g
}

// BenchmarkReplicas measures the throughput of a stateless actor with 20 µs
// firings, with one and with two replicas (compare the firings/s).
func BenchmarkReplicas(b *testing.B) {
	for _, reps := range []int{1, 2} {
		b.Run(fmt.Sprint("replicas=", reps), func(b *testing.B) {
			m := &graph.Mapping{Actors: map[string]*graph.Placement{"work": {Replicas: reps}}}
			b.ReportAllocs()
			b.ResetTimer()
			st, err := Run(context.Background(), workGraph(20*time.Microsecond), Options{Iterations: int64(b.N), Mapping: m})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/st.Elapsed.Seconds(), "firings/s")
		})
	}
}

// workUnits is the number of iterations of busy that take about 1 µs of
// CPU, measured once (the fastest of several tries, so that preemption on
// a loaded machine does not skew it).
var workUnits = func() int {
	const n = 1 << 16
	best := time.Duration(1 << 62)
	for range 20 {
		start := time.Now()
		if busy(n) < 0 {
			panic("unreachable")
		}
		best = min(best, time.Since(start))
	}
	return max(1, int(float64(n)*float64(time.Microsecond)/float64(best)))
}()

// busy does n iterations of floating-point work.
func busy(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 1e-9
	}
	return x
}

// work does about d of CPU work (a fixed amount, unlike spin, so that a
// preempted firing does not do less work).
func work(d time.Duration) {
	if busy(workUnits*int(d/time.Microsecond)) < 0 {
		panic("unreachable")
	}
}
