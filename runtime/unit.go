package runtime

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// Unit states.
const (
	stateIdle = iota // not ready, nobody runs it; a notifier may claim it
	stateBusy        // queued or running (or a team round in flight)
	stateDone        // finished
)

// Why a pooled unit cannot fire.
const (
	whyNone = iota
	whyIn   // an input lacks tokens
	whyOut  // an output lacks room
	whyDone // finished: target reached, input ended, or outputs abandoned
)

// What a unit's runner found of its FIFOs' rings.
const (
	ringsUnknown  = iota
	ringsMirrored // every FIFO is mirrored: windows never cross a ring's end
	ringsPortable // some FIFO is portable
)

// maxRoundFirings bounds the firings of one round.
const maxRoundFirings = 1 << 20

// roundTargetNs is about how long a round may last: the consumers see
// none of a round's tokens (nor the producers its room) before it ends,
// so a round of milliseconds leaves the other workers waiting. A round's
// own costs (its prepare and commit, tens of ns) stay a small part of
// 200 µs. cd2dat (rate-1 actors, rounds of up to 16 384 firings, several
// milliseconds) ran 8 % faster at two workers (2 000 iterations in
// 375–387 ms against 409–425).
const roundTargetNs = 200_000

// firstRoundFirings bounds a unit's first round, before any was timed:
// its consumers need not wait for a whole channel's worth of unknown cost.
const firstRoundFirings = 256

// noteRound records that a round of k firings lasted d ns (wall time,
// whoever ran it): the next rounds take at most about roundTargetNs
// worth of firings at that pace, at least one.
func (u *unit) noteRound(k, d int64) {
	if k <= 0 || d <= 0 {
		return
	}
	u.roundCap = max(u.minRound(), roundTargetNs*k/d)
}

// minRound is the fewest firings a round bound by roundTargetNs keeps:
// for a fused chain fuseTailShare whole batches per replica (its replicas
// claim whole batches until that much is left, see claimSize, and a
// round's end costs each of them a wait), one firing per replica for a
// team, else one.
func (u *unit) minRound() int64 {
	if fz := u.fused(); fz != nil {
		return fuseTailShare * int64(max(1, u.replicas)) * fz.batch
	}
	return int64(max(1, u.replicas))
}

// unit is the runtime's view of one actor: its ports, its scheduling state
// and its counters, whatever runs it; its mode holds how it runs and what
// only that way of running keeps (see mode). Its fields fall in groups on
// cache lines of their own: what every notifier reads (set up once), the
// state that notifiers and the runner swap, and what the runner writes
// every round (a team round's counters are its mode's, on lines of their
// own: see teamRound). A runner's writes thus never evict the lines that
// the units around it load for every commit.
type unit struct {
	// Read by notifiers and by the runner every round, first (on as few
	// lines as they fit), then what only setup and rarer paths read.
	mode     mode
	ins      []uport
	outs     []uport
	pool     *pool
	prio     int
	r        *run
	target   int64 // firings to do; -1 = until end of stream
	maxRound int64
	phases   int64
	replicas int
	fire     FireFunc
	neigh    []*unit
	a        *graph.Actor
	idx      int

	name     string
	impl     any
	affinity []int
	maxPorts int
	_        [64]byte

	state atomic.Int32
	_     [60]byte

	firings atomic.Int64 // committed firings (read by progress and stats)
	// started counts the firings begun (committed or running), kept when
	// the run has a Progress callback (see live.go).
	started atomic.Int64
	// busyLive and blockedLive mirror the statistics for live snapshots,
	// updated when the run has a Progress callback (see live.go).
	busyLive    atomic.Int64
	blockedLive atomic.Int64

	// Owned by whoever runs the unit (hand-offs are ordered by the state
	// CAS, the queue, or the team round's counters).
	next      int64   // index of the next firing
	cur       *worker // the pool worker running the unit now
	inWin     [][]byte
	outWin    [][]byte
	waitKind  int
	waitSince int64
	blockedIn int64 // pooled: ns spent not ready for lack of input
	blockedOu int64 // pooled: ns spent not ready for lack of room
	// shortFirings: the last round's firings took under shortFiringNs
	// on average, so the next round is timed as a whole.
	shortFirings bool
	// roundCap bounds the next round's firings so that it lasts about
	// roundTargetNs (see noteRound): firstRoundFirings until a round
	// was timed; 0 (no bound) for units the pool does not run.
	roundCap int64
	rings    int8 // whether a FIFO is portable (see portable)
	// acc accumulates the times of the firings that the unit's runner
	// runs in sequence, next to the fields it writes every round rather
	// than in the worker's context (a team's replicas use their
	// contexts'); stats merges both.
	acc unitAcc
	_   [64]byte
}

