package analysis

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/graph"
)

// MinimalBuffers returns, for every channel of the static part of g, a
// capacity in tokens (initial tokens included) with which one iteration —
// and therefore every iteration — completes without deadlock.
//
// The result is locally minimal: lowering any single channel's capacity by
// one token makes the graph deadlock (or leaves less room than its initial
// tokens). It is not necessarily the smallest total over all combinations
// (that problem is NP-complete in general); on chains and trees, where
// channels do not interact, every channel is at its own lower bound and
// the result is the unique minimum.
//
// Method: start every channel at its exact isolated minimum (for SDF
// p+c−g+(d mod g) when d ≤ p+c−g, else d, with g = gcd(p,c); for CSDF the
// smallest capacity with which the producer/consumer pair alone completes,
// found by bisection); execute symbolically; at each deadlock grow the full
// channels on one blocked cycle just enough for the blocked firing and go
// on; finally lower each grown channel by bisection as far as the
// iteration still completes. The channels' own Capacity fields are
// ignored. A graph that deadlocks even with unbounded channels returns a
// *DeadlockError naming the channels to initialise.
func MinimalBuffers(g *graph.Graph, rv *Repetitions) (map[string]int, error) {
	m, err := build(g)
	if err != nil {
		return nil, err
	}
	q, err := m.targets(rv)
	if err != nil {
		return nil, err
	}
	caps, err := m.minimalBuffers(q, m.initOf(nil))
	if err != nil {
		return nil, err
	}
	return m.capMap(caps), nil
}

func (m *model) capMap(caps []int64) map[string]int {
	out := make(map[string]int, len(caps))
	for i, c := range caps {
		out[m.chans[i].name] = int(c)
	}
	return out
}

func (m *model) minimalBuffers(q, init []int64) ([]int64, error) {
	if !completes(m, q, init, unbounded(len(m.chans))) {
		res, err := m.deadlock(q)
		if err != nil {
			return nil, err
		}
		return nil, &DeadlockError{Result: res}
	}
	lb := make([]int64, len(m.chans))
	for i := range m.chans {
		lb[i] = m.lowerBound(i, init[i])
	}
	caps, err := m.grow(q, init, append([]int64(nil), lb...))
	if err != nil {
		return nil, err
	}
	m.shrink(q, init, caps, lb, nil)
	return caps, nil
}

