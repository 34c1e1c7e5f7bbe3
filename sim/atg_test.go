package sim

import (
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// TestCostsAtG: a CPU actor's cost comes from the profile measured beside
// kernel actors of the G nearest that of the kernel actors beside it in
// the mapping simulated, among those that measured it (S → K → T, K on
// the gpu); without a kernel actor on a GPU, from the context-free costs.
// A kernel actor on the GPU takes its own time (callback mode) from the
// profile of the G nearest its own.
func TestCostsAtG(t *testing.T) {
	g := chain(t, stage{name: "S", cost: 1, out: 1}, stage{name: "K", in: 1, out: 1}, stage{name: "T", in: 1})
	mach := cpuGPU(1, 0, 1, 0)
	costs := &Costs{Profile: map[string]float64{"S": 2, "K": 3, "T": 2}}
	kp := KernelProfile{Device: "gpu", Mode: "callback"}
	for _, c := range []struct {
		g    int64
		mean map[string]float64
	}{{64, map[string]float64{"S": 10, "K": 99, "T": 1}}, {256, map[string]float64{"T": 5}}} {
		kp.WorkGroups = c.g
		costs.AddAtG(&Profile{Mean: c.mean, Kernels: map[string]KernelProfile{"K": kp}})
	}
	if kp, ok := costs.AtG[64].Kernels["K"]; !ok || costs.AtG[64].Mean["K"] != 99 || kp.WorkGroups != 64 {
		t.Errorf("AtG[64] %+v: expected K's own time, 99 s at G 64", costs.AtG[64])
	}
	costs.AddAtG(&Profile{Mean: map[string]float64{"T": 7}}) // no kernel actors: no G
	// An enqueue-ahead entry is a share of the device's time: not kept.
	costs.AddAt(256, &Profile{Mean: map[string]float64{"K": 1}, Kernels: map[string]KernelProfile{"K": {WorkGroups: 256, Mode: "enqueue-ahead"}}})
	if _, ok := costs.AtG[256].Kernels["K"]; ok || len(costs.AtG) != 2 {
		t.Errorf("AtG %+v: expected G 64 and 256, K's enqueue-ahead share not kept", costs.AtG)
	}
	for _, c := range []struct {
		k       *graph.Placement
		s, tOut float64
	}{
		{&graph.Placement{Device: "gpu", WorkGroups: 64}, 10, 1},
		{&graph.Placement{Device: "gpu", WorkGroups: 256}, 10, 5}, // S has no G 256 entry: the nearest G's
		{&graph.Placement{Device: "gpu", WorkGroups: 128}, 10, 5}, // T: a tie, the larger G
		{&graph.Placement{Device: "gpu", WorkGroups: 100}, 10, 1},
		{&graph.Placement{Device: "cpu"}, 2, 2},
	} {
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"S": {Device: "cpu"}, "T": {Device: "cpu"}, "K": c.k}}
		p, err := Build(g, m, mach, costs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Tasks[0].Subtasks[0].Time; !near(got, c.s) {
			t.Errorf("K at %+v: S costs %g s, want %g", *c.k, got, c.s)
		}
		if got := p.Tasks[2].Subtasks[0].Time; !near(got, c.tOut) {
			t.Errorf("K at %+v: T costs %g s, want %g", *c.k, got, c.tOut)
		}
		// On the GPU, K's own time of G 64 (99 s, less its copies and
		// launch share), whatever its G: the only G that measured it.
		if got := p.Tasks[1].Subtasks[0].Time; c.k.Device == "gpu" && !(got > 90 && got <= 99) {
			t.Errorf("K at %+v: %g s a firing, want its G 64 time (about 99 s)", *c.k, got)
		}
	}
	if got := ContextG(g, g.Actor("S"), nil, mach); got != 0 {
		t.Errorf("ContextG without a mapping %d, want 0", got)
	}
}
