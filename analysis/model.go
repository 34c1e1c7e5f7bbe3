// Package analysis holds the static analyses of sluice graphs: balance
// equations and repetition vectors (SDF and CSDF), deadlock detection with
// the minimal set of channels to initialise (Caravela's Algorithm 1),
// minimal and throughput-optimal buffer sizes, throughput bounds,
// single-rate (HSDF/APEG) expansion with unfolding, critical paths and
// stages, single-processor schedules and Caravela's PEA-ST stage matrix.
//
// Every function is a pure function of a graph.Graph: nothing is modified.
// Composite actors are flattened first (their actors are named
// "composite/inner"). Actors with a dynamic (KPN) port are outside the
// static analysis: they are listed in Repetitions.Skipped and the channels
// touching them are left unconstrained.
//
// The package imports only graph and the standard library.
package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/sluicehq/sluice/graph"
)

// inf is the capacity used for an unbounded channel in the simulations.
const inf int64 = 1 << 62

// ErrOverflow is wrapped by errors reporting a number too large for exact
// 64-bit arithmetic.
var ErrOverflow = errors.New("integer overflow in exact arithmetic")

// mchan is a channel of the static part of a graph.
type mchan struct {
	ch               *graph.Channel
	name             string
	src, dst         int
	prod, cons       graph.Rate
	prodCyc, consCyc int64 // tokens per cycle of the producer / consumer actor
	prodMax, consMax int64
	init             int64
	cap              int64 // 0 = not given
	self             bool
}

// model is the static (SDF/CSDF) part of a flattened graph, indexed.
type model struct {
	g         *graph.Graph
	actors    []*graph.Actor
	idx       map[string]int
	phases    []int
	chans     []mchan
	ins, outs [][]int
	hasSelf   []bool
	skipped   []string // dynamic actors
	loose     []string // channels touching a dynamic actor
}

// flat returns g flattened when it has composite actors.
func flat(g *graph.Graph) (*graph.Graph, error) {
	if g == nil {
		return nil, errors.New("analysis: nil graph")
	}
	if g.HasComposites() {
		f, err := g.Flatten()
		if err != nil {
			return nil, fmt.Errorf("analysis: %w", err)
		}
		return f, nil
	}
	return g, nil
}

func build(g *graph.Graph) (*model, error) {
	f, err := flat(g)
	if err != nil {
		return nil, err
	}
	m := &model{g: f, idx: make(map[string]int, len(f.Actors))}
	for _, a := range f.Actors {
		if a.Dynamic() {
			m.skipped = append(m.skipped, a.Name)
			continue
		}
		if _, dup := m.idx[a.Name]; dup {
			return nil, fmt.Errorf("analysis: duplicate actor name %q: expected unique names (run Validate)", a.Name)
		}
		m.idx[a.Name] = len(m.actors)
		m.actors = append(m.actors, a)
		m.phases = append(m.phases, a.Phases())
	}
	n := len(m.actors)
	m.ins = make([][]int, n)
	m.outs = make([][]int, n)
	m.hasSelf = make([]bool, n)
	for _, c := range f.Channels {
		if c.From == nil || c.To == nil || c.From.Actor == nil || c.To.Actor == nil {
			return nil, fmt.Errorf("analysis: channel %q has a missing end (run Validate)", c.Name)
		}
		s, ok1 := m.idx[c.From.Actor.Name]
		d, ok2 := m.idx[c.To.Actor.Name]
		if !ok1 || !ok2 || c.From.Rate.IsDynamic() || c.To.Rate.IsDynamic() {
			m.loose = append(m.loose, c.Name)
			continue
		}
		if c.From.Rate.Phases() == 0 || c.To.Rate.Phases() == 0 {
			return nil, fmt.Errorf("analysis: channel %s: a port has no rate (run Validate)", c.Name)
		}
		mc := mchan{ch: c, name: c.Name, src: s, dst: d, prod: c.From.Rate, cons: c.To.Rate,
			init: int64(c.Initial), cap: int64(c.Capacity), self: s == d}
		mc.prodCyc = int64(c.From.Rate.Sum()) * int64(m.phases[s]/c.From.Rate.Phases())
		mc.consCyc = int64(c.To.Rate.Sum()) * int64(m.phases[d]/c.To.Rate.Phases())
		mc.prodMax = int64(c.From.Rate.Max())
		mc.consMax = int64(c.To.Rate.Max())
		i := len(m.chans)
		m.chans = append(m.chans, mc)
		m.outs[s] = append(m.outs[s], i)
		m.ins[d] = append(m.ins[d], i)
		if mc.self {
			m.hasSelf[s] = true
		}
	}
	return m, nil
}

// targets returns the firings per iteration of every static actor, from rv.
func (m *model) targets(rv *Repetitions) ([]int64, error) {
	if rv == nil {
		return nil, errors.New("analysis: nil repetition vector: call RepetitionVector first")
	}
	q := make([]int64, len(m.actors))
	for i, a := range m.actors {
		n, ok := rv.Firings[a.Name]
		if !ok {
			return nil, fmt.Errorf("analysis: repetition vector has no entry for actor %q: expected one computed by RepetitionVector on this graph", a.Name)
		}
		if n < 0 {
			return nil, fmt.Errorf("analysis: repetition vector gives actor %q %d firings: expected ≥ 0", a.Name, n)
		}
		q[i] = n
	}
	// Every channel's traffic in one iteration must fit exactly.
	for _, c := range m.chans {
		pa, pb := int64(m.phases[c.src]), int64(m.phases[c.dst])
		if q[c.src]%pa != 0 || q[c.dst]%pb != 0 {
			return nil, fmt.Errorf("analysis: repetition vector is not a whole number of cycles for %s or %s", m.actors[c.src].Name, m.actors[c.dst].Name)
		}
		x, ok1 := mul(q[c.src]/pa, c.prodCyc)
		y, ok2 := mul(q[c.dst]/pb, c.consCyc)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("analysis: channel %s carries more tokens per iteration than 64 bits hold: %w", c.name, ErrOverflow)
		}
		if x != y {
			return nil, fmt.Errorf("analysis: repetition vector does not balance channel %s: %s produces %d tokens per iteration, %s consumes %d", c.name, m.actors[c.src].Name, x, m.actors[c.dst].Name, y)
		}
		if x > inf/4 || c.init > inf/4 {
			return nil, fmt.Errorf("analysis: channel %s carries %d tokens per iteration: %w", c.name, x, ErrOverflow)
		}
	}
	return q, nil
}

// mul multiplies non-negative numbers, reporting overflow.
func mul(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func gcd64(a, b int64) int64 {
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	return mul(a/gcd64(a, b), b)
}

// rat is a positive rational number in lowest terms.
type rat struct{ n, d int64 }

// scale returns r·p/c in lowest terms.
func (r rat) scale(p, c int64) (rat, bool) {
	g1 := gcd64(r.n, c)
	g2 := gcd64(p, r.d)
	n, ok1 := mul(r.n/g1, p/g2)
	d, ok2 := mul(r.d/g2, c/g1)
	if !ok1 || !ok2 {
		return rat{}, false
	}
	g := gcd64(n, d)
	return rat{n / g, d / g}, true
}

func (r rat) String() string { return fmt.Sprintf("%d/%d", r.n, r.d) }
