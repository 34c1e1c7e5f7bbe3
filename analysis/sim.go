package analysis

import (
	"fmt"
	"strings"
)

// sim is the symbolic (untimed) execution of one iteration. An actor's
// firing k may start when every input holds at least cons.At(k) tokens and
// every output has room for prod.At(k) more tokens (capacity counts every
// token in the channel, initial ones included); firings are atomic.
type sim struct {
	m     *model
	q     []int64
	tok   []int64
	cap   []int64 // inf when unbounded
	fired []int64
	queue []int
	inq   []bool
	steps int64 // actor visits that fired something (for benchmarks/limits)
}

func newSim(m *model, q []int64, init, caps []int64) *sim {
	s := &sim{m: m, q: q, tok: append([]int64(nil), init...), cap: caps,
		fired: make([]int64, len(m.actors)), inq: make([]bool, len(m.actors)),
		queue: make([]int, 0, len(m.actors))}
	for a := range m.actors {
		s.push(a)
	}
	return s
}

// initOf returns the channels' initial tokens plus add (may be nil).
func (m *model) initOf(add []int64) []int64 {
	v := make([]int64, len(m.chans))
	for i, c := range m.chans {
		v[i] = c.init
		if add != nil {
			v[i] += add[i]
		}
	}
	return v
}

// capsOf returns the channels' given capacities (inf when not given).
func (m *model) capsOf() []int64 {
	v := make([]int64, len(m.chans))
	for i, c := range m.chans {
		v[i] = c.cap
		if v[i] <= 0 {
			v[i] = inf
		}
	}
	return v
}

func unbounded(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = inf
	}
	return v
}

func (s *sim) push(a int) {
	if !s.inq[a] {
		s.inq[a] = true
		s.queue = append(s.queue, a)
	}
}

// canFire reports whether firing number k of actor a may start.
func (s *sim) canFire(a int, k int64) bool {
	m := s.m
	for _, ci := range m.ins[a] {
		if s.tok[ci] < int64(m.chans[ci].cons.At(int(k))) {
			return false
		}
	}
	for _, ci := range m.outs[a] {
		if s.tok[ci]+int64(m.chans[ci].prod.At(int(k))) > s.cap[ci] {
			return false
		}
	}
	return true
}

func (s *sim) fireOne(a int, k int64) {
	m := s.m
	for _, ci := range m.ins[a] {
		s.tok[ci] -= int64(m.chans[ci].cons.At(int(k)))
	}
	for _, ci := range m.outs[a] {
		s.tok[ci] += int64(m.chans[ci].prod.At(int(k)))
	}
	s.fired[a]++
}

// fireMax fires actor a as often as possible (up to its target), whole
// cycles at once where it can, and reports how many firings it did.
func (s *sim) fireMax(a int) int64 {
	m := s.m
	p := int64(m.phases[a])
	var total int64
	for s.fired[a] < s.q[a] {
		if s.fired[a]%p == 0 && !m.hasSelf[a] {
			n := (s.q[a] - s.fired[a]) / p
			for _, ci := range m.ins[a] {
				if c := m.chans[ci].consCyc; c > 0 {
					n = min(n, s.tok[ci]/c)
				}
			}
			for _, ci := range m.outs[a] {
				if c := m.chans[ci].prodCyc; c > 0 {
					n = min(n, max(0, s.cap[ci]-s.tok[ci])/c)
				}
			}
			if n > 0 {
				for _, ci := range m.ins[a] {
					s.tok[ci] -= n * m.chans[ci].consCyc
				}
				for _, ci := range m.outs[a] {
					s.tok[ci] += n * m.chans[ci].prodCyc
				}
				s.fired[a] += n * p
				total += n * p
				continue
			}
		}
		if !s.canFire(a, s.fired[a]) {
			break
		}
		s.fireOne(a, s.fired[a])
		total++
	}
	return total
}

// run fires until nothing can fire and reports whether every actor reached
// its target (the iteration completed).
func (s *sim) run() bool {
	m := s.m
	for len(s.queue) > 0 {
		a := s.queue[0]
		s.queue = s.queue[1:]
		s.inq[a] = false
		if s.fireMax(a) == 0 {
			continue
		}
		s.steps++
		for _, ci := range m.outs[a] {
			s.push(m.chans[ci].dst)
		}
		for _, ci := range m.ins[a] {
			s.push(m.chans[ci].src)
		}
	}
	if cap(s.queue) > 4*len(m.actors)+16 {
		s.queue = make([]int, 0, len(m.actors))
	}
	return s.done()
}

func (s *sim) done() bool {
	for a, f := range s.fired {
		if f < s.q[a] {
			return false
		}
	}
	return true
}

// completes runs one iteration from the given initial tokens and capacities.
func completes(m *model, q, init, caps []int64) bool {
	for i := range init {
		if init[i] > caps[i] {
			return false
		}
	}
	return newSim(m, q, init, caps).run()
}

// wait is one reason an unfinished actor cannot fire.
type wait struct {
	ch    int
	full  bool  // waits for room (else for tokens)
	other int   // the actor it waits for
	need  int64 // tokens (or room) needed by the next firing
}

// waits lists why actor a cannot fire its next firing.
func (s *sim) waits(a int) []wait {
	m := s.m
	k := int(s.fired[a])
	var ws []wait
	for _, ci := range m.ins[a] {
		if need := int64(m.chans[ci].cons.At(k)); s.tok[ci] < need {
			ws = append(ws, wait{ci, false, m.chans[ci].src, need})
		}
	}
	for _, ci := range m.outs[a] {
		if need := int64(m.chans[ci].prod.At(k)); s.tok[ci]+need > s.cap[ci] {
			ws = append(ws, wait{ci, true, m.chans[ci].dst, need})
		}
	}
	return ws
}

// blockedActors lists each unfinished actor with the channels it waits on.
func (s *sim) blockedActors() []BlockedActor {
	m := s.m
	var out []BlockedActor
	for a := range m.actors {
		if s.fired[a] >= s.q[a] {
			continue
		}
		b := BlockedActor{Actor: m.actors[a].Name, Fired: s.fired[a], Target: s.q[a]}
		for _, w := range s.waits(a) {
			st := "empty"
			if w.full {
				st = "full"
			}
			b.Waits = append(b.Waits, ChannelWait{Channel: m.chans[w.ch].name, State: st,
				Tokens: s.tok[w.ch], Capacity: s.cap[w.ch], Need: w.need})
		}
		out = append(out, b)
	}
	return out
}

// blockedLines renders blocked actors as readable lines: what each waits on.
func blockedLines(bs []BlockedActor) []string {
	var out []string
	for _, b := range bs {
		var parts []string
		for _, w := range b.Waits {
			if w.State == "full" {
				parts = append(parts, fmt.Sprintf("channel %s is full (%d of capacity %d tokens, needs room for %d)", w.Channel, w.Tokens, w.Capacity, w.Need))
			} else {
				parts = append(parts, fmt.Sprintf("channel %s is empty (%d tokens, needs %d)", w.Channel, w.Tokens, w.Need))
			}
		}
		out = append(out, fmt.Sprintf("%s (fired %d of %d) waits: %s", b.Actor, b.Fired, b.Target, strings.Join(parts, "; ")))
	}
	return out
}
