package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// The device executor: one runtime-manager (devRunner) per device runs the
// kernel actors placed on it, behind the Executor interface
// (runtime/executor.go). This file holds its types, how a device is opened
// and how kernel actors are placed on it; devexec_rings.go holds the device
// rings, peer rings and FIFO memory, devexec_loop.go the manager's loop
// (retire, enqueue, wait), devexec_enqueue.go the planning and enqueueing
// of one invocation, devexec_rounds.go rounds (CUDA Graph replay) and lanes.

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

// devUnit is the device side of a kernel actor, and its unit's mode: its
// device's runtime-manager (drv) enqueues its invocations.
type devUnit struct {
	offPool
	drv       *devRunner
	ak        device.ActorKernel
	G         int64
	ins       []devPort
	outs      []devPort
	ws        []device.Window
	inflight  int
	seq       int64
	stopped   bool
	lastRound int64 // the manager's round that enqueued this unit last
	inRound   int   // invocations of the unit in that round
	perRound  int   // the most it may have in one round (devRunner.perRound)
	lane      int   // its stream in a round (laneUnits)
	// its last invocation in the open round: the batch's launch number
	// and the lane (spreading orders a stateful unit's invocations)
	lastLaunch, lastLane int
	iters                int
	pairs                [][2]int           // (output index, input index)
	sbuf                 [][2]device.Buffer // per pair: two buffers of G·rate tokens
	host                 [][]byte           // copy-host: per pair, a host buffer
	scratch              device.Buffer      // for ports that move nothing
}

// kernel returns the unit's device side when it is a kernel actor, else
// nil.
func (u *unit) kernel() *devUnit {
	du, _ := u.mode.(*devUnit)
	return du
}

// wake wakes the device's manager: a neighbour moved one of the unit's
// streams.
func (du *devUnit) wake(*unit, *worker) { du.drv.wake() }

// quiet: the manager is idle (it waits for no completion).
func (du *devUnit) quiet(*unit) bool { return du.drv.idle.Load() }

func (du *devUnit) stats(u *unit, as *ActorStats, fifoIn, fifoOut time.Duration) {
	as.Kind = "kernel"
	as.Device, as.WorkGroups, as.DeviceMode = du.drv.id, du.G, u.r.deviceMode()
	as.BlockedIn, as.BlockedOut = fifoIn, fifoOut
}

func (*devUnit) checkpointable(c *checkpoints, u *unit) string { return c.deviceCheckpointable(u) }

// ahead: invocations enqueued but not completed, at most the device's
// depth.
func (du *devUnit) ahead(*unit) (int64, bool) { return int64(du.drv.depth) * du.G, false }

// invocation is G or fewer firings of one kernel actor in flight.
type invocation struct {
	u    *unit
	slot int64 // staging slot (seq mod depth)
	base int64
	k    int64
	ev   device.Event
	tEnq int64
	// inEv: the last copy from a host FIFO into the device (on the input
	// copy queue, in order); once it completes, the host windows copied
	// from release their tokens (releaseCopied), before the invocation
	// completes. nil when released or when nothing was copied.
	inEv device.Event
}

// devRunner is the runtime-manager of one device: one in-order queue, the
// kernel actors mapped there, and the goroutine that enqueues their
// invocations and observes completions by polling events.
type devRunner struct {
	r     *run
	id    string
	dev   device.Device
	q     device.Queue // kernels, device-ring and swap traffic, in order
	cq    device.Queue // copies from staging slots to host FIFOs (and peer rings)
	wq    device.Queue // copies from host FIFOs to staging slots
	deps  []device.Event
	units []*unit
	wakeC chan struct{}
	// nextToProcess: a kernel actor of this device shares a channel with a
	// KPN process, which moves tokens without waking the manager, so an
	// idle manager polls (backing off to 200 µs) rather than sleeping.
	nextToProcess bool
	inflightLive  atomic.Int64 // len(inflight), for live snapshots
	idle          atomic.Bool
	inflight      []*invocation
	op            enqOp // the invocation being enqueued
	depth         int
	c             *execCtx
	lastEnd       int64
	tmp           []byte     // copy-host
	pinErr        error      // why a host FIFO could not be pinned (speed only)
	spin          int64      // ns to poll without sleeping (pollSpin, pollSpinCPU)
	link          *linkTrace // the copies' trace lanes (nil: not traced)

	// Rounds (when q is a device.Batcher): each pass enqueues one
	// invocation of every unit that can fire, in topological order, as one
	// batch — launches without events, replayed as a CUDA Graph when the
	// round recurs — and all of them complete with the batch's event.
	bat      device.Batcher
	replay   bool
	round    []*invocation      // invocations of the open round
	reads    []devRead          // their host outputs' reads, issued after the batch
	lb       device.LaneBatcher // puts a round's next launch on a stream (lane)
	lanes    bool               // the device's kernel actors form several lanes
	spread   bool               // a round's passes go to successive lanes (devexec_spread.go)
	nLanes   int                // lanes the passes are spread over
	pass     int                // the pass of the round being enqueued
	launches int                // launches in the open round's batch
	lastDone device.Event       // the latest event seen complete
	roundNo  int64              // rounds begun
	passes   int                // passes over the units in a round: the largest perRound
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
	// Host-to-device copies get a queue of their own: on one in-order copy
	// queue the next invocation's inputs would wait behind the previous
	// one's output copy, which waits for its kernels, so copies in, kernels
	// and copies out would not overlap (the copy engines of a GPU run the
	// two directions at once).
	wq, err := dev.NewQueue()
	if err != nil {
		_ = cq.Release()
		_ = q.Release()
		_ = dev.Close()
		return nil, fmt.Errorf("device %s: input copy queue: %w", key, err)
	}
	depth := r.opts.DeviceDepth
	if depth <= 0 {
		depth = maxAutoDepth // lowered by setupDevice from the staging sizes
	}
	if r.opts.DeviceMode == Callback {
		depth = 1
	}
	d := &devRunner{r: r, id: key, dev: dev, q: q, cq: cq, wq: wq, wakeC: make(chan struct{}, 1), depth: depth, spin: pollSpin}
	if in := dev.Info(); in.Kind == device.CPU || in.HostUnified {
		d.spin = pollSpinCPU
	}
	r.devByName[id] = d
	r.devByID[key] = d
	r.devs = append(r.devs, d)
	return d, nil
}

