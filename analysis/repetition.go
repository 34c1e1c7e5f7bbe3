package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// Repetitions is the repetition vector of a graph: how many times each
// static actor fires in one iteration (a complete period after which every
// channel holds as many tokens as at the start).
type Repetitions struct {
	// Firings maps actor name → firings per iteration. For a cyclo-static
	// actor this is cycles × phases. Each connected component gets its own
	// smallest positive integer solution.
	Firings map[string]int64
	// Order lists the static actors in a topological-ish order (reverse DFS
	// postorder along channels: exact for acyclic graphs).
	Order []string
	// Skipped lists actors with a dynamic (KPN) port, left out of the
	// analysis; the channels touching them are unconstrained.
	Skipped []string
	// Unconstrained lists the channels touching a skipped actor.
	Unconstrained []string
}

// InconsistentError reports balance equations without a positive solution:
// two undirected paths from a common actor reach an actor at different
// rates, or going round a cycle an actor would fire a different number of
// times than itself.
type InconsistentError struct {
	// Cycle is true when the two paths form a cycle from Base back to Base
	// (PathB is the cycle, PathA is just Base).
	Cycle bool `json:"cycle"`
	// Base is the actor both paths start from; Target the actor they reach.
	Base   string `json:"base"`
	Target string `json:"target"`
	// PathA and PathB are the two paths as actor names.
	PathA []string `json:"path_a"`
	PathB []string `json:"path_b"`
	// RatioA and RatioB are Target's firings per Base firing along each path
	// ("3/2").
	RatioA string `json:"ratio_a"`
	RatioB string `json:"ratio_b"`
	// Channels describes the channels on both paths with their rates
	// ("B.o->D.i 3:2").
	Channels []string `json:"channel_rates"`
	// Detail replaces the message for a local inconsistency (a zero rate
	// facing a non-zero one, or a self-loop whose rates differ).
	Detail string `json:"detail,omitempty"`
	// Actors and ChannelNames list the actors and the channels (by name) on
	// both paths, each once, for tools that draw them.
	Actors       []string `json:"actors,omitempty"`
	ChannelNames []string `json:"channels,omitempty"`
}

// Error names the two paths (or the cycle) and the rates they imply.
func (e *InconsistentError) Error() string {
	if e.Detail != "" {
		return "inconsistent rates: " + e.Detail
	}
	var s string
	if e.Cycle {
		s = fmt.Sprintf("inconsistent rates: going round the cycle %s, %s fires %s per firing of itself (expected 1/1)",
			strings.Join(e.PathB, ""), e.Base, e.RatioB)
	} else {
		s = fmt.Sprintf("inconsistent rates: rates disagree between paths %s (%s fires %s per %s) and %s (%s fires %s per %s)",
			strings.Join(e.PathA, ""), e.Target, e.RatioA, e.Base, strings.Join(e.PathB, ""), e.Target, e.RatioB, e.Base)
	}
	if len(e.Channels) > 0 {
		s += "; channels (produced:consumed per firing): " + strings.Join(e.Channels, ", ")
	}
	return s
}

// RepetitionVector solves the balance equations of g's static part with
// exact rational arithmetic. It returns *InconsistentError when the rates
// admit no positive solution, and an error wrapping ErrOverflow when a
// number exceeds 64 bits.
func RepetitionVector(g *graph.Graph) (*Repetitions, error) {
	m, err := build(g)
	if err != nil {
		return nil, err
	}
	return m.repetitions()
}

type treeEdge struct{ ch, from int } // channel and parent actor; ch = -1 at a root

