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
		if u.state.Load() != stateDone && !u.mode.quiet(u) {
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
		if u.state.Load() == stateDone {
			continue
		}
		why, named := u.mode.blockedOn(u)
		if !named {
			continue
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
