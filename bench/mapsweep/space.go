package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// choice is where one actor runs in a candidate: on "cpu" with reps
// replicas, or on a device ID (its kernel).
type choice struct {
	dev  string
	reps int
}

// space is the set of candidate mappings of a graph: per actor the
// choices it has, and the values of G every kernel actor of a candidate
// shares.
type space struct {
	g         *graph.Graph
	backend   graph.ImplKind
	actors    []string
	opts      [][]choice
	gs        []int
	workItems int
	template  *graph.Mapping // kernel settings (work-items, distribution) per actor
}

// cpuImpl reports whether a has a CPU implementation (Go or built-in), or
// none at all (it then runs as a synthetic actor on the CPU).
func cpuImpl(a *graph.Actor) bool {
	if len(a.Impls) == 0 {
		return true
	}
	return slices.ContainsFunc(a.Impls, func(im graph.Impl) bool { return im.Kind == graph.ImplGo || im.Kind == graph.ImplBuiltin })
}

// kernelImpl reports whether a has a kernel for backend.
func kernelImpl(a *graph.Actor, backend graph.ImplKind) bool {
	return backend != "" && slices.ContainsFunc(a.Impls, func(im graph.Impl) bool { return im.Kind == backend })
}

// newSpace lists each actor's choices: the CPU with every replica count of
// reps (1 for a stateful actor) where it has a CPU implementation, and
// every device of devs where it has a kernel for backend.
func newSpace(g *graph.Graph, backend graph.ImplKind, devs []string, reps, gs []int, workItems int, tpl *graph.Mapping) (*space, error) {
	s := &space{g: g, backend: backend, gs: gs, workItems: workItems, template: tpl}
	for _, a := range g.Actors {
		var o []choice
		if cpuImpl(a) {
			if a.Stateful {
				o = append(o, choice{"cpu", 1})
			} else {
				for _, r := range reps {
					o = append(o, choice{"cpu", r})
				}
			}
		}
		if kernelImpl(a, backend) {
			for _, d := range devs {
				o = append(o, choice{d, 0})
			}
		}
		if len(o) == 0 {
			return nil, fmt.Errorf("actor %s: expected a Go or built-in implementation, or a %s kernel with a %s device present; found implementations %v and devices %v", a.Name, backend, backend, implKinds(a), devs)
		}
		s.actors = append(s.actors, a.Name)
		s.opts = append(s.opts, o)
	}
	return s, nil
}

func implKinds(a *graph.Actor) []string {
	var k []string
	for _, im := range a.Impls {
		k = append(k, string(im.Kind))
	}
	return k
}

// size is the number of points of the space (some describe the same
// mapping: G does not matter without a kernel actor).
func (s *space) size() float64 {
	n := float64(max(1, len(s.gs)))
	for _, o := range s.opts {
		n *= float64(len(o))
	}
	return n
}

// point is one candidate: a choice per actor and the G of its kernels.
type point struct {
	pick []int
	g    int
}

// at decodes the k-th point (mixed radix).
func (s *space) at(k int64) point {
	p := point{pick: make([]int, len(s.opts))}
	for i, o := range s.opts {
		p.pick[i] = int(k % int64(len(o)))
		k /= int64(len(o))
	}
	if len(s.gs) > 0 {
		p.g = s.gs[k%int64(len(s.gs))]
	}
	return p
}

// random draws a point.
func (s *space) random(rng *rand.Rand) point {
	p := point{pick: make([]int, len(s.opts))}
	for i, o := range s.opts {
		p.pick[i] = rng.IntN(len(o))
	}
	if len(s.gs) > 0 {
		p.g = s.gs[rng.IntN(len(s.gs))]
	}
	return p
}

// mapping turns a point into a runnable mapping: CPU actors with their
// replicas, kernel actors on their device with the backend's
// implementation, G, and the template's work-items and distribution (or
// the space's work-items).
func (s *space) mapping(p point, name string) *graph.Mapping {
	m := &graph.Mapping{Name: name, Actors: map[string]*graph.Placement{}}
	for i, a := range s.actors {
		c := s.opts[i][p.pick[i]]
		if c.dev == "cpu" {
			m.Actors[a] = &graph.Placement{Device: "cpu", Replicas: c.reps}
			continue
		}
		pl := &graph.Placement{Device: c.dev, Impl: s.backend, WorkGroups: p.g, WorkItems: s.workItems}
		if t := s.template.Actors[a]; t != nil && t.Impl == s.backend {
			pl.WorkItems, pl.Distribution = max(t.WorkItems, 0), t.Distribution
			if pl.WorkItems == 0 {
				pl.WorkItems = s.workItems
			}
		}
		m.Actors[a] = pl
	}
	return m
}

// describe is a mapping's short, canonical text: "a=cpu×2 b=opencl:0:0/G16".
func describe(m *graph.Mapping) string {
	names := make([]string, 0, len(m.Actors))
	for n := range m.Actors {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		pl := m.Actors[n]
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		dev := pl.Device
		if dev == "" {
			dev = "cpu"
		}
		fmt.Fprintf(&b, "%s=%s", n, dev)
		switch {
		case pl.Impl == graph.ImplOpenCL || pl.Impl == graph.ImplCUDA || pl.WorkGroups > 0:
			fmt.Fprintf(&b, "/G%d", max(1, pl.WorkGroups))
		case pl.Replicas > 1:
			fmt.Fprintf(&b, "×%d", pl.Replicas)
		}
	}
	return b.String()
}

// candidates returns the space's mappings: every one when the space has
// at most max points, else max distinct ones drawn with seed. Mappings
// equal to one of first are left out (first are measured anyway).
func (s *space) candidates(limit int, seed uint64, first []*graph.Mapping) []*graph.Mapping {
	seen := map[string]bool{}
	for _, m := range first {
		seen[describe(m)] = true
	}
	var out []*graph.Mapping
	add := func(p point) {
		m := s.mapping(p, fmt.Sprintf("c%d", len(out)+1))
		if d := describe(m); !seen[d] {
			seen[d] = true
			out = append(out, m)
		}
	}
	if s.size() <= float64(limit) {
		for k := int64(0); k < int64(s.size()); k++ {
			add(s.at(k))
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d6170))
	for tries := 0; len(out) < limit && tries < 100*limit; tries++ {
		add(s.random(rng))
	}
	return out
}

// reference returns the space's mapping with every actor on the CPU
// (one replica) where it can run there, else on the first device
// ("all-cpu"), or every kernel actor on the first device with G g and the
// CPU actors with one replica ("all-device").
func (s *space) reference(onDevice bool, g int) *graph.Mapping {
	p := point{pick: make([]int, len(s.opts)), g: g}
	for i, o := range s.opts {
		for k, c := range o {
			if (c.dev != "cpu") == onDevice && (c.dev != "cpu" || c.reps == 1) {
				p.pick[i] = k
				break
			}
		}
	}
	name := "all-cpu"
	if onDevice {
		name = "all-device"
	}
	return s.mapping(p, name)
}
