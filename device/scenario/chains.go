package scenario

import (
	"github.com/sluicehq/sluice/graph"
)

// ExprAttr is the actor attribute that declares a kernel actor elementwise
// and gives its stage expression in x (attrs: {scenario.expr: "x * 2.0f"}).
const ExprAttr = "scenario.expr"

// Found is a chain of graph actors that can run as one scenario.
type Found struct {
	// Device is the device the mapping places every actor of the chain on.
	Device string
	// Actors are the chain's actors, in stream order.
	Actors []string
	// Stages are their expressions, for Compile.
	Stages []Stage
}

// Chains returns the maximal chains of two or more actors of g that one
// scenario can run: each actor declares ExprAttr, has one f32 input and one
// f32 output of the same fixed rate, the mapping places all of them on the
// same device, and each link is the only channel from one to the next
// (no initial tokens, no other reader).
func Chains(g *graph.Graph, m *graph.Mapping) []Found {
	ok := map[*graph.Actor]string{} // eligible actor → device
	for _, a := range g.Actors {
		if dev, fits := eligible(a, m); fits {
			ok[a] = dev
		}
	}
	next := map[*graph.Actor]*graph.Actor{}
	hasPrev := map[*graph.Actor]bool{}
	for a, dev := range ok {
		cs := g.ChannelsOf(a.Outputs[0])
		if len(cs) != 1 || cs[0].Initial != 0 {
			continue
		}
		b := cs[0].To.Actor
		if bdev, fits := ok[b]; fits && bdev == dev && b != a {
			next[a], hasPrev[b] = b, true
		}
	}
	var out []Found
	for _, a := range g.Actors { // graph order: deterministic
		if _, fits := ok[a]; !fits || hasPrev[a] || next[a] == nil {
			continue
		}
		f := Found{Device: ok[a]}
		seen := map[*graph.Actor]bool{}
		for x := a; x != nil && !seen[x]; x = next[x] {
			seen[x] = true
			f.Actors = append(f.Actors, x.Name)
			f.Stages = append(f.Stages, Stage{Name: x.Name, Expr: x.Attrs[ExprAttr]})
		}
		out = append(out, f)
	}
	return out
}

func eligible(a *graph.Actor, m *graph.Mapping) (string, bool) {
	if a.Attrs[ExprAttr] == "" || len(a.Inputs) != 1 || len(a.Outputs) != 1 || m == nil {
		return "", false
	}
	in, out := a.Inputs[0], a.Outputs[0]
	if in.Type.Name != "f32" || out.Type.Name != "f32" || in.Rate.IsDynamic() || in.Rate.IsCSDF() || !in.Rate.Equal(out.Rate) {
		return "", false
	}
	pl := m.Actors[a.Name]
	if pl == nil || pl.Device == "" || pl.Device == "cpu" {
		return "", false
	}
	return pl.Device, true
}