// lowerBound is the smallest capacity with which channel ci, alone between
// its producer and consumer, lets them complete (with d initial tokens).
func (m *model) lowerBound(ci int, d int64) int64 {
	c := m.chans[ci]
	if c.self {
		// Firing k needs tok_k + p_k ≤ cap, tok_k the tokens before it.
		p := m.phases[c.src]
		tok, need := d, int64(1)
		for k := 0; k < p; k++ {
			need = max(need, tok+int64(c.prod.At(k)))
			tok += int64(c.prod.At(k)) - int64(c.cons.At(k))
		}
		return need
	}
	if c.prodCyc == 0 || c.consCyc == 0 {
		return max(d, c.prodMax, c.consMax, 1)
	}
	if c.prod.Phases() == 1 && c.cons.Phases() == 1 {
		p, k := c.prodMax, c.consMax
		g := gcd64(p, k)
		if d <= p+k-g {
			return max(p+k-g+d%g, 1)
		}
		return d
	}
	// CSDF: bisection on the isolated pair.
	pm := &model{actors: make([]*graph.Actor, 2), phases: []int{m.phases[c.src], m.phases[c.dst]},
		ins: [][]int{nil, {0}}, outs: [][]int{{0}, nil}, hasSelf: []bool{false, false}}
	pc := c
	pc.src, pc.dst = 0, 1
	pm.chans = []mchan{pc}
	g := gcd64(c.prodCyc, c.consCyc)
	q := []int64{c.consCyc / g * int64(pm.phases[0]), c.prodCyc / g * int64(pm.phases[1])}
	lo := max(d, c.prodMax, c.consMax, 1)
	hi := d + c.prodCyc*(c.consCyc/g) + c.prodMax
	init := []int64{d}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if newSim(pm, q, init, []int64{mid}).run() {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// errCapacityFree reports a deadlock that no capacity can remove.
var errCapacityFree = errors.New("analysis: deadlock on a cycle without full channels: initial tokens are missing, not capacity")

// grow executes one iteration with capacities caps (modified in place and
// returned); at each deadlock it enlarges the full channels on one blocked
// cycle of the wait-for graph just enough for the blocked firings, and
// continues, until the iteration completes.
func (m *model) grow(q, init, caps []int64) ([]int64, error) {
	for i := range caps {
		caps[i] = max(caps[i], init[i])
	}
	s := newSim(m, q, init, caps)
	for !s.run() {
		cy := s.fullCycle()
		if cy == nil {
			return nil, errCapacityFree
		}
		for _, w := range cy {
			if w.full {
				c := &m.chans[w.ch]
				caps[w.ch] = s.tok[w.ch] + w.need
				s.push(c.src)
			}
		}
	}
	return caps, nil
}

// fullCycle returns a cycle of the wait-for graph holding at least one full
// channel, walking from each unfinished actor and preferring full waits.
func (s *sim) fullCycle() []wait {
	m := s.m
	for start := range m.actors {
		if s.fired[start] >= s.q[start] {
			continue
		}
		pos := map[int]int{}
		var walk []wait
		a := start
		for {
			if p, ok := pos[a]; ok {
				cy := walk[p:]
				for _, w := range cy {
					if w.full {
						return cy
					}
				}
				break
			}
			ws := s.waits(a)
			if len(ws) == 0 {
				break
			}
			pos[a] = len(walk)
			w := ws[0]
			for _, x := range ws {
				if x.full {
					w = x
					break
				}
			}
			walk = append(walk, w)
			a = w.other
		}
	}
	// General search: any wait-for cycle with a full channel.
	var es []wedge
	full := map[int]wait{}
	for a := range m.actors {
		if s.fired[a] >= s.q[a] {
			continue
		}
		for _, w := range s.waits(a) {
			es = append(es, wedge{a, w.other, w.ch})
			if w.full {
				full[w.ch] = w
			}
		}
	}
	for _, cy := range cycles(len(m.actors), es) {
		var out []wait
		for _, ci := range cy {
			if w, ok := full[ci]; ok {
				out = append(out, w)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// shrink lowers, one channel after the other, every capacity above its
// floor to the smallest value with which the iteration still completes
// (others fixed). Since lowering a capacity never helps another channel,
// the result is locally minimal. only, if not nil, restricts the channels.
func (m *model) shrink(q, init, caps, floor []int64, only []int) {
	try := func(i int) {
		lo, hi := max(floor[i], init[i]), caps[i]
		for lo < hi {
			mid := lo + (hi-lo)/2
			caps[i] = mid
			if completes(m, q, init, caps) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		caps[i] = lo
	}
	if only != nil {
		for _, i := range only {
			try(i)
		}
		return
	}
	for i := range caps {
		if caps[i] > floor[i] {
			try(i)
		}
	}
}

// checkCaps validates a capacity map against the model.
func (m *model) capsFrom(capacities map[string]int) ([]int64, error) {
	caps := unbounded(len(m.chans))
	if capacities == nil {
		return caps, nil
	}
	byName := make(map[string]int, len(m.chans))
	for i, c := range m.chans {
		byName[c.name] = i
	}
	for name, v := range capacities {
		i, ok := byName[name]
		if !ok {
			continue // a channel outside the static part, or unknown: ignored
		}
		if v < 0 {
			return nil, fmt.Errorf("analysis: capacity %d for channel %s: expected ≥ 0 (0 = unbounded)", v, name)
		}
		if v > 0 {
			caps[i] = int64(v)
		}
	}
	return caps, nil
}
