package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
)

// randomBranch makes a chain of 1–3 actors with random rates in 1..3 and
// a last actor that brings the chain's gain back to 1, so that every
// branch moves as many tokens out as in. Each actor counts its firings.
func randomBranch(rng *rand.Rand, name string, fired map[string]*atomic.Int64) *graph.Graph {
	b := graph.New(name)
	n := 1 + rng.IntN(3)
	num, den := 1, 1 // product of consumption and production rates
	var prev graph.OutPort[int64]
	add := func(i, c, p int) {
		an := fmt.Sprintf("a%d", i)
		cnt := &atomic.Int64{}
		fired[name+"/"+an] = cnt
		a := b.AddActor(an, graph.WithFunc(func(f *Firing) error {
			cnt.Add(1)
			in, out := Input[int64](f, 0), Output[int64](f, 0)
			var s int64
			for _, v := range in {
				s += v
			}
			for k := range out {
				out[k] = s + int64(k)
			}
			return nil
		}))
		ip := graph.AddInput[int64](a, "in", graph.SDF(c))
		op := graph.AddOutput[int64](a, "out", graph.SDF(p))
		if i == 0 {
			b.Expose(graph.In, "in", an, "in", "")
		} else {
			graph.Connect(b, prev, ip)
		}
		prev = op
	}
	for i := 0; i < n; i++ {
		c, p := 1+rng.IntN(3), 1+rng.IntN(3)
		num, den = num*c, den*p
		add(i, c, p)
	}
	gd := gcdInt(num, den)
	add(n, den/gd, num/gd)
	b.Expose(graph.Out, "out", fmt.Sprintf("a%d", n), "out", "")
	return b
}

func gcdInt(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// TestConditionalRandomGraphsProperty: random valid conditional patterns
// never deadlock, every control value runs its branch exactly once, and
// every inner actor fires its per-branch repetition times the number of
// times its branch was chosen.
func TestConditionalRandomGraphsProperty(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 25; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 13))
			nb := 2 + rng.IntN(3)
			fired := map[string]*atomic.Int64{}
			var branches []*graph.Graph
			for k := 0; k < nb; k++ {
				branches = append(branches, randomBranch(rng, fmt.Sprint("b", k), fired))
			}
			// The pattern's rate is the lcm of the branches' minimal
			// consumptions.
			rate := 1
			for _, b := range branches {
				rv, err := analysis.RepetitionVector(b)
				if err != nil {
					t.Fatal(err)
				}
				c := int(rv.Firings["a0"]) * b.Actor("a0").Inputs[0].Rate.Sum()
				rate = rate / gcdInt(rate, c) * c
			}
			ctlSeed := rng.Uint64()
			choose := func(i int64) int32 {
				return int32(rand.New(rand.NewPCG(ctlSeed, uint64(i))).IntN(nb))
			}
			g := graph.New("prop")
			src := addSource(g, "src", rate, -1)
			ctl := addControl(g, "ctl", choose)
			p := g.AddConditional("p", graph.TypeOf[int32](), branches)
			graph.Connect(g, src, graph.AddInput[int64](p, "in", graph.SDF(rate)))
			g.Join(ctl.Port(), p.Port(graph.ControlPort))
			si, col := addSink(g, "sink", graph.SDF(rate))
			graph.Connect(g, graph.AddOutput[int64](p, "out", graph.SDF(rate)), si)
			per, err := analysis.BranchFirings(p)
			if err != nil {
				t.Fatal(err)
			}
			const iters = 60
			st, err := Run(context.Background(), g, Options{Iterations: iters, CheckEmpty: true, Workers: 1 + int(seed%3)})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]int64, nb)
			for i := int64(0); i < iters; i++ {
				want[choose(i)]++
			}
			got := st.Actor("p").Branches
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("branch counts %v, want %v", got, want)
				}
				for an, q := range per[k] {
					if n := fired[fmt.Sprintf("b%d/%s", k, an)].Load(); n != q*want[k] {
						t.Errorf("branch %d actor %s fired %d times, want %d×%d", k, an, n, q, want[k])
					}
				}
			}
			if n := len(col.values()); n != iters*rate {
				t.Errorf("sink got %d tokens, want %d", n, iters*rate)
			}
		})
	}
}
