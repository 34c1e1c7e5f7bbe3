package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// DeviceMode says how the runtime-manager feeds a device's queue.
type DeviceMode string

const (
	// EnqueueAhead (the default) enqueues invocations while the host-side
	// fill levels say their data and room are there, up to
	// Options.DeviceDepth invocations of each kernel actor in flight
	// (seed 002 §VII: the runtime-manager).
	EnqueueAhead DeviceMode = "enqueue-ahead"
	// Callback enqueues an invocation only after the device's previous one
	// completed: the naive baseline of seed 002 Fig. 9 (a completion
	// callback that enqueues the next kernel).
	Callback DeviceMode = "callback"
)

// ParseDeviceMode reads "enqueue-ahead" or "callback" ("" is enqueue-ahead).
func ParseDeviceMode(s string) (DeviceMode, error) {
	switch DeviceMode(s) {
	case "", EnqueueAhead:
		return EnqueueAhead, nil
	case Callback:
		return Callback, nil
	}
	return "", fmt.Errorf("device mode %q: expected enqueue-ahead or callback", s)
}

// SwapMode says how an iterated kernel actor's swap pairs pass iteration
// k's output to iteration k+1 (seed 000 §5.2).
type SwapMode string

const (
	// Swap (the default) exchanges the pair's two device buffers between
	// iterations: no copy at all.
	Swap SwapMode = "swap"
	// CopyDevice copies the output buffer to the input buffer on the device
	// after every iteration (clEnqueueCopyBuffer).
	CopyDevice SwapMode = "copy-device"
	// CopyHost reads the output buffer to the host, copies it there and
	// writes it back to the input buffer after every iteration.
	CopyHost SwapMode = "copy-host"
)

// ParseSwapMode reads "swap", "copy-device" or "copy-host" ("" is swap).
func ParseSwapMode(s string) (SwapMode, error) {
	switch SwapMode(s) {
	case "", Swap:
		return Swap, nil
	case CopyDevice, CopyHost:
		return SwapMode(s), nil
	}
	return "", fmt.Errorf("swap mode %q: expected swap, copy-device or copy-host", s)
}

// modeDevice: a kernel actor run by its device's runtime-manager.
const modeDevice = 3

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

// devNoPeer turns peer channels off (benchmarks' A/B comparison): such
// channels are then staged through host memory.
var devNoPeer bool

