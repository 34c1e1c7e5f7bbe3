package analysis

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// maxCycles bounds the number of blocked cycles enumerated and reported.
const maxCycles = 64

// DeadlockResult is the outcome of the symbolic execution of one iteration
// with the channels' capacities and initial tokens.
type DeadlockResult struct {
	// Deadlock is true when the iteration cannot complete.
	Deadlock bool
	// Cycles lists the blocked cycles (channel names in order around the
	// cycle) of the wait-for graph at the deadlock, shortest first: each
	// actor on a cycle waits for the next, for tokens (empty channel) or for
	// room (full channel). At most 64 are listed.
	Cycles [][]string
	// Initialize gives the channels that need initial tokens and how many to
	// add to each (Caravela's Algorithm 1: a minimal set of edges that cuts
	// every token-starved cycle; then, per channel, the fewest tokens that
	// let the iteration complete with unbounded capacities). Empty when the
	// deadlock is due to capacities only.
	Initialize map[string]int
	// Enlarge gives, for a deadlock caused (also) by capacities, channel →
	// a capacity that lets the iteration complete (with Initialize applied);
	// each is locally minimal: one token less deadlocks.
	Enlarge map[string]int
	// Blocked has one readable line per blocked actor: which channel it waits
	// on, and whether that channel is empty or full.
	Blocked []string
	// BlockedActors is Blocked as data: per blocked actor, the channels it
	// waits on and their state.
	BlockedActors []BlockedActor
}

// BlockedActor is an actor that cannot finish the iteration: it fired
// Fired of its Target firings and waits on Waits.
type BlockedActor struct {
	Actor  string        `json:"actor"`
	Fired  int64         `json:"fired"`
	Target int64         `json:"target"`
	Waits  []ChannelWait `json:"waits"`
}

// ChannelWait is one channel a blocked actor waits on: State is "empty"
// (it holds Tokens, the actor needs Need) or "full" (Tokens of Capacity,
// the actor needs room for Need).
type ChannelWait struct {
	Channel  string `json:"channel"`
	State    string `json:"state"`
	Tokens   int64  `json:"tokens"`
	Capacity int64  `json:"capacity"`
	Need     int64  `json:"need"`
}

// DeadlockError is returned by analyses that need a deadlock-free graph.
type DeadlockError struct {
	// Result is the deadlock analysis of the graph.
	Result *DeadlockResult
}

// Error names the channels to initialise.
func (e *DeadlockError) Error() string {
	var parts []string
	for _, k := range sortedKeys(e.Result.Initialize) {
		parts = append(parts, fmt.Sprintf("%s +%d", k, e.Result.Initialize[k]))
	}
	s := "graph deadlocks even with unbounded channels"
	if len(e.Result.Cycles) > 0 {
		s += " on cycle " + strings.Join(e.Result.Cycles[0], " → ")
	}
	if len(parts) > 0 {
		s += "; add initial tokens: " + strings.Join(parts, ", ")
	}
	return s
}

// Deadlock executes one iteration symbolically with the channels' given
// capacities (0 = unbounded) and initial tokens. When it cannot complete it
// names the blocked cycles, the channels to initialise (and how many
// tokens), and capacities to enlarge.
func Deadlock(g *graph.Graph, rv *Repetitions) (*DeadlockResult, error) {
	m, err := build(g)
	if err != nil {
		return nil, err
	}
	q, err := m.targets(rv)
	if err != nil {
		return nil, err
	}
	return m.deadlock(q)
}

func (m *model) deadlock(q []int64) (*DeadlockResult, error) {
	caps := m.capsOf()
	init := m.initOf(nil)
	res := &DeadlockResult{}
	s := newSim(m, q, init, caps)
	if s.run() {
		return res, nil
	}
	res.Deadlock = true
	res.BlockedActors = s.blockedActors()
	res.Blocked = blockedLines(res.BlockedActors)
	res.Cycles = s.waitCycles()
	add, err := m.initialize(q)
	if err != nil {
		return nil, err
	}
	if len(add) > 0 {
		res.Initialize = map[string]int{}
		for ci, n := range add {
			if n > 0 {
				res.Initialize[m.chans[ci].name] = int(n)
			}
		}
	}
	// Capacities: given ones, at least the (new) initial tokens.
	init = m.initOf(add)
	for i := range caps {
		caps[i] = max(caps[i], init[i])
	}
	if !completes(m, q, init, caps) {
		base := append([]int64(nil), caps...)
		grown, why, err := m.grow(q, init, caps)
		if err != nil {
			return nil, err
		}
		m.shrink(q, init, grown, base, why)
		res.Enlarge = map[string]int{}
		for i := range grown {
			if grown[i] > base[i] {
				res.Enlarge[m.chans[i].name] = int(grown[i])
			}
		}
	}
	return res, nil
}