func (u *unit) addNeighbour(n *unit) {
	if n == nil || n == u {
		return
	}
	for _, m := range u.neigh {
		if m == n {
			return
		}
	}
	u.neigh = append(u.neigh, n)
}

// roundLimit returns the most firings one round may take: half of every
// channel's capacity (so producer and consumer overlap), at least one.
func (u *unit) roundLimit() int64 {
	k := int64(maxRoundFirings)
	lim := func(capTok int, p *uport) {
		if p.max == 0 {
			return
		}
		perFiring := (p.sum + int64(len(p.phases)) - 1) / int64(len(p.phases))
		k = min(k, max(1, int64(capTok)/2/max(perFiring, 1)))
	}
	for i := range u.ins {
		lim(u.ins[i].ch.fr.f.Capacity(), &u.ins[i])
	}
	for i := range u.outs {
		if u.outs[i].fr != nil {
			lim(u.outs[i].fr.f.Capacity(), &u.outs[i])
		}
	}
	return k
}

// schedule queues a pooled unit that is idle. Callers from outside the
// pools call it after they moved a stream the unit uses (commit, release,
// close, detach).
func (u *unit) schedule() { u.scheduleFrom(nil) }

// scheduleFrom is schedule called by pool worker from (nil when not a pool
// worker): the unit goes to that worker's next slot.
func (u *unit) scheduleFrom(from *worker) { u.mode.wake(u, from) }

// notify schedules the unit's neighbours, from the worker running it.
func (u *unit) notify() {
	from := u.cur
	for _, n := range u.neigh {
		n.scheduleFrom(from)
	}
}

// abandoned reports whether every output's readers have all finished.
func (u *unit) abandoned() bool {
	if len(u.outs) == 0 {
		return false
	}
	for i := range u.outs {
		if fr := u.outs[i].fr; fr != nil && fr.live.Load() > 0 {
			return false
		}
	}
	return true
}

// prepare finds how many firings can run now (at most maxRound) and
// acquires their windows. It returns 0 and the reason when none can.
// Only the unit's runner calls it.
func (u *unit) prepare() (int64, int) {
	k := u.maxRound
	if c := u.roundCap; c > 0 {
		k = min(k, c)
	}
	if ck := u.r.ck; ck != nil {
		if k = ck.round(u, k); k == 0 {
			return 0, whyIn // a checkpoint's barrier (checkpoint.go)
		}
	}
	if u.target >= 0 {
		rem := u.target - u.next
		if rem <= 0 {
			return 0, whyDone
		}
		k = min(k, rem)
	}
	if u.abandoned() {
		return 0, whyDone
	}
	next := u.next
	for i := range u.ins {
		p := &u.ins[i]
		if p.sum == 0 {
			continue
		}
		n := p.firingsFor(next, p.r.Available(), k)
		if n == 0 {
			if !p.ch.fr.f.Writer().Closed() {
				return 0, whyIn
			}
			// Closed: what is there now is all there will be.
			if n = p.firingsFor(next, p.r.Available(), k); n == 0 {
				return 0, whyDone
			}
		}
		k = n
	}
	for i := range u.outs {
		p := &u.outs[i]
		if p.sum == 0 || p.fr == nil {
			continue
		}
		n := p.firingsFor(next, p.w.Room(), k)
		if n == 0 {
			return 0, whyOut
		}
		k = n
	}
	if u.portable() {
		k = u.toRingEnds(next, k)
	}
	if ck := u.r.ck; ck != nil {
		switch ck.reserve(u, next+k) {
		case reserveHold:
			return 0, whyIn // a barrier is being chosen (checkpoint.go)
		case reserveStale:
			return u.prepare() // a barrier was chosen meanwhile: limit the round to it
		}
	}
	for i := range u.ins {
		p := &u.ins[i]
		if n := p.tokens(next, k); n > 0 {
			u.inWin[i] = p.r.TryAcquire(n)
		} else {
			u.inWin[i] = nil
		}
	}
	for i := range u.outs {
		p := &u.outs[i]
		if n := p.tokens(next, k); n > 0 && p.w != nil {
			u.outWin[i] = p.w.TryAcquire(n)
		} else {
			u.outWin[i] = nil
		}
	}
	return k, whyNone
}

