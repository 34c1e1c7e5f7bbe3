package mapping

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
)

// StaticEstimate returns the graph the strategies simulate in place of g
// when g has actors with dynamic (KPN) ports, which the simulator cannot
// run, and one sentence per such actor saying what is assumed; g itself
// and no sentence when it has none.
//
// The estimate: each dynamic port takes the rate of the port it is joined
// to (its first channel's other end; 1 when that end is dynamic too or
// there is none), so that every firing of the process moves data on every
// port — a switch is costed as if it fed all its branches, which
// overestimates the branches' work and never underestimates it — and the
// process is stateful, as a process is one goroutine that is never
// replicated or fused. The copy is checked: when the estimated rates do
// not balance, the error names the actors and asks for rates.
func StaticEstimate(g *graph.Graph) (*graph.Graph, []string, error) {
	if g == nil || !hasDynamic(g) {
		return g, nil, nil
	}
	c, err := g.Flatten() // a copy whose ports may be changed
	if err != nil {
		return nil, nil, fmt.Errorf("mapping: %w", err)
	}
	var notes, names []string
	for _, a := range c.Actors {
		if !a.Dynamic() {
			continue
		}
		var rates []string
		for _, p := range a.Ports() {
			if !p.Rate.IsDynamic() {
				continue
			}
			n := peerRate(c, p)
			p.Rate = graph.SDF(n)
			rates = append(rates, fmt.Sprintf("%s %d", p.Name, n))
		}
		a.Stateful = true
		names = append(names, a.Name)
		notes = append(notes, fmt.Sprintf("actor %s has dynamic (KPN) ports: simulated as moving, on every firing, the rates of the ports they are joined to (%s tokens), as one process (no replicas)", a.Name, strings.Join(rates, ", ")))
	}
	if _, err := analysis.RepetitionVector(c); err != nil {
		return nil, nil, fmt.Errorf("mapping: the dynamic (KPN) ports of %s cannot be estimated from the ports they are joined to (%v): give them rates to map or simulate this graph", strings.Join(names, ", "), err)
	}
	return c, notes, nil
}

// hasDynamic reports whether g, or a composite's subgraph, has an actor
// with a dynamic port.
func hasDynamic(g *graph.Graph) bool {
	for _, a := range g.Actors {
		if a.Dynamic() || (a.Sub != nil && hasDynamic(a.Sub)) {
			return true
		}
	}
	return false
}

// peerRate is the tokens per firing of the static port p's first channel
// joins it to (its cycle's total for a cyclo-static port), or 1 when that
// port is dynamic too or p has no channel.
func peerRate(g *graph.Graph, p *graph.Port) int {
	for _, ch := range g.Channels {
		var other *graph.Port
		switch p {
		case ch.From:
			other = ch.To
		case ch.To:
			other = ch.From
		default:
			continue
		}
		if other.Rate.IsDynamic() || other.Rate.Sum() <= 0 {
			return 1
		}
		return other.Rate.Sum()
	}
	return 1
}

// nowhere says why actor a can run on no processor of m: the kinds of
// processor its implementations need and those m has, or the I/O or costs
// that rule each processor out.
func nowhere(a *graph.Actor, m *machine.Machine, costs *sim.Costs) error {
	have := map[string]bool{}
	var procs []string
	for _, p := range m.Processors {
		have[p.Kind] = true
		procs = append(procs, fmt.Sprintf("%s (%s)", p.Name, p.Kind))
	}
	var impls []string
	cpu := false
	for _, im := range a.Impls {
		impls = append(impls, string(im.Kind))
		cpu = cpu || im.Kind == graph.ImplGo || im.Kind == graph.ImplBuiltin
	}
	sort.Strings(impls)
	if len(a.Impls) > 0 && !cpu && !have["gpu"] {
		what := "kernel actor"
		if src := a.Attrs["flowmodel"]; src != "" {
			what = "flow-model actor (" + src + ")"
		}
		return fmt.Errorf("mapping: actor %s is a %s with %s kernels only and no Go implementation: it needs a gpu processor, and machine %s has none (processors: %s); map onto a model with its device (sluice calibrate measures the GPUs it finds, --device names any other, such as opencl:0:0) or give the actor a Go implementation",
			a.Name, what, strings.Join(impls, " and "), m.Name, strings.Join(procs, ", "))
	}
	return fmt.Errorf("mapping: actor %s can run on no processor of machine %s (processors: %s): expected one with an implementation of the actor's (%s), I/O where the actor does I/O, and a cost not marked never",
		a.Name, m.Name, strings.Join(procs, ", "), strings.Join(impls, ", "))
}