// initialize returns, per channel, the initial tokens to add so that the
// iteration completes with unbounded capacities (nil if none are needed).
func (m *model) initialize(q []int64) ([]int64, error) {
	caps := unbounded(len(m.chans))
	add := make([]int64, len(m.chans))
	init := m.initOf(nil)
	s := newSim(m, q, init, caps)
	if s.run() {
		return nil, nil
	}
	chosen := map[int]bool{}
	var order []int
	for !s.run() {
		// Starving channels: the consumer is unfinished and lacks tokens.
		fed := false
		for _, ci := range order {
			c := m.chans[ci]
			if s.fired[c.dst] >= q[c.dst] {
				continue
			}
			if need := int64(c.cons.At(int(s.fired[c.dst]))); s.tok[ci] < need {
				add[ci] += need - s.tok[ci]
				s.tok[ci] = need
				s.push(c.dst)
				fed = true
				break
			}
		}
		if fed {
			continue
		}
		// Caravela's Algorithm 1 on the starving subgraph: enumerate its
		// cycles, sort by length, choose edges until every cycle is cut.
		cycles := s.starvedCycles()
		if len(cycles) == 0 {
			return nil, errors.New("analysis: deadlock without a token-starved cycle (internal error)")
		}
		for _, ci := range coverCycles(m, cycles) {
			if !chosen[ci] {
				chosen[ci] = true
				order = append(order, ci)
			}
		}
	}
	// Local minimality: each chosen channel gets the fewest tokens that
	// still complete with the others fixed.
	for _, ci := range order {
		hi := add[ci]
		lo := int64(0)
		for lo < hi {
			mid := lo + (hi-lo)/2
			add[ci] = mid
			if completes(m, q, m.initOf(add), caps) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		add[ci] = lo
	}
	return add, nil
}

// coverCycles picks channels so that every cycle holds one: cycles in
// ascending length; for an uncovered cycle, the channel on it that lies on
// the most uncovered cycles, preferring a back edge (into an actor declared
// earlier) and then the earliest channel.
func coverCycles(m *model, cycles [][]int) []int {
	sort.SliceStable(cycles, func(i, j int) bool { return len(cycles[i]) < len(cycles[j]) })
	covered := make([]bool, len(cycles))
	var pick []int
	for i, cy := range cycles {
		if covered[i] {
			continue
		}
		best, bestN, bestBack := -1, -1, false
		for _, ci := range cy {
			n := 0
			for j, other := range cycles {
				if covered[j] {
					continue
				}
				for _, x := range other {
					if x == ci {
						n++
						break
					}
				}
			}
			back := m.chans[ci].dst <= m.chans[ci].src
			if n > bestN || (n == bestN && back && !bestBack) || (n == bestN && back == bestBack && ci < best) {
				best, bestN, bestBack = ci, n, back
			}
		}
		pick = append(pick, best)
		for j, other := range cycles {
			for _, x := range other {
				if x == best {
					covered[j] = true
					break
				}
			}
		}
	}
	return pick
}

// starvedCycles enumerates (up to maxCycles) the elementary cycles of
// channels whose consumer is unfinished and lacks tokens.
func (s *sim) starvedCycles() [][]int {
	m := s.m
	var es []wedge
	for ci, c := range m.chans {
		if s.fired[c.dst] >= s.q[c.dst] {
			continue
		}
		if s.tok[ci] < int64(c.cons.At(int(s.fired[c.dst]))) {
			es = append(es, wedge{c.src, c.dst, ci})
		}
	}
	return cycles(len(m.actors), es)
}

// waitCycles enumerates the cycles of the wait-for graph at a deadlock:
// actor a waits for actor b on a channel between them (an empty input fed
// by b, or a full output read by b). Each cycle is reported as channel
// names, reversed so that starvation cycles read in dataflow order.
func (s *sim) waitCycles() [][]string {
	m := s.m
	var es []wedge
	for a := range m.actors {
		if s.fired[a] >= s.q[a] {
			continue
		}
		for _, w := range s.waits(a) {
			es = append(es, wedge{a, w.other, w.ch})
		}
	}
	cys := cycles(len(m.actors), es)
	out := make([][]string, 0, len(cys))
	for _, cy := range cys {
		names := make([]string, len(cy))
		for i, ci := range cy {
			names[len(cy)-1-i] = m.chans[ci].name
		}
		out = append(out, names)
	}
	return out
}

// wedge is an edge of a derived graph on actors, labelled with a channel.
type wedge struct{ from, to, ch int }

// cycles enumerates up to maxCycles elementary cycles (as channel lists) of
// the graph on n vertices with edges es, within its strongly connected
// components, with bounded work; when the bound cuts the enumeration short
// it still returns one cycle per non-trivial component. Shortest first.
func cycles(n int, es []wedge) [][]int {
	comp := scc(n, es)
	adj := map[int][]int{}
	for i, e := range es {
		if comp[e.from] == comp[e.to] {
			adj[e.from] = append(adj[e.from], i)
		}
	}
	starts := make([]int, 0, len(adj))
	for a := range adj {
		starts = append(starts, a)
	}
	sort.Ints(starts)
	var out [][]int
	budget := 200000
	onPath := map[int]bool{}
	var path []int
	var dfs func(start, a int)
	dfs = func(start, a int) {
		for _, ei := range adj[a] {
			if len(out) >= maxCycles || budget <= 0 {
				return
			}
			budget--
			b := es[ei].to
			if b < start {
				continue
			}
			if b == start {
				cy := make([]int, 0, len(path)+1)
				for _, x := range path {
					cy = append(cy, es[x].ch)
				}
				out = append(out, append(cy, es[ei].ch))
				continue
			}
			if onPath[b] {
				continue
			}
			onPath[b] = true
			path = append(path, ei)
			dfs(start, b)
			path = path[:len(path)-1]
			onPath[b] = false
		}
	}
	found := map[int]bool{}
	for _, s := range starts {
		before := len(out)
		onPath[s] = true
		dfs(s, s)
		onPath[s] = false
		if len(out) > before {
			found[comp[s]] = true
		}
		if len(out) >= maxCycles || budget <= 0 {
			break
		}
	}
	// One cycle per component the enumeration did not reach: walk.
	for _, s := range starts {
		if found[comp[s]] || len(out) >= maxCycles {
			continue
		}
		found[comp[s]] = true
		pos := map[int]int{}
		var walk []int
		a := s
		for {
			if p, ok := pos[a]; ok {
				cy := make([]int, 0, len(walk)-p)
				for _, x := range walk[p:] {
					cy = append(cy, es[x].ch)
				}
				out = append(out, cy)
				break
			}
			pos[a] = len(walk)
			ei := adj[a][0]
			walk = append(walk, ei)
			a = es[ei].to
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) < len(out[j]) })
	return out
}

// scc returns the strongly connected component of each vertex (iterative
// Tarjan).
func scc(n int, es []wedge) []int {
	adj := make([][]int, n)
	for _, e := range es {
		adj[e.from] = append(adj[e.from], e.to)
	}
	index := make([]int, n)
	low := make([]int, n)
	comp := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	type frame struct{ v, i int }
	var call []frame
	idx, nc := 0, 0
	for r := 0; r < n; r++ {
		if index[r] >= 0 {
			continue
		}
		call = append(call[:0], frame{r, 0})
		index[r], low[r] = idx, idx
		idx++
		stack = append(stack, r)
		on[r] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.i < len(adj[v]) {
				w := adj[v][f.i]
				f.i++
				if index[w] < 0 {
					index[w], low[w] = idx, idx
					idx++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp[w] = nc
					if w == v {
						break
					}
				}
				nc++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
		}
	}
	return comp
}