// peerable returns the consumer of a kernel actor's output when the
// channel can be a peer ring: one channel, no initial tokens, its
// consumer a kernel actor of another device of the same backend, and the
// producer's device copying to it (device.PeerCopier).
func peerable(u *unit, op *uport, cs []*graph.Channel, initial int, by map[*graph.Actor]*unit) *unit {
	if devNoPeer || len(cs) != 1 || initial != 0 || u.mode != modeDevice || u.drv == nil {
		return nil
	}
	cu := by[cs[0].To.Actor]
	if cu == nil || cu.mode != modeDevice || cu.drv == nil || cu.drv == u.drv {
		return nil
	}
	if u.drv.dev.Info().Backend != cu.drv.dev.Info().Backend {
		return nil
	}
	if _, ok := u.drv.cq.(device.PeerCopier); !ok {
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
	if pe, ok := u.drv.dev.(device.PeerEnabler); ok {
		var err error
		if direct, err = pe.EnablePeer(cu.drv.dev); err != nil {
			return nil, fmt.Errorf("runtime: channel %s: %w", c.Name, err)
		}
	}
	b, err := cu.drv.dev.Alloc(tok*int64(f.TokenSize()), device.ReadWrite)
	if err != nil {
		return nil, fmt.Errorf("runtime: channel %s: ring on %s: %w", c.Name, cu.drv.id, err)
	}
	r.devBufs = append(r.devBufs, b)
	return &peerRing{buf: b, tok: tok, direct: direct}, nil
}

// devPort is a kernel actor's port: on a device ring, or on a host FIFO
// staged through device memory.
type devPort struct {
	up      *uport
	ring    *devRing
	reader  int
	stage   device.Buffer // host ports: Depth slots of G·rate tokens
	bounce  []byte        // host ports of an unpinned FIFO on a GPU: pinned slots like stage's
	hbuf    device.HostBuffer
	mapped  bool      // stage is mapped host memory (bounce its bytes): no copy commands
	peer    *peerRing // a channel between devices: its ring on the consumer's device
	pending int       // host ports: tokens acquired by invocations in flight
	rate    int64
	tsize   int64
}

// devUnit is the device side of a kernel actor.
type devUnit struct {
	ak       device.ActorKernel
	G        int64
	ins      []devPort
	outs     []devPort
	ws       []device.Window
	inflight int
	seq      int64
	stopped  bool
	round    int64 // the manager's round that enqueued this unit last
	inRound  int   // invocations of the unit in that round
	perRound int   // the most it may have in one round (devRunner.perRound)
	lane     int   // its stream in a round (laneUnits)
	iters    int
	pairs    [][2]int           // (output index, input index)
	sbuf     [][2]device.Buffer // per pair: two buffers of G·rate tokens
	host     [][]byte           // copy-host: per pair, a host buffer
	scratch  device.Buffer      // for ports that move nothing
}

// invocation is G or fewer firings of one kernel actor in flight.
type invocation struct {
	u    *unit
	slot int64 // staging slot (seq mod depth)
	base int64
	k    int64
	ev   device.Event
	tEnq int64
}

// devRunner is the runtime-manager of one device: one in-order queue, the
// kernel actors mapped there, and the goroutine that enqueues their
// invocations and observes completions by polling events.
type devRunner struct {
	r        *run
	id       string
	dev      device.Device
	q        device.Queue // kernels, device-ring and swap traffic, in order
	cq       device.Queue // copies between host FIFOs and staging slots
	deps     []device.Event
	units    []*unit
	wakeC    chan struct{}
	idle     atomic.Bool
	inflight []*invocation
	depth    int
	c        *execCtx
	lastEnd  int64
	tmp      []byte // copy-host
	pinErr   error  // why a host FIFO could not be pinned (speed only)
	spin     int64  // ns to poll without sleeping (pollSpin, pollSpinCPU)

	// Rounds (when q is a device.Batcher): each pass enqueues one
	// invocation of every unit that can fire, in topological order, as one
	// batch — launches without events, replayed as a CUDA Graph when the
	// round recurs — and all of them complete with the batch's event.
	bat      device.Batcher
	replay   bool
	round    []*invocation          // invocations of the open round
	reads    []devRead              // their host outputs' reads, issued after the batch
	laner    interface{ Lane(int) } // puts a round's next launch on a stream (lane)
	lanes    bool                   // the device's kernel actors form several lanes
	lastDone device.Event           // the latest event seen complete
	roundNo  int64                  // rounds begun
	passes   int                    // passes over the units in a round: the largest perRound
}

// devNoFork puts every launch of a round on one stream (benchmarks' A/B
// comparison of lanes).
var devNoFork bool

// devLanes is the number of lanes the runtime deals independent kernel
// actors to (the CUDA queue has cuda.MaxLanes = 4).
const devLanes = 4

// devRoundPer, when > 0, fixes the invocations per unit in a round
// (benchmarks' A/B comparison); 0 lets perRound choose.
var devRoundPer int

// perRound is the most invocations of kernel actor u in one round: half
// the invocations a unit may have in flight (at least one), so that at
// least two rounds are in flight, one running while the host enqueues the
// next, and a round's fixed costs (a CUDA Graph launch, its event and its
// queries, ~10 µs on an H100; an OpenCL marker and its queries) are shared
// by that many invocations. On a device without graph replay (OpenCL,
// NoGraphs) an actor fed by a host FIFO takes one per round: the round's
// one event would hold the earlier invocations' input windows until the
// last completes, and the Go producer waits for that room (NVIDIA OpenCL
// host → device: 0.88–0.91 of the pinned write with one per round,
// 0.73–0.78 with two; with graphs the CUDA channel lost nothing).
func (d *devRunner) perRound(u *unit) int {
	if devRoundPer > 0 {
		return devRoundPer
	}
	if _, graphs := d.q.(interface{ Graphs() int }); !graphs || !d.replay {
		for i := range u.du.ins {
			if p := &u.du.ins[i]; p.ring == nil && p.rate > 0 {
				return 1
			}
		}
	}
	return max(1, d.depth/2)
}

// mappedMax is the largest invocation's tokens of one host port (bytes)
// staged through mapped host memory (device.HostMapper) rather than by
// copy commands. Larger ones keep DMA copies overlapped with the kernels:
// a kernel reading or writing megabytes over the bus would run at the
// bus's speed itself (the limit was chosen, not measured: the measured
// case is a 1 KiB output per invocation).
const mappedMax = 64 << 10

// devNoMapped turns mapped staging off (benchmarks' A/B comparison).
var devNoMapped bool

// devRead is a host output's read of a round's invocation, issued on the
// copy queue once the round's batch has been enqueued.
type devRead struct {
	inv   *invocation
	dst   []byte
	stage device.Buffer
	off   int64
	// a copy into a peer ring instead: n bytes to peerOff of peer
	peer       device.Buffer
	peerOff, n int64
}

// sharedEvent is one event shared by the invocations of a round: released
// when the last of them is.
type sharedEvent struct {
	device.Event
	refs int
}

func (s *sharedEvent) Release() {
	if s.refs--; s.refs == 0 {
		s.Event.Release()
	}
}

func (d *devRunner) wake() {
	select {
	case d.wakeC <- struct{}{}:
	default:
	}
}

// openDevice returns the runner of the device named id, opening it once.
func (r *run) openDevice(ctx context.Context, id string) (*devRunner, error) {
	if d, ok := r.devByName[id]; ok {
		return d, nil
	}
	dev, err := device.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	key := dev.Info().ID
	if d, ok := r.devByID[key]; ok {
		_ = dev.Close()
		r.devByName[id] = d
		return d, nil
	}
	q, err := dev.NewQueue()
	if err != nil {
		_ = dev.Close()
		return nil, fmt.Errorf("device %s: queue: %w", key, err)
	}
	cq, err := dev.NewQueue()
	if err != nil {
		_ = q.Release()
		_ = dev.Close()
		return nil, fmt.Errorf("device %s: copy queue: %w", key, err)
	}
	depth := r.opts.DeviceDepth
	if depth <= 0 {
		depth = maxAutoDepth // lowered by setupDevice from the staging sizes
	}
	if r.opts.DeviceMode == Callback {
		depth = 1
	}
	d := &devRunner{r: r, id: key, dev: dev, q: q, cq: cq, wakeC: make(chan struct{}, 1), depth: depth, spin: pollSpin}
	if in := dev.Info(); in.Kind == device.CPU || in.HostUnified {
		d.spin = pollSpinCPU
	}
	r.devByName[id] = d
	r.devByID[key] = d
	r.devs = append(r.devs, d)
	return d, nil
}

// maxAutoDepth is the deepest default DeviceDepth (autoDepth).
const maxAutoDepth = 16

// autoDepth is the default number of invocations of a kernel actor in
// flight for the largest staging slot (one invocation's tokens of one
// port) of a device's kernel actors: 4 for slots over 1 MiB (enough to
// keep a device busy while the host enqueues), deeper for smaller ones,
// whose invocations take the device a few µs each, so that enqueueing runs
// far enough ahead of a round's latency (a chain of ten 1 KiB actors takes
// 55 µs per iteration at depth 4 and 32 µs at 16 on an H100).
func autoDepth(slot int64) int {
	switch {
	case slot <= 64<<10:
		return maxAutoDepth
	case slot <= 1<<20:
		return 8
	}
	return 4
}

// isHostDevice reports whether a placement's device is the CPU runtime.
func isHostDevice(s string) bool {
	switch strings.ToLower(s) {
	case "", "cpu", "cpu:0", "host":
		return true
	}
	return false
}

// setupDevice makes u a kernel actor: it opens pl's device, picks the
// kernel implementation and compiles it there.
func (r *run) setupDevice(ctx context.Context, u *unit, pl *graph.Placement) error {
	a := u.a
	if isHostDevice(pl.Device) {
		return fmt.Errorf("runtime: actor %s is mapped with implementation %q on device %q: expected an OpenCL or CUDA device for a kernel implementation (e.g. device: opencl)", a.Name, pl.Impl, pl.Device)
	}
	if a.Dynamic() {
		return fmt.Errorf("runtime: actor %s has dynamic-rate ports: a kernel actor needs fixed (SDF) rates", a.Name)
	}
	if pl.Replicas > 1 {
		return fmt.Errorf("runtime: actor %s on device %s asks for %d replicas: a kernel actor runs G firings per invocation instead (set work_groups)", a.Name, pl.Device, pl.Replicas)
	}
	var kinds []string
	hasKernel := false
	for _, x := range a.Impls {
		kinds = append(kinds, string(x.Kind))
		hasKernel = hasKernel || x.Kind == graph.ImplOpenCL || x.Kind == graph.ImplCUDA
	}
	if !hasKernel {
		return fmt.Errorf("runtime: actor %s is mapped to device %q but has no kernel implementation (has: %s): expected an opencl or cuda kernel, or device cpu", a.Name, pl.Device, strings.Join(kinds, ", "))
	}
	d, err := r.openDevice(ctx, pl.Device)
	if err != nil {
		return fmt.Errorf("runtime: actor %s: %w", a.Name, err)
	}
	kind := pl.Impl
	if kind == "" {
		kind = graph.ImplKind(d.dev.Info().Backend)
	}
	im, ok := a.Impl(kind)
	if !ok {
		return fmt.Errorf("runtime: actor %s is mapped to %s but has no %s implementation (has: %s)", a.Name, d.id, kind, strings.Join(kinds, ", "))
	}
	comp, ok := d.dev.(device.ActorCompiler)
	if !ok {
		return fmt.Errorf("runtime: actor %s: device %s does not run kernel actors: %w", a.Name, d.id, device.ErrUnsupported)
	}
	ak, err := comp.CompileActor(ctx, a, pl, im)
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	du := &devUnit{ak: ak, G: int64(ak.Groups()), iters: max(1, a.Iterations)}
	if r.opts.DeviceDepth <= 0 && r.opts.DeviceMode != Callback {
		slot := int64(0)
		for _, ps := range [][]*graph.Port{a.Inputs, a.Outputs} {
			for _, p := range ps {
				slot = max(slot, du.G*int64(p.Rate.Sum())*int64(p.Type.Size))
			}
		}
		d.depth = min(d.depth, autoDepth(slot))
	}
	u.mode = modeDevice
	u.drv = d
	u.du = du
	u.impl = nil
	d.units = append(d.units, u)
	return nil
}

// placeDevice allocates a kernel actor's device memory once its channels
// are known: staging slots for host ports, swap buffers.
func (r *run) placeDevice(u *unit) error {
	du, d := u.du, u.drv
	a := u.a
	G := du.G
	port := func(up *uport) devPort {
		p := devPort{up: up, ring: up.ring, rate: int64(up.sum), tsize: int64(up.tsize)}
		if up.ch != nil {
			p.peer = up.ch.peer
		} else if up.fr != nil && len(up.fr.chans) == 1 {
			p.peer = up.fr.chans[0].peer
		}
		return p
	}
	for i := range u.ins {
		du.ins = append(du.ins, port(&u.ins[i]))
		if u.ins[i].ring != nil {
			du.ins[i].reader = u.ins[i].ch.reader
		}
	}
	for i := range u.outs {
		du.outs = append(du.outs, port(&u.outs[i]))
	}
	alloc := func(what string, n int64) (device.Buffer, error) {
		b, err := d.dev.Alloc(max(n, 1), device.ReadWrite)
		if err != nil {
			return nil, fmt.Errorf("runtime: actor %s: %s: %w", a.Name, what, err)
		}
		r.devBufs = append(r.devBufs, b)
		return b, nil
	}
	var err error
	for _, ps := range [][]devPort{du.ins, du.outs} {
		for i := range ps {
			p := &ps[i]
			if p.ring != nil || p.rate == 0 || (p.up.r == nil && p.up.w == nil) {
				continue
			}
			slots := int64(d.depth) * G * p.rate * p.tsize
			if p.peer != nil {
				if p.up.r != nil { // the kernels read the peer ring in place
					continue
				}
				// outputs are copied from device staging slots
				if p.stage, err = alloc("staging buffer of port "+p.up.p.Name, slots); err != nil {
					return err
				}
				continue
			}
			// Small invocations stage through host memory the kernels
			// address directly: the host copies between it and the FIFO,
			// and no copy command (with its event and cross-queue wait)
			// goes to the device per invocation.
			if hm, ok := d.dev.(device.HostMapper); ok && G*p.rate*p.tsize <= mappedMax && !devNoMapped {
				if m, err := hm.AllocMapped(slots); err == nil {
					r.devBufs = append(r.devBufs, m)
					p.stage, p.bounce, p.mapped = m, m.Bytes(), true
					continue
				}
			}
			if p.stage, err = alloc("staging buffer of port "+p.up.p.Name, slots); err != nil {
				return err
			}
			// A FIFO a GPU could not pin is copied through pinned bounce
			// slots: a copy from pageable memory would go through the
			// driver's bounce buffer, and a CUDA read into pageable memory
			// would block the manager until the device is idle.
			var f *fifo.FIFO
			if p.up.r != nil {
				f = p.up.ch.fr.f
			} else {
				f = p.up.fr.f
			}
			if in := d.dev.Info(); !r.pinned[f] && in.Kind != device.CPU && !in.HostUnified {
				h, err := d.dev.AllocHost(int64(d.depth) * G * p.rate * p.tsize)
				if err != nil {
					return fmt.Errorf("runtime: actor %s: pinned staging of port %s: %w", a.Name, p.up.p.Name, err)
				}
				r.hostBufs = append(r.hostBufs, h)
				p.hbuf, p.bounce = h, h.Bytes()
			}
		}
	}
	if du.iters > 1 {
		for o, in := range a.Swap {
			oi, ii := -1, -1
			for i, p := range a.Outputs {
				if p.Name == o {
					oi = i
				}
			}
			for i, p := range a.Inputs {
				if p.Name == in {
					ii = i
				}
			}
			du.pairs = append(du.pairs, [2]int{oi, ii})
			n := G * du.outs[oi].rate * du.outs[oi].tsize
			var bs [2]device.Buffer
			for j := range bs {
				if bs[j], err = alloc("swap buffer of "+o, n); err != nil {
					return err
				}
			}
			du.sbuf = append(du.sbuf, bs)
			du.host = append(du.host, make([]byte, n))
		}
	}
	du.ws = make([]device.Window, len(u.ins)+len(u.outs))
	if du.scratch, err = alloc("scratch buffer", 64); err != nil {
		return err
	}
	// The outputs' initial tokens on device rings.
	for i := range u.outs {
		up := &u.outs[i]
		if g := up.ring; g != nil && g.wpos > 0 {
			data := make([]byte, g.wpos*g.tsize)
			copy(data, g.chans[0].c.InitialData)
			ev, err := d.q.Write(g.buf, 0, data)
			if err != nil {
				return fmt.Errorf("runtime: channel %s: initial tokens: %w", g.chans[0].c.Name, err)
			}
			err = ev.Wait(context.Background())
			ev.Release()
			if err != nil {
				return fmt.Errorf("runtime: channel %s: initial tokens: %w", g.chans[0].c.Name, err)
			}
		}
	}
	return nil
}

// newRing creates the device ring of a kernel actor's output whose
// consumers all run on the same device. Its capacity is the channel's,
// rounded up to a multiple of every rate on it, so that no firing's window
// wraps around the end (an invocation that would is split at the end).
func (r *run) newRing(u *unit, op *uport, cs []*graph.Channel, by map[*graph.Actor]*unit, capTok int) (*devRing, error) {
	l := int64(op.sum)
	for _, c := range cs {
		l = lcm64(l, int64(c.To.Rate.Sum()))
	}
	need := int64(cs[0].Initial) + 2*u.du.G*int64(op.sum)
	for _, c := range cs {
		need = max(need, int64(cs[0].Initial)+2*by[c.To.Actor].du.G*int64(c.To.Rate.Sum()))
	}
	n := int64(capTok)
	if cs[0].Capacity <= 0 {
		n = max(n, need)
	}
	n = (n + l - 1) / l * l
	g := &devRing{cap: n, tsize: int64(op.tsize), wpos: int64(cs[0].Initial), prod: u,
		rpos: make([]int64, len(cs)), done: make([]bool, len(cs)), peak: int64(cs[0].Initial)}
	b, err := u.drv.dev.Alloc(n*g.tsize, device.ReadWrite)
	if err != nil {
		return nil, fmt.Errorf("runtime: channel %s (ring of %d tokens on %s): %w", cs[0].Name, n, u.drv.id, err)
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
	if u.mode != modeDevice || op.sum == 0 || cs[0].Initial%int(op.sum) != 0 {
		return false
	}
	for _, c := range cs {
		cu := by[c.To.Actor]
		if cu.mode != modeDevice || cu.drv != u.drv || c.Initial != cs[0].Initial {
			return false
		}
	}
	return true
}

// forceFIFOMemory makes host FIFOs next to kernel actors live in device
// host memory on any device (tests: PoCL has no GPU).
var forceFIFOMemory bool

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
	var d *devRunner
	l := int64(1)
	for _, x := range []*unit{u, cu} {
		rate := int64(op.sum)
		if x == cu {
			rate = int64(cs[0].To.Rate.Sum())
		}
		if x.mode != modeDevice || x.drv == nil {
			l = lcm64(l, max(rate, 1))
			continue
		}
		l = lcm64(l, max(rate*x.du.G, 1))
		if d != nil {
			continue
		}
		in := x.drv.dev.Info()
		if _, ok := x.drv.dev.(device.HostPinner); ok && !forceFIFOMemory {
			continue
		}
		if !forceFIFOMemory && (in.Kind == device.CPU || in.HostUnified) {
			continue
		}
		d = x.drv
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
		if x == nil || x.mode != modeDevice || x.drv == nil {
			return
		}
		if _, ok := x.drv.dev.(device.HostPinner); !ok {
			return
		}
		for _, d := range ds {
			if d == x.drv {
				return
			}
		}
		ds = append(ds, x.drv)
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

// freeDevices releases the kernels, buffers, queues and devices of a run.
func (r *run) freeDevices() {
	for _, d := range r.devs {
		_ = d.q.Finish()
		_ = d.cq.Finish()
	}
	for _, unpin := range r.unpins {
		_ = unpin()
	}
	r.unpins = nil
	for _, h := range r.hostBufs {
		_ = h.Release()
	}
	r.hostBufs = nil
	for _, u := range r.units {
		if u.du != nil && u.du.ak != nil {
			_ = u.du.ak.Release()
		}
	}
	for _, b := range r.devBufs {
		_ = b.Release()
	}
	r.devBufs = nil
	for _, d := range r.devs {
		_ = d.q.Release()
		_ = d.cq.Release()
		_ = d.dev.Close()
	}
	r.devs = nil
}

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
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	backoff := time.Duration(0)
	spinSince := int64(0)
	for live > 0 {
		if r.stopped.Load() {
			return
		}
		progressed := false
		// Completions, oldest first: the queue is in order.
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
				return
			}
			if st != device.Complete {
				break
			}
			d.lastDone = inv.ev
			d.inflight[0] = nil
			d.inflight = d.inflight[1:]
			d.retire(inv)
			progressed = true
		}
		// Enqueue what the fill levels allow.
		if d.bat != nil {
			for {
				d.bat.BeginBatch(d.replay)
				d.roundNo++
				any := false
				// Each pass gives every unit one more invocation, up to
				// perRound per unit: later passes take what the earlier
				// ones made possible (a consumer enqueued frees its
				// producer's ring room) and what the next iterations
				// allow, so one launch (one CUDA Graph) covers several
				// invocations of a chain rather than a round of one each.
				for pass := 0; pass <= d.passes; pass++ {
					moved := false
					for _, u := range d.units {
						du := u.du
						if du.round != d.roundNo {
							du.round, du.inRound = d.roundNo, 0
						}
						if u.state.Load() == stateDone || du.inRound >= du.perRound {
							continue
						}
						ok, err := d.enqueue(u)
						if err != nil {
							_, _ = d.bat.EndBatch()
							r.fail(err)
							return
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
					return
				}
				if !any {
					break
				}
				progressed = true
			}
		}
		for _, u := range d.units {
			for d.bat == nil && u.state.Load() != stateDone && d.canEnqueue() {
				ok, err := d.enqueue(u)
				if err != nil {
					r.fail(err)
					return
				}
				if !ok {
					break
				}
				progressed = true
			}
			if u.state.Load() != stateDone && u.du.stopped && u.du.inflight == 0 {
				d.finish(u)
				live--
				progressed = true
			}
		}
		if progressed {
			if err := errors.Join(d.cq.Flush(), d.q.Flush()); err != nil {
				r.fail(fmt.Errorf("device %s: %w", d.id, err))
				return
			}
			backoff, spinSince = 0, 0
			continue
		}
		if live == 0 {
			return
		}
		// Nothing to do until a completion or a host actor moves a stream.
		if len(d.inflight) == 0 {
			d.idle.Store(true)
			select {
			case <-d.wakeC:
			case <-r.ctx.Done():
			}
			d.idle.Store(false)
			spinSince = 0
			continue
		}
		// Poll the oldest invocation: spin (yielding) for up to pollSpin
		// after the last progress, since a GPU completes invocations every
		// few to few hundred µs and a sleeping manager would leave it idle;
		// then back off with timers.
		now := nanotime()
		if spinSince == 0 {
			spinSince = now
		}
		if now-spinSince < d.spin {
			select {
			case <-d.wakeC:
			default:
				goruntime.Gosched()
			}
			continue
		}
		backoff = max(backoff, 10*time.Microsecond)
		if timer == nil {
			timer = time.NewTimer(backoff)
		} else {
			timer.Reset(backoff)
		}
		select {
		case <-d.wakeC:
		case <-timer.C:
		case <-r.ctx.Done():
		}
		backoff = min(2*backoff, 200*time.Microsecond)
	}
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
	_ = d.cq.Finish()
	_ = d.q.Finish()
	for _, inv := range d.inflight {
		if inv.ev != nil {
			inv.ev.Release()
		}
	}
	d.inflight = nil
	d.idle.Store(true)
}

// plan returns how many firings u can enqueue now (0 when none) and
// whether it will never fire again.
func (d *devRunner) plan(u *unit) (int64, bool) {
	du := u.du
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

// retire accounts a completed invocation: host inputs release their
// tokens, host outputs commit theirs, and the neighbours wake.
func (d *devRunner) retire(inv *invocation) {
	u, du := inv.u, inv.u.du
	for i := range du.ins {
		p := &du.ins[i]
		if p.ring == nil && (p.stage != nil || p.peer != nil) && p.rate > 0 {
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
	du := u.du
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

// setupRounds decides whether the manager enqueues in rounds (its queue is
// a device.Batcher and no actor copies between iterations, which would put
// other commands between a batch's launches) and orders the units so that
// producers come before their ring consumers (Kahn; units on cycles keep
// their order).
func (d *devRunner) setupRounds() {
	b, ok := d.q.(device.Batcher)
	if !ok || d.r.opts.DeviceMode == Callback {
		return
	}
	for _, u := range d.units {
		if u.du.iters > 1 && d.r.opts.SwapMode != Swap && d.r.opts.SwapMode != "" {
			return
		}
	}
	d.bat, d.replay = b, !d.r.opts.NoGraphs
	if !devNoFork {
		d.laner, _ = b.(interface{ Lane(int) })
	}
	d.laneUnits()
	for _, u := range d.units {
		u.du.perRound = d.perRound(u)
		d.passes = max(d.passes, u.du.perRound)
	}
	indeg := map[*unit]int{}
	next := map[*unit][]*unit{}
	on := map[*unit]bool{}
	for _, u := range d.units {
		on[u] = true
	}
	for _, u := range d.units {
		for i := range u.du.ins {
			if g := u.du.ins[i].ring; g != nil && on[g.prod] && g.prod != u && g.wpos == 0 {
				indeg[u]++
				next[g.prod] = append(next[g.prod], u)
			}
		}
	}
	var order []*unit
	done := map[*unit]bool{}
	for len(order) < len(d.units) {
		moved := false
		for _, u := range d.units {
			if !done[u] && indeg[u] == 0 {
				done[u] = true
				order = append(order, u)
				for _, v := range next[u] {
					indeg[v]--
				}
				moved = true
			}
		}
		if !moved { // a cycle: the rest in their order
			for _, u := range d.units {
				if !done[u] {
					done[u] = true
					order = append(order, u)
				}
			}
		}
	}
	d.units = order
}

// laneUnits deals the device's kernel actors to lanes: actors joined by a
// device ring (directly or through others) share one, so their launches
// stay in order on one stream; independent groups go round-robin to
// devLanes lanes and run concurrently in a round. One group: no lanes.
func (d *devRunner) laneUnits() {
	if d.laner == nil {
		return
	}
	root := map[*unit]*unit{}
	var find func(u *unit) *unit
	find = func(u *unit) *unit {
		if r := root[u]; r != nil && r != u {
			root[u] = find(r)
			return root[u]
		}
		return u
	}
	for _, u := range d.units {
		root[u] = u
	}
	for _, u := range d.units {
		for i := range u.du.ins {
			if g := u.du.ins[i].ring; g != nil && root[g.prod] != nil {
				root[find(u)] = find(g.prod)
			}
		}
	}
	lane := map[*unit]int{}
	for _, u := range d.units {
		r := find(u)
		if _, ok := lane[r]; !ok {
			lane[r] = len(lane) % devLanes
		}
		u.du.lane = lane[r]
	}
	d.lanes = len(lane) > 1
}

// endRound ends the open round: it enqueues the batch of its launches,
// then its host outputs' reads (after the batch), and gives each
// invocation its event: its last read's, or the batch's, shared.
func (d *devRunner) endRound() error {
	ev, err := d.bat.EndBatch()
	if err != nil {
		return fmt.Errorf("device %s: %w", d.id, err)
	}
	if len(d.round) == 0 {
		if ev != nil {
			ev.Release()
		}
		return nil
	}
	if ev == nil {
		return fmt.Errorf("device %s: a round of %d invocations launched nothing", d.id, len(d.round))
	}
	sh := &sharedEvent{Event: ev}
	ri := 0
	for _, inv := range d.round {
		for ; ri < len(d.reads) && d.reads[ri].inv == inv; ri++ {
			rd := d.reads[ri]
			var rev device.Event
			var err error
			if rd.peer != nil {
				rev, err = d.cq.(device.PeerCopier).CopyPeer(rd.peer, rd.peerOff, rd.stage, rd.off, rd.n, ev)
			} else {
				rev, err = d.cq.Read(rd.dst, rd.stage, rd.off, ev)
			}
			if err != nil {
				return fmt.Errorf("actor %s firings %d–%d on %s: copy to host: %w", inv.u.name, inv.base, inv.base+inv.k-1, d.id, err)
			}
			if inv.ev != nil {
				inv.ev.Release()
			}
			inv.ev = rev
		}
		if inv.ev == nil {
			inv.ev = sh
			sh.refs++
		}
	}
	if sh.refs == 0 {
		ev.Release()
	}
	clear(d.round)
	d.round = d.round[:0]
	clear(d.reads)
	d.reads = d.reads[:0]
	return nil
}
