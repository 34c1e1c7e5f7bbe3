package graph

import "fmt"

// Flatten returns an equivalent graph without composite actors: each
// composite is replaced by its subgraph's actors, named "composite/inner",
// and channels to or from a composite port are reconnected to the inner port
// bound to it. The original graph is not modified. Flatten expects a graph
// that validates; an unbound composite port yields an error naming it.
func (g *Graph) Flatten() (*Graph, error) {
	f := New(g.Name)
	f.Origin = g.Origin
	f.Shared = g.Shared
	pm := map[*Port]*Port{}
	if err := g.flattenInto(f, "", pm); err != nil {
		return nil, err
	}
	for _, c := range g.Channels {
		from, to := pm[c.From], pm[c.To]
		if from == nil || to == nil {
			return nil, fmt.Errorf("flatten %q: channel %s has an end that does not resolve to an atomic actor's port", g.Name, c.Name)
		}
		nc := *c
		nc.From, nc.To = from, to
		if c.Name == c.From.FullName()+"->"+c.To.FullName() {
			nc.Name = from.FullName() + "->" + to.FullName()
		}
		f.Channels = append(f.Channels, &nc)
	}
	remap := func(bs []Boundary) ([]Boundary, error) {
		out := make([]Boundary, 0, len(bs))
		for _, b := range bs {
			a := g.Actor(b.Actor)
			if a == nil || a.Port(b.Port) == nil {
				return nil, fmt.Errorf("flatten %q: boundary %q names unknown port %s.%s", g.Name, b.Name, b.Actor, b.Port)
			}
			np := pm[a.Port(b.Port)]
			out = append(out, Boundary{Name: b.Name, Actor: np.Actor.Name, Port: np.Name, Origin: b.Origin})
		}
		return out, nil
	}
	var err error
	if f.Inputs, err = remap(g.Inputs); err != nil {
		return nil, err
	}
	if f.Outputs, err = remap(g.Outputs); err != nil {
		return nil, err
	}
	f.problems = append(f.problems, g.problems...)
	return f, nil
}

// flattenInto copies g's atomic actors into f with the name prefix, records
// old→new ports in pm (composite ports map to the inner bound port) and
// copies the inner channels of composites.
func (g *Graph) flattenInto(f *Graph, prefix string, pm map[*Port]*Port) error {
	for _, a := range g.Actors {
		if a.Sub == nil {
			na := *a
			na.Name = prefix + a.Name
			na.Graph = f
			na.Inputs, na.Outputs = nil, nil
			for _, p := range a.Inputs {
				np := *p
				np.Actor = &na
				na.Inputs = append(na.Inputs, &np)
				pm[p] = &np
			}
			for _, p := range a.Outputs {
				np := *p
				np.Actor = &na
				na.Outputs = append(na.Outputs, &np)
				pm[p] = &np
			}
			f.Actors = append(f.Actors, &na)
			continue
		}
		sub, err := a.Sub.Flatten()
		if err != nil {
			return fmt.Errorf("in composite %s: %w", a.Name, err)
		}
		inner := map[*Port]*Port{}
		if err := sub.flattenInto(f, prefix+a.Name+"/", inner); err != nil {
			return err
		}
		for _, c := range sub.Channels {
			nc := *c
			nc.From, nc.To = inner[c.From], inner[c.To]
			if c.Name == c.From.FullName()+"->"+c.To.FullName() {
				nc.Name = nc.From.FullName() + "->" + nc.To.FullName()
			} else {
				nc.Name = prefix + a.Name + "/" + c.Name
			}
			f.Channels = append(f.Channels, &nc)
		}
		bind := func(p *Port, bs []Boundary) error {
			for _, b := range bs {
				if b.Name != p.Name {
					continue
				}
				ia := sub.Actor(b.Actor)
				if ia == nil || ia.Port(b.Port) == nil {
					break
				}
				pm[p] = inner[ia.Port(b.Port)]
				return nil
			}
			return fmt.Errorf("composite port %s is not bound: expected a graph %sput %q in subgraph %q", p.FullName(), p.Dir, p.Name, sub.Name)
		}
		for _, p := range a.Inputs {
			if err := bind(p, sub.Inputs); err != nil {
				return err
			}
		}
		for _, p := range a.Outputs {
			if err := bind(p, sub.Outputs); err != nil {
				return err
			}
		}
	}
	f.reindex()
	return nil
}

// HasComposites reports whether any actor is composite.
func (g *Graph) HasComposites() bool {
	for _, a := range g.Actors {
		if a.Sub != nil {
			return true
		}
	}
	return false
}
