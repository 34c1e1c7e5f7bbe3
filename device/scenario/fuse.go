package scenario

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// Fused is one chain of element-wise actors that Fuse merged.
type Fused struct {
	// Name is the merged actor's name: the chain's names joined by "+".
	Name string
	// Actors are the chain's actors, producer first.
	Actors []string
	// Device is the device the chain is mapped to.
	Device string
	// Steps is the number of steps of the merged actor's scenario (one
	// per actor and iteration).
	Steps int
}

// Fuse merges every maximal chain of two or more element-wise kernel
// actors of g mapped onto the same device into one kernel actor that walks
// the chain's scenario: one launch per G firings of the whole chain
// instead of one per actor. It returns a new graph and mapping (g and mp
// are not changed) and the chains merged; with nothing to merge it returns
// g and mp themselves.
//
// An actor qualifies when it is declared element-wise (Elementwise, or a
// graph file's kernel: {elementwise: BODY}), is neither composite, nor
// conditional, nor keeps state or history, has no port exposed as a graph
// input or output, and mp places it on a device (not the CPU, not a
// cluster worker) with at most one replica and an OpenCL or CUDA
// implementation (or none named). Actor b follows actor a in a chain when
// a's output has one channel, to b's input, without initial tokens, and
// their placements name the same device, implementation, work-groups (G)
// and work-items (I). The merged actor takes the first actor's input and
// the last one's output (renamed "in" and "out" when their names are the
// same), that placement (the last actor's distribution of its output) and
// the sum of the actors' costs.
//
// Only g's own actors are merged, not those inside composite actors.
func Fuse(g *graph.Graph, mp *graph.Mapping) (*graph.Graph, *graph.Mapping, []Fused, error) {
	if mp == nil {
		return g, mp, nil, nil
	}
	chains := findChains(g, mp)
	if len(chains) == 0 {
		return g, mp, nil, nil
	}
	f := &fuser{g: g, mp: mp, chainOf: map[*graph.Actor]int{}}
	for i, c := range chains {
		for _, a := range c {
			f.chainOf[a] = i
		}
	}
	g2 := &graph.Graph{Name: g.Name, Origin: g.Origin, Inputs: g.Inputs, Outputs: g.Outputs, Shared: g.Shared}
	mp2 := mp.Clone()
	var fused []Fused
	merged := make([]*graph.Actor, len(chains))
	for i, c := range chains {
		m, pl, info, err := f.merge(g2, c)
		if err != nil {
			return nil, nil, nil, err
		}
		merged[i] = m
		for _, a := range c {
			delete(mp2.Actors, a.Name)
		}
		mp2.Actors[m.Name] = pl
		fused = append(fused, info)
	}
	for _, a := range g.Actors {
		i, in := f.chainOf[a]
		switch {
		case !in:
			g2.Actors = append(g2.Actors, a)
		case chains[i][0] == a:
			g2.Actors = append(g2.Actors, merged[i])
		}
	}
	for _, c := range g.Channels {
		if nc := f.rewire(c, chains, merged); nc != nil {
			g2.Channels = append(g2.Channels, nc)
		}
	}
	if err := g2.Validate(); err != nil {
		return nil, nil, nil, fmt.Errorf("scenario: the fused graph does not validate: %w", err)
	}
	return g2, mp2, fused, nil
}

// fuser holds what merging needs.
type fuser struct {
	g       *graph.Graph
	mp      *graph.Mapping
	chainOf map[*graph.Actor]int
}

// rewire returns channel c of the fused graph: nil for a channel inside a
// chain, a copy pointing at a merged actor's port for one entering or
// leaving a chain, c itself otherwise.
func (f *fuser) rewire(c *graph.Channel, chains [][]*graph.Actor, merged []*graph.Actor) *graph.Channel {
	fi, fromChain := f.chainOf[c.From.Actor]
	ti, toChain := f.chainOf[c.To.Actor]
	if fromChain && toChain && fi == ti {
		return nil
	}
	if !fromChain && !toChain {
		return c
	}
	nc := *c
	if fromChain {
		nc.From = merged[fi].Outputs[0]
	}
	if toChain {
		nc.To = merged[ti].Inputs[0]
	}
	return &nc
}

