package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"time"

	"github.com/sluicehq/sluice/device"
)

// deviceLoop is the runtime-manager goroutine of one device.
func (d *devRunner) loop() {
	r := d.r
	defer r.wg.Done()
	defer d.drain()
	for _, u := range d.units {
		u.state.Store(stateBusy)
	}
	d.setupRounds()
	live := len(d.units)
	var w devWaiter
	defer w.stop()
	for live > 0 {
		if r.stopped.Load() {
			return
		}
		p0 := d.releaseCopied()
		d.link.collect(d.c.now(), false)
		p1, ok := d.retireCompleted()
		if !ok {
			return
		}
		p1 = d.deviceSnapshots() || p1
		p2, ok := d.enqueueRounds()
		if !ok {
			return
		}
		p3, ok := d.enqueueEach(&live)
		if !ok {
			return
		}
		if p0 || p1 || p2 || p3 {
			if err := errors.Join(d.wq.Flush(), d.cq.Flush(), d.q.Flush()); err != nil {
				r.fail(fmt.Errorf("device %s: %w", d.id, err))
				return
			}
			w.progressed()
			continue
		}
		if live == 0 {
			return
		}
		w.wait(d)
	}
}

// retireCompleted retires the invocations that completed, oldest first
// (the queue is in order). ok is false when one failed (the run failed).
func (d *devRunner) retireCompleted() (progressed, ok bool) {
	r := d.r
	for len(d.inflight) > 0 {
		inv := d.inflight[0]
		st, err := device.Complete, error(nil)
		if inv.ev != d.lastDone {
			st, err = inv.ev.Status()
		}
		if err != nil || st == device.Failed {
			if err == nil {
				err = inv.ev.Wait(r.ctx)
			}
			r.fail(fmt.Errorf("actor %s firings %d–%d on %s: %w", inv.u.name, inv.base, inv.base+inv.k-1, d.id, err))
			return progressed, false
		}
		if st != device.Complete {
			break
		}
		d.lastDone = inv.ev
		d.inflight[0] = nil
		d.inflight = d.inflight[1:]
		d.inflightLive.Store(int64(len(d.inflight)))
		d.retire(inv)
		progressed = true
	}
	return progressed, true
}

// enqueueRounds, on a batching queue, enqueues rounds while the fill levels
// allow. ok is false when the run failed.
func (d *devRunner) enqueueRounds() (progressed, ok bool) {
	if d.bat == nil {
		return false, true
	}
	r := d.r
	for {
		if !d.roundReady() {
			return progressed, true
		}
		d.bat.BeginBatch(d.replay)
		d.roundNo++
		d.launches = 0
		any := false
		// Each pass gives every unit one more invocation, up to
		// perRound per unit: later passes take what the earlier
		// ones made possible (a consumer enqueued frees its
		// producer's ring room) and what the next iterations
		// allow, so one launch (one CUDA Graph) covers several
		// invocations of a chain rather than a round of one each.
		for pass := 0; pass <= d.passes; pass++ {
			d.pass = pass
			moved := false
			for _, u := range d.units {
				du := u.kernel()
				if du.lastRound != d.roundNo {
					du.lastRound, du.inRound = d.roundNo, 0
				}
				if u.state.Load() == stateDone || du.inRound >= du.perRound {
					continue
				}
				ok, err := d.enqueue(u)
				if err != nil {
					_, _ = d.bat.EndBatch()
					r.fail(err)
					return progressed, false
				}
				if ok {
					du.inRound++
					moved = true
				}
			}
			any = any || moved
			if !moved {
				break
			}
		}
		if err := d.endRound(); err != nil {
			r.fail(err)
			return progressed, false
		}
		if !any {
			return progressed, true
		}
		progressed = true
	}
}

// enqueueEach, on a plain queue, enqueues every unit's invocations while
// the fill levels and the depth allow, and finishes the units that are done
// (decrementing *live). ok is false when the run failed.
func (d *devRunner) enqueueEach(live *int) (progressed, ok bool) {
	for _, u := range d.units {
		for d.bat == nil && u.state.Load() != stateDone && d.canEnqueue() {
			ok, err := d.enqueue(u)
			if err != nil {
				d.r.fail(err)
				return progressed, false
			}
			if !ok {
				break
			}
			progressed = true
		}
		if du := u.kernel(); u.state.Load() != stateDone && du.stopped && du.inflight == 0 {
			d.finish(u)
			*live--
			progressed = true
		}
	}
	return progressed, true
}

// devWaiter is how the device loop waits when nothing moved: for a wake-up
// when nothing is in flight, else polling the oldest invocation.
type devWaiter struct {
	timer     *time.Timer
	backoff   time.Duration
	spinSince int64
}

func (w *devWaiter) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *devWaiter) progressed() { w.backoff, w.spinSince = 0, 0 }

