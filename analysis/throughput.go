package analysis

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// DefaultStateBudget bounds the states stored by one throughput exploration.
const DefaultStateBudget = 1 << 20

// Throughput is the outcome of a throughput analysis.
type Throughput struct {
	// PeriodNS is the time of one iteration in the periodic regime, in
	// nanoseconds (in firings' cost units when Unit is true).
	PeriodNS float64
	// PeriodNum/PeriodDen is the exact period as a fraction.
	PeriodNum, PeriodDen int64
	// IterationsPerSecond is 1e9/PeriodNS (0 when the period is 0 or Unit).
	IterationsPerSecond float64
	// Unit is true when no actor has a cost: every firing counted as 1.
	Unit bool
	// Critical lists the actors that set the period: those busy for the
	// whole period (q·cost equals it), or, when none is, the actors of the
	// strongly connected part (a cycle) whose period it is.
	Critical []string
}

// ThroughputBound gives the iteration period of the self-timed execution of
// g, where each firing of an actor takes Actor.Cost (1 unit for every
// actor when no cost is given) and each actor runs one firing at a time.
// capacities maps channel name → capacity (nil or 0 = unbounded).
//
// Method: channels with a capacity also constrain backwards (room), so
// the graph splits into strongly connected parts; a part of one actor
// without constraints on itself has period q·cost; every other part is
// explored as a state space (tokens, room, phases, remaining times) until a
// state repeats: the period is the time between the repetitions divided by
// the iterations done. The graph's period is the largest; unbounded
// channels between parts let faster parts run ahead.
func ThroughputBound(g *graph.Graph, rv *Repetitions, capacities map[string]int) (Throughput, error) {
	m, err := build(g)
	if err != nil {
		return Throughput{}, err
	}
	q, err := m.targets(rv)
	if err != nil {
		return Throughput{}, err
	}
	caps, err := m.capsFrom(capacities)
	if err != nil {
		return Throughput{}, err
	}
	th, _, err := m.throughput(q, caps, DefaultStateBudget, time.Time{}, nil)
	return th, err
}

func (m *model) costs() ([]int64, bool) {
	c := make([]int64, len(m.actors))
	unit := true
	for i, a := range m.actors {
		c[i] = int64(a.Cost)
		if c[i] > 0 {
			unit = false
		}
	}
	if unit {
		for i := range c {
			c[i] = 1
		}
	}
	return c, unit
}

