package analysis

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

func TestThroughputCycle(t *testing.T) {
	for _, tc := range []struct {
		init int
		want float64
	}{{1, 5}, {2, 3}, {3, 3}} {
		b := newB("loop")
		b.sdf("A", 1, "B", 1)
		b.sdf("B", 1, "A", 1, graph.Initial(tc.init))
		b.g.Actor("A").Cost = 2
		b.g.Actor("B").Cost = 3
		rv, _ := RepetitionVector(b.g)
		th, err := ThroughputBound(b.g, rv, nil)
		if err != nil {
			t.Fatal(err)
		}
		if th.PeriodNS != tc.want || th.Unit {
			t.Errorf("init %d: period %v, want %v", tc.init, th.PeriodNS, tc.want)
		}
	}
}

func TestThroughputBuffersChain(t *testing.T) {
	b := newB("pipe")
	b.sdf("A", 1, "B", 1)
	b.sdf("B", 1, "C", 1)
	for n, c := range map[string]time.Duration{"A": 10, "B": 10, "C": 10} {
		b.g.Actor(n).Cost = c
	}
	rv, _ := RepetitionVector(b.g)
	min, _ := MinimalBuffers(b.g, rv)
	slow, err := ThroughputBound(b.g, rv, min)
	if err != nil {
		t.Fatal(err)
	}
	caps, th, err := ThroughputBuffers(b.g, rv)
	if err != nil {
		t.Fatal(err)
	}
	if th.PeriodNS != 10 || slow.PeriodNS <= 10 {
		t.Fatalf("period with minimal buffers %v, with throughput buffers %v (want 10), caps %v", slow.PeriodNS, th.PeriodNS, caps)
	}
	if th.IterationsPerSecond != 1e8 {
		t.Errorf("iterations/s %v", th.IterationsPerSecond)
	}
	for _, c := range caps {
		if c != 2 {
			t.Errorf("caps %v, want 2 each", caps)
		}
	}
}

func TestExpandCDToDAT(t *testing.T) {
	g := cdToDAT()
	rv, _ := RepetitionVector(g)
	h, err := Expand(g, rv, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Vertices) != 2*(147+147+98+28+32+160) {
		t.Fatalf("%d vertices", len(h.Vertices))
	}
	p, err := h.CriticalPath()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Vertices) == 0 || p.Vertices[0].Actor != "A" || p.Vertices[len(p.Vertices)-1].Actor != "F" {
		t.Errorf("critical path %v", p)
	}
	if st := h.Stages(); len(st) != int(p.Length) {
		t.Errorf("%d stages, critical path %d", len(st), p.Length)
	}
	if _, err := Expand(g, rv, 2, 1000); err == nil || !strings.Contains(err.Error(), "more than 1000 vertices") {
		t.Errorf("limit: %v", err)
	}
}