// maxAutoDepth is the deepest default DeviceDepth (autoDepth).
const maxAutoDepth = 32

// spreadRound is the bytes of one port that a round of invocations should
// move where rounds spread over lanes (autoDepth).
const spreadRound = 16 << 20

// autoDepth is the default number of invocations of a kernel actor in
// flight for the largest staging slot (one invocation's tokens of one
// port) of a device's kernel actors. Slots over 1 MiB get 4 (enough to
// keep a device busy while the host enqueues). Where rounds may spread
// over lanes they get four rounds in flight of at least 16 MiB of a port
// each (a round is a quarter of the depth), 8 to 32 invocations, so that
// a round's copies, kernels and the manager's turn overlap those of three
// others, while the host FIFOs sized for them stay in the host's cache.
// A FIFO out of a device that outgrows the cache makes a run bistable: a
// reader that falls behind reads what the copies wrote from memory
// instead of the cache, two to three times slower, and never catches up.
// (The image pipeline at 9.8 MB slots, G = 128, on an H200 machine whose
// host has a 300 MiB L3, alternating in one session: with 24 MiB rounds,
// depth 12 and a 149 MB output FIFO, 391k–613k frames/s, its stats actor
// 5.8–16 µs a frame; with 16 MiB rounds, depth 8 and 100 MB, 557k–618k,
// 5.1–6.0 µs. Earlier, at 4.9 MB slots, 547k–572k frames/s at depth 24,
// 542k–562k at 28, 546k–555k at 32, against 508k–542k for the
// multi-stream reference.) Smaller slots
// get more, since their invocations take the device a few µs each and
// enqueueing must run far enough ahead of a round's latency (a chain of
// ten 1 KiB actors takes 55 µs per iteration at depth 4 and 32 µs at 16
// on an H100).
func autoDepth(slot int64, lanes bool) int {
	switch {
	case slot <= 64<<10:
		return 16
	case lanes && slot > 1<<20:
		return int(min(max(4*((spreadRound+slot-1)/slot), 8), maxAutoDepth))
	case slot <= 1<<20 || lanes:
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
	for _, p := range a.Inputs {
		if p.History > 0 {
			return fmt.Errorf("runtime: actor %s is mapped to %s, but its input %s keeps a history of %d tokens, which kernel actors do not: run it as a Go actor, or give the kernel the history through a channel with initial tokens", a.Name, d.id, p.Name, p.History)
		}
	}
	comp, ok := d.dev.(device.ActorCompiler)
	if !ok {
		return fmt.Errorf("runtime: actor %s: device %s does not run kernel actors: %w", a.Name, d.id, device.ErrUnsupported)
	}
	ak, err := comp.CompileActor(ctx, a, pl, im)
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	du := &devUnit{drv: d, ak: ak, G: int64(ak.Groups()), iters: max(1, a.Iterations)}
	if r.opts.DeviceDepth <= 0 && r.opts.DeviceMode != Callback {
		slot := int64(0)
		for _, ps := range [][]*graph.Port{a.Inputs, a.Outputs} {
			for _, p := range ps {
				slot = max(slot, du.G*int64(p.Rate.Sum())*int64(p.Type.Size))
			}
		}
		d.depth = min(d.depth, autoDepth(slot, d.maySpread()))
	}
	u.mode = du
	u.impl = nil
	d.units = append(d.units, u)
	return nil
}

// placeDevice allocates a kernel actor's device memory once its channels
// are known: staging slots for host ports, swap buffers.
func (r *run) placeDevice(u *unit) error {
	du := u.kernel()
	d := du.drv
	du.ins, du.outs = devPorts(u)
	alloc := func(what string, n int64) (device.Buffer, error) {
		b, err := d.dev.Alloc(max(n, 1), device.ReadWrite)
		if err != nil {
			return nil, fmt.Errorf("runtime: actor %s: %s: %w", u.a.Name, what, err)
		}
		r.devBufs = append(r.devBufs, b)
		return b, nil
	}
	for _, ps := range [][]devPort{du.ins, du.outs} {
		for i := range ps {
			if err := r.stagePort(u, &ps[i], alloc); err != nil {
				return err
			}
		}
	}
	if du.iters > 1 {
		if err := swapBuffers(u, alloc); err != nil {
			return err
		}
	}
	du.ws = make([]device.Window, len(u.ins)+len(u.outs))
	var err error
	if du.scratch, err = alloc("scratch buffer", 64); err != nil {
		return err
	}
	return writeRingInitials(u)
}

// devPorts returns the device side of u's input and output ports.
func devPorts(u *unit) (ins, outs []devPort) {
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
		ins = append(ins, port(&u.ins[i]))
		if u.ins[i].ring != nil {
			ins[i].reader = u.ins[i].ch.reader
		}
	}
	for i := range u.outs {
		outs = append(outs, port(&u.outs[i]))
	}
	return ins, outs
}

