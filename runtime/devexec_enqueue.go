package runtime

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/device"
)

// enqueue enqueues one invocation of u if it can fire: host inputs' writes
// into staging slots, the FIRE launch(es) on the windows, host outputs'
// reads out of staging slots. It reports whether it enqueued anything.
func (d *devRunner) enqueue(u *unit) (bool, error) {
	du := u.kernel()
	if du.stopped {
		return false, nil
	}
	k, done := d.plan(u)
	if done {
		du.stopped = true
		for i := range du.outs {
			if g := du.outs[i].ring; g != nil {
				g.closed = true
			}
		}
		// Ring neighbours on this device may now finish.
		return false, nil
	}
	if k == 0 {
		return false, nil
	}
	op := &d.op
	*op = enqOp{d: d, u: u, du: du, k: k, slot: du.seq % int64(d.depth), ws: du.ws, nin: len(du.ins), reads: op.reads[:0],
		rin: op.rin[:0], rout: op.rout[:0]}
	defer op.release()
	if err := op.bindInputs(); err != nil {
		return false, err
	}
	op.bindOutputs()
	// In a round, kernel actors of different lanes (no device ring joins
	// them) go to different streams and may run concurrently (CUDA); so do
	// a round's passes when spread, after what they depend on.
	op.lane = -1
	if d.bat != nil && (d.lanes || d.spread) {
		op.lane = d.laneOf(du)
		if d.spread {
			d.spreadDeps(op, op.lane)
		}
	}
	if err := op.launch(); err != nil {
		return false, err
	}
	if d.spread {
		d.logSpread(op, d.launches-1, op.lane)
	}
	if err := op.readOutputs(); err != nil {
		return false, err
	}
	op.commit()
	return true, nil
}

// enqOp is one invocation being enqueued: k firings of u in staging slot
// slot, its windows ws (inputs, then outputs), the last event on the
// compute queue and the reads of its outputs. The device manager keeps one
// and reuses it (enqueue is not reentrant).
type enqOp struct {
	d     *devRunner
	u     *unit
	du    *devUnit
	k     int64
	slot  int64
	ws    []device.Window
	nin   int
	last  device.Event
	inEv  device.Event // the last input copy (invocation.inEv)
	reads []device.Event
	// device-ring windows, for spreading a round (devexec_spread.go)
	rin, rout []ringWin
	lane      int // the round's lane of every launch (-1: none)
}

// fail makes the error of one step of the invocation.
func (op *enqOp) fail(what string, err error) error {
	return fmt.Errorf("actor %s firings %d–%d on %s: %s: %w", op.u.name, op.u.next, op.u.next+op.k-1, op.d.id, what, err)
}

// keep makes ev the invocation's last event, releasing the previous one.
func (op *enqOp) keep(ev device.Event) {
	if op.last != nil {
		op.last.Release()
	}
	op.last = ev
}

// release drops the events not handed to the invocation.
func (op *enqOp) release() {
	for _, e := range op.reads {
		e.Release()
	}
	op.reads = op.reads[:0]
	if op.last != nil {
		op.last.Release()
		op.last = nil
	}
	if op.inEv != nil {
		op.inEv.Release()
		op.inEv = nil
	}
}

// releaseDeps drops the events the launch just enqueued waited for, but
// the invocation's last input copy, which it keeps (inEv).
func (op *enqOp) releaseDeps() {
	d := op.d
	for _, e := range d.deps {
		if e != op.inEv {
			e.Release()
		}
	}
	d.deps = d.deps[:0]
}

// bindInputs sets the input windows: a device ring's, or the staging slot,
// copied from the host FIFO (or filled by a peer ring, or read by the
// kernel from mapped memory).
func (op *enqOp) bindInputs() error {
	d, du, k, slot, ws := op.d, op.du, op.k, op.slot, op.ws
	for i := range du.ins {
		p := &du.ins[i]
		n := k * p.rate
		switch {
		case p.rate == 0:
			ws[i] = device.Window{Buf: du.sbufAny(d)}
		case p.ring != nil:
			g := p.ring
			ws[i] = device.Window{Buf: g.buf, Off: g.rpos[p.reader] % g.cap}
			op.rin = append(op.rin, ringWin{g: g, s: g.rpos[p.reader], e: g.rpos[p.reader] + n})
			g.rpos[p.reader] += n
		default:
			off := slot * du.G * p.rate
			ws[i] = device.Window{Buf: p.stage, Off: off}
			// only this invocation's tokens need be contiguous (a FIFO in
			// a device's pinned memory copies none into its tail then)
			win := p.up.r.TryAcquireAt(p.pending, int(n))
			if int64(len(win)) < n*p.tsize {
				return op.fail("input "+p.up.p.Name, errors.New("host FIFO window shorter than planned"))
			}
			if g := p.peer; g != nil { // the tokens are in the peer ring already
				ws[i] = device.Window{Buf: g.buf, Off: (int64(p.up.r.Position()) + int64(p.pending)) % g.tok}
				p.pending += int(n)
				continue
			}
			src := win
			if p.bounce != nil {
				nb := n * p.tsize
				src = p.bounce[off*p.tsize : off*p.tsize+nb]
				copy(src, win)
			}
			p.pending += int(n)
			p.up.ch.devCopied.Add(n * p.tsize)
			if p.mapped { // the kernel reads the slot itself
				continue
			}
			ev, err := d.wq.Write(p.stage, off*p.tsize, src)
			if err != nil {
				return op.fail("copy to device", err)
			}
			d.traceCopy(ev, false, op.u, int64(len(src)))
			d.deps = append(d.deps, ev) // the first launch waits for it
			if copiedIn(p) {
				op.inEv = ev // an earlier one is released with deps
			}
		}
	}
	return nil
}

