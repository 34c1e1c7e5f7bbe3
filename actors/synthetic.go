package actors

import (
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Synthesize gives every actor of g (composites' inner actors included)
// that has no implementation at all a synthetic one, so that a graph still
// being designed — rates and costs, no code yet, such as
// examples/cd2dat.yaml — runs: each firing keeps a CPU core busy for the
// actor's declared cost and writes zeros to its outputs. `sluice run` and
// the workbench both use it, so their measurements agree. It returns the
// flattened names of the actors it gave one, in declaration order.
func Synthesize(g *graph.Graph) []string { return synthesize(g, "", true) }

// Unimplemented lists the flattened names of the actors of g that
// Synthesize would give a synthetic implementation, leaving g as it is.
func Unimplemented(g *graph.Graph) []string { return synthesize(g, "", false) }

func synthesize(g *graph.Graph, prefix string, give bool) []string {
	var names []string
	for _, a := range g.Actors {
		if a.Sub != nil {
			names = append(names, synthesize(a.Sub, prefix+a.Name+"/", give)...)
			continue
		}
		if len(a.Impls) > 0 {
			continue
		}
		if give {
			a.Impls = append(a.Impls, graph.Impl{Kind: graph.ImplGo, Func: runtime.FireFunc(Synthetic)})
		}
		names = append(names, prefix+a.Name)
	}
	return names
}

// Synthetic is the firing function of a synthetic actor: it writes zeros to
// every output window and keeps the core busy for the actor's cost.
func Synthetic(f *runtime.Firing) error {
	for i := range f.NumOut() {
		clear(f.Out(i))
	}
	Burn(f.Actor().Cost)
	return nil
}

// Burn keeps the calling goroutine's core busy for d (a busy loop on the
// monotonic clock: the time a real computation of that cost would take).
func Burn(d time.Duration) {
	if d <= 0 {
		return
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}
