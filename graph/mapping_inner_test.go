package graph

import (
	"strings"
	"testing"
)

func TestMappingNamesInnerActors(t *testing.T) {
	sub := New("inner")
	x := sub.AddActor("x")
	AddInput[float32](x, "i", SDF(1))
	g := New("outer")
	g.AddActor("c", Composite(sub))
	m := &Mapping{Actors: map[string]*Placement{"c/x": {Device: "cpu"}}}
	if err := m.Check(g); err != nil {
		t.Fatalf("expected c/x to name the composite's inner actor, found %v", err)
	}
	m = &Mapping{Actors: map[string]*Placement{"c/y": {Device: "cpu"}}}
	if err := m.Check(g); err == nil || !strings.Contains(err.Error(), `unknown actor "c/y"`) || !strings.Contains(err.Error(), "c/x") {
		t.Fatalf("expected an unknown-actor error suggesting c/x, found %v", err)
	}
}
