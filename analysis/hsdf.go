package analysis

import (
	"fmt"
	"sort"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// DefaultExpandLimit is the default bound on the vertices of a single-rate
// expansion.
const DefaultExpandLimit = 1_000_000

// Vertex is one firing in a single-rate expansion.
type Vertex struct {
	// Actor names the actor.
	Actor string
	// Firing counts the actor's firings within the unfolded iteration,
	// from 0 to J·q−1.
	Firing int
	// Iteration is Firing / q: which of the J unfolded iterations it is in.
	Iteration int
	// Cost is the actor's execution time.
	Cost time.Duration
}

// Edge is a precedence between two firings.
type Edge struct {
	// From and To index HSDF.Vertices.
	From, To int
	// Delay counts unfolded iterations between them: 0 means the same
	// unfolded iteration; d > 0 means To depends on From of d unfolded
	// iterations earlier (initial tokens).
	Delay int
	// Channel names the channel whose tokens make the dependence; empty for
	// the order edges of a stateful actor.
	Channel string
}

// HSDF is the single-rate (homogeneous) expansion of a graph, the APEG of
// Lee and Messerschmitt with the unfolding factor J of CGMBE: one vertex
// per firing in J iterations, one edge per producer/consumer firing pair.
type HSDF struct {
	// J is the unfolding factor.
	J int
	// Vertices in actor order, then firing order.
	Vertices []Vertex
	// Edges, deduplicated per (From, To, Delay, Channel).
	Edges []Edge
	// Unit is true when no actor has a cost (lengths count vertices).
	Unit bool
}

// Expand builds the single-rate expansion of g over unfold (J ≥ 1)
// iterations. Stateful actors also get order edges between consecutive
// firings. It refuses, with an error, an expansion of more than limit
// vertices (limit ≤ 0 means DefaultExpandLimit) or 8·limit edges.
func Expand(g *graph.Graph, rv *Repetitions, unfold int, limit int) (*HSDF, error) {
	if unfold < 1 {
		return nil, fmt.Errorf("analysis: unfolding factor %d: expected ≥ 1", unfold)
	}
	if limit <= 0 {
		limit = DefaultExpandLimit
	}
	m, err := build(g)
	if err != nil {
		return nil, err
	}
	q, err := m.targets(rv)
	if err != nil {
		return nil, err
	}
	var total int64
	base := make([]int, len(m.actors))
	for a := range m.actors {
		n, ok := mul(q[a], int64(unfold))
		if !ok || total+n > int64(limit) {
			return nil, fmt.Errorf("analysis: single-rate expansion of %q with J=%d has more than %d vertices (limit): expected a smaller unfolding factor or a larger limit", m.g.Name, unfold, limit)
		}
		base[a] = int(total)
		total += n
	}
	h := &HSDF{J: unfold, Vertices: make([]Vertex, 0, total)}
	cost, unit := m.costs()
	h.Unit = unit
	for a, act := range m.actors {
		n := int(q[a]) * unfold
		for f := 0; f < n; f++ {
			h.Vertices = append(h.Vertices, Vertex{Actor: act.Name, Firing: f, Iteration: f / int(q[a]), Cost: time.Duration(cost[a])})
		}
	}
	maxEdges := 8 * limit
	add := func(e Edge) error {
		if len(h.Edges) >= maxEdges {
			return fmt.Errorf("analysis: single-rate expansion of %q with J=%d has more than %d edges (8×limit)", m.g.Name, unfold, maxEdges)
		}
		h.Edges = append(h.Edges, e)
		return nil
	}
	for _, c := range m.chans {
		na, nb := q[c.src]*int64(unfold), q[c.dst]*int64(unfold)
		pa, pb := m.phases[c.src], m.phases[c.dst]
		prodPre := prefix(c.prod, pa)
		consPre := prefix(c.cons, pb)
		last := Edge{From: -1}
		for j := int64(0); j < nb; j++ {
			lo := cum(consPre, c.consCyc, pb, j)
			hi := cum(consPre, c.consCyc, pb, j+1)
			if lo == hi {
				continue
			}
			// producer firings of tokens lo .. hi-1 (token x made by firing i with P(i) ≤ x-d < P(i+1))
			first := producerOf(prodPre, c.prodCyc, pa, lo-c.init)
			lastF := producerOf(prodPre, c.prodCyc, pa, hi-1-c.init)
			for i := first; i <= lastF; i++ {
				if cum(prodPre, c.prodCyc, pa, i) == cum(prodPre, c.prodCyc, pa, i+1) {
					continue // a firing producing nothing
				}
				d := -floorDiv(i, na)
				e := Edge{From: base[c.src] + int(i+int64(d)*na), To: base[c.dst] + int(j), Delay: int(d), Channel: c.name}
				if e == last {
					continue
				}
				last = e
				if err := add(e); err != nil {
					return nil, err
				}
			}
		}
	}
	for a, act := range m.actors {
		if !act.Stateful {
			continue
		}
		n := int(q[a]) * unfold
		for f := 0; f < n; f++ {
			e := Edge{From: base[a] + f, To: base[a] + (f+1)%n}
			if f == n-1 {
				e.Delay = 1
			}
			if err := add(e); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

// prefix returns the cumulative rates over one actor cycle of p phases.
func prefix(r graph.Rate, p int) []int64 {
	out := make([]int64, p+1)
	for k := 0; k < p; k++ {
		out[k+1] = out[k] + int64(r.At(k))
	}
	return out
}

// cum is the tokens moved by the first i firings (i may be negative).
func cum(pre []int64, perCycle int64, p int, i int64) int64 {
	c := floorDiv(i, int64(p))
	return c*perCycle + pre[i-c*int64(p)]
}

// producerOf returns the firing whose output holds token x (x may be
// negative: a firing of an earlier iteration).
func producerOf(pre []int64, perCycle int64, p int, x int64) int64 {
	c := floorDiv(x, perCycle)
	r := x - c*perCycle
	k := sort.Search(p, func(k int) bool { return pre[k+1] > r })
	return c*int64(p) + int64(k)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Path is a path through an HSDF with its length.
type Path struct {
	// Length sums the costs of its vertices (vertices count when Unit).
	Length time.Duration
	// Vertices along the path.
	Vertices []Vertex
}

// zeroDelayOrder returns a topological order over zero-delay edges and the
// predecessor lists, or an error naming a zero-delay cycle (a deadlock).
func (h *HSDF) zeroDelayOrder() ([]int, [][]int, error) {
	n := len(h.Vertices)
	preds := make([][]int, n)
	succ := make([][]int, n)
	indeg := make([]int, n)
	for _, e := range h.Edges {
		if e.Delay == 0 {
			preds[e.To] = append(preds[e.To], e.From)
			succ[e.From] = append(succ[e.From], e.To)
			indeg[e.To]++
		}
	}
	order := make([]int, 0, n)
	for v := range n {
		if indeg[v] == 0 {
			order = append(order, v)
		}
	}
	for i := 0; i < len(order); i++ {
		for _, w := range succ[order[i]] {
			if indeg[w]--; indeg[w] == 0 {
				order = append(order, w)
			}
		}
	}
	if len(order) < n {
		for v := range n {
			if indeg[v] > 0 {
				return nil, nil, fmt.Errorf("analysis: the expansion has a cycle without delay through %s firing %d: the graph deadlocks", h.Vertices[v].Actor, h.Vertices[v].Firing)
			}
		}
	}
	return order, preds, nil
}

// CriticalPath returns the longest path over zero-delay edges, weighting
// each vertex by its cost (by 1 when Unit): the latency of one unfolded
// iteration on unlimited processors.
func (h *HSDF) CriticalPath() (Path, error) {
	order, preds, err := h.zeroDelayOrder()
	if err != nil {
		return Path{}, err
	}
	n := len(h.Vertices)
	dist := make([]int64, n)
	from := make([]int, n)
	w := func(v int) int64 {
		if h.Unit {
			return 1
		}
		return int64(h.Vertices[v].Cost)
	}
	bestV := -1
	for _, v := range order {
		from[v] = -1
		dist[v] = w(v)
		for _, p := range preds[v] {
			if d := dist[p] + w(v); d > dist[v] {
				dist[v], from[v] = d, p
			}
		}
		if bestV < 0 || dist[v] > dist[bestV] {
			bestV = v
		}
	}
	var p Path
	if bestV < 0 {
		return p, nil
	}
	p.Length = time.Duration(dist[bestV])
	for v := bestV; v >= 0; v = from[v] {
		p.Vertices = append(p.Vertices, h.Vertices[v])
	}
	for i, j := 0, len(p.Vertices)-1; i < j; i, j = i+1, j-1 {
		p.Vertices[i], p.Vertices[j] = p.Vertices[j], p.Vertices[i]
	}
	return p, nil
}

// Stages returns the ASAP levels over zero-delay edges: level 0 holds the
// firings without zero-delay predecessors, level k those whose latest
// predecessor is on level k−1. Firings of one level may run concurrently;
// levels give the stages of a pipelined schedule. Nil on a zero-delay
// cycle (see CriticalPath for the error).
func (h *HSDF) Stages() [][]Vertex {
	order, preds, err := h.zeroDelayOrder()
	if err != nil {
		return nil
	}
	level := make([]int, len(h.Vertices))
	var out [][]Vertex
	for _, v := range order {
		for _, p := range preds[v] {
			level[v] = max(level[v], level[p]+1)
		}
		for len(out) <= level[v] {
			out = append(out, nil)
		}
		out[level[v]] = append(out[level[v]], h.Vertices[v])
	}
	return out
}
