package runtime

import (
	"fmt"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
)

// repetitions returns the firings per iteration of every static actor.
func repetitions(g *graph.Graph) (map[*graph.Actor]int64, error) {
	rv, err := analysis.RepetitionVector(g)
	if err != nil {
		return nil, fmt.Errorf("runtime: graph %q: cannot run a number of iterations: %w", g.Name, err)
	}
	out := make(map[*graph.Actor]int64, len(rv.Firings))
	for name, n := range rv.Firings {
		if a := g.Actor(name); a != nil {
			out[a] = n
		}
	}
	return out, nil
}

// minimalBuffers returns analysis' minimal deadlock-free capacities of the
// static channels whose Capacity is unset, or an empty map when there are
// none, the rates are inconsistent, or the graph deadlocks anyway (the
// watchdog then reports it at run time).
func minimalBuffers(g *graph.Graph, _ map[*graph.Actor]int64) map[*graph.Channel]int {
	out := map[*graph.Channel]int{}
	need := false
	for _, c := range g.Channels {
		need = need || c.Capacity == 0
	}
	if !need {
		return out
	}
	rv, err := analysis.RepetitionVector(g)
	if err != nil {
		return out
	}
	mins, err := analysis.MinimalBuffers(g, rv)
	if err != nil {
		return out
	}
	for _, c := range g.Channels {
		if n, ok := mins[c.Name]; ok {
			out[c] = n
		}
	}
	return out
}