// portable reports whether one of the unit's FIFOs is portable (not
// mirrored), found once by its runner: the FIFOs' records are not loaded
// for every round.
func (u *unit) portable() bool {
	if u.rings == ringsUnknown {
		u.rings = ringsMirrored
		for i := range u.ins {
			if !u.ins[i].ch.fr.f.Mirrored() {
				u.rings = ringsPortable
			}
		}
		for i := range u.outs {
			if fr := u.outs[i].fr; fr != nil && !fr.f.Mirrored() {
				u.rings = ringsPortable
			}
		}
	}
	return u.rings == ringsPortable
}

// toRingEnds returns k, or fewer firings from firing next so that no
// window crosses a portable FIFO's ring end (such a window is copied) when
// at least one firing fits before it.
func (u *unit) toRingEnds(next, k int64) int64 {
	for i := range u.ins {
		if p := &u.ins[i]; p.sum > 0 {
			k = p.toRingEnd(p.ch.fr.f, p.r.Position(), next, k)
		}
	}
	for i := range u.outs {
		if p := &u.outs[i]; p.sum > 0 && p.w != nil {
			k = p.toRingEnd(p.fr.f, p.w.Position(), next, k)
		}
	}
	return k
}

// toRingEnd returns k, or fewer firings from firing next whose window
// from token position pos ends at f's ring end when f is not mirrored and
// at least one firing fits before that end.
func (p *uport) toRingEnd(f *fifo.FIFO, pos uint64, next, k int64) int64 {
	if f.Mirrored() {
		return k
	}
	ring := uint64(f.RingBytes() / f.TokenSize())
	left := ring - pos%ring
	if int64(left) >= int64(p.tokens(next, k)) {
		return k
	}
	if n := p.firingsFor(next, int(left), k); n > 0 {
		return n
	}
	return k
}

// readyAtomic reports, from atomic state only, whether the unit may be able
// to make progress (fire, or finish) from firing next. It is the re-check
// after the unit went idle; it may be called while another worker runs the
// unit, so it touches no reader or writer state.
func (u *unit) readyAtomic(next int64) bool {
	if ck := u.r.ck; ck != nil && ck.waits(u) {
		return false
	}
	if u.target >= 0 && next >= u.target {
		return true
	}
	if u.abandoned() {
		return true
	}
	for i := range u.ins {
		p := &u.ins[i]
		need := p.tokens(next, 1)
		if need == 0 {
			continue
		}
		w := p.ch.fr.f.Writer()
		closed := w.Closed() // read before the position: what it covers is all there will be
		if int(w.Position()-p.r.Position()) < need {
			// Short of tokens: the unit can finish if the stream has
			// ended, and must wait otherwise.
			return closed
		}
	}
	for i := range u.outs {
		p := &u.outs[i]
		need := p.tokens(next, 1)
		if need == 0 || p.fr == nil {
			continue
		}
		if room, _ := p.fr.room(); room < need {
			return false
		}
	}
	return true
}

