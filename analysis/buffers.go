package analysis

import (
	"errors"
	"fmt"
	"sort"

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
	caps, why, err := m.grow(q, init, append([]int64(nil), lb...))
	if err != nil {
		return nil, err
	}
	// Tighten all channels at once to what a drain-first run needs; this
	// keeps feasibility and spares most per-channel searches.
	if sumFirings(q) <= frugalLimit {
		if need, ok := m.frugal(q, init, caps); ok {
			for i := range caps {
				caps[i] = min(caps[i], max(need[i], lb[i]))
			}
		}
	}
	m.shrink(q, init, caps, lb, why)
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
// returned); at each deadlock it enlarges the first full channel on one
// blocked cycle of the wait-for graph just enough for the blocked firing,
// and continues, until the iteration completes. why records, per grown
// channel, the actors of the last blocked cycle that made it grow.
func (m *model) grow(q, init, caps []int64) ([]int64, map[int][]int, error) {
	for i := range caps {
		caps[i] = max(caps[i], init[i])
	}
	why := map[int][]int{}
	s := newSim(m, q, init, caps)
	for !s.run() {
		cy := s.fullCycle()
		if cy == nil {
			return nil, nil, errCapacityFree
		}
		actors := make([]int, 0, len(cy))
		for _, w := range cy {
			actors = append(actors, m.chans[w.ch].src, m.chans[w.ch].dst)
		}
		for _, w := range cy {
			if w.full {
				caps[w.ch] = s.tok[w.ch] + w.need
				why[w.ch] = actors
				s.push(m.chans[w.ch].src)
				break
			}
		}
	}
	return caps, why, nil
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
// the result is locally minimal. why (may be nil) gives, per channel, a
// small set of actors whose relaxed sub-graph is tried first to prove a
// deadlock cheaply (see deadlocksIn).
func (m *model) shrink(q, init, caps, floor []int64, why map[int][]int) {
	bk := &blockInfo{}
	bk.of, bk.members = m.blocks()
	for i := range caps {
		lo, hi := max(floor[i], init[i]), caps[i]
		if lo >= hi {
			continue
		}
		// Most grown channels are already minimal: prove that one token less
		// deadlocks, locally when possible.
		caps[i] = hi - 1
		if m.deadlocksNear(q, init, caps, why[i], i, bk) {
			caps[i] = hi
			continue
		}
		hi-- // hi-1 completes
		for lo < hi {
			mid := lo + (hi-lo)/2
			caps[i] = mid
			if !m.deadlocksNear(q, init, caps, why[i], i, bk) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		caps[i] = lo
	}
}

// deadlocksNear reports whether one iteration deadlocks with caps. It first
// simulates relaxed sub-graphs around channel ci (the actors in region and
// then their neighbours): channels entering or leaving a sub-graph are
// taken as always holding tokens and room, so a deadlock there proves a
// deadlock of the whole graph. Then it simulates ci's block, which decides.
func (m *model) deadlocksNear(q, init, caps []int64, region []int, ci int, bk *blockInfo) bool {
	in := map[int]bool{m.chans[ci].src: true, m.chans[ci].dst: true}
	for _, a := range region {
		in[a] = true
	}
	block := bk.members[bk.of[ci]]
	for round := 0; round < 2 && 2*len(in) < len(block); round++ {
		if m.deadlocksIn(q, init, caps, in) {
			return true
		}
		var more []int
		for a := range in {
			for _, cj := range m.ins[a] {
				more = append(more, m.chans[cj].src)
			}
			for _, cj := range m.outs[a] {
				more = append(more, m.chans[cj].dst)
			}
		}
		for _, a := range more {
			in[a] = true
		}
	}
	if 2*len(block) > len(m.actors) {
		return !completes(m, q, init, caps)
	}
	set := make(map[int]bool, len(block))
	for _, a := range block {
		set[a] = true
	}
	return m.deadlocksIn(q, init, caps, set)
}

// blockInfo caches the block decomposition.
type blockInfo struct {
	of      []int
	members [][]int
}

// deadlocksIn simulates the relaxed sub-graph on the actors in set.
func (m *model) deadlocksIn(q, init, caps []int64, set map[int]bool) bool {
	actors := make([]int, 0, len(set))
	for a := range set {
		actors = append(actors, a)
	}
	sort.Ints(actors)
	local := make(map[int]int, len(actors))
	sm := &model{actors: make([]*graph.Actor, len(actors)), phases: make([]int, len(actors)),
		ins: make([][]int, len(actors)), outs: make([][]int, len(actors)), hasSelf: make([]bool, len(actors))}
	sq := make([]int64, len(actors))
	for i, a := range actors {
		local[a] = i
		sm.phases[i] = m.phases[a]
		sq[i] = q[a]
	}
	var sinit, scaps []int64
	for i, a := range actors {
		for _, cj := range m.outs[a] {
			c := m.chans[cj]
			d, ok := local[c.dst]
			if !ok {
				continue
			}
			if init[cj] > caps[cj] {
				return true
			}
			c.src, c.dst = i, d
			k := len(sm.chans)
			sm.chans = append(sm.chans, c)
			sm.outs[i] = append(sm.outs[i], k)
			sm.ins[d] = append(sm.ins[d], k)
			sm.hasSelf[i] = sm.hasSelf[i] || c.self
			sinit = append(sinit, init[cj])
			scaps = append(scaps, caps[cj])
		}
	}
	return !newSim(sm, sq, sinit, scaps).run()
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

// frugalLimit bounds the firings of the one-at-a-time tightening run.
const frugalLimit = 5_000_000

func sumFirings(q []int64) int64 {
	var s int64
	for _, x := range q {
		s += x
		if s > 1<<40 {
			return s
		}
	}
	return s
}
