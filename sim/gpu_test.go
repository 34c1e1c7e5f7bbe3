package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// cpuGPU is a cpu and a gpu at 1 Hz (one cycle = one second) joined by a
// link of start latency l and bandwidth b bytes per cycle; the gpu's
// launch costs launch cycles and it keeps threads threads resident.
func cpuGPU(l, b, launch, threads int64) *machine.Machine {
	return &machine.Machine{Name: "cpu-gpu",
		Processors: []*machine.Processor{
			{Name: "cpu", Kind: "cpu", ClockHz: 1, Units: 4, HasIO: true},
			{Name: "gpu", Kind: "gpu", ClockHz: 1, Units: 1, FiringCost: launch, Threads: threads}},
		Interconnects: []*machine.Interconnect{{Name: "pcie", ClockHz: 1, Elements: []string{"cpu", "gpu"},
			StartLatency: l, Bandwidth: b, Channels: 2, Multiplexable: true}}}
}

// TestKernelCopiesNotCountedTwice: a callback-mode profile of a kernel
// actor includes the copies of its host-staged ports, which the
// simulator charges on the link; Build takes them out of its time per
// firing. S (cpu) → K1 → K2 (gpu, G = 4, 1000-byte tokens) → T (cpu), on
// a link of L = 1000 s and 10 bytes/s: K1's input copy is 1000/10 +
// 1000/4 = 350 s a firing, its output a ring in device memory (K2 was a
// kernel actor on the same device in the profile); K1's mean 1000 s less
// 350, less the launch's share 400/4: 550 s. K2 (mean 400 s) copies its
// output (350 s): kept at the launch's share, so 0 s, with a note. From an
// enqueue-ahead profile nothing is taken out but the launch.
func TestKernelCopiesNotCountedTwice(t *testing.T) {
	g := chain(t, stage{name: "S", cost: 1, out: 1, tokenSize: 1000}, stage{name: "K1", in: 1, out: 1, tokenSize: 1000},
		stage{name: "K2", in: 1, out: 1, tokenSize: 1000}, stage{name: "T", in: 1})
	mach := cpuGPU(1000, 10, 400, 0)
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"S": {Device: "cpu"}, "T": {Device: "cpu"},
		"K1": {Device: "gpu", WorkGroups: 4}, "K2": {Device: "gpu", WorkGroups: 4}}}
	kp := KernelProfile{Device: "cuda:0", WorkGroups: 4, Mode: "callback"}
	costs := &Costs{Profile: map[string]float64{"S": 1, "K1": 1000, "K2": 400, "T": 1},
		Kernels: map[string]KernelProfile{"K1": kp, "K2": kp}}
	if cp := HostCopyTime(g, g.Actor("K1"), kp, costs.Kernels, mach, mach.Processors[1]); !near(cp, 350) {
		t.Errorf("K1's host copies %g s a firing, want 350", cp)
	}
	p, err := Build(g, m, mach, costs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Tasks[1].Subtasks[0].Time; !near(got, 550) {
		t.Errorf("K1's time per firing %g s, want 550", got)
	}
	if got := p.Tasks[2].Subtasks[0].Time; !near(got, 0) {
		t.Errorf("K2's time per firing %g s, want 0 (the floor)", got)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "kernel actor K2") {
		t.Errorf("notes %q: want one about K2's floor", p.Notes)
	}
	if _, err := Run(p, Config{Iterations: 16}); err != nil {
		t.Fatal(err)
	}
	// Without the profile's other kernel actor, K1's output was copied too.
	if cp := HostCopyTime(g, g.Actor("K1"), kp, map[string]KernelProfile{"K1": kp}, mach, mach.Processors[1]); !near(cp, 700) {
		t.Errorf("K1's host copies with K2 on the host %g s, want 700", cp)
	}
	kp.Mode = "enqueue-ahead"
	costs.Kernels = map[string]KernelProfile{"K1": kp, "K2": kp}
	if p, err = Build(g, m, mach, costs, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := p.Tasks[1].Subtasks[0].Time; !near(got, 900) {
		t.Errorf("K1's time per firing from enqueue-ahead %g s, want 1000 − 100 = 900", got)
	}
}

// TestKernelOccupancy: on a gpu with threads, invocations of a stateless
// kernel actor run at once while their G × I threads fit. K (1 s a
// firing, G = 4, I = 256, no launch) behind a free source: one
// invocation (4 s) at a time is a period of 1 s; with 2048 threads two
// fit (0.5 s), with 4096 four (0.25 s); with 1024 threads, no work-items
// or a stateful K, one at a time again. The gpu's utilization is the
// share of its threads held: a quarter for the stateful K on 4096.
func TestKernelOccupancy(t *testing.T) {
	g := chain(t, stage{name: "S", out: 1}, stage{name: "K", cost: 1, in: 1, out: 1}, stage{name: "T", in: 1})
	for _, tc := range []struct {
		threads   int64
		items     int
		stateful  bool
		want      float64
		invocs    int
		wantLanes int
		util      float64
	}{
		{0, 256, false, 1, 0, 1, 1}, {1024, 256, false, 1, 1, 1, 1}, {2048, 256, false, 0.5, 2, 2, 1},
		{4096, 256, false, 0.25, 4, 4, 1}, {4096, 0, false, 1, 0, 1, 1}, {4096, 256, true, 1, 0, 1, 0.25},
	} {
		g.Actor("K").Stateful = tc.stateful
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"S": {Device: "cpu"}, "T": {Device: "cpu"},
			"K": {Device: "gpu", WorkGroups: 4, WorkItems: tc.items}}}
		p, err := Build(g, m, cpuGPU(0, 0, 0, tc.threads), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Tasks[1].Invocations != tc.invocs {
			t.Errorf("%+v: %d invocations at once, want %d", tc, p.Tasks[1].Invocations, tc.invocs)
		}
		r, err := Run(p, Config{Iterations: 400})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Period-tc.want) > 0.05*tc.want {
			t.Errorf("%+v: period %g s, want %g", tc, r.Period, tc.want)
		}
		if u := r.Utilization["gpu"]; math.Abs(u-tc.util) > 0.05*tc.util {
			t.Errorf("%+v: gpu utilization %g, want %g (the threads' share)", tc, u, tc.util)
		}
		if r.Units[1] != tc.wantLanes {
			t.Errorf("%+v: %d gpu lanes, want %d", tc, r.Units[1], tc.wantLanes)
		}
	}
}

