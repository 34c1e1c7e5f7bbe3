package ui

import (
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// synthesize gives every actor of g (composites' inner actors included)
// that has no implementation at all a synthetic one, so that a graph still
// being designed — rates and costs, no code yet, such as
// examples/cd2dat.yaml — runs from the page: each firing keeps its CPU
// busy for the actor's cost and writes zeros to its outputs. It returns
// the names of the actors it gave one.
func synthesize(g *graph.Graph) []string {
	var names []string
	for _, a := range g.Actors {
		if a.Sub != nil {
			names = append(names, synthesize(a.Sub)...)
			continue
		}
		if len(a.Impls) > 0 {
			continue
		}
		cost := a.Cost
		a.Impls = append(a.Impls, graph.Impl{Kind: graph.ImplGo, Func: runtime.FireFunc(func(f *runtime.Firing) error {
			for i := range a.Outputs {
				clear(f.Out(i))
			}
			spin(cost)
			return nil
		})})
		names = append(names, a.Name)
	}
	return names
}

// spin keeps the CPU busy for d.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}
