package analysis

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

var i64 = graph.MustTokenType("i64")

// chainBranch is a branch in → a (rates ra) → b (rates rb) → out.
func chainBranch(name string, ra, rb [2]int, initial int) *graph.Graph {
	b := graph.New(name)
	a := b.AddActor("a")
	a.AddPort("in", graph.In, i64, graph.SDF(ra[0]), "")
	ao := a.AddPort("out", graph.Out, i64, graph.SDF(ra[1]), "")
	c := b.AddActor("b")
	ci := c.AddPort("in", graph.In, i64, graph.SDF(rb[0]), "")
	c.AddPort("out", graph.Out, i64, graph.SDF(rb[1]), "")
	b.Join(ao, ci, graph.Initial(initial))
	b.Expose(graph.In, "in", "a", "in", "")
	b.Expose(graph.Out, "out", "b", "out", "")
	return b
}

// patternGraph is src(4) → p(in 4, out 4) → sink(4) with control from ctl.
func patternGraph(branches ...*graph.Graph) *graph.Graph {
	g := graph.New("g")
	src := g.AddActor("src")
	so := src.AddPort("out", graph.Out, i64, graph.SDF(4), "")
	ctl := g.AddActor("ctl")
	co := ctl.AddPort("out", graph.Out, graph.MustTokenType("i32"), graph.SDF(1), "")
	p := g.AddConditional("p", graph.MustTokenType("i32"), branches)
	pi := p.AddPort("in", graph.In, i64, graph.SDF(4), "")
	po := p.AddPort("out", graph.Out, i64, graph.SDF(4), "")
	sink := g.AddActor("sink")
	si := sink.AddPort("in", graph.In, i64, graph.SDF(2), "")
	g.Join(so, pi)
	g.Join(co, p.Port(graph.ControlPort))
	g.Join(po, si)
	return g
}

func TestCheckTreatsPatternAsOneSDFActor(t *testing.T) {
	g := patternGraph(chainBranch("x", [2]int{1, 1}, [2]int{1, 1}, 0), chainBranch("y", [2]int{2, 1}, [2]int{1, 2}, 0))
	r := Check(g, CheckOptions{})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	if r.Repetitions["p"] != 1 || r.Repetitions["sink"] != 2 {
		t.Errorf("repetitions %v, want p 1, sink 2", r.Repetitions)
	}
	want := []map[string]int64{{"a": 4, "b": 4}, {"a": 2, "b": 2}}
	got := r.Branches["p"]
	if len(got) != 2 {
		t.Fatalf("branches %v, want %v", got, want)
	}
	for k := range want {
		for n, q := range want[k] {
			if got[k][n] != q {
				t.Errorf("branch %d actor %s fires %d times per pattern firing, want %d", k, n, got[k][n], q)
			}
		}
	}
}

func TestCheckReportsGSLDViolationsWithPaths(t *testing.T) {
	cyc := chainBranch("cyc", [2]int{1, 1}, [2]int{1, 1}, 0)
	// b.out2 → a.back closes a cycle with no initial token: deadlock.
	a, b := cyc.Actor("a"), cyc.Actor("b")
	back := a.AddPort("back", graph.In, i64, graph.SDF(1), "")
	b2 := b.AddPort("loop", graph.Out, i64, graph.SDF(1), "")
	cyc.Join(b2, back)
	unbound := graph.New("unbound")
	u := unbound.AddActor("u")
	u.AddPort("in", graph.In, i64, graph.SDF(4), "")
	u.AddPort("o", graph.Out, i64, graph.SDF(4), "")
	unbound.Expose(graph.In, "in", "u", "in", "")
	unbound.Expose(graph.Out, "o", "u", "o", "")
	cases := []struct {
		name string
		br   *graph.Graph
		want string
	}{
		{"rate", chainBranch("r", [2]int{3, 1}, [2]int{1, 1}, 0), "p/branch[1]/a.in: one branch iteration moves 3 tokens on port p.in"},
		{"deadlock", cyc, "p/branch[1]: one iteration of the branch deadlocks"},
		{"unbound", unbound, `p/branch[1]: port p.out is not bound: expected a graph output "out"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := patternGraph(chainBranch("ok", [2]int{1, 1}, [2]int{1, 1}, 0), c.br)
			r := Check(g, CheckOptions{})
			if !strings.Contains(strings.Join(r.Errors, "\n"), c.want) {
				t.Fatalf("errors %q, want one containing %q", r.Errors, c.want)
			}
		})
	}
}

func TestValidatePatternControlType(t *testing.T) {
	g := graph.New("g")
	p := g.AddConditional("p", graph.MustTokenType("f32"), []*graph.Graph{chainBranch("x", [2]int{1, 1}, [2]int{1, 1}, 0)})
	p.AddPort("in", graph.In, i64, graph.SDF(1), "")
	p.AddPort("out", graph.Out, i64, graph.SDF(1), "")
	err := g.Validate()
	if err == nil || !strings.Contains(err.Error(), "control port p.ctl has type f32: expected an integer type") {
		t.Fatalf("err = %v", err)
	}
}
