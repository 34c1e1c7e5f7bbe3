package scenario

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

func TestChains(t *testing.T) {
	g := graph.New("g")
	f32 := graph.MustTokenType("f32")
	i32 := graph.MustTokenType("i32")
	add := func(name, expr string, t graph.TokenType) {
		a := g.AddActor(name)
		if expr != "" {
			a.Attrs = map[string]string{ExprAttr: expr}
		}
		a.AddPort("x", graph.In, t, graph.SDF(4), "")
		a.AddPort("y", graph.Out, t, graph.SDF(4), "")
	}
	add("a", "x + 1.0f", f32)
	add("b", "x * 2.0f", f32)
	add("c", "x - 3.0f", f32)
	add("d", "", f32)         // no expression: ends the chain
	add("e", "x * x", f32)    // alone: not a chain
	add("f", "x + 1.0f", f32) // on another device
	add("h", "x", i32)        // wrong type
	for _, l := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "e"}, {"e", "f"}} {
		g.JoinNames(l[0]+".y", l[1]+".x")
	}
	m := &graph.Mapping{Actors: map[string]*graph.Placement{}}
	for _, n := range []string{"a", "b", "c", "d", "e", "h"} {
		m.Actors[n] = &graph.Placement{Device: "opencl:0:0"}
	}
	m.Actors["f"] = &graph.Placement{Device: "cuda:0"}
	got := Chains(g, m)
	want := []Found{{Device: "opencl:0:0", Actors: []string{"a", "b", "c"}, Stages: []Stage{{"a", "x + 1.0f"}, {"b", "x * 2.0f"}, {"c", "x - 3.0f"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Chains = %+v\nwant %+v", got, want)
	}
	if got := Chains(g, nil); len(got) != 0 {
		t.Errorf("no mapping: %+v, want none", got)
	}
}