// bindOutputs sets the output windows: a device ring's, the staging slot,
// or scratch.
func (op *enqOp) bindOutputs() {
	d, du, k, slot, ws, nin := op.d, op.du, op.k, op.slot, op.ws, op.nin
	for i := range du.outs {
		p := &du.outs[i]
		n := k * p.rate
		switch {
		case p.rate == 0:
			ws[nin+i] = device.Window{Buf: du.sbufAny(d)}
		case p.ring != nil:
			g := p.ring
			ws[nin+i] = device.Window{Buf: g.buf, Off: g.wpos % g.cap}
			op.rout = append(op.rout, ringWin{g: g, s: g.wpos, e: g.wpos + n})
			g.wpos += n
			if f := g.wpos - min(g.wpos, minReader(g)); f > g.peak {
				g.peak = f
			}
		case p.stage != nil:
			ws[nin+i] = device.Window{Buf: p.stage, Off: slot * du.G * p.rate}
		default: // unconnected output (open graph output): scratch
			ws[nin+i] = device.Window{Buf: du.sbufAny(d)}
		}
	}
}

// launch enqueues the kernel: once, or once per iteration of an iterated
// actor (passing the swap pairs by swapping, or copying, their buffers).
func (op *enqOp) launch() error {
	d, du, k, ws, nin := op.d, op.du, op.k, op.ws, op.nin
	fire := du.ak.Fire()
	rng := du.ak.Range(int(k))
	N := du.iters
	mode := d.r.opts.SwapMode
	var base []device.Window
	if N > 1 {
		base = append([]device.Window(nil), ws...)
	}
	for it := 0; it < N; it++ {
		if N > 1 {
			copy(ws, base)
			for pi, pr := range du.pairs {
				o, in := pr[0], pr[1]
				if mode == Swap || mode == "" {
					if it > 0 {
						ws[in] = device.Window{Buf: du.sbuf[pi][(it-1)%2]}
					}
					if it < N-1 {
						ws[nin+o] = device.Window{Buf: du.sbuf[pi][it%2]}
					}
				} else {
					if it > 0 {
						ws[in] = device.Window{Buf: du.sbuf[pi][0]}
					}
					if it < N-1 {
						ws[nin+o] = device.Window{Buf: du.sbuf[pi][1]}
					}
				}
			}
		}
		if err := du.ak.Bind(fire, ws); err != nil {
			return op.fail("binding", err)
		}
		if d.bat != nil {
			if op.lane >= 0 { // every launch of the invocation: Lane holds for one
				d.lb.Lane(op.lane)
			}
			d.launches++
			err := d.bat.LaunchQuiet(fire, rng, d.deps...)
			op.releaseDeps()
			if err != nil {
				return op.fail("launch", err)
			}
			continue
		}
		ev, err := d.q.Launch(fire, rng, d.deps...)
		op.releaseDeps()
		if err != nil {
			return op.fail("launch", err)
		}
		op.keep(ev)
		if N > 1 && it < N-1 && mode != Swap && mode != "" {
			for pi, pr := range du.pairs {
				nb := k * du.outs[pr[0]].rate * du.outs[pr[0]].tsize
				if mode == CopyDevice {
					ev, err := d.q.Copy(du.sbuf[pi][0], 0, du.sbuf[pi][1], 0, nb)
					if err != nil {
						return op.fail("copy-device", err)
					}
					op.keep(ev)
					continue
				}
				// copy-host: to the host, copy there, back to the device.
				h := du.host[pi][:nb]
				ev, err := d.q.Read(h, du.sbuf[pi][1], 0)
				if err != nil {
					return op.fail("copy-host read", err)
				}
				err = ev.Wait(d.r.ctx)
				ev.Release()
				if err != nil {
					return op.fail("copy-host read", err)
				}
				tmp := d.hostTmp(int(nb))
				copy(tmp, h)
				if ev, err = d.q.Write(du.sbuf[pi][0], 0, tmp); err != nil {
					return op.fail("copy-host write", err)
				}
				op.keep(ev)
			}
		}
	}
	return nil
}

