package sim

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

func withAttr(g *graph.Graph, actor, key, val string) {
	a := g.Actor(actor)
	if a.Attrs == nil {
		a.Attrs = map[string]string{}
	}
	a.Attrs[key] = val
}

func TestStatisticalIf(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 1})
	withAttr(g, "A", "if", "c")
	withAttr(g, "B", "if", "c")
	p, err := Build(g, place("A", "p0", "B", "p1"), twoProcs(0, 0, 0, 0), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) *Result {
		r, err := Run(p, Config{Iterations: 2000, Probabilities: map[string]float64{"c": 0.3}, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := run(1)
	if r.Firings["A"] != r.Firings["B"] || r.Firings["A"] < 500 || r.Firings["A"] > 700 {
		t.Errorf("firings %v: want A = B ≈ 0.3 × 2000", r.Firings)
	}
	if r.Iterations != 2000 {
		t.Errorf("iterations %d", r.Iterations)
	}
	if r2 := run(1); r2.Firings["A"] != r.Firings["A"] || r2.Period != r.Period {
		t.Error("same seed, different result")
	}
	if r3 := run(2); r3.Firings["A"] == r.Firings["A"] {
		t.Log("different seeds gave the same count (possible, unlikely)")
	}
}

func TestTraceDrivenIfAndWhile(t *testing.T) {
	g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 1})
	withAttr(g, "A", "if", "c")
	withAttr(g, "B", "if", "c")
	p, err := Build(g, place("A", "p0", "B", "p1"), twoProcs(0, 0, 0, 0), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(p, Config{Iterations: 4, Mode: TraceDriven, Controls: map[string][]int64{"c": {1, 0, 1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Firings["A"] != 3 || r.Firings["B"] != 3 || r.Iterations != 4 {
		t.Errorf("firings %v iterations %d: want 3, 3 and 4", r.Firings, r.Iterations)
	}
	r, err = Run(p, Config{Iterations: 10, Mode: TraceDriven, Controls: map[string][]int64{"c": {1, 0, 1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Iterations != 4 || !strings.Contains(strings.Join(r.Notes, "\n"), "ran out") {
		t.Errorf("iterations %d notes %q: want 4 and a note that c ran out", r.Iterations, r.Notes)
	}
	if _, err := Run(p, Config{Iterations: 4, Mode: TraceDriven}); err == nil {
		t.Error("trace-driven without values: expected an error")
	}

	g = chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 1})
	withAttr(g, "A", "while", "n")
	costs := &Costs{Control: map[string]Control{"B": {While: "n"}}}
	p, err = Build(g, place("A", "p0", "B", "p1"), twoProcs(0, 0, 0, 0), costs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err = Run(p, Config{Iterations: 3, Mode: TraceDriven, Controls: map[string][]int64{"n": {2, 0, 5}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Firings["A"] != 7 || r.Firings["B"] != 7 {
		t.Errorf("firings %v, want 7 each", r.Firings)
	}
	r, err = Run(p, Config{Iterations: 10, Loops: map[string]int64{"n": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Firings["A"] != 30 {
		t.Errorf("statistical while: firings %v, want 30", r.Firings)
	}
	if _, err := Run(p, Config{Iterations: 10}); err == nil || !strings.Contains(err.Error(), "loops") {
		t.Errorf("statistical while without a count: got %v", err)
	}
}

func TestCountTreeCheck(t *testing.T) {
	// A cyclo-static producer pushing 1 then 2 under "if c", and a consumer
	// popping 3 unconditionally: the trees [if c [1 2]] and [3] differ.
	g := graph.New("csdf")
	a := g.AddActor("A")
	b := g.AddActor("B")
	f32 := graph.MustTokenType("f32")
	g.Join(a.AddPort("o", graph.Out, f32, graph.CSDF(1, 2), ""), b.AddPort("i", graph.In, f32, graph.SDF(3), ""))
	withAttr(g, "A", "if", "c")
	p, err := Build(g, nil, twoProcs(0, 0, 0, 0), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = p.CheckCountTrees()
	if err == nil || !strings.Contains(err.Error(), "[if c [1 2]]") || !strings.Contains(err.Error(), "[3]") {
		t.Fatalf("got %v, want the two count trees", err)
	}
	if _, err := Run(p, Config{Iterations: 2}); err == nil {
		t.Error("statistical mode ran a program failing the count-tree check")
	}
	// The same condition on the consumer (seed Figure 19b): accepted.
	withAttr(g, "B", "if", "c")
	p, err = Build(g, nil, twoProcs(0, 0, 0, 0), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckCountTrees(); err == nil {
		t.Error("[if c [1 2]] vs [if c [3]] accepted: expected a mismatch (the counts differ)")
	}

	// Hand-built program (Figure 19a): producer pushes under c and under !c
	// with different counts; consumer pops 1 always.
	prog := &Program{Machine: twoProcs(0, 0, 0, 0),
		Streams: []*Stream{{Name: "a", ElemSize: 4, ProducerQueue: 4, ConsumerQueue: 4, Producer: 0, Consumer: 1}},
		Tasks: []*Task{
			{Name: "P", Replicas: 1, Passes: 1, Subtasks: []Subtask{{Name: "p1", Pushes: []Access{{0, 1}}}, {Name: "p2", Pushes: []Access{{0, 2}}}},
				Tree: []Node{{Kind: IfNode, Cond: "c", Body: []Node{{Subtask: 0}}}, {Kind: IfNode, Cond: "c", Invert: true, Body: []Node{{Subtask: 1}}}}},
			{Name: "C", Replicas: 1, Passes: 1, Subtasks: []Subtask{{Name: "c", Pops: []Access{{0, 1}}}}, Tree: []Node{{Subtask: 0}}},
		}}
	if err := prog.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := prog.CheckCountTrees(); err == nil || !strings.Contains(err.Error(), "[if c [1] if !c [2]]") {
		t.Errorf("Figure 19a: got %v", err)
	}
	// Figure 19b: both sides push/pop 1 under c.
	prog.Tasks[0].Tree = prog.Tasks[0].Tree[:1]
	prog.Tasks[1].Tree = []Node{{Kind: IfNode, Cond: "c", Body: []Node{{Subtask: 0}}}}
	if err := prog.CheckCountTrees(); err != nil {
		t.Errorf("Figure 19b: %v", err)
	}
}