// mayFire reports, from atomic state only, whether an idle unit may be able
// to make progress, whatever the phase of its next firing: it is false only
// when an input holds fewer tokens than every phase needs and its stream has
// not ended, or an output has less room than every phase needs. A notifier
// checks it before it queues an idle unit, so that a unit woken by one of
// two producers, or by a consumer while it lacks input, is not run only to
// find it cannot fire. No wake-up is lost: the unit's runner re-checks
// readyAtomic after it went idle, a notifier checks after it moved its
// stream, and the predicate only grows as streams move.
func (u *unit) mayFire() bool {
	if ck := u.r.ck; ck != nil && ck.waits(u) {
		return false
	}
	if u.abandoned() {
		return true
	}
	for i := range u.ins {
		p := &u.ins[i]
		need := p.leastNeed()
		if need == 0 {
			continue
		}
		w := p.ch.fr.f.Writer()
		closed := w.Closed() // read before the position, as in readyAtomic
		if int64(w.Position()-p.r.Position()) < need {
			return closed
		}
	}
	for i := range u.outs {
		p := &u.outs[i]
		need := p.leastNeed()
		if need == 0 || p.fr == nil {
			continue
		}
		if room, _ := p.fr.room(); int64(room) < need {
			return false
		}
	}
	return true
}

// leastNeed returns the fewest tokens one firing moves on the port, over
// its phases.
func (p *uport) leastNeed() int64 {
	if len(p.phases) == 1 {
		return p.sum
	}
	least := int64(p.phases[0])
	for _, r := range p.phases[1:] {
		least = min(least, int64(r))
	}
	return least
}

// room returns the FIFO's room for the writer and its fill, from atomic
// positions (readers whose consumer finished do not count).
func (fr *fifoRec) room() (room, fill int) {
	w := fr.f.Writer().Position()
	m := w
	for _, c := range fr.chans {
		if c.leftSet.Load() {
			continue
		}
		if p := fr.f.Reader(c.reader).Position(); p < m {
			m = p
		}
	}
	fill = int(w - m)
	return fr.f.Capacity() - fill, fill
}

// sliceNs is how long a ready unit keeps its worker before it lets other
// queued units have a turn: cheap firings run in long stretches, so that
// scheduling stays a small part of the work, and the graph's slowest actor
// is not sent to the back of the queue after each of its rounds while the
// units its round readied (which other workers steal) wait. 50 µs, a
// round or two of a heavy actor, cost multirate 12 %, forkjoin 7 % and
// pipeline 3 % at two workers (docs/runtime.md, "Fairness, rounds and
// priority").
const sliceNs = 1_000_000

// runPooled runs a unit taken from a queue: rounds of firings while it is
// ready, then back to idle. It returns when the unit is idle, finished,
// requeued, or handed to a team round.
//
// The clock is read once when the unit turns ready (that read ends its
// blocked time and starts its first firing) and once after each firing
// (that read ends one firing and starts the next, also across rounds,
// where the last round's commit and the next one's prepare then count in
// the next round's first firing; and it measures the turn against
// sliceNs); a run of sequential rounds thus costs one read per firing (or
// per round of short firings, see fireSeq) and one per turn.
func (u *unit) runPooled(c *execCtx) {
	r := u.r
	u.cur = c.wk
	var began, last int64 = -1, -1 // the turn's start; the last firing's end
	for {
		if r.stopped.Load() {
			return
		}
		k, why := u.prepare()
		switch why {
		case whyNone:
			t := last // the last round's end: its commit and this prepare ran since
			if t < 0 {
				t = c.now()
			}
			if began < 0 {
				began = t
			}
			if u.waitKind != whyNone {
				u.endWait(t)
			}
			end, n, ok := u.mode.round(u, c, k, t)
			if !ok {
				return
			}
			last, k = end, n
			if last < 0 {
				last = c.now()
			}
			u.noteRound(k, last-t)
			if c.wk.localWork() || u.pool.ninj.Load() > 0 {
				if last-began >= sliceNs {
					// Let the other ready actors have a turn (the
					// consumer just readied runs next, on this core).
					u.pool.yield(c.wk, task{u: u})
					return
				}
			}
		case whyDone:
			u.finish()
			return
		default:
			if u.waitKind == whyNone {
				u.waitKind = why
				// The wait starts when the last firing ended: only
				// this prepare lies between.
				if last < 0 {
					last = c.now()
				}
				u.waitSince = last
			}
			last = -1 // the wait is not a firing's: read the clock when it ends
			next := u.next
			u.state.Store(stateIdle)
			if !u.readyAtomic(next) || !u.state.CompareAndSwap(stateIdle, stateBusy) {
				return
			}
		}
	}
}