// TestKernelOccupancyShared: two kernel actors of G × I = 1024 threads on
// a gpu of 2048 run one invocation each at once (a chain K1 → K2, 1 s a
// firing each, G = 4): 4 s an invocation, both busy, a period of 1 s
// where one invocation at a time gives 2 s; a third actor of the whole
// gpu's threads runs alone.
func TestKernelOccupancyShared(t *testing.T) {
	g := chain(t, stage{name: "S", out: 1}, stage{name: "K1", cost: 1, in: 1, out: 1}, stage{name: "K2", cost: 1, in: 1, out: 1}, stage{name: "T", in: 1})
	g.Actor("K1").Stateful, g.Actor("K2").Stateful = true, true
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"S": {Device: "cpu"}, "T": {Device: "cpu"},
		"K1": {Device: "gpu", WorkGroups: 4, WorkItems: 256}, "K2": {Device: "gpu", WorkGroups: 4, WorkItems: 256}}}
	for _, tc := range []struct {
		threads int64
		items   int
		want    float64
	}{{0, 256, 2}, {2048, 256, 1}, {2048, 512, 2}} {
		m.Actors["K2"].WorkItems = tc.items
		p, err := Build(g, m, cpuGPU(0, 0, 0, tc.threads), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(p, Config{Iterations: 400})
		if err != nil {
			t.Fatal(err)
		}
		if !near(r.Period, tc.want) {
			t.Errorf("threads %d, K2's I %d: period %g s, want %g", tc.threads, tc.items, r.Period, tc.want)
		}
	}
}

