package analysis

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// DefaultScheduleLimit bounds the firings of a flat single-processor schedule.
const DefaultScheduleLimit = 10_000_000

// Loop is one entry of a looped schedule: Count consecutive firings of Actor.
type Loop struct {
	Actor string `json:"actor"`
	Count int64  `json:"count"`
}

// String renders "3×A" (or "A" for one firing).
func (l Loop) String() string {
	if l.Count == 1 {
		return l.Actor
	}
	return fmt.Sprintf("%d×%s", l.Count, l.Actor)
}

// LoopedSchedule is a single-processor schedule of one iteration in
// compact form: runs of consecutive firings of one actor, in order. It
// respects the channels' capacities (0 = unbounded) and initial tokens;
// actors fire as often as they can in turn (data-driven), so the runs are
// long. A deadlocking graph returns a *DeadlockError.
func LoopedSchedule(g *graph.Graph, rv *Repetitions) ([]Loop, error) {
	m, err := build(g)
	if err != nil {
		return nil, err
	}
	q, err := m.targets(rv)
	if err != nil {
		return nil, err
	}
	s := newSim(m, q, m.initOf(nil), m.capsOf())
	var out []Loop
	for len(s.queue) > 0 {
		a := s.queue[0]
		s.queue = s.queue[1:]
		s.inq[a] = false
		n := s.fireMax(a)
		if n == 0 {
			continue
		}
		if k := len(out); k > 0 && out[k-1].Actor == m.actors[a].Name {
			out[k-1].Count += n
		} else {
			out = append(out, Loop{m.actors[a].Name, n})
		}
		for _, ci := range m.outs[a] {
			s.push(m.chans[ci].dst)
		}
		for _, ci := range m.ins[a] {
			s.push(m.chans[ci].src)
		}
	}
	if !s.done() {
		res, err := m.deadlock(q)
		if err != nil {
			return nil, err
		}
		return nil, &DeadlockError{Result: res}
	}
	return out, nil
}

// SingleProcessorSchedule returns the firing order of one iteration on one
// processor, one actor name per firing (the expansion of LoopedSchedule).
// It refuses more than DefaultScheduleLimit firings.
func SingleProcessorSchedule(g *graph.Graph, rv *Repetitions) ([]string, error) {
	ls, err := LoopedSchedule(g, rv)
	if err != nil {
		return nil, err
	}
	var n int64
	for _, l := range ls {
		n += l.Count
	}
	if n > DefaultScheduleLimit {
		return nil, fmt.Errorf("analysis: one iteration has %d firings, more than %d: use LoopedSchedule", n, DefaultScheduleLimit)
	}
	out := make([]string, 0, n)
	for _, l := range ls {
		for range l.Count {
			out = append(out, l.Actor)
		}
	}
	return out, nil
}

// FormatLoops renders a looped schedule as "147×A 147×B ...".
func FormatLoops(ls []Loop) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return strings.Join(parts, " ")
}
