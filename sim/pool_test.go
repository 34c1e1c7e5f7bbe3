package sim

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// runtimePool is a pool processor (machine.Processor.Pool) of the given
// units at 10 Hz (one cycle = 0.1 s).
func runtimePool(units int, firing, round, spin, slice, wake int64) *machine.Machine {
	return &machine.Machine{Name: "runtime-pool",
		Processors: []*machine.Processor{{Name: "cpu", Kind: "cpu", ClockHz: 10, Units: units, HasIO: true,
			Pool: true, FiringCost: firing, RoundCost: round, SpinTime: spin, TimeSlice: slice, WakeLatency: wake}}}
}

func simulateCap(t *testing.T, g *graph.Graph, mach *machine.Machine, capacity map[string]int, iters int64) (*Program, *Result) {
	t.Helper()
	return simulateWith(t, g, nil, mach, Options{Capacity: capacity, NoFuseCPU: true}, iters)
}

// simulateWith builds g mapped by m on mach with opt and runs iters
// iterations, failing the test on an error.
func simulateWith(t *testing.T, g *graph.Graph, m *graph.Mapping, mach *machine.Machine, opt Options, iters int64) (*Program, *Result) {
	t.Helper()
	p, err := Build(g, m, mach, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(p, Config{Iterations: iters})
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

// TestPoolRoundCosts: on one unit, a chain A (1 s) → B (2 s) whose channel
// holds 4 tokens fires in rounds of 2 firings (half the capacity); each
// firing pays the firing cost (0.1 s) and each round the round cost
// (0.2 s), so the period per iteration is 1 + 2 + 2 × 0.1 + 2 × 0.2 / 2.
func TestPoolRoundCosts(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 2, in: 1})
	p, r := simulateCap(t, g, runtimePool(1, 1, 2, 0, 0, 0), map[string]int{"A.out->B.in": 4}, 64)
	for _, task := range p.Tasks {
		if task.RoundLimit != 2 {
			t.Errorf("task %s: round limit %d, want 2 (half of capacity 4)", task.Name, task.RoundLimit)
		}
	}
	if want := 3.4; !near(r.Period, want) {
		t.Errorf("period %g, want %g", r.Period, want)
	}
}

// TestPoolRoundReleasesAtEnd: the consumer sees a round's tokens only when
// the round ends. A (1 s) → B (1 s) on two units, capacity 4 (rounds of
// 2): the first iteration ends when B's first round does, at 2 + 2 s
// (firing by firing it would end at 2 s); the pipeline still runs at
// period 1.
func TestPoolRoundReleasesAtEnd(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 1})
	_, r := simulateCap(t, g, runtimePool(2, 0, 0, 1000, 1000, 0), map[string]int{"A.out->B.in": 4}, 64)
	if !near(r.Latency, 4) {
		t.Errorf("latency %g, want 4", r.Latency)
	}
	if !near(r.Period, 1) {
		t.Errorf("period %g, want 1", r.Period)
	}
}

// TestPoolSpinAndPark: A (1 s) → B (1 s) on two units, rounds of one
// firing (capacity 2). A unit that found nothing parks at once without
// spin time, and a wake latency longer than the run keeps it parked: one
// unit does everything (period 2). Polling for 10 s instead keeps the
// second unit taking B (period 1).
func TestPoolSpinAndPark(t *testing.T) {
	for _, tc := range []struct {
		spin   int64
		period float64
	}{{0, 2}, {100, 1}} {
		g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 1})
		_, r := simulateCap(t, g, runtimePool(2, 0, 0, tc.spin, 0, 1<<40), map[string]int{"A.out->B.in": 2}, 40)
		if !near(r.Period, tc.period) {
			t.Errorf("spin %d cycles: period %g, want %g", tc.spin, r.Period, tc.period)
		}
	}
}