// throughput returns the period and the channels that blocked for room in
// the periodic regime of the part(s) with the largest period; it fails
// with ErrTimeBudget once deadline passes (zero: no deadline). When peak
// is not nil (one entry a channel), it receives each explored channel's
// largest occupancy (tokens plus room taken, after a firing's start) over
// the whole execution: with those capacities the execution is the same.
func (m *model) throughput(q, caps []int64, budget int, deadline time.Time, peak []int64) (Throughput, []int, error) {
	cost, unit := m.costs()
	var es []wedge
	for i, c := range m.chans {
		es = append(es, wedge{c.src, c.dst, i})
		if caps[i] < inf {
			es = append(es, wedge{c.dst, c.src, i})
		}
	}
	comp := scc(len(m.actors), es)
	parts := map[int][]int{}
	for a, c := range comp {
		parts[c] = append(parts[c], a)
	}
	keys := make([]int, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	st := newExploreState(len(m.chans), len(m.actors))
	st.peak = peak
	best := big.NewRat(0, 1)
	var bestParts [][]int
	var blocked []int
	for _, k := range keys {
		as := parts[k]
		set := map[int]bool{}
		for _, a := range as {
			set[a] = true
		}
		internal := false
		for _, a := range as {
			for _, ci := range m.outs[a] {
				if set[m.chans[ci].dst] {
					internal = true
				}
			}
		}
		var p *big.Rat
		var bl []int
		if !internal {
			x, ok := mul(q[as[0]], cost[as[0]])
			if !ok {
				return Throughput{}, nil, fmt.Errorf("analysis: period of %s: %w", m.actors[as[0]].Name, ErrOverflow)
			}
			p = big.NewRat(x, 1)
		} else {
			var err error
			p, bl, err = m.explore(as, set, q, caps, cost, budget, deadline, st)
			if err != nil {
				return Throughput{}, nil, err
			}
		}
		switch p.Cmp(best) {
		case 1:
			best, bestParts, blocked = p, [][]int{as}, bl
		case 0:
			blocked = append(blocked, bl...)
			bestParts = append(bestParts, as)
		}
	}
	th := Throughput{Unit: unit, PeriodNum: best.Num().Int64(), PeriodDen: best.Denom().Int64()}
	th.PeriodNS, _ = best.Float64()
	if !unit && th.PeriodNS > 0 {
		th.IterationsPerSecond = 1e9 / th.PeriodNS
	}
	th.Critical = m.critical(bestParts, best, q, cost)
	return th, blocked, nil
}

// critical names the actors that set the period: in the parts whose
// period is the graph's, those busy for the whole period (q·cost equals
// it), the ones to speed up; when none is (a cycle's latency sets the
// period, not one actor's load), every actor of those parts.
func (m *model) critical(parts [][]int, period *big.Rat, q, cost []int64) []string {
	var busy, all []string
	for _, as := range parts {
		for _, a := range as {
			all = append(all, m.actors[a].Name)
			if x, ok := mul(q[a], cost[a]); ok && period.Cmp(big.NewRat(x, 1)) == 0 {
				busy = append(busy, m.actors[a].Name)
			}
		}
	}
	if len(busy) > 0 {
		return busy
	}
	return all
}

// ErrStateBudget is wrapped when a state-space exploration exceeds its budget.
var ErrStateBudget = errors.New("state-space exploration budget exceeded")

// exploreState is explore's state, in slices indexed by channel and actor
// (maps took 70 % of the time on a 256-actor graph), made once for all
// the parts of a graph and cleared of each part after it: in marks the
// channels inside the part, tok and occ count their tokens available and
// room taken; fired counts the part's actors' firings, busy marks those
// firing and rem their firings' remaining time; peak, when not nil,
// records each channel's largest occ.
type exploreState struct {
	in         []bool
	tok, occ   []int64
	fired, rem []int64
	busy       []bool
	peak       []int64
}

func newExploreState(chans, actors int) *exploreState {
	return &exploreState{in: make([]bool, chans), tok: make([]int64, chans), occ: make([]int64, chans),
		fired: make([]int64, actors), rem: make([]int64, actors), busy: make([]bool, actors)}
}

// clear resets the entries of channels chs and actors as.
func (st *exploreState) clear(chs, as []int) {
	for _, ci := range chs {
		st.in[ci], st.tok[ci], st.occ[ci] = false, 0, 0
	}
	for _, a := range as {
		st.fired[a], st.rem[a], st.busy[a] = 0, 0, false
	}
}

// explore runs the self-timed execution of the actors in set (channels
// among them only) until a state repeats, in st (clear when called, and
// cleared again when it returns). It looks at the clock every 256 steps
// (every step in a part of more than 256 actors, where a step is long)
// and fails with ErrTimeBudget once deadline has passed (zero: never): a
// large graph's one exploration can take seconds.
func (m *model) explore(as []int, set map[int]bool, q, caps, cost []int64, budget int, deadline time.Time, st *exploreState) (*big.Rat, []int, error) {
	var chs []int
	in, tok, occ := st.in, st.tok, st.occ
	fired, rem, busy := st.fired, st.rem, st.busy
	for _, a := range as {
		for _, ci := range m.outs[a] {
			if set[m.chans[ci].dst] {
				chs = append(chs, ci)
				in[ci] = true
			}
		}
	}
	defer st.clear(chs, as)
	peak := st.peak
	for _, ci := range chs {
		tok[ci], occ[ci] = m.chans[ci].init, m.chans[ci].init
		if peak != nil {
			peak[ci] = occ[ci]
		}
		if m.chans[ci].init > caps[ci] {
			return nil, nil, fmt.Errorf("analysis: channel %s holds %d initial tokens but has capacity %d", m.chans[ci].name, m.chans[ci].init, caps[ci])
		}
	}
	running := 0
	ref := as[0]
	type mark struct {
		t, f int64
		step int
	}
	seen := map[string]mark{}
	var blockLog [][]int
	var t int64
	buf := make([]byte, 0, 64)
	finish := func(a int) {
		k := int(fired[a])
		for _, ci := range m.ins[a] {
			if in[ci] {
				occ[ci] -= int64(m.chans[ci].cons.At(k))
			}
		}
		for _, ci := range m.outs[a] {
			if in[ci] {
				tok[ci] += int64(m.chans[ci].prod.At(k))
			}
		}
		fired[a]++
		busy[a] = false
		running--
	}
	for step := 0; ; step++ {
		// Start every firing that can start (zero-cost ones finish at once).
		var bl []int
		for changed := true; changed; {
			changed = false
			bl = bl[:0]
			for _, a := range as {
				if busy[a] {
					continue
				}
				k := int(fired[a])
				ok := true
				for _, ci := range m.ins[a] {
					if in[ci] && tok[ci] < int64(m.chans[ci].cons.At(k)) {
						ok = false
					}
				}
				if !ok {
					continue
				}
				for _, ci := range m.outs[a] {
					if in[ci] && occ[ci]+int64(m.chans[ci].prod.At(k)) > caps[ci] {
						ok = false
						bl = append(bl, ci)
					}
				}
				if !ok {
					continue
				}
				for _, ci := range m.ins[a] {
					if in[ci] {
						tok[ci] -= int64(m.chans[ci].cons.At(k))
					}
				}
				for _, ci := range m.outs[a] {
					if in[ci] {
						occ[ci] += int64(m.chans[ci].prod.At(k))
						if peak != nil && occ[ci] > peak[ci] {
							peak[ci] = occ[ci]
						}
					}
				}
				rem[a], busy[a] = cost[a], true
				running++
				if cost[a] == 0 {
					// A firing that ends at once makes tokens and room,
					// which may let an actor already passed start: scan
					// again. A start alone only takes tokens and room
					// (each channel has one producer and one consumer),
					// so it cannot let another actor start, and the
					// room-blocked channels found in this pass stand.
					finish(a)
					changed = true
				}
			}
		}
		blockLog = append(blockLog, append([]int(nil), bl...))
		buf = buf[:0]
		for _, ci := range chs {
			buf = binary.AppendVarint(buf, tok[ci])
			buf = binary.AppendVarint(buf, occ[ci])
		}
		for _, a := range as {
			buf = binary.AppendVarint(buf, fired[a]%int64(m.phases[a]))
			r := int64(-1)
			if busy[a] {
				r = rem[a]
			}
			buf = binary.AppendVarint(buf, r)
		}
		if prev, ok := seen[string(buf)]; ok {
			df := fired[ref] - prev.f
			if df == 0 {
				return nil, nil, fmt.Errorf("analysis: self-timed execution of %s makes no progress", m.actors[ref].Name)
			}
			// period = dt · q[ref] / df
			p := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(t-prev.t), big.NewInt(q[ref])), big.NewInt(df))
			var blocked []int
			for _, b := range blockLog[prev.step:] {
				blocked = append(blocked, b...)
			}
			return p, blocked, nil
		}
		if (step&255 == 255 || len(as) > 256) && !deadline.IsZero() && time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("analysis: throughput of the part with %s: %d states explored when the time ran out: %w", m.actors[ref].Name, len(seen), ErrTimeBudget)
		}
		if len(seen) >= budget {
			return nil, nil, fmt.Errorf("analysis: throughput of the part with %s: %d states explored: %w", m.actors[ref].Name, len(seen), ErrStateBudget)
		}
		seen[string(buf)] = mark{t, fired[ref], step}
		if running == 0 {
			return nil, nil, fmt.Errorf("analysis: self-timed execution deadlocks in the part with %s (check Deadlock)", m.actors[ref].Name)
		}
		dt := int64(-1)
		for _, a := range as {
			if busy[a] && (dt < 0 || rem[a] < dt) {
				dt = rem[a]
			}
		}
		t += dt
		for _, a := range as {
			if busy[a] {
				rem[a] -= dt
				if rem[a] == 0 {
					finish(a)
				}
			}
		}
	}
}