// TestKernelIssue: invocations queue for the device's issuing thread. K1
// → K2 on a gpu with room for every invocation at once (1 s a firing, G =
// 4: 4 s an invocation), S and T free on the cpu over a free link, 800
// iterations. Without an issue cost every invocation overlaps the others:
// the run takes a few invocations' time. With issue_cost 2 s the thread
// issues one invocation per 2 s, two per G = 4 iterations: 1 s an
// iteration; with copy_issue_cost 1 s too, K1's input and K2's output are
// copies: (2+1) + (2+1) = 6 s per 4 iterations, 1.5 s.
func TestKernelIssue(t *testing.T) {
	g := chain(t, stage{name: "S", out: 1}, stage{name: "K1", cost: 1, in: 1, out: 1}, stage{name: "K2", cost: 1, in: 1, out: 1}, stage{name: "T", in: 1})
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"S": {Device: "cpu"}, "T": {Device: "cpu"},
		"K1": {Device: "gpu", WorkGroups: 4, WorkItems: 1}, "K2": {Device: "gpu", WorkGroups: 4, WorkItems: 1}}}
	for _, tc := range []struct {
		issue, copyIssue int64
		want             float64
	}{{0, 0, 0}, {2, 0, 1}, {2, 1, 1.5}} {
		mach := cpuGPU(0, 0, 0, 1<<20)
		mach.Processors[1].IssueCost, mach.Processors[1].CopyIssueCost = tc.issue, tc.copyIssue
		p, err := Build(g, m, mach, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(p, Config{Iterations: 800})
		if err != nil {
			t.Fatal(err)
		}
		if per := r.Makespan / 800; math.Abs(per-tc.want) > 0.02*tc.want+0.05 {
			t.Errorf("issue %d s, copy issue %d s: %g s an iteration, want %g", tc.issue, tc.copyIssue, per, tc.want)
		}
	}
}

// TestKernelWaves: a kernel actor profiled (callback mode) at G = 4 with
// 256 work-items on a GPU of 1024 threads — one wave — takes 4 s an
// invocation (1 s a firing, no launch, no copies). Mapped at G = 2 (half a
// wave) an invocation still lasts one wave, 4 s (2 s a firing); at G = 8
// two waves, 8 s (1 s a firing); at G = 16 four, 16 s. Without threads, or
// from an enqueue-ahead profile, the time per firing is the profile's.
func TestKernelWaves(t *testing.T) {
	g := chain(t, stage{name: "S", out: 1}, stage{name: "K", in: 1, out: 1}, stage{name: "T", in: 1})
	for _, tc := range []struct {
		g       int
		threads int64
		mode    string
		want    float64 // seconds a firing
	}{{4, 1024, "callback", 1}, {2, 1024, "callback", 2}, {8, 1024, "callback", 1}, {16, 1024, "callback", 1},
		{2, 0, "callback", 1}, {2, 1024, "enqueue-ahead", 1}} {
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"S": {Device: "cpu"}, "T": {Device: "cpu"},
			"K": {Device: "gpu", WorkGroups: tc.g, WorkItems: 256}}}
		costs := &Costs{Profile: map[string]float64{"K": 1}, Kernels: map[string]KernelProfile{"K": {Device: "cuda:0", WorkGroups: 4, Mode: tc.mode}}}
		p, err := Build(g, m, cpuGPU(0, 0, 0, tc.threads), costs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Tasks[1].Subtasks[0].Time; !near(got, tc.want) {
			t.Errorf("G %d, %d threads, %s: %g s a firing, want %g", tc.g, tc.threads, tc.mode, got, tc.want)
		}
	}
}
