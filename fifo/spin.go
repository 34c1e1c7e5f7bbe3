package fifo

import (
	"context"
	"math/bits"
	"runtime"
	"time"
)

// The Spin strategy's wait (waitSpin) and the tuner that chooses, for each
// side, between spinning and parking. docs/fifo.md, "Wait strategies",
// tells why it is built so and what was measured.

const (
	// spinFallback is how long a Spin wait spins before it parks: far
	// longer than any hand-off between two running cores (hundreds of
	// nanoseconds), so it parks only when the other side is not running.
	spinFallback = int64(50 * time.Microsecond)
	// spinFirstYield is how long a Spin wait spins before it first gives
	// its processor up; the time between yields doubles after each. A
	// goroutine that the spinner's processor should run (a partner that
	// moved onto it, one that a channel readied there) waits at most
	// this long. A wait that lasts it is a miss (see tuner).
	spinFirstYield = int64(time.Microsecond)
)

// peerOn reports whether the other side of a wait by the writer (writer
// true: a reader it waits for, one whose position is below need) or by a
// reader (the writer) last published from processor p. The two then
// share p: the one that waits for the other cannot see it move while it
// keeps the processor.
func (f *FIFO) peerOn(p int32, writer bool, need uint64) bool {
	if !writer {
		return f.writer.proc.Load() == p
	}
	for i := range f.readers {
		r := &f.readers[i]
		if r.proc.Load() == p && !r.detached.Load() && r.pos.Load() < need {
			return true
		}
	}
	return false
}

// What a Spin wait found, for its tuner (flags).
const (
	waitShared = 1 << iota // the other side was on the waiter's processor
	waitMissed             // it spun spinFirstYield without an answer
)

// waitSpin is the Spin strategy's wait past block's first poll. It
// returns when its timing for BlockedTime started (0: not timed) and what
// it found (waitShared, waitMissed).
//
// A Spin side spins only while it and the other side are on processors of
// their own. Each side publishes its processor with its position (see
// Writer.Commit, Reader.Release); a wait whose other side last published
// from the waiter's own processor is a hand-off on one processor: the
// other side cannot run while this one spins, so the wait yields first,
// as Park does (the other side runs in that turn and usually answers),
// and spins only if no answer came. A wait whose other side is elsewhere
// spins: it polls, checks the context and the clock every spinCheck polls,
// and yields only after spinFirstYield, then at doubling intervals,
// looking again after each yield where both sides are; it parks after
// spinFallback (the other side's thread is off its core). So two sides
// that the scheduler put on separate processors stay there (nothing moves
// them: no yield, no park and wake-up), and two that share one hand over
// as parked sides do until the scheduler spreads them. Before spinning on
// a processor from which a parked side was woken, a wait yields (see
// readied). And where the side's tuner found that parking serves it
// better, it waits as Park does.
func (f *FIFO) waitSpin(ctx context.Context, ws *waiter, st *waitStat, need uint64, writer bool,
	ready func() bool) (start int64, found uint8, err error) {
	parking := st.tune.park
	if f.modeHook != nil {
		parking = f.modeHook()
	}
	if parking {
		st.parked++
		start, err = f.blockSlow(ctx, ws, st, 0, need, ready)
		return start, 0, err
	}
	st.spun++
	var sp spinner
	yielded := false // this wait has given its processor up
	p := curP()
	for {
		switch {
		case takeReadied(p):
			// A goroutine woken from here waits in p's runnext: let it
			// run first.
		case !yielded && f.peerOn(p, writer, need):
			// The other side shares p: let it run.
			found |= waitShared
		default:
			switch sp.poll(ctx, f, st, ready) {
			case spinReady:
				return sp.start, found, nil
			case spinDone:
				return sp.start, found, ctx.Err()
			case spinLong:
				start, err = f.parkSpin(ctx, ws, &sp, need, ready)
				return start, found | waitMissed, err
			}
			// Time to yield.
			found |= waitMissed
			if sp.yields++; sp.yields%2 == 0 {
				// Every other yield is the OS thread's (sched_yield): on
				// an oversubscribed machine it lets the other side's
				// thread have this core.
				osYield()
				if ready() {
					return sp.start, found, nil
				}
				continue
			}
		}
		runtime.Gosched()
		yielded = true
		if ready() {
			return sp.start, found, nil
		}
		p = curP()
	}
}

// parkSpin parks a Spin wait (see waitSpin) and returns when its timing
// started.
func (f *FIFO) parkSpin(ctx context.Context, ws *waiter, sp *spinner, need uint64, ready func() bool) (int64, error) {
	if sp.start == 0 && !f.untimed {
		sp.start = nanotime()
	}
	ws.need.Store(need)
	err := park(ctx, ws, ready)
	ws.need.Store(0)
	return sp.start, err
}

