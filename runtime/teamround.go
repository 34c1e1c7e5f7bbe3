package runtime

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
)

// claimBits is the number of low bits of teamRound.claim holding the next
// firing of a team round; the high bits hold the round's number.
const claimBits = 24

// teamRound is the state of the rounds of a unit whose replicas share
// each round's firings (splitTeam, replicaTeam, fusion): the replicas
// claim firings (or batches, or replicas) from it and count those done;
// whoever completes a round commits it. Its counters are written by every
// replica, so it sits on cache lines of its own, away from the unit's and
// from its mode's other fields.
type teamRound struct {
	_         [64]byte
	roundID   uint64
	claim     atomic.Uint64
	roundK    atomic.Int64
	roundBase atomic.Int64
	doneN     atomic.Int64
	stopAt    atomic.Int64
	waiters   atomic.Int32 // workers waiting in awaitRound for the next round
	// crowded: the pool had more workers than GOMAXPROCS when the round
	// started, so that its waiting workers yield at once (awaitRound).
	crowded  atomic.Bool
	errMu    sync.Mutex
	errAt    int64
	roundErr error
	_        [64]byte
}

// splitTeam is the mode of a stateless actor of several replicas
// (graph.TeamSplit, the default): the replicas share each round's
// firings, each firing on its own sub-windows, and the round commits them
// in firing order.
type splitTeam struct {
	onPool
	teamRound
}

// round runs a round of k > 1 firings as a team round (split); a
// round of one firing runs alone (fireSeq).
func (t *splitTeam) round(u *unit, c *execCtx, k, at int64) (int64, int64, bool) {
	if k > 1 {
		return -1, k, t.split(u, c, k)
	}
	base := u.next
	end, ok := u.fireSeq(c, k, at)
	return end, u.next - base, ok
}

// join is claimLoop.
func (t *splitTeam) join(u *unit, c *execCtx, id uint64) bool { return t.claimLoop(u, c, id) }

// split starts a round of k firings shared by the unit's replicas:
// helpers are queued, and this worker claims firings too. It reports
// whether this worker finished the round and so goes on running the unit.
func (t *splitTeam) split(u *unit, c *execCtx, k int64) bool {
	id := t.startRound(u, k, min(int64(u.replicas), k)-1)
	return t.claimLoop(u, c, id)
}

// claimLoop claims and runs firings of round id until none is left. The
// goroutine that completes the round's last firing commits the round and
// reports true: it becomes the unit's runner.
func (t *splitTeam) claimLoop(u *unit, c *execCtx, id uint64) bool {
	const mask = 1<<claimBits - 1
	for {
		v := t.claim.Load()
		if v>>claimBits != id {
			return false
		}
		k := t.roundK.Load()
		j := int64(v & mask)
		if j >= k {
			// Every firing of the round is taken: wait for the next
			// round rather than leave and be woken for it.
			nid, ok := t.awaitRound(u, c, id, true)
			if !ok {
				return false
			}
			id = nid
			continue
		}
		if !t.claim.CompareAndSwap(v, v+1) {
			continue
		}
		t.fireTeam(u, c, t.roundBase.Load(), j)
		if t.doneN.Add(1) == k {
			u.cur = c.wk
			t.endRound(u)
			return u.state.Load() != stateDone
		}
	}
}

// fireTeam runs firing base+j of a team round on its sub-windows.
func (t *splitTeam) fireTeam(u *unit, c *execCtx, base, j int64) {
	f := c.firingFor(u)
	idx := base + j
	for i := range u.ins {
		p := &u.ins[i]
		o := p.tokens(base, j) * p.tsize
		n := p.phases[idx%int64(len(p.phases))] * p.tsize
		f.ins[i] = u.inWin[i][o : o+n : o+n]
	}
	for i := range u.outs {
		p := &u.outs[i]
		if u.outWin[i] == nil {
			f.outs[i] = nil
			continue
		}
		o := p.tokens(base, j) * p.tsize
		n := p.phases[idx%int64(len(p.phases))] * p.tsize
		f.outs[i] = u.outWin[i][o : o+n : o+n]
	}
	f.index = idx
	f.phase = int(idx % u.phases)
	f.replica = int(idx % int64(u.replicas))
	f.replicas = u.replicas
	t0 := c.now()
	err := u.call(f)
	if err == nil {
		t1 := c.now()
		c.lastTeamNs = t1 - t0
		c.record(u, idx, t0, t1)
	} else {
		t.failRound(j, err)
	}
}

