package sim

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// TestFusedChain: A → B → C → D on a 2-unit pool, D stateful: A..C fuse
// into one task of two replicas costing 1 + 2 + 5 µs, the channels inside
// are gone, and D stays alone. The two units share 8 + 1 µs of work per
// iteration: period 4.5 µs (unfused, C alone would take 5 µs a firing).
// (Actors of 200 µs or more a firing are not fused: the runtime's rule.)
func TestFusedChain(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1e-6, out: 1}, stage{name: "B", cost: 2e-6, in: 1, out: 1},
		stage{name: "C", cost: 5e-6, in: 1, out: 1}, stage{name: "D", cost: 1e-6, in: 1})
	g.Actor("D").Stateful = true
	mach := runtimePool(2, 0, 0, 0, 0, 0)
	mach.Processors[0].ClockHz = 1
	if got := FusedChains(g, nil, mach, nil, false); !reflect.DeepEqual(got, [][]string{{"A", "B", "C"}}) {
		t.Fatalf("chains %v, want [[A B C]]", got)
	}
	p, err := Build(g, nil, mach, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 2 || len(p.Streams) != 1 {
		t.Fatalf("%d tasks and %d streams, want 2 and 1 (C.out->D.in)", len(p.Tasks), len(p.Streams))
	}
	ft := p.Tasks[0]
	if ft.Name != "fused(A..C)" || ft.Replicas != 2 || !near(ft.Subtasks[0].Time, 8e-6) {
		t.Errorf("fused task %s, %d replicas, %g s a firing: want fused(A..C), 2, 8e-6", ft.Name, ft.Replicas, ft.Subtasks[0].Time)
	}
	r, err := Run(p, Config{Iterations: 64})
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.Period, 4.5e-6) || r.Firings["B"] != 64 {
		t.Errorf("period %g, B fired %d: want 4.5e-6 and 64", r.Period, r.Firings["B"])
	}
	if FusedChains(g, nil, mach, nil, true) != nil {
		t.Error("NoFuseCPU: want no chain")
	}
}

// TestFusedChainBreaks: replicas, a kernel placement, a control node or
// a broadcast end a chain where the runtime's rule does.
func TestFusedChainBreaks(t *testing.T) {
	mk := func() *graph.Graph {
		g := chain(t, stage{name: "A", cost: 1e-6, out: 1}, stage{name: "B", cost: 1e-6, in: 1, out: 1},
			stage{name: "C", cost: 1e-6, in: 1, out: 1}, stage{name: "D", cost: 1e-6, in: 1})
		g.Actor("D").Stateful = true
		return g
	}
	mach := runtimePool(2, 0, 0, 0, 0, 0)
	for _, tc := range []struct {
		name string
		m    *graph.Mapping
		c    *Costs
		want [][]string
	}{
		{"replicas on B", &graph.Mapping{Actors: map[string]*graph.Placement{"B": {Device: "cpu", Replicas: 2}}}, nil, nil},
		{"B a kernel", &graph.Mapping{Actors: map[string]*graph.Placement{"B": {Device: "opencl:0:0", Impl: graph.ImplOpenCL}}}, nil, nil},
		{"C conditional", nil, &Costs{Control: map[string]Control{"C": {If: "c"}}}, [][]string{{"A", "B"}}},
		{"on cpu", &graph.Mapping{Actors: map[string]*graph.Placement{"A": {Device: "cpu"}}}, nil, [][]string{{"A", "B", "C"}}},
	} {
		if got := FusedChains(mk(), tc.m, mach, tc.c, false); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: chains %v, want %v", tc.name, got, tc.want)
		}
	}
	nonPool := runtimePool(2, 0, 0, 0, 0, 0)
	nonPool.Processors[0].Pool = false
	if got := FusedChains(mk(), nil, nonPool, nil, false); got != nil {
		t.Errorf("not a pool: chains %v, want none", got)
	}
}

// TestKernelProfileCost: a kernel actor's profile mean (an invocation's
// time over its G firings, launch included) costs G × (mean − launch/G)
// + launch per invocation, and is no cost on a CPU; an enqueue-ahead
// profile gets a note.
func TestKernelProfileCost(t *testing.T) {
	prof, err := ParseProfileFull("p.yaml", []byte(`actors:
  "K":
    firings: 64
    mean_ns: 3000000000
    kind: kernel
    device: "opencl:0:0"
    work_groups: 4
    device_mode: callback
  "A":
    mean_ns: 1000000000
`))
	if err != nil {
		t.Fatal(err)
	}
	kp := prof.Kernels["K"]
	if kp != (KernelProfile{Device: "opencl:0:0", WorkGroups: 4, Mode: "callback"}) || len(prof.Kernels) != 1 {
		t.Fatalf("kernels %+v", prof.Kernels)
	}
	gpu := &machine.Processor{Name: "g", Kind: "gpu", ClockHz: 1, Units: 1, FiringCost: 4}
	if ft := kp.FiringTime(3, gpu); !near(ft, 2) {
		t.Errorf("firing time %g s, want 3 − 4/4 = 2", ft)
	}
	costs := &Costs{Profile: prof.Mean, Kernels: prof.Kernels}
	g := chain(t, stage{name: "A", cost: 7, out: 1}, stage{name: "K", cost: 5, in: 1})
	cpu := &machine.Processor{Name: "cpu", Kind: "cpu", ClockHz: 1}
	if c, src := costs.Lookup(g.Actor("K"), cpu); src != "graph" || !near(c.Seconds, 5) {
		t.Errorf("K on a cpu: %g s from %s, want the graph's 5 s", c.Seconds, src)
	}
	mach := &machine.Machine{Name: "gpu", Processors: []*machine.Processor{gpu}}
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"A": {Device: "g"}, "K": {Device: "g", WorkGroups: 4}}}
	p, err := Build(g, m, mach, costs, Options{Capacity: map[string]int{"A.out->K.in": 8}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Tasks[1].Subtasks[0].Time; !near(got, 2) {
		t.Errorf("K's time per firing %g s, want 2", got)
	}
	costs.Kernels["K"] = KernelProfile{WorkGroups: 4, Mode: "enqueue-ahead"}
	p, err = Build(g, m, mach, costs, Options{Capacity: map[string]int{"A.out->K.in": 8}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "--device-mode callback") {
		t.Errorf("notes %q: want one about the enqueue-ahead profile", p.Notes)
	}
}