// merge makes the actor of one chain in g2, with its placement.
func (f *fuser) merge(g2 *graph.Graph, chain []*graph.Actor) (*graph.Actor, *graph.Placement, Fused, error) {
	first, last := chain[0], chain[len(chain)-1]
	var names []string
	var stages []Stage
	b := NewBuilder(2)
	m := &graph.Actor{Graph: g2, Origin: first.Origin, Attrs: map[string]string{}}
	for k, a := range chain {
		names = append(names, a.Name)
		st, err := stageOf(a, k)
		if err != nil {
			return nil, nil, Fused{}, err
		}
		stages = append(stages, st.Stage)
		from := 1
		if k == 0 {
			from = 0
		}
		steps(b, k, from, st.param, max(1, a.Iterations))
		m.Cost += a.Cost
	}
	m.Name = strings.Join(names, "+")
	m.Attrs[AttrFused] = strings.Join(names, ",")
	in, out := first.Inputs[0], last.Outputs[0]
	inName, outName := in.Name, out.Name
	if inName == outName {
		inName, outName = "in", "out"
	}
	m.AddPort(inName, graph.In, in.Type, in.Rate, in.Origin)
	op := m.AddPort(outName, graph.Out, out.Type, out.Rate, out.Origin)
	op.Block = out.Block
	sc := b.Scenario()
	for _, lang := range []Lang{OpenCL, CUDA} {
		src, err := GenerateActor(lang, m.Name, inName, outName, stages, sc)
		if err != nil {
			return nil, nil, Fused{}, err
		}
		m.Impls = append(m.Impls, graph.Impl{Kind: implKind(lang), Source: m.Name + ".fused." + lang.String(), Func: src})
	}
	pl := *f.mp.Actors[first.Name]
	pl.Distribution = nil
	if d, ok := f.mp.Actors[last.Name].Distribution[out.Name]; ok {
		pl.Distribution = map[string]graph.Distribution{outName: d}
	}
	pl.Origin = ""
	return m, &pl, Fused{Name: m.Name, Actors: names, Device: pl.Device, Steps: len(sc.Steps)}, nil
}

// findChains returns the maximal chains of two or more qualifying actors,
// in the graph's actor order.
func findChains(g *graph.Graph, mp *graph.Mapping) [][]*graph.Actor {
	ok := map[*graph.Actor]bool{}
	for _, a := range g.Actors {
		ok[a] = qualifies(g, a, mp)
	}
	next := map[*graph.Actor]*graph.Actor{}
	hasPrev := map[*graph.Actor]bool{}
	for _, a := range g.Actors {
		if !ok[a] {
			continue
		}
		if b := follower(g, a, mp, ok); b != nil {
			next[a] = b
			hasPrev[b] = true
		}
	}
	var chains [][]*graph.Actor
	for _, a := range g.Actors {
		if !ok[a] || hasPrev[a] {
			continue
		}
		c := []*graph.Actor{a}
		for b := next[a]; b != nil && len(c) <= len(g.Actors); b = next[b] {
			c = append(c, b)
		}
		if len(c) >= 2 {
			chains = append(chains, c)
		}
	}
	return chains
}

// follower returns the actor that follows a in a chain, or nil.
func follower(g *graph.Graph, a *graph.Actor, mp *graph.Mapping, ok map[*graph.Actor]bool) *graph.Actor {
	var outs []*graph.Channel
	for _, c := range g.Channels {
		if c.From == a.Outputs[0] {
			outs = append(outs, c)
		}
	}
	if len(outs) != 1 || outs[0].Initial > 0 {
		return nil
	}
	b := outs[0].To.Actor
	if b == a || !ok[b] || outs[0].To != b.Inputs[0] {
		return nil
	}
	pa, pb := mp.Actors[a.Name], mp.Actors[b.Name]
	if pa.Device != pb.Device || pa.Impl != pb.Impl || pa.WorkGroups != pb.WorkGroups || pa.WorkItems != pb.WorkItems {
		return nil
	}
	return b
}

// qualifies reports whether a may be part of a fused chain (see Fuse).
func qualifies(g *graph.Graph, a *graph.Actor, mp *graph.Mapping) bool {
	if _, ok := a.Attrs[AttrBody]; !ok || elementwiseShape(a) != nil {
		return false
	}
	if a.Sub != nil || a.Pattern != nil || a.StateDecl != nil {
		return false
	}
	for _, bs := range [][]graph.Boundary{g.Inputs, g.Outputs} {
		for _, b := range bs {
			if b.Actor == a.Name {
				return false
			}
		}
	}
	pl := mp.Actors[a.Name]
	if pl == nil || pl.Any != "" || pl.Replicas > 1 || strings.HasPrefix(pl.Device, "worker:") {
		return false
	}
	switch strings.ToLower(pl.Device) {
	case "", "cpu", "cpu:0", "host":
		return false
	}
	return pl.Impl == "" || pl.Impl == graph.ImplOpenCL || pl.Impl == graph.ImplCUDA
}
