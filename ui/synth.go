package ui

import (
	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/graph"
)

// synthesize gives the actors of g that have no implementation the
// synthetic one `sluice run` gives them (actors.Synthesize: each firing
// burns the actor's declared cost), so that a graph still being designed
// runs from the page and its figures match the command line's. It returns
// the names of the actors it gave one.
func synthesize(g *graph.Graph) []string { return actors.Synthesize(g) }