func (w *devWaiter) wait(d *devRunner) {
	r := d.r
	// Nothing to do until a completion or a host actor moves a stream.
	if len(d.inflight) == 0 && !d.nextToProcess {
		d.idle.Store(true)
		select {
		case <-d.wakeC:
		case <-r.ctx.Done():
		}
		d.idle.Store(false)
		w.spinSince = 0
		return
	}
	// Poll the oldest invocation: spin (yielding) for up to pollSpin
	// after the last progress, since a GPU completes invocations every
	// few to few hundred µs and a sleeping manager would leave it idle;
	// then back off with timers.
	now := nanotime()
	if w.spinSince == 0 {
		w.spinSince = now
	}
	if now-w.spinSince < d.spin {
		select {
		case <-d.wakeC:
		default:
			goruntime.Gosched()
		}
		return
	}
	w.backoff = max(w.backoff, 10*time.Microsecond)
	if w.timer == nil {
		w.timer = time.NewTimer(w.backoff)
	} else {
		w.timer.Reset(w.backoff)
	}
	select {
	case <-d.wakeC:
	case <-w.timer.C:
	case <-r.ctx.Done():
	}
	w.backoff = min(2*w.backoff, 200*time.Microsecond)
}

// pollSpin is how long (ns) the runtime-manager of a GPU polls its oldest
// invocation without sleeping; on a CPU device (whose kernels run on the
// host's cores) it spins only briefly, so as not to take a core from them.
const (
	pollSpin    = 200_000
	pollSpinCPU = 4_000
)

// canEnqueue reports whether the mode lets one more invocation go.
func (d *devRunner) canEnqueue() bool {
	return d.r.opts.DeviceMode != Callback || len(d.inflight) == 0
}

// drain waits for every command of the device and drops what is in flight
// (the run is stopping, or the manager is done).
func (d *devRunner) drain() {
	_ = d.wq.Finish()
	_ = d.cq.Finish()
	_ = d.q.Finish()
	d.link.finish(d.c.now())
	for _, inv := range d.inflight {
		if inv.ev != nil {
			inv.ev.Release()
		}
		if inv.inEv != nil {
			inv.inEv.Release()
		}
	}
	d.inflight = nil
	d.idle.Store(true)
}

// plan returns how many firings u can enqueue now (0 when none) and
// whether it will never fire again.
func (d *devRunner) plan(u *unit) (int64, bool) {
	du := u.kernel()
	k := du.G
	if u.target >= 0 {
		rem := u.target - u.next
		if rem <= 0 {
			return 0, true
		}
		k = min(k, rem)
	}
	if du.inflight >= d.depth {
		return 0, false
	}
	if ck := d.r.ck; ck != nil {
		if k = ck.deviceRound(u, k); k == 0 {
			return 0, false // a checkpoint's barrier (checkpoint_device.go)
		}
	}
	abandoned := len(du.outs) > 0
	for i := range du.outs {
		p := &du.outs[i]
		if p.ring != nil {
			if !p.ring.abandoned() {
				abandoned = false
			}
		} else if fr := p.up.fr; fr == nil || fr.live.Load() > 0 {
			abandoned = false
		}
	}
	if abandoned {
		return 0, true
	}
	for i := range du.ins {
		p := &du.ins[i]
		if p.rate == 0 {
			continue
		}
		var avail int64
		closed := false
		if g := p.ring; g != nil {
			avail = g.avail(p.reader)
			closed = g.closed
			k = min(k, (g.cap-g.rpos[p.reader]%g.cap)/p.rate)
		} else {
			closed = p.up.ch.fr.f.Writer().Closed()
			avail = int64(p.up.r.Available() - p.pending)
			pos := p.up.r.Position() + uint64(p.pending)
			k = p.up.toRingEnd(p.up.ch.fr.f, pos, u.next, k)
			if g := p.peer; g != nil {
				k = min(k, (g.tok-int64(pos)%g.tok)/p.rate)
			}
		}
		n := avail / p.rate
		if n == 0 {
			if closed && p.pending == 0 {
				// what is there now is all there will be
				if g := p.ring; g == nil {
					avail = int64(p.up.r.Available())
				}
				if avail/p.rate == 0 {
					return 0, true
				}
			}
			return 0, false
		}
		k = min(k, n)
	}
	for i := range du.outs {
		p := &du.outs[i]
		if p.rate == 0 {
			continue
		}
		if g := p.ring; g != nil {
			k = min(k, g.room()/p.rate, (g.cap-g.wpos%g.cap)/p.rate)
		} else if p.up.w != nil {
			k = min(k, int64(p.up.w.Room()-p.pending)/p.rate)
			pos := p.up.w.Position() + uint64(p.pending)
			k = p.up.toRingEnd(p.up.fr.f, pos, u.next, k)
			if g := p.peer; g != nil {
				k = min(k, (g.tok-int64(pos)%g.tok)/p.rate)
			}
		}
	}
	return max(k, 0), false
}

