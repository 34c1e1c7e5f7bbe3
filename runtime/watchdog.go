package runtime

import (
	"errors"
	"fmt"
	"strings"
)

// ErrDeadlock is wrapped by the error Run returns when the watchdog finds
// every live actor blocked with no token moving.
var ErrDeadlock = errors.New("deadlock")

// quiescent reports whether nothing can run: no pooled work queued or in
// progress, and every live actor on its own goroutine blocked on a FIFO.
func (r *run) quiescent() bool {
	if r.cpu.running() || r.io.running() || r.cpu.pending() != 0 || r.io.pending() != 0 {
		return false
	}
	for _, u := range r.units {
		if u.mode == modePooled || u.mode == modeFused || u.state.Load() == stateDone {
			continue
		}
		if u.mode == modeRemote { // the worker and the heartbeats watch it
			return false
		}
		if u.mode == modeDevice {
			if !u.drv.idle.Load() {
				return false
			}
			continue
		}
		if !u.fifoBlocked() {
			return false
		}
	}
	return true
}

// fifoBlocked reports whether a unit on its own goroutine waits in a FIFO.
func (u *unit) fifoBlocked() bool {
	for i := range u.ins {
		if r := u.ins[i].r; r != nil && r.Blocked() {
			return true
		}
	}
	for i := range u.outs {
		if w := u.outs[i].w; w != nil && w.Blocked() {
			return true
		}
	}
	return false
}

// progressCount sums everything that moves: firings and FIFO positions.
func (r *run) progressCount() uint64 {
	var n uint64
	for _, u := range r.units {
		n += uint64(u.firings.Load())
	}
	for _, f := range r.fifos {
		w, rd := f.f.Progress()
		n += w + rd
	}
	return n
}

// deadlockError says which live actors wait on which channels.
func (r *run) deadlockError() error {
	var parts []string
	for _, u := range r.poolUnits() {
		if u.state.Load() == stateDone || u.mode == modeFused {
			continue
		}
		var why []string
		if u.mode == modePooled {
			next := u.firings.Load()
			for i := range u.ins {
				p := &u.ins[i]
				need := p.tokens(next, 1)
				if need == 0 {
					continue
				}
				fill := int(p.ch.fr.f.Writer().Position() - p.r.Position())
				if fill < need {
					state := "empty"
					if fill > 0 {
						state = "short"
					}
					why = append(why, fmt.Sprintf("channel %s (%s, %d/%d tokens, needs %d)", p.ch.c.Name, state, fill, p.ch.fr.f.Capacity(), need))
				}
			}
			for i := range u.outs {
				p := &u.outs[i]
				need := p.tokens(next, 1)
				if need == 0 || p.fr == nil {
					continue
				}
				if room, fill := p.fr.room(); room < need {
					why = append(why, fmt.Sprintf("channel %s (full, %d/%d tokens, needs room for %d)", chanNames(p.fr), fill, p.fr.f.Capacity(), need))
				}
			}
		} else {
			for i := range u.ins {
				p := &u.ins[i]
				if p.r != nil && p.r.Blocked() {
					fill := int(p.ch.fr.f.Writer().Position() - p.r.Position())
					state := "empty"
					if fill > 0 {
						state = "short"
					}
					why = append(why, fmt.Sprintf("channel %s (%s, %d/%d tokens)", p.ch.c.Name, state, fill, p.ch.fr.f.Capacity()))
				}
			}
			for i := range u.outs {
				p := &u.outs[i]
				if p.w != nil && p.w.Blocked() {
					_, fill := p.fr.room()
					why = append(why, fmt.Sprintf("channel %s (full, %d/%d tokens)", chanNames(p.fr), fill, p.fr.f.Capacity()))
				}
			}
		}
		if len(why) == 0 {
			why = append(why, "nothing it can name (no channel is short or full)")
		}
		parts = append(parts, u.name+" waits on "+strings.Join(why, " and "))
	}
	return fmt.Errorf("runtime: graph %q: %w: %s", r.g.Name, ErrDeadlock, strings.Join(parts, "; "))
}

func chanNames(fr *fifoRec) string {
	if len(fr.chans) == 1 {
		return fr.chans[0].c.Name
	}
	var names []string
	for _, c := range fr.chans {
		if !c.leftSet.Load() {
			names = append(names, c.c.Name)
		}
	}
	return strings.Join(names, ", ")
}