func TestExpandDelays(t *testing.T) {
	b := newB("d")
	b.sdf("A", 2, "B", 1)
	b.sdf("B", 1, "A", 2, graph.Initial(2))
	rv, _ := RepetitionVector(b.g)
	h, err := Expand(b.g, rv, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A0 → B0, A0 → B1 (delay 0); B0, B1 → A0 with delay 1.
	var got []string
	for _, e := range h.Edges {
		got = append(got, h.Vertices[e.From].Actor+itoa(h.Vertices[e.From].Firing)+">"+h.Vertices[e.To].Actor+itoa(h.Vertices[e.To].Firing)+"/"+itoa(e.Delay))
	}
	if s := strings.Join(got, " "); s != "A0>B0/0 A0>B1/0 B0>A0/1 B1>A0/1" {
		t.Errorf("edges %s", s)
	}
}

func TestSchedule(t *testing.T) {
	g := cdToDAT()
	rv, _ := RepetitionVector(g)
	s, err := SingleProcessorSchedule(g, rv)
	if err != nil || len(s) != 612 {
		t.Fatalf("%d firings, %v", len(s), err)
	}
	ls, _ := LoopedSchedule(g, rv)
	if FormatLoops(ls) != "147×A 147×B 98×C 28×D 32×E 160×F" {
		t.Errorf("looped %s", FormatLoops(ls))
	}
}

// The PEA-ST example of the seed's Figure 28 (edges reconstructed from the
// text): A→B, A→C, B→D, B→E, D→F, D→A and C→A initialised.
func fig28() *graph.Graph {
	b := newB("fig28")
	b.sdf("A", 1, "B", 1)
	b.sdf("A", 1, "C", 1)
	b.sdf("B", 1, "D", 1)
	b.sdf("B", 1, "E", 1)
	b.sdf("D", 1, "F", 1)
	b.sdf("D", 1, "A", 1, graph.Initial(1))
	b.sdf("C", 1, "A", 1, graph.Initial(1))
	// E and F feed nothing back; give them a sink each for validity
	return b.g
}

func TestPEASTFigure28(t *testing.T) {
	g := fig28()
	rv, err := RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := PEAST(g, rv, "A")
	if err != nil {
		t.Fatal(err)
	}
	str := func(rows [][]string) string {
		var s []string
		for _, r := range rows {
			s = append(s, "("+strings.Join(r, ",")+")")
		}
		return strings.Join(s, "")
	}
	if sm.Shift != 3 || sm.Stages != 4 || str(sm.Startup) != "(A)" || str(sm.Repeat) != "(B,C)(D,E)(F,A)" || sm.MaxParallelism != 2 {
		t.Errorf("root A: shift %d stages %d startup %s repeat %s", sm.Shift, sm.Stages, str(sm.Startup), str(sm.Repeat))
	}
	sm, err = PEAST(g, rv, "C")
	if err != nil {
		t.Fatal(err)
	}
	if sm.MaxParallelism != 3 {
		t.Errorf("root C: max parallelism %d, want 3 (%s | %s)", sm.MaxParallelism, str(sm.Startup), str(sm.Repeat))
	}
	if _, err := PEAST(g, rv, "F"); err == nil {
		t.Error("root F reaches nothing: want an error")
	}
	// k-means example (Figure 31): A→B→C→D with C→B: repeat (C,A)(D,B).
	b := newB("kmeans")
	b.sdf("A", 1, "B", 1)
	b.sdf("B", 1, "C", 1)
	b.sdf("C", 1, "D", 1)
	b.sdf("C", 1, "B", 1, graph.Initial(1))
	rv, _ = RepetitionVector(b.g)
	sm, _ = PEAST(b.g, rv, "A")
	if str(sm.Startup) != "(A)(B)" || str(sm.Repeat) != "(C,A)(D,B)" {
		t.Errorf("k-means: %s | %s", str(sm.Startup), str(sm.Repeat))
	}
}

func TestCheckReport(t *testing.T) {
	g := cdToDAT()
	for _, a := range g.Actors {
		a.Cost = time.Microsecond
	}
	r := Check(g, CheckOptions{})
	if !r.Valid || !r.Consistent || r.Deadlock || len(r.Errors) != 0 {
		t.Fatalf("%+v", r)
	}
	if r.Repetitions["F"] != 160 || r.Buffers["B->C#2"] != 4 || r.PeriodNS != 160e3 {
		t.Errorf("report %+v", r)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	// Invalid graph: errors, stops.
	bad := graph.New("bad")
	bad.AddActor("x").AddPort("o", graph.Out, f32, graph.SDF(1), "")
	r = Check(bad, CheckOptions{})
	if r.Valid || len(r.Errors) == 0 {
		t.Errorf("invalid graph accepted: %+v", r)
	}
	// Deadlocking ring: initialise, buffers for the fixed graph.
	b := newB("ring")
	b.sdf("A", 1, "B", 1)
	b.sdf("B", 1, "A", 1)
	r = Check(b.g, CheckOptions{})
	if !r.Deadlock || r.Initialize["B->A#2"] != 1 || r.Buffers["B->A#2"] != 1 || len(r.Warnings) == 0 {
		t.Errorf("ring report %+v", r)
	}
}

func TestDynamicSkipped(t *testing.T) {
	b := newB("kpn")
	b.sdf("A", 1, "B", 2)
	b.edge("B", graph.SDF(1), "K", graph.Dynamic())
	rv, err := RepetitionVector(b.g)
	if err != nil {
		t.Fatal(err)
	}
	if len(rv.Skipped) != 1 || rv.Skipped[0] != "K" || rv.Firings["A"] != 2 || rv.Firings["B"] != 1 {
		t.Errorf("%+v", rv)
	}
}

func TestCSDFAndComposite(t *testing.T) {
	sub := graph.New("inner")
	x := sub.AddActor("x")
	x.AddPort("i", graph.In, f32, graph.CSDF(1, 0, 2), "")
	x.AddPort("o", graph.Out, f32, graph.SDF(1), "")
	sub.Expose(graph.In, "in", "x", "i", "")
	sub.Expose(graph.Out, "out", "x", "o", "")
	g := graph.New("outer")
	src := g.AddActor("src")
	src.AddPort("o", graph.Out, f32, graph.SDF(1), "")
	c := g.AddActor("comp", graph.Composite(sub))
	c.AddPort("in", graph.In, f32, graph.CSDF(1, 0, 2), "")
	c.AddPort("out", graph.Out, f32, graph.SDF(1), "")
	snk := g.AddActor("snk")
	snk.AddPort("i", graph.In, f32, graph.SDF(3), "")
	g.JoinNames("src.o", "comp.in")
	g.JoinNames("comp.out", "snk.i")
	mustValid(t, g)
	rv, err := RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	if rv.Firings["src"] != 3 || rv.Firings["comp/x"] != 3 || rv.Firings["snk"] != 1 {
		t.Errorf("%v", rv.Firings)
	}
	buf, err := MinimalBuffers(g, rv)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(buf)
}

func TestOverflow(t *testing.T) {
	b := newB("big")
	prev := "A"
	for i := range 8 {
		next := "N" + itoa(i)
		b.sdf(prev, 1<<20, next, 1)
		prev = next
	}
	_, err := RepetitionVector(b.g)
	if !errors.Is(err, ErrOverflow) {
		t.Fatalf("want overflow, got %v", err)
	}
}