func (m *model) repetitions() (*Repetitions, error) {
	n := len(m.actors)
	r := make([]rat, n)
	seen := make([]bool, n)
	parent := make([]treeEdge, n)
	depth := make([]int, n)
	firings := make(map[string]int64, n)
	queue := make([]int, 0, n)
	for root := 0; root < n; root++ {
		if seen[root] {
			continue
		}
		seen[root] = true
		r[root] = rat{1, 1}
		parent[root] = treeEdge{-1, -1}
		queue = append(queue[:0], root)
		for h := 0; h < len(queue); h++ {
			u := queue[h]
			for pass := 0; pass < 2; pass++ {
				list := m.outs[u]
				if pass == 1 {
					list = m.ins[u]
				}
				for _, ci := range list {
					c := &m.chans[ci]
					if c.prodCyc == 0 && c.consCyc == 0 {
						continue
					}
					if c.self {
						if c.prodCyc != c.consCyc {
							return nil, &InconsistentError{Detail: fmt.Sprintf("self-loop %s: %s produces %d and consumes %d tokens per cycle of %d firing(s); expected equal numbers",
								c.name, m.actors[u].Name, c.prodCyc, c.consCyc, m.phases[u])}
						}
						continue
					}
					if c.prodCyc == 0 || c.consCyc == 0 {
						return nil, &InconsistentError{Detail: fmt.Sprintf("channel %s: %s produces %d and %s consumes %d tokens per cycle; a zero rate facing a non-zero one leaves no positive solution",
							c.name, m.actors[c.src].Name, c.prodCyc, m.actors[c.dst].Name, c.consCyc)}
					}
					v := c.dst
					p, q := c.prodCyc, c.consCyc
					if pass == 1 {
						v = c.src
						p, q = q, p
					}
					want, ok := r[u].scale(p, q)
					if !ok {
						return nil, fmt.Errorf("analysis: repetition vector near %s: %w", c.name, ErrOverflow)
					}
					if !seen[v] {
						seen[v] = true
						r[v] = want
						parent[v] = treeEdge{ci, u}
						depth[v] = depth[u] + 1
						queue = append(queue, v)
						continue
					}
					if want != r[v] {
						return nil, m.inconsistency(r, parent, depth, u, v, ci, want)
					}
				}
			}
		}
		// Smallest integer solution of this component, in cycles.
		l := int64(1)
		for _, a := range queue {
			var ok bool
			if l, ok = lcm64(l, r[a].d); !ok {
				return nil, fmt.Errorf("analysis: repetition vector of the component of %s: %w", m.actors[root].Name, ErrOverflow)
			}
		}
		gg := int64(0)
		cyc := make([]int64, len(queue))
		for i, a := range queue {
			x, ok := mul(r[a].n, l/r[a].d)
			if !ok {
				return nil, fmt.Errorf("analysis: repetition vector of the component of %s: %w", m.actors[root].Name, ErrOverflow)
			}
			cyc[i] = x
			gg = gcd64(gg, x)
		}
		for i, a := range queue {
			f, ok := mul(cyc[i]/gg, int64(m.phases[a]))
			if !ok {
				return nil, fmt.Errorf("analysis: firings of %s: %w", m.actors[a].Name, ErrOverflow)
			}
			firings[m.actors[a].Name] = f
		}
	}
	rv := &Repetitions{Firings: firings, Order: m.order(),
		Skipped: append([]string(nil), m.skipped...), Unconstrained: append([]string(nil), m.loose...)}
	// Every token count of one iteration must fit comfortably in 64 bits.
	if _, err := m.targets(rv); err != nil {
		return nil, err
	}
	return rv, nil
}

// withChannels renders a path of actor steps with the channel of each
// step and where it is declared: "A→B (over A.o->B.i at g.yaml:7:5)".
func (m *model) withChannels(path []string, cs []int) []string {
	out := []string{path[0]}
	for i, c := range cs {
		step := path[i+1] + " (over " + m.chans[c].name
		if ch := m.chans[c].ch; ch != nil && ch.Origin != "" {
			step += " at " + ch.Origin
		}
		out = append(out, step+")")
	}
	return out
}