// TestRuntimeCapacity: channels of pool processors without a capacity get
// the runtime's default — 64 KiB worth of tokens, at least twice the
// larger rate times the team — and the round limit follows.
func TestRuntimeCapacity(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1, out: 1, tokenSize: 4}, stage{name: "B", cost: 1, in: 1})
	p, err := Build(g, nil, runtimePool(2, 0, 0, 0, 0, 0), nil, Options{NoFuseCPU: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Streams[0].ConsumerQueue; c != 16384 {
		t.Errorf("capacity %d tokens, want 16384 (64 KiB of 4-byte tokens)", c)
	}
	if k := p.Tasks[0].RoundLimit; k != 8192 {
		t.Errorf("round limit %d, want 8192", k)
	}
	if c := RuntimeCapacity(g.Channels[0], 1); c != 16384 {
		t.Errorf("RuntimeCapacity %d, want 16384", c)
	}
}

// TestKernelBatch: a kernel actor mapped with G work-groups on a gpu
// processor fires G firings per invocation, once all G are ready, paying
// the launch (the processor's firing cost) once. A (1 s per firing) → K
// (1 s per firing, G = 4) on one gpu unit with a 2 s launch: A pays a
// launch per firing (3 s), an invocation of K 4 × 1 + 2 s, so the period
// is 3 + 6 / 4 = 4.5 s, and K runs a quarter as many invocations as
// firings.
func TestKernelBatch(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "K", cost: 1, in: 1})
	mach := &machine.Machine{Name: "gpu", Processors: []*machine.Processor{{Name: "g", Kind: "gpu", ClockHz: 1, Units: 1, FiringCost: 2}}}
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"A": {Device: "g"}, "K": {Device: "g", WorkGroups: 4}}}
	p, err := Build(g, m, mach, nil, Options{Capacity: map[string]int{"A.out->K.in": 8}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Tasks[1].Batch != 4 || p.Tasks[0].Batch != 0 {
		t.Fatalf("batches %d, %d: want 0 for A and 4 for K", p.Tasks[0].Batch, p.Tasks[1].Batch)
	}
	r, err := Run(p, Config{Iterations: 64, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.Period, 4.5) {
		t.Errorf("period %g, want 4.5", r.Period)
	}
	var inv int
	for _, s := range r.Spans {
		if s.Name == "K" {
			inv++
		}
	}
	if inv != 16 || r.Firings["K"] != 64 {
		t.Errorf("K: %d invocations of %d firings, want 16 of 64", inv, r.Firings["K"])
	}
}

// TestPoolRoundTime: on a pool with a round time of 5 s (clock 10 Hz: 50
// cycles), A (1 s a firing, with the pool's 0.1 s firing cost) over a
// channel of 64 tokens fires rounds of at most 4 firings (5 / 1.1), not
// 32 (half the capacity); B (0.05 s, 0.15 with the firing cost: 33 in
// 5 s) keeps 32, its capacities' limit. A replicated task gets its
// replicas' worth: 2 × 5 / 1.1 = 9.
func TestPoolRoundTime(t *testing.T) {
	for _, tc := range []struct {
		replicas int
		wantA    int64
	}{{1, 4}, {2, 9}} {
		g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 0.05, in: 1})
		mach := runtimePool(2, 1, 0, 0, 0, 0)
		mach.Processors[0].RoundTime = 50
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"A": {Device: "cpu", Replicas: tc.replicas}, "B": {Device: "cpu"}}}
		p, _ := simulateWith(t, g, m, mach, Options{Capacity: map[string]int{"A.out->B.in": 64}, NoFuseCPU: true}, 64)
		if got := p.Tasks[0].RoundLimit; got != tc.wantA {
			t.Errorf("A ×%d: round limit %d, want %d (5 s of 1.1 s firings per replica)", tc.replicas, got, tc.wantA)
		}
		if got := p.Tasks[1].RoundLimit; got != 32 {
			t.Errorf("B: round limit %d, want 32 (half of 64: 5 s holds 33 of its firings)", got)
		}
	}
}

// TestTraceLimit: a trace limited to 10 spans keeps the simulation's first
// 10, counts the rest and says so in a note; the figures are those of the
// whole simulation.
func TestTraceLimit(t *testing.T) {
	t.Parallel()
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 1})
	mach := &machine.Machine{Name: "two", Processors: []*machine.Processor{{Name: "p", Kind: "cpu", ClockHz: 1, Units: 2}}}
	p, err := Build(g, &graph.Mapping{}, mach, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := Run(p, Config{Iterations: 64, Trace: true, TraceLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(p, Config{Iterations: 64, Trace: true, TraceLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Spans) != 128 || all.TraceDropped != 0 {
		t.Fatalf("no limit: %d spans, %d dropped: expected 128 and none", len(all.Spans), all.TraceDropped)
	}
	if len(r.Spans) != 10 || r.TraceDropped != 118 || r.Period != all.Period || r.Spans[9] != all.Spans[9] {
		t.Fatalf("limit 10: %d spans, %d dropped, period %g (%g without): expected the first 10 spans, 118 dropped, the same period", len(r.Spans), r.TraceDropped, r.Period, all.Period)
	}
	if note := r.Notes[len(r.Notes)-1]; !strings.Contains(note, "first 10 spans kept, 118 later ones not") {
		t.Fatalf("notes %q: expected one saying the trace kept the first 10 spans", r.Notes)
	}
}
