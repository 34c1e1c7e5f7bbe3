package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// joinDAG builds a random DAG of n actors over int64 tokens: the first
// three are counters, every other actor adds one or two of the eight
// actors before it (a join waits for both producers, so a notifier often
// finds it not ready) and forwards the sum to every consumer. Channels hold
// two firings' tokens, so producers often wait for room as well. When csdf
// is set, every fourth actor is a CSDF actor whose input rates per phase
// are [2, 0, 1] and output rates [1, 1, 1] on its first port: it consumes 3
// and produces 3 per cycle, with a phase that needs no input. Each actor
// puts the sum of its inputs in its first output token and zeros in the
// others, so what the sources emit reaches the sinks exactly once. It
// returns the graph and, by actor name, the sinks' sums.
func joinDAG(t *testing.T, n int, seed uint64, csdf bool) (*graph.Graph, map[string]*int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	preds := make([][]int, n)
	succs := make([][]int, n)
	for i := 3; i < n; i++ {
		lo := max(0, i-8)
		a := lo + rng.IntN(i-lo)
		preds[i] = append(preds[i], a)
		if b := lo + rng.IntN(i-lo); b != a && rng.IntN(2) == 0 {
			preds[i] = append(preds[i], b)
		}
		for _, p := range preds[i] {
			succs[p] = append(succs[p], i)
		}
	}
	g := graph.New("joins")
	ins := make([][]graph.InPort[int64], n)
	outs := make([][]graph.OutPort[int64], n)
	sums := map[string]*int64{}
	isCSDF := func(i int) bool { return csdf && i >= 3 && i%4 == 0 }
	for i := range n {
		name := fmt.Sprintf("a%02d", i)
		ni, no := len(preds[i]), len(succs[i])
		var sum *int64
		if no == 0 {
			sum = new(int64)
			sums[name] = sum
		}
		var next int64
		fire := func(f *Firing) error {
			var v int64
			if ni == 0 {
				v = next
				next++
			}
			for p := range ni {
				for _, x := range Input[int64](f, p) {
					v += x
				}
			}
			for p := range no {
				for j := range Output[int64](f, p) {
					Output[int64](f, p)[j] = v
					v = 0 // the sum travels once per output
				}
			}
			if sum != nil {
				*sum += v
			}
			return nil
		}
		a := g.AddActor(name, graph.Stateful(), graph.WithFunc(FireFunc(fire)))
		for p := range ni {
			r := graph.SDF(1)
			if isCSDF(i) && p == 0 {
				r = graph.CSDF(2, 0, 1)
			}
			ins[i] = append(ins[i], graph.AddInput[int64](a, fmt.Sprintf("in%d", p), r))
		}
		for p := range no {
			outs[i] = append(outs[i], graph.AddOutput[int64](a, fmt.Sprintf("out%d", p), graph.SDF(1)))
		}
	}
	next := make([]int, n)
	for i := range n {
		for p, src := range preds[i] {
			graph.Connect(g, outs[src][next[src]], ins[i][p], graph.Capacity(4))
			next[src]++
		}
	}
	return g, sums
}

// TestDAGJoinsNoLostWakeup runs random DAGs of joins with tight channels,
// on several workers: a notifier queues an idle actor only when it may
// fire, and no wake-up may be lost (every actor must reach its count, and
// the watchdog must stay quiet). The values are conserved: the sinks sum
// to what the sources emitted (source firing j emits j).
func TestDAGJoinsNoLostWakeup(t *testing.T) {
	t.Parallel()
	for _, csdf := range []bool{false, true} {
		for _, workers := range []int{1, 2, 4} {
			for seed := range uint64(3) {
				t.Run(fmt.Sprintf("csdf=%v/workers=%d/seed=%d", csdf, workers, seed), func(t *testing.T) {
					g, sums := joinDAG(t, 40, seed, csdf)
					const iters = 300
					st, err := Run(context.Background(), g, Options{Iterations: iters, Workers: workers, CheckEmpty: true})
					if err != nil {
						t.Fatal(err)
					}
					rv, err := repetitions(g)
					if err != nil {
						t.Fatal(err)
					}
					var emitted, received int64
					for a, q := range rv {
						n := firings(t, st, a.Name)
						if n != q*iters {
							t.Errorf("%s fired %d times, want %d", a.Name, n, q*iters)
						}
						if len(a.Inputs) == 0 {
							emitted += n * (n - 1) / 2
						}
					}
					for _, s := range sums {
						received += *s
					}
					if len(sums) == 0 || received != emitted {
						t.Errorf("the %d sinks received %d in all: expected what the sources emitted, %d", len(sums), received, emitted)
					}
				})
			}
		}
	}
}

// TestShortFiringsTimedByRound checks the statistics of an actor whose
// firings are too short to be timed one by one: its busy time covers its
// firings, its mean is busy / firings, and min ≤ P50 ≤ max around the mean;
// with a trace, every firing is timed on its own.
func TestShortFiringsTimedByRound(t *testing.T) {
	t.Parallel()
	g := graph.New("short")
	src := addSource(g, "src", 1, -1)
	in, out := addMap(g, "m", 1, func(v int64) int64 { return v + 1 })
	si, _ := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, in, graph.Capacity(256))
	graph.Connect(g, out, si, graph.Capacity(256))
	const iters = 20000
	st, err := Run(context.Background(), g, Options{Iterations: iters, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := st.Actor("m")
	if a.Firings != iters {
		t.Fatalf("m fired %d times, want %d", a.Firings, iters)
	}
	if a.Busy <= 0 || a.Busy > st.Elapsed {
		t.Errorf("busy %v: expected in (0, elapsed %v]", a.Busy, st.Elapsed)
	}
	if mean := a.Busy / time.Duration(a.Firings); a.Mean < mean-1 || a.Mean > mean+1 {
		t.Errorf("mean %v: expected busy / firings = %v", a.Mean, mean)
	}
	if a.Min > a.Mean || a.Max < a.Mean || a.P50 < a.Min || a.P50 > a.Max {
		t.Errorf("min %v, p50 %v, mean %v, max %v: expected min ≤ p50, mean ≤ max", a.Min, a.P50, a.Mean, a.Max)
	}
}