// readOutputs enqueues the copies of the staged outputs to the host FIFOs
// (or to peer rings) after the last kernel; in a round they wait for the
// round's batch.
func (op *enqOp) readOutputs() error {
	d, du, k, slot := op.d, op.du, op.k, op.slot
	kev := op.last // the invocation's last kernel (or copy) on the compute queue
	for i := range du.outs {
		p := &du.outs[i]
		if p.ring != nil || p.stage == nil || p.rate == 0 {
			continue
		}
		n := k * p.rate
		win := p.up.w.TryAcquireAt(p.pending, int(n))
		if int64(len(win)) < n*p.tsize {
			return op.fail("output "+p.up.p.Name, errors.New("host FIFO room shorter than planned"))
		}
		if g := p.peer; g != nil { // copied device to device, after the kernel
			rd := devRead{peer: g.buf, peerOff: (int64(p.up.w.Position()) + int64(p.pending)) % g.tok * p.tsize,
				stage: p.stage, off: slot * du.G * p.rate * p.tsize, n: n * p.tsize}
			p.pending += int(n)
			p.up.fr.chans[0].devCopied.Add(n * p.tsize)
			if d.bat != nil {
				d.reads = append(d.reads, rd)
				continue
			}
			ev, err := d.cq.(device.PeerCopier).CopyPeer(rd.peer, rd.peerOff, rd.stage, rd.off, rd.n, kev)
			if err != nil {
				return op.fail("copy to "+g.buf.Device().Info().ID, err)
			}
			op.reads = append(op.reads, ev)
			continue
		}
		// on the copy queue, after the last kernel: the next invocation's
		// kernels overlap this copy
		dst := win
		if p.bounce != nil { // copied into the FIFO when the invocation retires
			o := slot * du.G * p.rate * p.tsize
			dst = p.bounce[o : o+n*p.tsize]
		}
		p.pending += int(n)
		for _, c := range p.up.fr.chans {
			c.devCopied.Add(n * p.tsize)
		}
		if p.mapped { // the kernel wrote the slot itself: copied at retire
			continue
		}
		if d.bat != nil { // after the round's batch
			d.reads = append(d.reads, devRead{dst: dst, stage: p.stage, off: slot * du.G * p.rate * p.tsize})
			continue
		}
		ev, err := d.read(dst, p.stage, slot*du.G*p.rate*p.tsize, kev)
		if err != nil {
			return op.fail("copy to host", err)
		}
		d.traceCopy(ev, true, op.u, int64(len(dst)))
		op.reads = append(op.reads, ev)
	}
	if len(op.reads) > 0 {
		// the invocation is done when its last read is (the reads are in
		// order on the copy queue, after the kernels)
		op.keep(op.reads[len(op.reads)-1])
		op.reads = op.reads[:len(op.reads)-1]
	}
	return nil
}

// commit records the invocation as in flight.
func (op *enqOp) commit() {
	d, u, du, k := op.d, op.u, op.du, op.k
	inv := &invocation{u: u, slot: op.slot, base: u.next, k: k, ev: op.last, tEnq: d.c.now(), inEv: op.inEv}
	op.last, op.inEv = nil, nil
	if d.bat != nil {
		for i := len(d.reads) - 1; i >= 0 && d.reads[i].inv == nil; i-- {
			d.reads[i].inv = inv
		}
		d.round = append(d.round, inv)
	}
	d.inflight = append(d.inflight, inv)
	d.inflightLive.Store(int64(len(d.inflight)))
	du.inflight++
	du.seq++
	u.next += k
}

// hostTmp returns a host buffer of n bytes for copy-host.
func (d *devRunner) hostTmp(n int) []byte {
	if cap(d.tmp) < n {
		d.tmp = make([]byte, n)
	}
	return d.tmp[:n]
}

func minReader(g *devRing) int64 {
	m := g.wpos
	for i, p := range g.rpos {
		if !g.done[i] && p < m {
			m = p
		}
	}
	return m
}

// sbufAny returns some buffer of the device for a port that moves no
// tokens (rate 0) or feeds no channel.
func (du *devUnit) sbufAny(d *devRunner) device.Buffer {
	for _, ps := range [][]devPort{du.ins, du.outs} {
		for _, p := range ps {
			if p.ring != nil {
				return p.ring.buf
			}
			if p.stage != nil {
				return p.stage
			}
		}
	}
	if len(du.sbuf) > 0 {
		return du.sbuf[0][0]
	}
	return du.scratch
}