// ThroughputBuffers returns capacities with which the graph reaches the
// period it has with unbounded channels, and that throughput. It starts
// from MinimalBuffers and, SDF3-style, repeatedly enlarges the channels
// that blocked a firing for lack of room in the periodic regime of the
// slowest part, by gcd(p, c) tokens, until the period is reached; then it
// sets each enlarged channel to the most it held in that execution (the
// same execution with less room) and lowers it as far as the period
// holds, trying one step less first. It fails with
// an error wrapping ErrStateBudget when reaching the period takes more
// than 500 evaluations or a state space beyond DefaultStateBudget; when
// a budget runs out while lowering, the channels not yet lowered keep
// their enlarged capacities (enough for the period, perhaps more than
// needed), returned with an error wrapping ErrPartlyLowered.
func ThroughputBuffers(g *graph.Graph, rv *Repetitions) (map[string]int, Throughput, error) {
	return throughputBuffers(g, rv, time.Time{})
}

// ErrTimeBudget is returned when a search runs out of the time it was given.
var ErrTimeBudget = errors.New("time budget exceeded")

// ThroughputBuffersWithin is ThroughputBuffers that gives up with
// ErrTimeBudget after the given time (0: no limit).
func ThroughputBuffersWithin(g *graph.Graph, rv *Repetitions, budget time.Duration) (map[string]int, Throughput, error) {
	var deadline time.Time
	if budget > 0 {
		deadline = time.Now().Add(budget)
	}
	return throughputBuffers(g, rv, deadline)
}

