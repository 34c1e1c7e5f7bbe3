package mapping

import (
	"context"
	"math"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
)

// TestMapPredictsWhatItWrites: the throughput sluice map predicts for
// its choice is the simulation of the runnable mapping it writes, kernel
// settings included. S (cpu) → K (a CUDA kernel, the bottleneck) → T
// (cpu) on a GPU of 4096 resident threads, K profiled at G 16 in
// callback mode (8 µs a firing), the settings giving K 64 work-items: four
// invocations of G 16 run at once, one of G 64 fills the GPU in the time
// of one of G 16, one of G 256 lasts four waves. The strategies used to
// simulate K's placements without work-items (no occupancy, no waves:
// 8 µs a firing whatever G), so they predicted other periods than the
// runnable mappings they wrote.
func TestMapPredictsWhatItWrites(t *testing.T) {
	g := graph.New("skt")
	f32 := graph.MustTokenType("f32")
	s := g.AddActor("S")
	k := g.AddActor("K", graph.WithImpl(graph.Impl{Kind: graph.ImplCUDA, Source: "k.cu"}))
	tt := g.AddActor("T", graph.Stateful())
	g.Join(s.AddPort("o", graph.Out, f32, graph.SDF(1024), ""), k.AddPort("i", graph.In, f32, graph.SDF(1024), ""))
	g.Join(k.AddPort("o", graph.Out, f32, graph.SDF(1024), ""), tt.AddPort("i", graph.In, f32, graph.SDF(1024), ""))
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	mach := &machine.Machine{Name: "cpu-gpu",
		Processors: []*machine.Processor{
			{Name: "cpu", Kind: "cpu", ClockHz: 1e9, Units: 4, HasIO: true},
			{Name: "cuda0", Kind: "gpu", ClockHz: 1e9, Units: 1, FiringCost: 5000, Threads: 4096}},
		Interconnects: []*machine.Interconnect{{Name: "pcie", ClockHz: 1e9, Elements: []string{"cpu", "cuda0"},
			StartLatency: 5000, Bandwidth: 20, Channels: 2, Multiplexable: true}}}
	costs := &sim.Costs{
		Actors: map[string]map[string]sim.Cost{"S": {"cpu": {Seconds: 0.5e-6}, "gpu": {Never: true}}, "T": {"cpu": {Seconds: 0.5e-6}, "gpu": {Never: true}},
			"K": {"cpu": {Seconds: 400e-6}}},
		Profile: map[string]float64{"K": 8e-6},
		Kernels: map[string]sim.KernelProfile{"K": {Device: "cuda:0", WorkGroups: 16, Mode: "callback"}},
	}
	settings := &graph.Mapping{Actors: map[string]*graph.Placement{"K": {Device: "cuda:0", Impl: graph.ImplCUDA, WorkGroups: 64, WorkItems: 64}}}
	in := Input{Graph: g, Machine: mach, Costs: costs}
	res, err := Map(context.Background(), in, MapOptions{Strategy: "all", Seed: 1, Evaluations: 80, Iterations: 64,
		WorkGroups: []int{16, 64, 256}, WorkItems: 32, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	if pl := res.Runnable.Actors["K"]; pl == nil || pl.Device != "cuda:0" || pl.WorkItems != 64 {
		t.Fatalf("runnable placement of K %+v: expected it on cuda:0 with the settings' 64 work-items", pl)
	}
	pr, err := prepare(in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := evaluateSteady(in, res.Runnable, res.Best.Capacity, steadyIterations(res.Runnable, pr.rv, 64))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Period-res.Best.Period) > 1e-9*r.Period {
		t.Errorf("%s's choice predicted at period %.6g s; the runnable mapping it wrote simulates at %.6g s: expected the same",
			res.Best.Strategy, res.Best.Period, r.Period)
	}
	for _, f := range res.Found {
		if f.Strategy != "heft" {
			continue
		}
		rh, err := evaluateSteady(in, f.Mapping, nil, steadyIterations(f.Mapping, pr.rv, 64))
		if err != nil {
			t.Fatal(err)
		}
		if pl := f.Mapping.Actors["K"]; pl.WorkItems != 64 || math.Abs(rh.Period-f.Period) > 1e-9*rh.Period {
			t.Errorf("HEFT's mapping: K with %d work-items, predicted period %.6g s, simulated %.6g s: expected 64 work-items and the same period",
				pl.WorkItems, f.Period, rh.Period)
		}
	}
}
