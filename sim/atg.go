package sim

import (
	"math"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// G is the G of the profile's kernel actors (firings per invocation):
// the largest where they differ, 0 without kernel actors.
func (p *Profile) G() int64 {
	var g int64
	for _, k := range p.Kernels {
		g = max(g, k.WorkGroups)
	}
	return g
}

// AddAtG records p as measured under its G (Profile.G; nothing when p
// has no kernel actors): the mean firing times of its actors that are
// not kernel actors, and of its kernel actors measured one invocation at
// a time (KernelProfile.Own). Build costs a CPU actor from the profile of
// the G nearest that of the kernel actors beside it, and a kernel actor
// from the profile of the G nearest its own, ahead of every other cost.
func (c *Costs) AddAtG(p *Profile) { c.AddAt(p.G(), p) }

// AddAt is AddAtG for a profile measured at G g (nothing when g ≤ 0),
// whatever its kernel actors say.
func (c *Costs) AddAt(g int64, p *Profile) {
	if g <= 0 {
		return
	}
	if c.AtG == nil {
		c.AtG = map[int64]*Profile{}
	}
	at := c.AtG[g]
	if at == nil {
		at = &Profile{Mean: map[string]float64{}, Kernels: map[string]KernelProfile{}}
		c.AtG[g] = at
	}
	for a, v := range p.Mean {
		kp, kernel := p.Kernels[a]
		switch {
		case !kernel:
			at.Mean[a] = v
		case kp.Own():
			at.Mean[a], at.Kernels[a] = v, kp
		}
	}
}

// nearestAtG returns the AtG profile whose G is nearest g (by ratio; the
// larger on a tie) among those for which has holds.
func (c *Costs) nearestAtG(g int64, has func(*Profile) bool) (*Profile, bool) {
	if c == nil || len(c.AtG) == 0 || g <= 0 {
		return nil, false
	}
	var best int64
	bestD := math.Inf(1)
	for k, p := range c.AtG {
		if !has(p) {
			continue
		}
		d := math.Abs(math.Log(float64(k) / float64(g)))
		if d < bestD || (d == bestD && k > best) {
			best, bestD = k, d
		}
	}
	if best == 0 {
		return nil, false
	}
	return c.AtG[best], true
}

// atG returns actor name's mean firing time as a CPU actor (not a kernel
// actor) from the AtG profile of the G nearest g that has one.
func (c *Costs) atG(name string, g int64) (float64, bool) {
	p, ok := c.nearestAtG(g, func(p *Profile) bool {
		_, mean := p.Mean[name]
		_, kernel := p.Kernels[name]
		return mean && !kernel
	})
	if !ok {
		return 0, false
	}
	return p.Mean[name], true
}

// kernelAtG returns kernel actor name's mean firing time, how it was
// measured and the profile's kernel actors, from the AtG profile of the
// G nearest g that measured it.
func (c *Costs) kernelAtG(name string, g int64) (float64, KernelProfile, map[string]KernelProfile, bool) {
	p, ok := c.nearestAtG(g, func(p *Profile) bool {
		_, kernel := p.Kernels[name]
		return kernel
	})
	if !ok {
		return 0, KernelProfile{}, nil, false
	}
	return p.Mean[name], p.Kernels[name], p.Kernels, true
}

// ContextG is the G of the kernel actors beside actor a in mapping m (the
// largest G among the actors a shares a channel with that m places on a
// gpu processor of mach with work-groups), else the largest G of any
// actor m places so; 0 when m places no kernel actor on a GPU.
func ContextG(g *graph.Graph, a *graph.Actor, m *graph.Mapping, mach *machine.Machine) int64 {
	if m == nil {
		return 0
	}
	gOf := func(name string) int64 {
		pl := m.Actors[name]
		if pl == nil || pl.WorkGroups <= 0 {
			return 0
		}
		if p := mach.Resolve(pl.Device); p == nil || p.Kind != "gpu" {
			return 0
		}
		return int64(pl.WorkGroups)
	}
	var near, all int64
	for _, c := range g.Channels {
		if c.From == nil || c.To == nil {
			continue
		}
		switch a {
		case c.From.Actor:
			near = max(near, gOf(c.To.Actor.Name))
		case c.To.Actor:
			near = max(near, gOf(c.From.Actor.Name))
		}
	}
	if near > 0 {
		return near
	}
	for name := range m.Actors {
		all = max(all, gOf(name))
	}
	return all
}