func throughputBuffers(g *graph.Graph, rv *Repetitions, deadline time.Time) (map[string]int, Throughput, error) {
	m, err := build(g)
	if err != nil {
		return nil, Throughput{}, err
	}
	q, err := m.targets(rv)
	if err != nil {
		return nil, Throughput{}, err
	}
	init := m.initOf(nil)
	target, _, err := m.throughput(q, unbounded(len(m.chans)), DefaultStateBudget, deadline, nil)
	if err != nil {
		return nil, Throughput{}, err
	}
	caps, err := m.minimalBuffers(q, init)
	if err != nil {
		return nil, Throughput{}, err
	}
	tgt := big.NewRat(target.PeriodNum, target.PeriodDen)
	evals := 0
	// peak holds the largest occupancy of each channel in the last
	// evaluation (see throughput).
	peak := make([]int64, len(m.chans))
	eval := func() (Throughput, []int, bool, error) {
		evals++
		if evals > 500 {
			return Throughput{}, nil, false, fmt.Errorf("analysis: throughput buffers: 500 evaluations: %w", ErrStateBudget)
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return Throughput{}, nil, false, fmt.Errorf("analysis: throughput buffers: %d evaluations in the time allowed: %w", evals-1, ErrTimeBudget)
		}
		th, bl, err := m.throughput(q, caps, DefaultStateBudget, deadline, peak)
		if err != nil {
			return th, nil, false, err
		}
		return th, bl, big.NewRat(th.PeriodNum, th.PeriodDen).Cmp(tgt) <= 0, nil
	}
	step := func(ci int) int64 {
		c := m.chans[ci]
		if c.prod.Phases() == 1 && c.cons.Phases() == 1 {
			return max(1, gcd64(c.prodMax, c.consMax))
		}
		return 1
	}
	// Grow the channels that block for room, doubling a channel's increment
	// each time it blocks again, until the period reaches the target; then
	// shrink each grown channel back by binary search (the period and
	// deadlock freedom are monotone in every capacity), so that one step
	// less on any of them misses the target.
	grown := map[int]bool{}
	inc := map[int]int64{}
	for {
		th, bl, ok, err := eval()
		if err != nil {
			return nil, Throughput{}, err
		}
		if ok {
			break
		}
		if len(bl) == 0 {
			return nil, th, fmt.Errorf("analysis: throughput buffers: period %.6g above the unbounded %.6g but no channel blocks for room", th.PeriodNS, target.PeriodNS)
		}
		done := map[int]bool{}
		for _, ci := range bl {
			if !done[ci] {
				done[ci] = true
				grown[ci] = true
				if inc[ci] == 0 {
					inc[ci] = step(ci)
				}
				caps[ci] += inc[ci]
				inc[ci] *= 2
			}
		}
	}
	// The execution that met the target never held more in a grown
	// channel than its peak: with the peaks as capacities every firing
	// starts when it did (a start that fitted fits, one that did not
	// still does not), so the period is the same. Growth by doubling
	// overshoots by up to half; the peaks start the lowering closer.
	var order []int
	grownCaps := slices.Clone(caps)
	for ci := range grown {
		order = append(order, ci)
		caps[ci] = max(peak[ci], init[ci], 1)
	}
	if !completes(m, q, init, caps) {
		copy(caps, grownCaps)
	}
	sort.Ints(order)
	// The capacities grown so far meet the target: a budget spent while
	// shrinking them (the 500 evaluations, the time, or one evaluation's
	// state space: smaller capacities can take far more states to repeat)
	// leaves the rest as grown, larger than needed but right.
	var spent error
	for _, ci := range order {
		if spent != nil {
			break
		}
		st := step(ci)
		// hi meets the target; lo is the smallest value worth trying.
		// One step below hi first: from its peak a channel is most often
		// at its smallest already, which that one evaluation shows (the
		// period and deadlock freedom are monotone in each capacity).
		hi := caps[ci]
		lo := max(init[ci], 1)
		first := true
		for hi-lo >= st {
			mid := hi - ((hi-lo)/st+1)/2*st
			if first {
				mid, first = hi-st, false
			}
			if mid < lo {
				break
			}
			caps[ci] = mid
			_, _, ok, err := eval()
			if errors.Is(err, ErrStateBudget) || errors.Is(err, ErrTimeBudget) {
				caps[ci] = hi
				spent = err
				break
			}
			// Any other error is a capacity too small (the execution
			// deadlocks): a smaller one would be too; it used to end
			// this channel's search at its grown capacity.
			if err == nil && ok && completes(m, q, init, caps) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		caps[ci] = hi
	}
	th, _, err := m.throughput(q, caps, DefaultStateBudget, time.Time{}, nil)
	if err != nil {
		return nil, Throughput{}, err
	}
	// The period is the unbounded one; so are the actors that set it. With
	// bounded channels every actor shares one part (room flows back), which
	// would name them all.
	th.Critical = target.Critical
	if spent != nil {
		return m.capMap(caps), th, fmt.Errorf("%w: %w", ErrPartlyLowered, spent)
	}
	return m.capMap(caps), th, nil
}

// ErrPartlyLowered is returned by ThroughputBuffers with capacities that
// reach the period when a budget ran out before it had lowered every
// channel it grew: smaller capacities may reach it too. It wraps the
// budget's error (ErrTimeBudget or ErrStateBudget).
var ErrPartlyLowered = errors.New("throughput buffers: not every grown capacity lowered")