// startRound opens a round of k firings at unit u's next firing, queues
// helper tasks that join it, and returns the round's number.
func (t *teamRound) startRound(u *unit, k, helpers int64) uint64 {
	// Close the last round's claims first: a helper that loaded its final
	// claim word and then this round's k would otherwise claim a firing
	// past the last round's end (its CompareAndSwap on the unchanged word
	// would succeed) and fire it on windows too short.
	const mask = 1<<claimBits - 1
	t.claim.Store(t.roundID<<claimBits | mask)
	t.roundID++
	id := t.roundID
	t.roundK.Store(k)
	t.roundBase.Store(u.next)
	t.stopAt.Store(k)
	t.doneN.Store(0)
	t.roundErr = nil
	t.errAt = k
	if u.r.liveStats {
		u.noteStarted(u.next + k)
	}
	t.crowded.Store(len(u.pool.ws) > goruntime.GOMAXPROCS(0))
	// Workers waiting for this round join it without a task of their own.
	// Once the round is published one of them may finish it and run the
	// unit: u.cur is read before.
	from := u.cur
	helpers -= int64(t.waiters.Load())
	t.claim.Store(id << claimBits)
	for i := int64(0); i < helpers; i++ {
		u.pool.pushBack(from, task{u: u, round: id})
	}
	u.pool.wakeN(int(helpers))
	return id
}

// awaitRound waits, spinning, for the round after round id of a team whose
// last firings are still running on other workers, and returns its number.
// A team of N replicas on N cores otherwise loses each round's end: its
// helpers find nothing to claim, park, and must be woken again (tens of
// microseconds) when the next round starts a firing's time later. It gives
// up (false) when the unit stops being run, after about twice this
// worker's last firing (or batch) of the unit (at least 20 µs, at most
// 1 ms): by then the round should have ended, and, with yieldToWork, as
// soon as other work is queued. A fused chain's replicas wait on (false):
// the work queued is most often what the round's end readied on the
// worker that committed it (the chain's producer and consumer), which that
// worker runs itself beside the next round (see fusion.round), and leaving
// would cost a wake-up per replica at every round. It yields its
// processor every awaitYieldNs of waiting (see there), or at every
// check when the pool has more workers than processors.
func (t *teamRound) awaitRound(u *unit, c *execCtx, id uint64, yieldToWork bool) (uint64, bool) {
	p := u.pool
	if c.wk == nil || p.spinning.Load() >= int32(len(p.ws)) {
		return 0, false
	}
	wait := min(max(2*c.lastTeamNs, 20_000), 1_000_000)
	p.spinning.Add(1)
	t.waiters.Add(1)
	defer func() {
		t.waiters.Add(-1)
		p.spinning.Add(-1)
	}()
	yieldNs := int64(awaitYieldNs)
	if t.crowded.Load() {
		yieldNs = 0 // the worker that runs the round's end may need this P
	}
	now := nanotime()
	deadline, yieldAt := now+wait, now+yieldNs
	for i := 1; ; i++ {
		v := t.claim.Load()
		if nid := v >> claimBits; nid != id {
			return nid, true
		}
		if i%16 != 0 {
			continue
		}
		if p.done.Load() || u.r.stopped.Load() || u.state.Load() != stateBusy || (yieldToWork && p.hasWork()) {
			return 0, false
		}
		if now = nanotime(); now >= deadline {
			return 0, false
		}
		if now >= yieldAt {
			goruntime.Gosched()
			yieldAt = now + yieldNs
		}
	}
}

// awaitYieldNs is how long awaitRound polls between two yields of its
// processor (goruntime.Gosched) when the pool has no more workers than
// GOMAXPROCS: a goroutine that shares the waiting worker's P (an actor's
// own goroutine, a device manager) waits at most about that long for it,
// and a team of one replica per core, whose waits mostly end within a
// batch's time, seldom yields. Yielding every 256 polls (a microsecond or
// so) spent 4.7 % of a 64-stage fused chain's time on 16 cores contending
// on the Go scheduler's lock. With more workers than processors a waiter
// yields at every check instead (a few hundred nanoseconds apart): the
// worker running the round's last batch may be waiting for its P.
const awaitYieldNs = 20_000

// endRound commits unit u's finished team round, in firing order: the
// windows are consecutive, so one commit per port merges the replicas'
// outputs.
func (t *teamRound) endRound(u *unit) {
	base := t.roundBase.Load()
	done := t.stopAt.Load()
	u.commit(base, done)
	if t.roundErr != nil {
		u.stopWith(base+done, t.roundErr)
	}
}

// failRound records that firing j of the current round failed: the round
// commits only the firings before the first failure.
func (t *teamRound) failRound(j int64, err error) {
	t.errMu.Lock()
	if j < t.errAt {
		t.errAt, t.roundErr = j, err
	}
	t.errMu.Unlock()
	for {
		s := t.stopAt.Load()
		if j >= s || t.stopAt.CompareAndSwap(s, j) {
			break
		}
	}
}