// copiedIn reports whether input port p is copied into the device from
// its host FIFO (from the FIFO's own memory, or through a bounce slot it
// was copied into at enqueue), so that its tokens may be released once
// the copy completes (releaseCopied) rather than with the invocation.
func copiedIn(p *devPort) bool {
	return p.ring == nil && p.stage != nil && p.peer == nil && !p.mapped && p.rate > 0
}

// releaseCopied releases the host-FIFO tokens of in-flight invocations
// whose copies into the device completed, oldest first (the copies are in
// order on the input copy queue), so that their producers may refill the
// FIFO while the kernels and the copies out still run: a FIFO need not
// hold the tokens of every invocation in flight. With tags in use, the
// tokens wait for the invocation's completion (retire reads their tags).
func (d *devRunner) releaseCopied() (progressed bool) {
	if d.r.tags != nil {
		return false
	}
	for _, inv := range d.inflight {
		if inv.inEv == nil {
			continue
		}
		if st, err := inv.inEv.Status(); err != nil || st != device.Complete {
			return progressed // a failure is reported when the invocation retires
		}
		d.releaseInputs(inv)
		inv.u.notify()
		if n := d.r.opts.tune.earlyReleases; n != nil {
			n.Add(1)
		}
		progressed = true
	}
	return progressed
}

// releaseInputs releases the tokens of inv's inputs copied from host
// FIFOs (copiedIn) and drops inv.inEv; the caller wakes the neighbours.
func (d *devRunner) releaseInputs(inv *invocation) {
	du := inv.u.kernel()
	for i := range du.ins {
		if p := &du.ins[i]; copiedIn(p) {
			n := int(inv.k * p.rate)
			p.up.r.Release(n)
			p.pending -= n
		}
	}
	inv.inEv.Release()
	inv.inEv = nil
}

// retire accounts a completed invocation: host inputs release their
// tokens, host outputs commit theirs, and the neighbours wake.
func (d *devRunner) retire(inv *invocation) {
	u, du := inv.u, inv.u.kernel()
	if d.r.tags != nil {
		// Tags travel host-side beside the data: those of the
		// invocation's input windows go to its outputs' before the
		// outputs are committed, as a Go actor's firing does.
		f := &Firing{ctx: d.r.ctx, run: d.r, actor: u.a}
		for f.index = inv.base; f.index < inv.base+inv.k; f.index++ {
			propagateTags(f)
		}
	}
	if inv.inEv != nil {
		d.releaseInputs(inv)
	}
	for i := range du.ins {
		p := &du.ins[i]
		if p.ring == nil && (p.stage != nil || p.peer != nil) && p.rate > 0 && !copiedIn(p) {
			n := int(inv.k * p.rate)
			p.up.r.Release(n)
			p.pending -= n
		}
	}
	for i := range du.outs {
		p := &du.outs[i]
		if p.ring == nil && p.stage != nil && p.rate > 0 {
			n := int(inv.k * p.rate)
			if p.bounce != nil {
				o := inv.slot * du.G * p.rate * p.tsize
				nb := int64(n) * p.tsize
				win := p.up.w.TryAcquireAt(0, n)
				copy(win[:nb], p.bounce[o:o+nb])
			}
			p.up.w.Commit(n)
			p.pending -= n
		}
	}
	inv.ev.Release()
	du.inflight--
	u.firings.Add(inv.k)
	t1 := d.c.now()
	t0 := max(inv.tEnq, d.lastEnd)
	d.lastEnd = t1
	if inv.k > 0 {
		d.c.recordInvocation(u, inv.base, inv.k, t0, t1)
	}
	u.notify()
}

// finish ends a kernel actor once it has nothing in flight: host outputs
// close, host inputs detach, ring inputs stop holding room.
func (d *devRunner) finish(u *unit) {
	if u.state.Swap(stateDone) == stateDone {
		return
	}
	du := u.kernel()
	for i := range du.outs {
		if g := du.outs[i].ring; g != nil {
			g.closed = true
		} else if w := du.outs[i].up.w; w != nil {
			w.Close()
		}
	}
	for i := range du.ins {
		p := &du.ins[i]
		ch := p.up.ch
		if g := p.ring; g != nil {
			ch.leftN.Store(g.avail(p.reader))
			ch.leftSet.Store(true)
			g.done[p.reader] = true
			continue
		}
		w := ch.fr.f.Writer().Position()
		ch.leftN.Store(int64(w - p.up.r.Position()))
		ch.leftSet.Store(true)
		p.up.r.Close()
		ch.fr.live.Add(-1)
	}
	u.notify()
	u.r.unitDone()
}
