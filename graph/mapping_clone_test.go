package graph

import "testing"

// TestMappingClone checks that a clone's map and placements are its own.
func TestMappingClone(t *testing.T) {
	if (*Mapping)(nil).Clone() != nil {
		t.Fatal("Clone of nil: expected nil")
	}
	m := &Mapping{Name: "m", Origin: "m.yaml", Actors: map[string]*Placement{"a": {Device: "cpu", Replicas: 2}}}
	c := m.Clone()
	c.Actors["a"].Replicas = 5
	c.Actors["b"] = &Placement{Device: "cpu"}
	if m.Actors["a"].Replicas != 2 || len(m.Actors) != 1 {
		t.Fatalf("editing the clone changed the original: %+v", m.Actors)
	}
	if c.Name != "m" || c.Origin != "m.yaml" || c.Actors["a"].Device != "cpu" {
		t.Fatalf("clone: expected the original's fields, found %+v", c)
	}
}