// spinner is the state of one Spin wait's spinning (see waitSpin).
type spinner struct {
	start     int64 // timing for BlockedTime started (0: not yet)
	spinStart int64 // the first check's clock (0: not yet)
	nextYield int64 // when to yield next
	gap       int64 // the time between yields
	yields    int   // yields so far
}

// The outcomes of spinner.poll.
const (
	spinReady = iota // ready returned true
	spinDone         // the context ended
	spinYield        // time to yield
	spinLong         // spinFallback has passed: park
)

// poll polls ready, checking the context and the clock every spinCheck
// polls, until ready is true, the context ends, it is time to yield, or
// spinFallback has passed since the first check. The side says that it
// spins (st.spinning) from the first check on, while it polls; the wait
// is timed for BlockedTime from there too.
func (sp *spinner) poll(ctx context.Context, f *FIFO, st *waitStat, ready func() bool) int {
	done := ctx.Done()
	flagged := false
	for i := 1; ; i++ {
		if ready() {
			if flagged {
				st.spinning.Store(false)
			}
			return spinReady
		}
		if i%spinCheck != 0 {
			continue
		}
		out := -1
		select {
		case <-done:
			out = spinDone
		default:
			now := nanotime()
			if sp.spinStart == 0 {
				sp.spinStart, sp.gap = now, spinFirstYield
				sp.nextYield = now + sp.gap
				if !f.untimed {
					sp.start = now
				}
			}
			if now-sp.spinStart >= spinFallback {
				out = spinLong
			} else if now >= sp.nextYield {
				sp.gap *= 2
				sp.nextYield = now + sp.gap
				out = spinYield
			}
		}
		if out >= 0 {
			if flagged {
				st.spinning.Store(false)
			}
			return out
		}
		if !flagged {
			st.spinning.Store(true)
			flagged = true
		}
	}
}

// tuner chooses, for one side of a Spin FIFO, between spinning and
// parking: its private state (in waitStat), updated after every
// successful Spin wait.
//
// It measures what each mode delivers: the side's own progress (tokens
// moved past its position) per nanosecond, over a window of
// tuneSubs×tuneSubWaits waits, taken as the mean of the sub-windows but
// the slowest (one preemption does not decide). Spinning is the start and
// the preference. Every gap waits (doubling from tuneMinGap to tuneMaxGap)
// it measures the mode in use and then, after tuneSkip waits to settle,
// the other one: a probe, cut short where two of its sub-windows took
// more than twice the mode in use. It leaves spinning for parking only
// where parking moved the side at least 1/8 faster, and parking for
// spinning where spinning was faster by 1/16 with the two sides on
// processors of their own; where the spinning window found them sharing
// one (spinning then hands off by yielding, see waitSpin), it keeps
// spinning where that was faster by 1/16, and otherwise unless it was
// slower by 1/16 or spinning on separate processors lost the last time
// that was measured. Where one mode cost
// r >= 2 times the other, the next probe waits 64·r windows' worth of
// waits (up to tuneFarGap), so that probing a mode much worse costs about
// 1/64 of the time. Where the sides sit on cores far apart (across
// sockets, a virtual machine's distant vCPUs) a hand-off on one core
// beats a cache-line transfer each way, and parking wins there.
//
// Between measurements it watches for misses: spinning waits that lasted
// spinFirstYield, far longer than the side's measured cost per token
// (tuneMissCost at most) says they should. Three in its last eight waits
// (not a timer interrupt's single one: the other side's thread is off
// its core, an oversubscribed machine or a virtual machine's stolen vCPU)
// switch it to parking at once and double the gap (up to tuneFarGap); the
// next measurement tells whether spinning pays again.
//
// It reads the clock once per sub-window, not per wait.
type tuner struct {
	park   bool  // waits park (the Park protocol) instead of spinning
	sepBad bool  // spinning on separate processors lost when last measured
	curSep bool  // the first window (the mode in use) found the sides apart
	phase  int8  // tuneIdle, tuneCur, tuneSettle or tuneOther
	sub    int8  // sub-windows measured in this window
	slow   int8  // sub-windows of the probe that took twice the mode in use
	misses uint8 // the last eight waits: 1 bits for misses
	left   int32 // waits left in the gap, the settling or the sub-window
	gap    int32 // waits between measurements
	shared int32 // waits of this window that found the other side on their processor
	t0     int64 // clock at the start of the sub-window
	p0     uint64
	subs   [tuneSubs]int64 // this window's sub-windows: ns per 1024 tokens
	cost   int64           // the first window's cost
	spun   int64           // the cost of the last spinning window (0: none yet)
}

// The tuner's phases.
const (
	tuneIdle   = iota // between measurements
	tuneCur           // measuring the mode in use
	tuneSettle        // the other mode's first waits, not measured
	tuneOther         // measuring the other mode
)

