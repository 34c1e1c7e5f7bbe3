package graph

import (
	"strings"
	"testing"
)

func ringPipeline() *Pipeline {
	g := New("ring")
	f32 := TokenType{Name: "f32", Size: 4}
	a := g.AddActor("a")
	a.AddPort("x", In, f32, SDF(1), "")
	a.AddPort("fb", In, f32, SDF(1), "")
	a.AddPort("y", Out, f32, SDF(1), "")
	b := g.AddActor("b")
	b.AddPort("x", In, f32, SDF(1), "")
	b.AddPort("y", Out, f32, SDF(1), "")
	b.AddPort("fb", Out, f32, SDF(1), "")
	g.JoinNames("a.y", "b.x")
	g.JoinNames("b.fb", "a.fb")
	g.Expose(In, "x", "a", "x", "")
	g.Expose(Out, "y", "b", "y", "")
	return NewPipeline(g)
}

func TestPipelineRoles(t *testing.T) {
	pl := ringPipeline()
	pl.SetRole("a.fb", InitOnce, 3, "f.yaml:9:5")
	if err := pl.Validate(); err != nil {
		t.Fatal(err)
	}
	for port, want := range map[string]Role{"a.x": Entrance, "b.y": Exit, "a.fb": InitOnce, "b.x": Intermediate} {
		an, pn, _ := splitRef(port)
		if got := pl.RoleOf(pl.Graph.Actor(an).Port(pn)).Role; got != want {
			t.Errorf("%s: role %s, want %s", port, got, want)
		}
	}
	if got := pl.RoleOf(pl.Graph.Actor("a").Port("x")).Every; got != 1 {
		t.Errorf("default every = %d, want 1", got)
	}
}

func TestPipelineConditions(t *testing.T) {
	cases := map[string]struct {
		edit func(*Pipeline)
		want string
	}{
		"no exit":               {func(p *Pipeline) { p.Graph.Outputs = nil; p.SetRole("b.y", Intermediate, 0, "") }, "no exit port"},
		"exit on input":         {func(p *Pipeline) { p.SetRole("a.x", Exit, 0, "f.yaml:3:4") }, "f.yaml:3:4: pipeline port a.x has role exit but is an input port"},
		"initonce open":         {func(p *Pipeline) { p.SetRole("a.x", InitOnce, 0, "") }, "no channel feeds it"},
		"unknown port":          {func(p *Pipeline) { p.SetRole("a.zz", Entrance, 0, "") }, `unknown port "zz"`},
		"entrance fed":          {func(p *Pipeline) { p.SetRole("b.x", Entrance, 0, "") }, "not a graph input"},
		"limit on intermediate": {func(p *Pipeline) { p.SetRole("b.x", Intermediate, 2, "") }, "expected limits only on entrance"},
		"not connected": {func(p *Pipeline) {
			c := p.Graph.AddActor("c")
			c.AddPort("y", Out, TokenType{Name: "f32", Size: 4}, SDF(1), "")
			p.Graph.Expose(Out, "cy", "c", "y", "")
		}, "not connected: expected one set of stages joined by channels, found 2: [a c]"},
		"no stage": {func(p *Pipeline) { p.Graph = New("empty") }, "has no stage"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pl := ringPipeline()
			tc.edit(pl)
			err := pl.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