// stagePort gives a port on a host FIFO (or the output side of a peer
// ring) its staging slots: Depth invocations of G firings' tokens, in
// host memory the kernels address directly where invocations are small,
// else in device memory (with pinned bounce slots when the FIFO itself
// could not be pinned).
func (r *run) stagePort(u *unit, p *devPort, alloc func(string, int64) (device.Buffer, error)) error {
	du := u.kernel()
	d, G := du.drv, du.G
	if p.ring != nil || p.rate == 0 || (p.up.r == nil && p.up.w == nil) {
		return nil
	}
	slots := int64(d.depth) * G * p.rate * p.tsize
	var err error
	if p.peer != nil {
		if p.up.r != nil { // the kernels read the peer ring in place
			return nil
		}
		// outputs are copied from device staging slots
		p.stage, err = alloc("staging buffer of port "+p.up.p.Name, slots)
		return err
	}
	// Small invocations stage through host memory the kernels address
	// directly: the host copies between it and the FIFO, and no copy
	// command (with its event and cross-queue wait) goes to the device
	// per invocation.
	if hm, ok := d.dev.(device.HostMapper); ok && G*p.rate*p.tsize <= mappedMax && !r.opts.tune.noMapped {
		if m, err := hm.AllocMapped(slots); err == nil {
			r.devBufs = append(r.devBufs, m)
			p.stage, p.bounce, p.mapped = m, m.Bytes(), true
			return nil
		}
	}
	if p.stage, err = alloc("staging buffer of port "+p.up.p.Name, slots); err != nil {
		return err
	}
	// A FIFO a GPU could not pin is copied through pinned bounce slots: a
	// copy from pageable memory would go through the driver's bounce
	// buffer, and a CUDA read into pageable memory would block the manager
	// until the device is idle.
	var f *fifo.FIFO
	if p.up.r != nil {
		f = p.up.ch.fr.f
	} else {
		f = p.up.fr.f
	}
	if in := d.dev.Info(); !r.pinned[f] && in.Kind != device.CPU && !in.HostUnified {
		h, err := d.dev.AllocHost(slots)
		if err != nil {
			return fmt.Errorf("runtime: actor %s: pinned staging of port %s: %w", u.a.Name, p.up.p.Name, err)
		}
		r.hostBufs = append(r.hostBufs, h)
		p.hbuf, p.bounce = h, h.Bytes()
	}
	return nil
}

// swapBuffers allocates an iterated kernel actor's swap pairs: two device
// buffers of G firings' tokens per pair, and a host buffer for copy-host.
func swapBuffers(u *unit, alloc func(string, int64) (device.Buffer, error)) error {
	du, a := u.kernel(), u.a
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
		n := du.G * du.outs[oi].rate * du.outs[oi].tsize
		var bs [2]device.Buffer
		for j := range bs {
			var err error
			if bs[j], err = alloc("swap buffer of "+o, n); err != nil {
				return err
			}
		}
		du.sbuf = append(du.sbuf, bs)
		du.host = append(du.host, make([]byte, n))
	}
	return nil
}

// writeRingInitials writes the initial tokens of u's outputs on device
// rings.
func writeRingInitials(u *unit) error {
	d := u.kernel().drv
	for i := range u.outs {
		g := u.outs[i].ring
		if g == nil || g.wpos == 0 {
			continue
		}
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
	return nil
}

// freeDevices releases the kernels, buffers, queues and devices of a run.
func (r *run) freeDevices() {
	for _, d := range r.devs {
		_ = d.q.Finish()
		_ = d.cq.Finish()
		_ = d.wq.Finish()
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
		if du := u.kernel(); du != nil && du.ak != nil {
			_ = du.ak.Release()
		}
	}
	for _, b := range r.devBufs {
		_ = b.Release()
	}
	r.devBufs = nil
	for _, d := range r.devs {
		_ = d.q.Release()
		_ = d.cq.Release()
		_ = d.wq.Release()
		_ = d.dev.Close()
	}
	r.devs = nil
}