const (
	tuneSubs     = 4       // sub-windows per window
	tuneSubWaits = 16      // waits per sub-window
	tuneSkip     = 4       // waits of the other mode left out of its window
	tuneMinGap   = 16      // waits before the first measurement
	tuneMaxGap   = 8192    // the longest gap between measurements of close modes
	tuneFarGap   = 1 << 18 // the longest gap where one mode costs twice the other
	// tuneMissCost is the cost per 1024 tokens up to which a miss is out
	// of the ordinary: a side that spins half a spinFirstYield per token
	// or longer waits on work, not on a thread off its core.
	tuneMissCost = spinFirstYield / 2 * 1024
)

// after records a successful wait of its side, whose position is pos (the
// writer's written position, the reader's read position), and what the
// wait found (waitSpin). The mode of the next wait is t.park.
func (t *tuner) after(pos uint64, found uint8) {
	if t.count(found) {
		t.measure(pos, nanotime())
	}
}

// count counts a wait (see after) and reports whether a measurement is
// due, which needs the clock.
func (t *tuner) count(found uint8) bool {
	if t.gap == 0 { // the first wait
		t.gap, t.left = tuneMinGap, tuneMinGap
	}
	if found&waitShared != 0 {
		t.shared++
	}
	t.misses <<= 1
	if found&waitMissed != 0 {
		t.misses |= 1
		if bits.OnesCount8(t.misses) >= 3 && t.spun < tuneMissCost && !t.park {
			// Park now; measure again twice as late (a probe of
			// spinning that misses so ends here).
			t.park, t.misses = true, 0
			t.gap = min(2*t.gap, tuneFarGap)
			t.phase, t.left = tuneIdle, t.gap
			return false
		}
	}
	t.left--
	return t.left <= 0
}

// measure starts or ends a sub-window at clock now, the side at pos.
func (t *tuner) measure(pos uint64, now int64) {
	switch t.phase {
	case tuneIdle, tuneSettle:
		t.phase++ // tuneCur, tuneOther
		t.sub, t.slow, t.shared, t.left, t.t0, t.p0 = 0, 0, 0, tuneSubWaits, now, pos
		return
	}
	c := costPer1K(now-t.t0, pos-t.p0)
	t.subs[t.sub] = c
	t.sub++
	t.left, t.t0, t.p0 = tuneSubWaits, now, pos
	if t.phase == tuneOther && c > 2*t.cost {
		t.slow++
	}
	// A probe two of whose sub-windows took more than twice the mode in
	// use ends there (it lost).
	if t.sub < tuneSubs && t.slow < 2 {
		return
	}
	c = trimmedMean(t.subs[:t.sub])
	if !t.park {
		t.spun = c
	}
	apart := 4*t.shared <= int32(t.sub)*tuneSubWaits
	if t.phase == tuneCur {
		t.cost, t.curSep = c, apart
		t.park = !t.park
		t.phase, t.left = tuneSettle, tuneSkip
		return
	}
	t.decide(c, apart)
	t.gap = min(2*t.gap, tuneMaxGap)
	if r := max(c, t.cost) / max(min(c, t.cost), 1); r >= 2 {
		t.gap = int32(max(int64(t.gap), min(64*tuneSubs*tuneSubWaits*r, tuneFarGap)))
	}
	t.phase, t.left = tuneIdle, t.gap
}

// decide keeps the mode just measured (t.park, at cost c; apart: its
// waits found the sides on separate processors) or goes back to the one
// measured before it (at t.cost).
func (t *tuner) decide(c int64, apart bool) {
	keep := false
	if t.park { // parking (c) against spinning (t.cost)
		keep = c < t.cost-t.cost/8
		if t.curSep {
			t.sepBad = keep
		}
	} else { // spinning (c) against parking (t.cost)
		if apart {
			keep = c < t.cost-t.cost/16
			t.sepBad = !keep
		} else {
			// On one processor a spinning wait hands off by yielding:
			// kept where that was faster than parking whatever spinning
			// apart did before, and where it cost the same unless
			// spinning apart lost when last measured.
			keep = c < t.cost-t.cost/16 || (!t.sepBad && c <= t.cost+t.cost/16)
		}
	}
	if !keep {
		t.park = !t.park
	}
}

// trimmedMean returns the mean of v (at least two values) without its
// largest value: one sub-window that a preemption or an interrupt slowed
// does not count, a mode that is slow more often than that does.
func trimmedMean(v []int64) int64 {
	var sum, top int64
	for _, x := range v {
		sum += x
		top = max(top, x)
	}
	return (sum - top) / int64(len(v)-1)
}

// costPer1K returns ns nanoseconds per tokens tokens, scaled to 1024
// tokens (a window without progress counts as one token).
func costPer1K(ns int64, tokens uint64) int64 {
	return ns * 1024 / int64(max(tokens, 1))
}
