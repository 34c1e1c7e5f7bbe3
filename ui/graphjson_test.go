package ui

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/driver"
)

// TestActorKinds checks the kind the page badges each actor with: a
// flow-model actor is a flow-model (not its kernel), a built-in a
// built-in, an actor with a cost only synthetic.
func TestActorKinds(t *testing.T) {
	for file, want := range map[string]map[string]string{
		"../examples/flowmodel/graph.yaml":        {"ramp": "builtin", "axpy": "flowmodel"},
		"../examples/flowmodel/graph-inline.yaml": {"axpy": "kernel"},
		"../examples/cd2dat.yaml":                 {"A": "synthetic"},
	} {
		g, err := driver.LoadGraph(context.Background(), file, driver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]string{}
		for _, a := range EncodeGraph(g).Actors {
			kinds[a.Name] = a.Kind
		}
		for name, k := range want {
			if kinds[name] != k {
				t.Errorf("%s: actor %s: kind %q, want %q (all: %v)", file, name, kinds[name], k, kinds)
			}
		}
	}
}
