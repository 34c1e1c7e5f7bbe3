package sim

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// twoProcs is two processors at 1 Hz (one cycle = one second) on one link.
func twoProcs(l, s, b, f int64) *machine.Machine {
	return &machine.Machine{Name: "two",
		Processors: []*machine.Processor{
			{Name: "p0", Kind: "cpu", ClockHz: 1, Units: 1, HasIO: true},
			{Name: "p1", Kind: "cpu", ClockHz: 1, Units: 1, HasIO: true}},
		Interconnects: []*machine.Interconnect{{Name: "link", ClockHz: 1, Elements: []string{"p0", "p1"},
			StartLatency: l, StartCost: s, Bandwidth: b, FinishCost: f, Channels: 1, Multiplexable: true}}}
}

type stage struct {
	name      string
	cost      float64 // seconds
	in, out   int     // rates (0: no port)
	tokenSize int
}

// chain builds a linear graph of stages.
func chain(t testing.TB, stages ...stage) *graph.Graph {
	t.Helper()
	g := graph.New("chain")
	var prev *graph.Port
	for _, s := range stages {
		a := g.AddActor(s.name, graph.WithCost(time.Duration(s.cost*float64(time.Second))))
		tt := graph.TokenType{Name: "bytes", Size: max(1, s.tokenSize)}
		if s.in > 0 {
			in := a.AddPort("in", graph.In, prev.Type, graph.SDF(s.in), "")
			g.Join(prev, in)
		}
		if s.out > 0 {
			prev = a.AddPort("out", graph.Out, tt, graph.SDF(s.out), "")
		}
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

func place(pairs ...string) *graph.Mapping {
	m := &graph.Mapping{Actors: map[string]*graph.Placement{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		m.Actors[pairs[i]] = &graph.Placement{Device: pairs[i+1]}
	}
	return m
}

func simulate(t testing.TB, g *graph.Graph, m *graph.Mapping, mach *machine.Machine, cfg Config) *Result {
	t.Helper()
	p, err := Build(g, m, mach, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPipelinePeriodIsMaxStage(t *testing.T) {
	for _, tc := range []struct{ a, b float64 }{{3, 5}, {5, 3}, {2, 2}, {0.001, 7}} {
		g := chain(t, stage{name: "A", cost: tc.a, out: 1}, stage{name: "B", cost: tc.b, in: 1})
		r := simulate(t, g, place("A", "p0", "B", "p1"), twoProcs(0, 0, 0, 0), Config{Iterations: 50})
		if want := math.Max(tc.a, tc.b); !near(r.Period, want) {
			t.Errorf("a=%g b=%g: period %g, want %g", tc.a, tc.b, r.Period, want)
		}
		if want := tc.a + tc.b; !near(r.Latency, want) {
			t.Errorf("a=%g b=%g: latency %g, want %g", tc.a, tc.b, r.Latency, want)
		}
		if !near(r.Throughput, 1/math.Max(tc.a, tc.b)) {
			t.Errorf("throughput %g", r.Throughput)
		}
	}
}

func TestChainOnOneProcessorPeriodIsSum(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 2, in: 1, out: 1}, stage{name: "C", cost: 4, in: 1})
	r := simulate(t, g, nil, twoProcs(0, 0, 0, 0), Config{Iterations: 40})
	if !near(r.Period, 7) {
		t.Errorf("period %g, want 7", r.Period)
	}
	if u := r.Utilization["p0"]; !near(u, 1) {
		t.Errorf("utilization of p0 %g, want 1", u)
	}
	if u := r.Utilization["p1"]; u != 0 {
		t.Errorf("utilization of p1 %g, want 0", u)
	}
}

func TestOneMessageOverOneBus(t *testing.T) {
	for _, tc := range []struct{ l, s, b, f, n int64 }{{1, 2, 4, 3, 10}, {0, 0, 0, 0, 100}, {5, 1, 1, 0, 7}, {2, 3, 8, 1, 8}} {
		g := chain(t, stage{name: "A", out: 1, tokenSize: int(tc.n)}, stage{name: "B", in: 1})
		r := simulate(t, g, place("A", "p0", "B", "p1"), twoProcs(tc.l, tc.s, tc.b, tc.f), Config{Iterations: 1, Trace: true})
		xfer := int64(0)
		if tc.b > 0 {
			xfer = (tc.n + tc.b - 1) / tc.b
		}
		if want := float64(tc.l + tc.s + xfer); !near(r.Latency, want) {
			t.Errorf("%+v: latency %g, want L+S+⌈n/B⌉ = %g", tc, r.Latency, want)
		}
		var bus []Span
		for _, s := range r.Spans {
			if s.Bus {
				bus = append(bus, s)
			}
		}
		if len(bus) != 1 {
			t.Fatalf("%+v: %d bus spans, want 1", tc, len(bus))
		}
		if occ, want := bus[0].End-bus[0].Start, float64(tc.s+xfer+tc.f); !near(occ, want) {
			t.Errorf("%+v: bus busy %g, want S+⌈n/B⌉+F = %g", tc, occ, want)
		}
		if !near(bus[0].Start, float64(tc.l)) {
			t.Errorf("%+v: transfer starts at %g, want L = %d", tc, bus[0].Start, tc.l)
		}
	}
}

// line is p0 - l1 - p1 - l2 - p2, p1 forwarding with the given scheme.
func line(fwd machine.Routing) *machine.Machine {
	m := &machine.Machine{Name: "line"}
	for _, n := range []string{"p0", "p1", "p2"} {
		m.Processors = append(m.Processors, &machine.Processor{Name: n, Kind: "cpu", ClockHz: 1, Units: 1})
	}
	m.Interconnects = []*machine.Interconnect{
		{Name: "l1", ClockHz: 1, Elements: []string{"p0", "p1"}, StartCost: 1, Bandwidth: 4, Channels: 1, Multiplexable: true,
			Routing: map[string]machine.Routing{"p1": fwd}},
		{Name: "l2", ClockHz: 1, Elements: []string{"p1", "p2"}, StartCost: 1, Bandwidth: 2, Channels: 1, Multiplexable: true},
	}
	return m
}

func TestRoutingStoreAndForwardAndCutThrough(t *testing.T) {
	// n = 8 bytes: l1 takes S + 8/4 = 3, l2 takes S + 8/2 = 5.
	for _, tc := range []struct {
		fwd  machine.Routing
		want float64
	}{{machine.StoreAndForward, 3 + 5}, {machine.CutThrough, 5}} {
		m := line(tc.fwd)
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		g := chain(t, stage{name: "A", out: 1, tokenSize: 8}, stage{name: "B", in: 1})
		r := simulate(t, g, place("A", "p0", "B", "p2"), m, Config{Iterations: 1})
		if !near(r.Latency, tc.want) {
			t.Errorf("%s: latency %g, want %g", tc.fwd, r.Latency, tc.want)
		}
		hops, err := m.Route("p0", "p2")
		if err != nil {
			t.Fatal(err)
		}
		if got := machine.RouteLatency(hops, 8); !near(got, tc.want) {
			t.Errorf("%s: RouteLatency %g, want %g", tc.fwd, got, tc.want)
		}
	}
	if _, err := line(machine.NoRouting).Route("p0", "p2"); err == nil {
		t.Error("route through a non-routing processor: expected an error")
	}
}

func TestProcessorCommunicationCosts(t *testing.T) {
	m := twoProcs(0, 0, 0, 0)
	p := m.Processors[0]
	p.PushAcq, p.PushSend, p.PopAcq, p.PopDisc = 1, machine.Staircase{Fixed: 2}, machine.Staircase{Fixed: 3}, 4
	g := chain(t, stage{name: "A", cost: 5, out: 1}, stage{name: "B", cost: 6, in: 1})
	r := simulate(t, g, nil, m, Config{Iterations: 20})
	if want := 5 + 6 + 1 + 2 + 3 + 4.0; !near(r.Period, want) {
		t.Errorf("period %g, want %g", r.Period, want)
	}
	// Staircase: 16-byte units, 10 cycles each after the first.
	p.PushSend = machine.Staircase{Fixed: 2, Unit: 16, UnitCost: 10}
	p.PushAcq, p.PopAcq, p.PopDisc = 0, machine.Staircase{}, 0
	g = chain(t, stage{name: "A", cost: 5, out: 1, tokenSize: 40}, stage{name: "B", cost: 6, in: 1})
	r = simulate(t, g, nil, m, Config{Iterations: 20})
	if want := 5 + 6 + 2 + 2*10.0; !near(r.Period, want) {
		t.Errorf("staircase: period %g, want %g", r.Period, want)
	}
}

func TestMultirate(t *testing.T) {
	// A makes 2 tokens per firing, B eats 1: B fires twice per iteration.
	g := chain(t, stage{name: "A", cost: 3, out: 2}, stage{name: "B", cost: 2, in: 1})
	r := simulate(t, g, place("A", "p0", "B", "p1"), twoProcs(0, 0, 0, 0), Config{Iterations: 30})
	if !near(r.Period, 4) {
		t.Errorf("period %g, want max(3, 2×2) = 4", r.Period)
	}
	if r.Firings["B"] != 60 || r.Firings["A"] != 30 {
		t.Errorf("firings %v", r.Firings)
	}
}

func TestReplicas(t *testing.T) {
	m := twoProcs(0, 0, 0, 0)
	m.Processors[1].Units = 2
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 4, in: 1, out: 1}, stage{name: "C", cost: 0, in: 1})
	mp := place("A", "p0", "B", "p1", "C", "p0")
	mp.Actors["B"].Replicas = 2
	p, err := Build(g, mp, m, nil, Options{Capacity: map[string]int{"A.out->B.in": 4, "B.out->C.in": 4}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(p, Config{Iterations: 40})
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.Period, 2) {
		t.Errorf("period %g, want 4/2 replicas = 2", r.Period)
	}
}

func TestNonMultiplexableLink(t *testing.T) {
	m := twoProcs(0, 0, 0, 0)
	m.Interconnects[0].Multiplexable = false
	g := chain(t, stage{name: "A", out: 1}, stage{name: "B", in: 1, out: 1}, stage{name: "C", in: 1})
	_, err := Build(g, place("A", "p0", "B", "p1", "C", "p0"), m, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "not multiplexable") || !strings.Contains(err.Error(), "A.out->B.in, B.out->C.in") {
		t.Fatalf("got %v, want a non-multiplexable error naming both streams", err)
	}
	if _, err := Build(g, place("A", "p0", "B", "p1", "C", "p1"), m, nil, Options{}); err != nil {
		t.Fatalf("one stream over the FIFO: %v", err)
	}
}

func TestDeadlock(t *testing.T) {
	g := graph.New("cycle")
	a := g.AddActor("A", graph.WithCost(time.Second))
	b := g.AddActor("B", graph.WithCost(time.Second))
	f32 := graph.MustTokenType("f32")
	g.Join(a.AddPort("o", graph.Out, f32, graph.SDF(1), ""), b.AddPort("i", graph.In, f32, graph.SDF(1), ""))
	g.Join(b.AddPort("o", graph.Out, f32, graph.SDF(1), ""), a.AddPort("i", graph.In, f32, graph.SDF(1), ""))
	p, err := Build(g, nil, twoProcs(0, 0, 0, 0), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(p, Config{Iterations: 3})
	var de *DeadlockError
	if !errors.As(err, &de) || len(de.Blocked) != 2 {
		t.Fatalf("got %v, want a deadlock naming both actors", err)
	}
	// One initial token breaks it: period 2 (A and B alternate).
	g.Channels[1].Initial = 1
	r := simulate(t, g, place("A", "p0", "B", "p1"), twoProcs(0, 0, 0, 0), Config{Iterations: 10})
	if !near(r.Period, 2) {
		t.Errorf("period %g, want 2", r.Period)
	}
}

func TestDeterministic(t *testing.T) {
	m := twoProcs(1, 1, 3, 1)
	g := chain(t, stage{name: "A", cost: 1, out: 3, tokenSize: 7}, stage{name: "B", cost: 2, in: 2, out: 1}, stage{name: "C", cost: 1.5, in: 3})
	var prev *Result
	for i := 0; i < 3; i++ {
		r := simulate(t, g, place("A", "p0", "B", "p1", "C", "p0"), m, Config{Iterations: 60, Trace: true})
		if prev != nil && !reflect.DeepEqual(prev, r) {
			t.Fatal("two runs differ")
		}
		prev = r
	}
}