// inconsistency builds the error for the non-tree channel ci reaching v from
// u with rate want, while the tree gave r[v].
func (m *model) inconsistency(r []rat, parent []treeEdge, depth []int, u, v, ci int, want rat) error {
	// tree path from the root to x, as actor indices and channels.
	up := func(x int) ([]int, []int) {
		var as, cs []int
		for ; x >= 0; x = parent[x].from {
			as = append(as, x)
			cs = append(cs, parent[x].ch)
		}
		for i, j := 0, len(as)-1; i < j; i, j = i+1, j-1 {
			as[i], as[j] = as[j], as[i]
			cs[i], cs[j] = cs[j], cs[i]
		}
		return as, cs
	}
	av, cv := up(v)
	au, cu := up(u)
	k := 0
	for k < len(av) && k < len(au) && av[k] == au[k] {
		k++
	}
	base := av[k-1]
	pathA, chA := av[k-1:], cv[k:]
	pathB, chB := append(append([]int(nil), au[k-1:]...), v), append(append([]int(nil), cu[k:]...), ci)
	render := func(as, cs []int) []string {
		out := []string{m.actors[as[0]].Name}
		for i, c := range cs {
			arrow := "→"
			if m.chans[c].dst == as[i] {
				arrow = "←"
			}
			out = append(out, arrow+m.actors[as[i+1]].Name)
		}
		return out
	}
	ratio := func(x rat) string { // firings of v per firing of base
		y, ok := x.scale(int64(m.phases[v]), 1)
		if ok {
			y, ok = y.scale(r[base].d, r[base].n)
		}
		if ok {
			y, ok = y.scale(1, int64(m.phases[base]))
		}
		if !ok {
			return "(overflow)"
		}
		return y.String()
	}
	e := &InconsistentError{Base: m.actors[base].Name, Target: m.actors[v].Name,
		PathA: render(pathA, chA), PathB: render(pathB, chB), RatioA: ratio(r[v]), RatioB: ratio(want)}
	// When one path runs along the channels and the other against them,
	// together they are a directed cycle: report it as such.
	dirs := func(cs []int, as []int) (fwd, bwd bool) {
		for i, c := range cs {
			if m.chans[c].src == as[i] {
				fwd = true
			} else {
				bwd = true
			}
		}
		return
	}
	fa, ba := dirs(chA, pathA)
	fb, bb := dirs(chB, pathB)
	factor := func(x, y rat) string { // x/y
		z, ok := x.scale(y.d, y.n)
		if !ok {
			return "(overflow)"
		}
		return z.String()
	}
	rev := func(p []string) []string { // reverse a rendered path of → steps
		out := make([]string, 0, len(p))
		for i := len(p) - 1; i >= 0; i-- {
			out = append(out, "→"+strings.TrimLeft(strings.TrimLeft(p[i], "←"), "→"))
		}
		return out
	}
	switch {
	case base == v: // the tree path reaches u and c closes a cycle
		e.Cycle, e.RatioB = true, factor(want, r[v])
	case !fa && fb && !bb:
		e.Cycle, e.PathB, e.RatioB = true, append(e.PathB, rev(e.PathA)[1:]...), factor(want, r[v])
	case fa && !ba && !fb && bb:
		e.Cycle, e.PathB, e.RatioB = true, append(e.PathA, rev(e.PathB)[1:]...), factor(r[v], want)
	}
	if e.Cycle {
		e.PathA, e.RatioA = []string{e.Base}, "1/1"
	} else if strings.Join(e.PathA, "") == strings.Join(e.PathB, "") {
		// Parallel channels: the actor names alone read as one path.
		e.PathA, e.PathB = m.withChannels(e.PathA, chA), m.withChannels(e.PathB, chB)
	}
	seen := map[int]bool{}
	for _, c := range append(append([]int(nil), chA...), chB...) {
		if seen[c] {
			continue
		}
		seen[c] = true
		mc := m.chans[c]
		e.Channels = append(e.Channels, fmt.Sprintf("%s %s:%s", mc.name, mc.prod, mc.cons))
		e.ChannelNames = append(e.ChannelNames, mc.name)
	}
	onPath := map[int]bool{}
	for _, a := range append(append([]int(nil), pathA...), pathB...) {
		if !onPath[a] {
			onPath[a] = true
			e.Actors = append(e.Actors, m.actors[a].Name)
		}
	}
	return e
}

// order returns the static actors in reverse DFS postorder, starting from
// actors without static inputs, then the rest, in declaration order.
func (m *model) order() []string {
	n := len(m.actors)
	state := make([]uint8, n)
	post := make([]int, 0, n)
	type frame struct{ a, i int }
	var stack []frame
	visit := func(s int) {
		state[s] = 1
		stack = append(stack[:0], frame{s, 0})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.i < len(m.outs[f.a]) {
				b := m.chans[m.outs[f.a][f.i]].dst
				f.i++
				if state[b] == 0 {
					state[b] = 1
					stack = append(stack, frame{b, 0})
				}
				continue
			}
			post = append(post, f.a)
			stack = stack[:len(stack)-1]
		}
	}
	for a := 0; a < n; a++ {
		src := true
		for _, ci := range m.ins[a] {
			if !m.chans[ci].self {
				src = false
				break
			}
		}
		if src && state[a] == 0 {
			visit(a)
		}
	}
	for a := 0; a < n; a++ {
		if state[a] == 0 {
			visit(a)
		}
	}
	out := make([]string, n)
	for i, a := range post {
		out[n-1-i] = m.actors[a].Name
	}
	return out
}

// sortedKeys returns the keys of a map in order.
func sortedKeys[V any](mp map[string]V) []string {
	ks := make([]string, 0, len(mp))
	for k := range mp {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
