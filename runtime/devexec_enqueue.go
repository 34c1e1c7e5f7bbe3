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
	du := u.du
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
	slot := du.seq % int64(d.depth)
	ws := du.ws
	nin := len(du.ins)
	fail := func(what string, err error) (bool, error) {
		return false, fmt.Errorf("actor %s firings %d–%d on %s: %s: %w", u.name, u.next, u.next+k-1, d.id, what, err)
	}
	var last device.Event
	keep := func(ev device.Event) {
		if last != nil {
			last.Release()
		}
		last = ev
	}
	defer func() {
		if last != nil {
			last.Release()
		}
	}()
	for i := range du.ins {
		p := &du.ins[i]
		n := k * p.rate
		switch {
		case p.rate == 0:
			ws[i] = device.Window{Buf: du.sbufAny(d)}
		case p.ring != nil:
			g := p.ring
			ws[i] = device.Window{Buf: g.buf, Off: g.rpos[p.reader] % g.cap}
			g.rpos[p.reader] += n
		default:
			off := slot * du.G * p.rate
			ws[i] = device.Window{Buf: p.stage, Off: off}
			// only this invocation's tokens need be contiguous (a FIFO in
			// a device's pinned memory copies none into its tail then)
			win := p.up.r.TryAcquireAt(p.pending, int(n))
			if int64(len(win)) < n*p.tsize {
				return fail("input "+p.up.p.Name, errors.New("host FIFO window shorter than planned"))
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
			ev, err := d.cq.Write(p.stage, off*p.tsize, src)
			if err != nil {
				return fail("copy to device", err)
			}
			d.deps = append(d.deps, ev) // the first launch waits for it
		}
	}
	for i := range du.outs {
		p := &du.outs[i]
		n := k * p.rate
		switch {
		case p.rate == 0:
			ws[nin+i] = device.Window{Buf: du.sbufAny(d)}
		case p.ring != nil:
			g := p.ring
			ws[nin+i] = device.Window{Buf: g.buf, Off: g.wpos % g.cap}
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
	// In a round, kernel actors of different lanes (no device ring joins
	// them) go to different streams and may run concurrently (CUDA).
	if d.bat != nil && d.lanes {
		d.laner.Lane(du.lane)
	}
	// The launches: one, or one per iteration of an iterated actor.
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
			return fail("binding", err)
		}
		if d.bat != nil {
			err := d.bat.LaunchQuiet(fire, rng, d.deps...)
			for _, e := range d.deps {
				e.Release()
			}
			d.deps = d.deps[:0]
			if err != nil {
				return fail("launch", err)
			}
			continue
		}
		ev, err := d.q.Launch(fire, rng, d.deps...)
		for _, e := range d.deps {
			e.Release()
		}
		d.deps = d.deps[:0]
		if err != nil {
			return fail("launch", err)
		}
		keep(ev)
		if N > 1 && it < N-1 && mode != Swap && mode != "" {
			for pi, pr := range du.pairs {
				nb := k * du.outs[pr[0]].rate * du.outs[pr[0]].tsize
				if mode == CopyDevice {
					ev, err := d.q.Copy(du.sbuf[pi][0], 0, du.sbuf[pi][1], 0, nb)
					if err != nil {
						return fail("copy-device", err)
					}
					keep(ev)
					continue
				}
				// copy-host: to the host, copy there, back to the device.
				h := du.host[pi][:nb]
				ev, err := d.q.Read(h, du.sbuf[pi][1], 0)
				if err != nil {
					return fail("copy-host read", err)
				}
				err = ev.Wait(d.r.ctx)
				ev.Release()
				if err != nil {
					return fail("copy-host read", err)
				}
				tmp := d.hostTmp(int(nb))
				copy(tmp, h)
				if ev, err = d.q.Write(du.sbuf[pi][0], 0, tmp); err != nil {
					return fail("copy-host write", err)
				}
				keep(ev)
			}
		}
	}
	kev := last // the invocation's last kernel (or copy) on the compute queue
	var reads []device.Event
	defer func() {
		for _, e := range reads {
			e.Release()
		}
	}()
	for i := range du.outs {
		p := &du.outs[i]
		if p.ring != nil || p.stage == nil || p.rate == 0 {
			continue
		}
		n := k * p.rate
		win := p.up.w.TryAcquireAt(p.pending, int(n))
		if int64(len(win)) < n*p.tsize {
			return fail("output "+p.up.p.Name, errors.New("host FIFO room shorter than planned"))
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
				return fail("copy to "+g.buf.Device().Info().ID, err)
			}
			reads = append(reads, ev)
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
		ev, err := d.cq.Read(dst, p.stage, slot*du.G*p.rate*p.tsize, kev)
		if err != nil {
			return fail("copy to host", err)
		}
		reads = append(reads, ev)
	}
	if len(reads) > 0 {
		// the invocation is done when its last read is (the reads are in
		// order on the copy queue, after the kernels)
		keep(reads[len(reads)-1])
		reads = reads[:len(reads)-1]
	}
	inv := &invocation{u: u, slot: slot, base: u.next, k: k, ev: last, tEnq: d.c.now()}
	last = nil
	if d.bat != nil {
		for i := len(d.reads) - 1; i >= 0 && d.reads[i].inv == nil; i-- {
			d.reads[i].inv = inv
		}
		d.round = append(d.round, inv)
	}
	d.inflight = append(d.inflight, inv)
	du.inflight++
	du.seq++
	u.next += k
	return true, nil
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