// endWait ends the unit's wait for input or room at t.
func (u *unit) endWait(t int64) {
	d := t - u.waitSince
	if u.waitKind == whyIn {
		u.blockedIn += d
	} else {
		u.blockedOu += d
	}
	u.blockedLive.Add(d)
	u.waitKind = whyNone
}

// sequential is the mode of a unit that the pools fire one firing after
// the other: an actor of one replica.
type sequential struct{ onPool }

// round fires the round's firings in order (fireSeq); the round may end
// early, after roundTargetNs.
func (*sequential) round(u *unit, c *execCtx, k, t int64) (int64, int64, bool) {
	base := u.next
	end, ok := u.fireSeq(c, k, t)
	return end, u.next - base, ok
}

// shortFiringNs is the mean firing time under which a unit's firings are
// timed a round at a time: one clock read (tens of nanoseconds on a virtual
// machine) per firing would then cost more than 1 % of the work.
const shortFiringNs = 5_000

// fireSeq runs k firings in order on the acquired windows, the first
// starting at t0, then commits them. It returns when the last firing
// ended, and false when the unit stopped (error or end of stream).
//
// Each firing is timed on its own, unless the unit's firings were short in
// its last round and no trace is taken: then the round is timed as a whole
// and its firings share its time equally (busy time and the mean stay
// exact; a firing that fails counts in its round's time).
func (u *unit) fireSeq(c *execCtx, k, t0 int64) (int64, bool) {
	f := c.firingFor(u)
	base := u.next
	inOff, outOff := c.inOff[:len(u.ins)], c.outOff[:len(u.outs)]
	clear(inOff)
	clear(outOff)
	f.phase = 0 // firingFor set the replica to 0
	each := k == 1 || c.tracing || !u.shortFirings
	start := t0
	var err error
	done := k
	live := u.r.liveStats
	if live && !each {
		u.started.Store(base + k)
	}
	for j := int64(0); j < k; j++ {
		idx := base + j
		u.windows(f, idx, inOff, outOff)
		if live && each {
			u.started.Store(idx + 1)
		}
		if err = u.call(f); err != nil {
			done = j
			break
		}
		if each {
			t1 := c.now()
			c.recordIn(&u.acc, u, idx, t0, t1)
			t0 = t1
			if t1-start >= roundTargetNs && j+1 < k {
				// The round has lasted its time: commit what is done,
				// so that the consumers start on it now rather than
				// after the round's last firing (a round of k firings
				// of seconds each would otherwise hold every token
				// back, and the graph would run serially).
				done = j + 1
				break
			}
		}
	}
	if !each {
		t1 := c.now()
		if done > 0 {
			c.recordInvocationIn(&u.acc, u, base, done, t0, t1)
		}
		t0 = t1
	}
	if done > 0 {
		u.shortFirings = t0-start < shortFiringNs*done
	}
	u.commit(base, done)
	if err != nil {
		u.stopWith(base+done, err)
		return t0, false
	}
	return t0, true
}

