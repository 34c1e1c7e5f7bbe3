package runtime

import (
	"fmt"
	"unsafe"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// devRing is a channel between two kernel actors of one device: one ring
// buffer in the device's memory. Its fill levels are kept on the host by
// the device's manager goroutine, which alone touches it while the run
// goes: since every command of the device goes to one in-order queue,
// tokens count as written when the producing kernel is enqueued and as
// free when the consuming kernel is, so kernels are enqueued back to back.
type devRing struct {
	buf    device.Buffer
	cap    int64 // tokens; a multiple of every rate on the ring
	tsize  int64
	wpos   int64   // tokens enqueued for writing
	rpos   []int64 // per reader: tokens enqueued for reading
	done   []bool  // per reader: consumer finished
	closed bool    // the producer will enqueue no more
	peak   int64
	prod   *unit
	chans  []*chanRec
	log    roundLog // its windows in the open round (spreading)
}

func (g *devRing) avail(i int) int64 { return g.wpos - g.rpos[i] }

func (g *devRing) room() int64 {
	m := g.wpos
	for i, p := range g.rpos {
		if !g.done[i] && p < m {
			m = p
		}
	}
	return g.cap - (g.wpos - m)
}

func (g *devRing) abandoned() bool {
	for _, d := range g.done {
		if !d {
			return false
		}
	}
	return true
}

// peerRing is the ring, in the consumer's device memory, of a channel
// between kernel actors of two devices of one backend whose queues copy
// between devices (device.PeerCopier): the producer's invocations are
// copied from its staging slots straight into it, the consumer's kernels
// read it in place. The channel's host FIFO keeps the counts (room, fill,
// end of stream) that the two devices' managers share, but no data: token
// position p lies at p mod tok in buf, and no window crosses the end.
type peerRing struct {
	buf    device.Buffer
	tok    int64 // tokens; the FIFO's ring, a multiple of both rates
	direct bool  // the devices access each other's memory (not driver-staged)
}

// peerable returns the consumer of a kernel actor's output when the
// channel can be a peer ring: one channel, no initial tokens, its
// consumer a kernel actor of another device of the same backend, and the
// producer's device copying to it (device.PeerCopier).
func peerable(u *unit, op *uport, cs []*graph.Channel, initial int, by map[*graph.Actor]*unit) *unit {
	du := u.kernel()
	if u.r.opts.tune.noPeer || len(cs) != 1 || initial != 0 || du == nil {
		return nil
	}
	cu := by[cs[0].To.Actor]
	if cu == nil || cu.kernel() == nil || cu.kernel().drv == du.drv {
		return nil
	}
	if du.drv.dev.Info().Backend != cu.kernel().drv.dev.Info().Backend {
		return nil
	}
	if _, ok := du.drv.cq.(device.PeerCopier); !ok {
		return nil
	}
	return cu
}

// newPeerRing allocates the peer ring of channel c (FIFO f) from u to cu
// on cu's device, enabling direct access between the two devices where
// they allow it; nil (host staging then) when the FIFO's ring is not a
// multiple of both rates.
func (r *run) newPeerRing(u, cu *unit, op *uport, c *graph.Channel, f *fifo.FIFO) (*peerRing, error) {
	tok := int64(f.RingBytes() / f.TokenSize())
	if tok%lcm64(max(op.sum, 1), int64(max(c.To.Rate.Sum(), 1))) != 0 {
		return nil, nil
	}
	direct := false
	to := cu.kernel().drv
	if pe, ok := u.kernel().drv.dev.(device.PeerEnabler); ok {
		var err error
		if direct, err = pe.EnablePeer(to.dev); err != nil {
			return nil, fmt.Errorf("runtime: channel %s: %w", c.Name, err)
		}
	}
	b, err := to.dev.Alloc(tok*int64(f.TokenSize()), device.ReadWrite)
	if err != nil {
		return nil, fmt.Errorf("runtime: channel %s: ring on %s: %w", c.Name, to.id, err)
	}
	r.devBufs = append(r.devBufs, b)
	return &peerRing{buf: b, tok: tok, direct: direct}, nil
}

// mappedMax is the largest invocation's tokens of one host port (bytes)
// staged through mapped host memory (device.HostMapper) rather than by
// copy commands. Larger ones keep DMA copies overlapped with the kernels:
// a kernel reading or writing megabytes over the bus would run at the
// bus's speed itself (the limit was chosen, not measured: the measured
// case is a 1 KiB output per invocation).
const mappedMax = 64 << 10

// newRing creates the device ring of a kernel actor's output whose
// consumers all run on the same device. Its capacity is the channel's,
// rounded up to a multiple of every rate on it, so that no firing's window
// wraps around the end (an invocation that would is split at the end).
func (r *run) newRing(u *unit, op *uport, cs []*graph.Channel, by map[*graph.Actor]*unit, capTok int) (*devRing, error) {
	l := int64(op.sum)
	for _, c := range cs {
		l = lcm64(l, int64(c.To.Rate.Sum()))
	}
	// room for two invocations, or for a round spread over lanes (one
	// more than its passes, so that its writes need not wait for its reads)
	m := int64(2)
	du := u.kernel()
	if du.drv.maySpread() {
		m = max(m, int64(du.drv.depth/2+1))
	}
	need := int64(cs[0].Initial) + m*du.G*int64(op.sum)
	for _, c := range cs {
		need = max(need, int64(cs[0].Initial)+m*by[c.To.Actor].kernel().G*int64(c.To.Rate.Sum()))
	}
	n := int64(capTok)
	if cs[0].Capacity <= 0 {
		n = max(n, need)
	}
	n = (n + l - 1) / l * l
	g := &devRing{cap: n, tsize: int64(op.tsize), wpos: int64(cs[0].Initial), prod: u,
		rpos: make([]int64, len(cs)), done: make([]bool, len(cs)), peak: int64(cs[0].Initial)}
	b, err := du.drv.dev.Alloc(n*g.tsize, device.ReadWrite)
	if err != nil {
		return nil, fmt.Errorf("runtime: channel %s (ring of %d tokens on %s): %w", cs[0].Name, n, du.drv.id, err)
	}
	g.buf = b
	r.devBufs = append(r.devBufs, b)
	return g, nil
}

func lcm64(a, b int64) int64 {
	if a <= 0 {
		return max(b, 1)
	}
	if b <= 0 {
		return a
	}
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// onDevice reports whether every consumer of an output of kernel actor u
// runs on u's device, so the channel can be a device ring.
func ringable(u *unit, op *uport, cs []*graph.Channel, by map[*graph.Actor]*unit) bool {
	du := u.kernel()
	if du == nil || op.sum == 0 || cs[0].Initial%int(op.sum) != 0 {
		return false
	}
	for _, c := range cs {
		cu := by[c.To.Actor].kernel()
		if cu == nil || cu.drv != du.drv || c.Initial != cs[0].Initial {
			return false
		}
	}
	return true
}

// fifoMemory returns pinned host memory of a device for the FIFO of a
// kernel actor's host channel (single reader) when that device copies
// between host FIFOs and its memory by DMA only from memory it allocated
// itself (an OpenCL GPU: not a device.HostPinner, not a CPU device or one
// sharing host memory), or nil. Its ring is the capacity rounded up to a
// multiple of every window size the device's invocations and the rates
// use, so that windows do not cross the ring's end (see fifo
// Options.Memory); the memory is released with the run's devices.
func (r *run) fifoMemory(u *unit, op *uport, cs []*graph.Channel, by map[*graph.Actor]*unit, capTok int) []byte {
	if len(cs) != 1 || op.tsize <= 0 {
		return nil
	}
	cu := by[cs[0].To.Actor]
	forceFIFOMemory := r.opts.tune.fifoMemory
	var d *devRunner
	l := int64(1)
	for _, x := range []*unit{u, cu} {
		rate := int64(op.sum)
		if x == cu {
			rate = int64(cs[0].To.Rate.Sum())
		}
		xd := x.kernel()
		if xd == nil {
			l = lcm64(l, max(rate, 1))
			continue
		}
		l = lcm64(l, max(rate*xd.G, 1))
		if d != nil {
			continue
		}
		in := xd.drv.dev.Info()
		if _, ok := xd.drv.dev.(device.HostPinner); ok && !forceFIFOMemory {
			continue
		}
		if !forceFIFOMemory && (in.Kind == device.CPU || in.HostUnified) {
			continue
		}
		d = xd.drv
	}
	if d == nil {
		return nil
	}
	ring := (int64(capTok) + l - 1) / l * l
	if ring > 4*int64(capTok) { // odd rates: no alignment worth its memory
		ring = int64(capTok)
	}
	n := (ring + int64(capTok)) * int64(op.tsize)
	if n < pinMin && !forceFIFOMemory {
		return nil
	}
	h, err := d.dev.AllocHost(n)
	if err != nil {
		d.pinErr = err
		return nil
	}
	r.hostBufs = append(r.hostBufs, h)
	return h.Bytes()[:n]
}

// pinMin is the smallest FIFO worth pinning for a device's copies.
const pinMin = 64 << 10

// fifoPinners returns the devices of the kernel actors among a FIFO's
// producer u and consumers that can pin host memory (device.HostPinner).
func fifoPinners(u *unit, cs []*graph.Channel, by map[*graph.Actor]*unit) []*devRunner {
	var ds []*devRunner
	add := func(x *unit) {
		if x == nil || x.kernel() == nil {
			return
		}
		xd := x.kernel().drv
		if _, ok := xd.dev.(device.HostPinner); !ok {
			return
		}
		for _, d := range ds {
			if d == xd {
				return
			}
		}
		ds = append(ds, xd)
	}
	add(u)
	for _, c := range cs {
		add(by[c.To.Actor])
	}
	return ds
}

// pinFIFO page-locks the memory of a host FIFO (both mappings of a
// mirrored ring, or the portable buffer: its ring of RingBytes followed by
// a tail of Capacity tokens) for the devices
// that copy to or from it, so their staging copies run by DMA without the
// driver's bounce buffer (and device→host copies do not block the
// manager). Failure only costs speed: the copies then go as before.
func (r *run) pinFIFO(f *fifo.FIFO, initial int, ds []*devRunner) {
	if len(ds) == 0 {
		return
	}
	n := f.RingBytes() + f.Capacity()*f.TokenSize()
	if f.Mirrored() { // both mappings of the ring
		n = 2 * f.RingBytes()
	}
	if n < pinMin {
		return
	}
	var w []byte
	if initial > 0 {
		w = f.Reader(0).TryAcquire(1) // position 0: offset 0
	} else {
		w = f.Writer().TryAcquire(1) // position 0: offset 0
	}
	if len(w) == 0 {
		return
	}
	mem := unsafe.Slice(&w[0], n)
	for _, d := range ds {
		unpin, err := d.dev.(device.HostPinner).PinHost(mem)
		if err != nil {
			d.pinErr = err
			continue
		}
		r.unpins = append(r.unpins, unpin)
		r.pinned[f] = true
		break // pinned memory is pinned for every device (portable)
	}
}
