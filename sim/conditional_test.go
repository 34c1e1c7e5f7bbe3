package sim

import (
	"math"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// condProgram is src(2) → route(2 → 2) → sink(2) on one processor; branch
// 0 fires a 1 s actor twice per pattern firing, branch 1 a 3 s actor once.
func condProgram(t *testing.T) *Program {
	t.Helper()
	tt := graph.MustTokenType("f32")
	br := func(name string, rate int, cost time.Duration) *graph.Graph {
		b := graph.New(name)
		a := b.AddActor("w", graph.WithCost(cost))
		a.AddPort("in", graph.In, tt, graph.SDF(rate), "")
		a.AddPort("out", graph.Out, tt, graph.SDF(rate), "")
		b.Expose(graph.In, "in", "w", "in", "")
		b.Expose(graph.Out, "out", "w", "out", "")
		return b
	}
	g := graph.New("cond")
	so := g.AddActor("src").AddPort("out", graph.Out, tt, graph.SDF(2), "")
	co := g.AddActor("ctl").AddPort("out", graph.Out, graph.MustTokenType("u8"), graph.SDF(1), "")
	p := g.AddIf("route", br("b1", 2, 3*time.Second), br("b0", 1, time.Second))
	g.Join(so, p.AddPort("in", graph.In, tt, graph.SDF(2), ""))
	g.Join(co, p.Port(graph.ControlPort))
	g.Join(p.AddPort("out", graph.Out, tt, graph.SDF(2), ""), g.AddActor("sink").AddPort("in", graph.In, tt, graph.SDF(2), ""))
	mach := &machine.Machine{Name: "one", Processors: []*machine.Processor{{Name: "p0", Kind: "cpu", ClockHz: 1, Units: 1, HasIO: true}}}
	prog, err := Build(g, nil, mach, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.CheckCountTrees(); err != nil {
		t.Fatal(err)
	}
	return prog
}

func TestConditionalTraceDriven(t *testing.T) {
	r, err := Run(condProgram(t), Config{Iterations: 4, Mode: TraceDriven, Controls: map[string][]int64{"route": {0, 1, 1, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Firings["route"] != 4 || !near(r.Makespan, 10) {
		t.Errorf("route fired %d times in %g s, want 4 in 2+3+3+2 = 10 s", r.Firings["route"], r.Makespan)
	}
}

func TestConditionalBranchProbabilities(t *testing.T) {
	const n = 4000
	r, err := Run(condProgram(t), Config{Iterations: n, Probabilities: map[string]float64{"route": 0.25}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := n * (0.75*2 + 0.25*3)
	if math.Abs(r.Makespan-want)/want > 0.03 {
		t.Errorf("makespan %g s, want about %g s (branch 1 taken a quarter of the time)", r.Makespan, want)
	}
	if _, err := Run(condProgram(t), Config{Iterations: 10, Probabilities: map[string]float64{"route=0": 0.8, "route=1": 0.7}}); err == nil {
		t.Error("probabilities summing to 1.5 accepted")
	}
}
