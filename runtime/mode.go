package runtime

import (
	"fmt"
	"time"
)

// A mode is how a unit runs, with the state that only this way of running
// keeps; the unit itself (unit.go) holds what every way shares: ports,
// pool, scheduling state, counters. Each mode lives in one file:
//
//	*sequential   unit.go        the pools fire it, one round at a time
//	*splitTeam    teamround.go   the pools fire it, replicas sharing a round's firings
//	*replicaTeam  team.go        the pools fire it, every replica every firing (replicated state)
//	*fusion       fuse.go        the pools fire a fused chain of actors, as a team
//	*fusedStage   fuse.go        an actor inside a fused chain: its chain fires it
//	*dedicated    own.go         an SDF actor on a goroutine of its own
//	*kpnProcess   own.go         a KPN process on a goroutine of its own
//	*devUnit      devexec.go     a kernel actor: its device's runtime-manager runs it
//	*remoteUnit   executor.go    an actor on a remote worker
//
// The methods take the unit (a mode holds no pointer back to it). The
// modes of pooled units embed onPool and the others offPool, which give
// the common answers.
type mode interface {
	// pooled reports whether the CPU or I/O pool runs the unit.
	pooled() bool
	// wake is told that a neighbour moved one of the unit's streams;
	// from is the pool worker that did, or nil.
	wake(u *unit, from *worker)
	// round runs k ready firings from the unit's next firing, whose
	// windows prepare acquired, the first starting at t, on pool
	// context c. It returns when its last firing ended (-1: the clock
	// was not read), how many firings that time covers, and whether c
	// goes on running the unit.
	round(u *unit, c *execCtx, k, t int64) (end, n int64, ok bool)
	// join runs context c's share of the unit's team round id (a helper
	// task); true when c completed the round and goes on running the unit.
	join(u *unit, c *execCtx, id uint64) bool
	// executor returns the executor that starts the unit on a goroutine
	// of its own, or nil when a pool, a device manager, a remote executor
	// or a fused chain runs it.
	executor(u *unit) launcher
	// quiet reports, for the watchdog, whether the live unit waits for a
	// neighbour (pooled units: the pools' queues tell).
	quiet(u *unit) bool
	// blockedOn names what the live unit waits on, for a deadlock's
	// error; named is false when another unit speaks for it.
	blockedOn(u *unit) (why []string, named bool)
	// stats completes the unit's statistics (kind, blocked time, device)
	// from what the mode knows; fifoIn and fifoOut are the time its FIFOs
	// blocked it.
	stats(u *unit, as *ActorStats, fifoIn, fifoOut time.Duration)
	// checkpointable says why the unit cannot be checkpointed, or "".
	checkpointable(c *checkpoints, u *unit) string
	// ahead returns how many firings may have begun past those the unit
	// committed or reserved (a checkpoint's barrier lies beyond them), and
	// whether the unit keeps to a cap (Handle.HoldActor).
	ahead(u *unit) (n int64, holdable bool)
}

// onPool gives the answers that the modes of pooled units share.
type onPool struct{}

func (*onPool) pooled() bool { return true }

// wake queues the unit when it is idle and may fire.
func (*onPool) wake(u *unit, from *worker) {
	if u.state.Load() != stateIdle || !u.mayFire() {
		return
	}
	if u.state.CompareAndSwap(stateIdle, stateBusy) {
		u.pool.push(from, task{u: u})
	}
}

// join: a unit without team rounds has no helper tasks.
func (*onPool) join(*unit, *execCtx, uint64) bool { return false }

func (*onPool) executor(*unit) launcher { return nil }

func (*onPool) quiet(*unit) bool { return true }

// blockedOn names the inputs short of tokens and the outputs short of
// room for the unit's next firing.
func (*onPool) blockedOn(u *unit) ([]string, bool) {
	var why []string
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
	return why, true
}

// stats: a pooled unit measures its own blocked time (its runner's wait
// for input or room), its FIFOs never block it.
func (*onPool) stats(u *unit, as *ActorStats, _, _ time.Duration) {
	as.BlockedIn = time.Duration(u.blockedIn)
	as.BlockedOut = time.Duration(u.blockedOu)
}

func (*onPool) checkpointable(_ *checkpoints, u *unit) string { return u.implCheckpointable() }

// ahead: a pooled unit reserves its rounds before it starts them.
func (*onPool) ahead(*unit) (int64, bool) { return 0, true }

// offPool gives the answers that the modes of units the pools do not run
// share: nothing to queue, FIFOs that block.
type offPool struct{}

func (*offPool) pooled() bool { return false }

func (*offPool) wake(*unit, *worker) {}

// round: the pools never run the unit.
func (*offPool) round(*unit, *execCtx, int64, int64) (int64, int64, bool) { return -1, 0, false }

func (*offPool) join(*unit, *execCtx, uint64) bool { return false }

func (*offPool) executor(*unit) launcher { return nil }

func (*offPool) quiet(u *unit) bool { return u.fifoBlocked() }

// blockedOn names the FIFOs the unit's goroutine waits in.
func (*offPool) blockedOn(u *unit) ([]string, bool) {
	var why []string
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
	return why, true
}

func (*offPool) stats(_ *unit, as *ActorStats, fifoIn, fifoOut time.Duration) {
	as.BlockedIn, as.BlockedOut = fifoIn, fifoOut
}

func (*offPool) checkpointable(_ *checkpoints, u *unit) string { return u.implCheckpointable() }

func (*offPool) ahead(*unit) (int64, bool) { return 0, false }
