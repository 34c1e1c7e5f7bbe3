package mapping

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
)

func chain(t *testing.T, costs ...float64) *graph.Graph {
	t.Helper()
	g := graph.New("chain")
	f32 := graph.MustTokenType("f32")
	var prev *graph.Port
	for i, c := range costs {
		a := g.AddActor(string(rune('A'+i)), graph.WithCost(time.Duration(c*float64(time.Second))))
		if prev != nil {
			g.Join(prev, a.AddPort("in", graph.In, f32, graph.SDF(1), ""))
		}
		if i < len(costs)-1 {
			prev = a.AddPort("out", graph.Out, f32, graph.SDF(1), "")
		}
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

func freePair(units1 int) *machine.Machine {
	return &machine.Machine{Name: "pair",
		Processors: []*machine.Processor{
			{Name: "p0", Kind: "cpu", ClockHz: 1, Units: 1},
			{Name: "p1", Kind: "cpu", ClockHz: 1, Units: units1}},
		Interconnects: []*machine.Interconnect{{Name: "link", ClockHz: 1, Elements: []string{"p0", "p1"}, Channels: 1, Multiplexable: true}}}
}

func TestHEFTSpreadsPipeline(t *testing.T) {
	in := Input{Graph: chain(t, 3, 5), Machine: freePair(1)}
	f, err := HEFTFound(in, 50)
	if err != nil {
		t.Fatal(err)
	}
	if f.Mapping.Actors["A"].Device == f.Mapping.Actors["B"].Device {
		t.Errorf("both stages on %s: expected one per processor", f.Mapping.Actors["A"].Device)
	}
	if math.Abs(f.Period-5) > 1e-9 {
		t.Errorf("period %g, want 5", f.Period)
	}
}

func TestHEFTUsesPerProcessorCosts(t *testing.T) {
	m := freePair(1)
	m.Processors[1].Kind = "gpu"
	costs := &sim.Costs{Actors: map[string]map[string]sim.Cost{
		"B": {"cpu": {Seconds: 10}, "gpu": {Seconds: 1}},
		"A": {"gpu": {Never: true}},
	}}
	mp, _, err := HEFTMapping(Input{Graph: chain(t, 1, 0, 1), Machine: m, Costs: costs})
	if err != nil {
		t.Fatal(err)
	}
	if mp.Actors["B"].Device != "p1" || mp.Actors["A"].Device != "p0" {
		t.Errorf("mapping A→%s B→%s: want A on p0 (never on gpu), B on the gpu p1", mp.Actors["A"].Device, mp.Actors["B"].Device)
	}
	// Pinning B to the CPU is respected.
	fixed := &graph.Mapping{Actors: map[string]*graph.Placement{"B": {Device: "p0"}}}
	mp, _, err = HEFTMapping(Input{Graph: chain(t, 1, 0, 1), Machine: m, Costs: costs, Fixed: fixed})
	if err != nil {
		t.Fatal(err)
	}
	if mp.Actors["B"].Device != "p0" {
		t.Errorf("pinned B placed on %s", mp.Actors["B"].Device)
	}
}

func TestSearchFindsReplicas(t *testing.T) {
	in := Input{Graph: chain(t, 1, 6, 1), Machine: freePair(2)}
	h, err := HEFTFound(in, 64)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(h.Period-6) > 1e-9 {
		t.Fatalf("HEFT period %g, want 6", h.Period)
	}
	s, err := Search(context.Background(), in, SearchOptions{Seed: 7, Evaluations: 120})
	if err != nil {
		t.Fatal(err)
	}
	if s.Period > 3+1e-9 {
		t.Errorf("search period %g with %+v: want 3 (B with two replicas on p1's two units)", s.Period, *s.Mapping.Actors["B"])
	}
	s2, err := Search(context.Background(), in, SearchOptions{Seed: 7, Evaluations: 120})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, s2) {
		t.Error("same seed, different answers")
	}
	var buf bytes.Buffer
	if err := WriteMapping(&buf, s.Mapping, "found by search"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"B": {device: "p1", replicas: 2}`) {
		t.Errorf("written mapping:\n%s", buf.String())
	}
}

// TestSearchFixedCapacities: with FixedCapacities no move of the search
// changes a channel's capacity (a mapping file carries none), and the
// answer raises none; without, some moves do.
func TestSearchFixedCapacities(t *testing.T) {
	in := Input{Graph: chain(t, 1, 6, 1), Machine: freePair(2)}
	for _, fixed := range []bool{true, false} {
		s, err := newSearcher(in, SearchOptions{Seed: 7, FixedCapacities: fixed})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 1))
		cur, moved := s.initial(), 0
		for range 1000 {
			next, ok := s.neighbour(rng, cur)
			if ok && !slices.Equal(next.caps, cur.caps) {
				moved++
			}
		}
		if fixed != (moved == 0) {
			t.Errorf("FixedCapacities %v: %d of 1000 moves changed a capacity", fixed, moved)
		}
		f, err := Search(context.Background(), in, SearchOptions{Seed: 7, Evaluations: 200, FixedCapacities: fixed})
		if err != nil {
			t.Fatal(err)
		}
		if fixed && len(f.Capacity) > 0 {
			t.Errorf("FixedCapacities: capacities %v raised, want none", f.Capacity)
		}
	}
}

// TestSearchSpreadsOverThePool: on a pool processor a replica takes no
// unit of its own, so of two mappings of one period the search ranks
// first the one whose stateless actor has more replicas; on a processor
// of static units, the one with fewer.
func TestSearchSpreadsOverThePool(t *testing.T) {
	g := graph.New("bound")
	f32 := graph.MustTokenType("f32")
	a := g.AddActor("A", graph.Stateful(), graph.WithCost(400*time.Microsecond))
	b := g.AddActor("B", graph.WithCost(100*time.Microsecond))
	c := g.AddActor("C", graph.Stateful(), graph.WithCost(100*time.Microsecond))
	g.Join(a.AddPort("out", graph.Out, f32, graph.SDF(1), ""), b.AddPort("in", graph.In, f32, graph.SDF(1), ""))
	g.Join(b.AddPort("out", graph.Out, f32, graph.SDF(1), ""), c.AddPort("in", graph.In, f32, graph.SDF(1), ""))
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, pool := range []bool{true, false} {
		m := &machine.Machine{Name: "host", Processors: []*machine.Processor{
			{Name: "cpu", Kind: "cpu", ClockHz: 1e9, Units: 8, Pool: pool}}}
		s, err := newSearcher(Input{Graph: g, Machine: m}, SearchOptions{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		one := s.initial()
		eight := one.clone()
		eight.reps[slices.IndexFunc(s.pr.g.Actors, func(x *graph.Actor) bool { return x.Name == "B" })] = 8
		s1, s8 := s.eval(one), s.eval(eight)
		if !approx(s1.period, s8.period) {
			t.Fatalf("pool %v: periods %g s with B×1 and %g with B×8: expected one period (A bounds it)", pool, s1.period, s8.period)
		}
		if better(s8, s1) != pool || better(s1, s8) == pool {
			t.Errorf("pool %v: B×8 scored %+v, B×1 %+v: expected B×%d first", pool, s8, s1, map[bool]int{true: 8, false: 1}[pool])
		}
	}
}