// windows points f at firing idx's windows: the next sub-windows of the
// round's, from the offsets inOff and outOff, which it advances.
func (u *unit) windows(f *Firing, idx int64, inOff, outOff []int) {
	for i := range u.ins {
		n := u.ins[i].firingBytes(idx)
		o := inOff[i]
		f.ins[i] = u.inWin[i][o : o+n : o+n]
		inOff[i] = o + n
	}
	for i := range u.outs {
		if u.outWin[i] == nil {
			f.outs[i] = nil
			continue
		}
		n := u.outs[i].firingBytes(idx)
		o := outOff[i]
		f.outs[i] = u.outWin[i][o : o+n : o+n]
		outOff[i] = o + n
	}
	f.index = idx
	if u.phases > 1 {
		f.phase = int(idx % u.phases)
	}
	if u.replicas > 1 {
		f.replica = int(idx % int64(u.replicas))
	}
}

// firingBytes returns the bytes firing idx moves on the port (no division
// for a port of one phase).
func (p *uport) firingBytes(idx int64) int {
	if len(p.phases) == 1 {
		return int(p.sum) * p.tsize // the phases' array is not loaded
	}
	return p.phases[idx%int64(len(p.phases))] * p.tsize
}

// noteStarted records, for live snapshots, that the firings before n have
// begun (on the stages of a fused unit).
func (u *unit) noteStarted(n int64) {
	fz := u.fused()
	if fz == nil {
		u.started.Store(n)
		return
	}
	for _, s := range fz.stages {
		s.started.Store(n)
	}
}

// commit publishes firings [base, base+done): commits outputs, releases
// inputs, and wakes the neighbours.
func (u *unit) commit(base, done int64) {
	if done > 0 {
		for i := range u.outs {
			p := &u.outs[i]
			if p.w != nil {
				if n := p.tokens(base, done); n > 0 {
					p.w.Commit(n)
				}
			}
		}
		for i := range u.ins {
			p := &u.ins[i]
			if n := p.tokens(base, done); n > 0 {
				p.r.Release(n)
			}
		}
		u.next = base + done
		u.firings.Add(done)
		if fz := u.fused(); fz != nil {
			fz.commitStages(done)
		}
	}
	u.notify()
}

// stopWith ends the unit after firing idx returned err: end of stream
// finishes it, anything else fails the run.
func (u *unit) stopWith(idx int64, err error) {
	if errors.Is(err, ErrEndOfStream) {
		u.finish()
		return
	}
	var fe *fusedError
	if errors.As(err, &fe) { // a stage of a fused chain
		u.r.fail(fmt.Errorf("actor %s firing %d: %w", fe.stage.name, fe.idx, fe.err))
		u.finish()
		return
	}
	u.r.fail(fmt.Errorf("actor %s firing %d: %w", u.name, idx, err))
	u.finish()
}

// call runs one firing, turning a panic into an error.
func (u *unit) call(f *Firing) error { return callFire(u.fire, f) }

// callFire runs fire on f, turning a panic into an error.
func callFire(fire FireFunc, f *Firing) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v}
		}
	}()
	return fireOnce(fire, f)
}

// fireOnce runs fire on f and what follows a firing (shared variables,
// stream tags), without recovering from a panic: the caller does.
func fireOnce(fire FireFunc, f *Firing) error {
	err := fire(f)
	if r := f.run; r != nil {
		if r.shared != nil {
			endFiringShared(f, err)
		}
		if err == nil && r.tags != nil {
			propagateTags(f)
		}
	}
	return err
}

// PanicError is the error of a firing or process that panicked.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
}

// Error renders "panic: value".
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// finish ends a unit: its outputs close, its inputs detach (recording what
// they still held), and its neighbours are woken. Only its runner calls it.
func (u *unit) finish() {
	if u.state.Swap(stateDone) == stateDone {
		return
	}
	for i := range u.outs {
		if w := u.outs[i].w; w != nil {
			w.Close()
		}
	}
	for i := range u.ins {
		p := &u.ins[i]
		ch := p.ch
		w := ch.fr.f.Writer().Position()
		ch.leftN.Store(int64(w - p.r.Position()))
		ch.leftSet.Store(true)
		p.r.Close()
		ch.fr.live.Add(-1)
	}
	u.notify()
	if fz := u.fused(); fz != nil {
		fz.finishStages(u.r)
	}
	u.r.unitDone()
}
