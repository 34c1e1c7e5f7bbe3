package runtime

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// fifoRec is one FIFO: an output port and every channel it feeds
// (broadcast: one reader per channel).
type fifoRec struct {
	f        *fifo.FIFO
	port     *graph.Port
	producer *unit
	chans    []*chanRec
	live     atomic.Int32 // readers still attached
}

// chanRec is one channel: a reader of its output port's FIFO.
type chanRec struct {
	c        *graph.Channel
	fr       *fifoRec
	reader   int
	consumer *unit
	leftSet  atomic.Bool
	leftN    atomic.Int64 // tokens left when the consumer finished
	// ring is the device ring of a channel between two kernel actors of
	// one device (then fr is nil); devCopied counts the bytes staged
	// between a host FIFO and a device.
	ring      *devRing
	devCopied atomic.Int64
	// peer is the device ring of a channel between kernel actors of two
	// devices that copy between themselves (then the host FIFO only
	// counts tokens).
	peer *peerRing
}

// left returns the tokens the channel holds (or held when its consumer
// detached).
func (c *chanRec) left() int64 {
	if c.leftSet.Load() {
		return c.leftN.Load()
	}
	if c.ring != nil {
		return c.ring.avail(c.reader)
	}
	return int64(c.fr.f.Writer().Position() - c.fr.f.Reader(c.reader).Position())
}

// uport is one port of a unit with its rate table.
type uport struct {
	p      *graph.Port
	phases []int
	cum    []int64 // cum[i] = tokens over phases [0, i)
	sum    int64
	max    int
	tsize  int
	r      *fifo.Reader // inputs
	w      *fifo.Writer // outputs
	ch     *chanRec     // inputs
	fr     *fifoRec     // outputs
	ring   *devRing     // kernel actors: the port's device ring, if any
}

// tokensAt returns the tokens moved by firings [0, m).
func (p *uport) tokensAt(m int64) int64 {
	n := int64(len(p.phases))
	if n == 1 {
		return m * p.sum
	}
	return m/n*p.sum + p.cum[m%n]
}

// tokens returns the tokens moved by firings [a, a+k).
func (p *uport) tokens(a, k int64) int {
	if len(p.phases) == 1 {
		return int(k * p.sum)
	}
	return int(p.tokensAt(a+k) - p.tokensAt(a))
}

// firingsFor returns how many firings from firing a, at most k, fit in n
// tokens.
func (p *uport) firingsFor(a int64, n int, k int64) int64 {
	if len(p.phases) == 1 {
		if p.sum == 0 {
			return k
		}
		return min(k, int64(n)/p.sum)
	}
	if p.sum == 0 {
		return k
	}
	np := int64(len(p.phases))
	// whole cycles first, then phase by phase
	var done int64
	if c := int64(n) / p.sum; c > 1 {
		done = (c - 1) * np
		if done >= k {
			return k
		}
	}
	for done < k && int64(p.tokens(a, done+1)) <= int64(n) {
		done++
	}
	return done
}

func newUport(p *graph.Port) uport {
	ph := p.Rate.List()
	if len(ph) == 0 {
		ph = []int{0}
	}
	up := uport{p: p, phases: ph, cum: make([]int64, len(ph)+1), tsize: p.Type.Size}
	for i, r := range ph {
		up.cum[i+1] = up.cum[i] + int64(r)
		up.max = max(up.max, r)
	}
	up.sum = up.cum[len(ph)]
	return up
}

// addPorts gives a unit its actor's phases and ports.
func (u *unit) addPorts() {
	a := u.a
	u.phases = int64(a.Phases())
	for _, p := range a.Inputs {
		u.ins = append(u.ins, newUport(p))
	}
	for _, p := range a.Outputs {
		u.outs = append(u.outs, newUport(p))
	}
}

// setup turns the graph into units (one per actor), their channels
// (FIFOs, device rings, peer rings) and the pools that run them. Each
// phase is a function of its own, in order.
func (r *run) setup(ctx context.Context) error {
	if err := checkClosed(r.g); err != nil {
		return err
	}
	rv, err := r.repetitionTargets()
	if err != nil {
		return err
	}
	byActor := map[*graph.Actor]*unit{}
	for i, a := range r.g.Actors {
		u, err := r.newUnit(ctx, i, a, rv)
		if err != nil {
			return err
		}
		u.addPorts()
		byActor[a] = u
		r.units = append(r.units, u)
	}
	r.planFusion(byActor)
	mins := minimalBuffers(r.g, rv)
	for _, u := range r.units {
		for oi := range u.outs {
			if err := r.setupOutput(u, &u.outs[oi], byActor, mins); err != nil {
				return err
			}
		}
	}
	if err := r.linkNeighbours(); err != nil {
		return err
	}
	if err := r.assignModes(); err != nil {
		return err
	}
	r.attachFusion()
	return r.setupPools()
}

// checkClosed refuses a graph with an open input or output: the runtime
// runs closed graphs only.
func checkClosed(g *graph.Graph) error {
	for _, b := range g.Inputs {
		return fmt.Errorf("runtime: graph %q has an open input %q (bound to %s.%s): expected a closed graph, with every input fed by a channel", g.Name, b.Name, b.Actor, b.Port)
	}
	for _, b := range g.Outputs {
		if a := g.Actor(b.Actor); a != nil {
			if p := a.Port(b.Port); p != nil && len(g.ChannelsOf(p)) == 0 {
				return fmt.Errorf("runtime: graph %q has an open output %q (bound to %s.%s): expected a closed graph, with every output feeding a channel", g.Name, b.Name, b.Actor, b.Port)
			}
		}
	}
	return nil
}

// repetitionTargets returns the repetition vector when Options.Iterations
// asks for a number of graph iterations (nil for "until end of stream").
func (r *run) repetitionTargets() (map[*graph.Actor]int64, error) {
	switch n := r.opts.Iterations; {
	case n > 0:
		return repetitions(r.g)
	case n < 0:
		return nil, fmt.Errorf("runtime: Options.Iterations is %d: expected 0 (until end of stream) or more", n)
	}
	return nil, nil
}

// iterationTarget sets u's target: Options.Firings' count for it when
// given, else its repetitions times Options.Iterations (rv nil: until end
// of stream). KPN processes have none.
func (r *run) iterationTarget(u *unit, rv map[*graph.Actor]int64) {
	if rv != nil {
		if q, ok := rv[u.a]; ok {
			u.target = q * r.opts.Iterations
		}
	}
	if n, ok := r.opts.Firings[u.a.Name]; ok {
		u.target = n
	}
}

// newUnit makes the unit of actor a (the i-th): a remote actor, a kernel
// actor on its device, or a Go / built-in actor on the host.
func (r *run) newUnit(ctx context.Context, i int, a *graph.Actor, rv map[*graph.Actor]int64) (*unit, error) {
	u := &unit{r: r, idx: i, a: a, name: a.Name, replicas: 1, target: -1}
	var pl *graph.Placement
	if r.opts.Mapping != nil {
		pl = r.opts.Mapping.Actors[a.Name]
	}
	if IsRemotePlacement(pl) {
		if err := r.setupRemote(u, pl); err != nil {
			return nil, err
		}
		r.iterationTarget(u, rv)
		return u, nil
	}
	kernel := pl != nil && (pl.Impl == graph.ImplOpenCL || pl.Impl == graph.ImplCUDA || (pl.Impl == "" && !isHostDevice(pl.Device)))
	if pl != nil && !kernel {
		if err := u.hostPlacement(pl); err != nil {
			return nil, err
		}
	}
	if r.opts.Priority != nil {
		u.prio = r.opts.Priority(a)
	}
	if kernel {
		if err := r.setupDevice(ctx, u, pl); err != nil {
			return nil, err
		}
		r.iterationTarget(u, rv)
		return u, nil
	}
	if err := u.setupHost(pl); err != nil {
		return nil, err
	}
	if !isProcess(u) {
		r.iterationTarget(u, rv)
	}
	return u, nil
}

// hostPlacement applies a placement on the host (device "cpu"): replicas,
// team, priority and CPU affinity.
func (u *unit) hostPlacement(pl *graph.Placement) error {
	a := u.a
	if !isHostDevice(pl.Device) {
		return fmt.Errorf("runtime: actor %s is mapped to device %q with implementation %q: Go and built-in implementations run on the CPU (expected device \"cpu\", or a kernel implementation: impl opencl or cuda)", a.Name, pl.Device, pl.Impl)
	}
	if pl.Impl != "" && pl.Impl != graph.ImplGo && pl.Impl != graph.ImplBuiltin {
		return fmt.Errorf("runtime: actor %s is mapped with implementation %q: expected go, builtin, opencl or cuda", a.Name, pl.Impl)
	}
	if pl.Replicas > 1 {
		u.replicas = pl.Replicas
	}
	switch pl.Team {
	case "", graph.TeamSplit, graph.TeamReplicate:
	default:
		return fmt.Errorf("runtime: actor %s is mapped with team %q: expected split or replicate", a.Name, pl.Team)
	}
	u.prio = pl.Priority
	u.affinity = append([]int(nil), pl.Affinity...)
	return nil
}

// setupHost resolves a host actor's implementation and its mode: a firing
// function (iterated, with history windows) fired by the pools, alone or
// as a team (with replicated state where the placement asks for one), or
// a KPN process.
func (u *unit) setupHost(pl *graph.Placement) error {
	a := u.a
	impl, err := resolve(a, u.r.opts.Files)
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	u.impl = impl
	var proc ProcessFunc
	switch f := impl.(type) {
	case FireFunc:
		u.fire = f
	case ProcessFunc:
		proc = f
	case Actor:
		u.fire = f.Fire
	}
	if a.Iterations > 1 && u.fire != nil {
		u.fire = iterated(a, u.fire)
	}
	if u.fire != nil && hasHistory(a) {
		u.fire = withHistory(a, u.fire)
	}
	if a.Dynamic() && proc == nil {
		return fmt.Errorf("runtime: actor %s has dynamic-rate ports: expected a ProcessFunc (a KPN process), found a firing function", a.Name)
	}
	if proc != nil {
		u.mode = &kpnProcess{proc: proc}
		if u.replicas > 1 {
			return fmt.Errorf("runtime: actor %s is a KPN process and cannot be replicated (mapping asks for %d replicas)", a.Name, u.replicas)
		}
		return nil
	}
	if pl != nil && pl.Team == graph.TeamReplicate && u.replicas > 1 {
		return u.setupTeam()
	}
	if a.Stateful && u.replicas > 1 {
		return fmt.Errorf("runtime: actor %s is stateful and cannot be replicated (mapping asks for %d replicas): expected 1 replica, or team: replicate (one state per replica)", a.Name, u.replicas)
	}
	if u.replicas > 1 {
		u.mode = &splitTeam{}
	} else {
		u.mode = &sequential{}
	}
	return nil
}

// setupOutput makes the channel of output op of u: a device ring between
// kernel actors of one device, or a FIFO (in pinned or device-mapped
// memory where a kernel actor uses it, or mirrored by a peer ring between
// devices), with every reader attached to its consumer's input.
func (r *run) setupOutput(u *unit, op *uport, byActor map[*graph.Actor]*unit, mins map[*graph.Channel]int) error {
	cs := r.g.ChannelsOf(op.p)
	if len(cs) == 0 {
		return nil
	}
	capTok, initial := 0, cs[0].Initial
	var initData []byte
	for _, c := range cs {
		if c.Initial != initial {
			return fmt.Errorf("runtime: output %s broadcasts to channels with different initial tokens (%s: %d, %s: %d): a broadcast is one FIFO, expected equal initial tokens", op.p.FullName(), cs[0].Name, initial, c.Name, c.Initial)
		}
		if c.InitialData != nil {
			initData = c.InitialData
		}
		capTok = max(capTok, r.capacity(c, byActor, mins))
	}
	if initData != nil && len(initData) != initial*op.tsize {
		initData = nil
	}
	if ringable(u, op, cs, byActor) {
		return r.attachRing(u, op, cs, byActor, capTok)
	}
	return r.attachFIFO(u, op, cs, byActor, capTok, initial, initData)
}

// attachRing puts the channels of op on a device ring.
func (r *run) attachRing(u *unit, op *uport, cs []*graph.Channel, byActor map[*graph.Actor]*unit, capTok int) error {
	g, err := r.newRing(u, op, cs, byActor, capTok)
	if err != nil {
		return err
	}
	op.ring = g
	for i, c := range cs {
		cr := &chanRec{c: c, ring: g, reader: i, consumer: byActor[c.To.Actor]}
		g.chans = append(g.chans, cr)
		r.chans = append(r.chans, cr)
		cu := cr.consumer
		for ii := range cu.ins {
			if cu.ins[ii].p == c.To {
				cu.ins[ii].ring = g
				cu.ins[ii].ch = cr
			}
		}
	}
	return nil
}

// attachFIFO puts the channels of op on one FIFO (one reader per channel).
func (r *run) attachFIFO(u *unit, op *uport, cs []*graph.Channel, byActor map[*graph.Actor]*unit, capTok, initial int, initData []byte) error {
	pinners := fifoPinners(u, cs, byActor)
	var mem []byte
	peer := peerable(u, op, cs, initial, byActor)
	if peer == nil {
		mem = r.fifoMemory(u, op, cs, byActor, capTok)
	}
	f, err := fifo.New(fifo.Options{
		Name: fifoName(op.p, cs), TokenSize: op.tsize, Capacity: capTok, Readers: len(cs),
		Wait: r.opts.Wait, Initial: initial, InitialData: initData, Memory: mem,
	})
	if err != nil {
		return fmt.Errorf("runtime: channel %s: %w", cs[0].Name, err)
	}
	var pr *peerRing
	if peer != nil {
		if pr, err = r.newPeerRing(u, peer, op, cs[0], f); err != nil {
			return err
		}
	}
	switch {
	case pr != nil: // the data go device to device
	case mem != nil:
		r.pinned[f] = true
	default:
		r.pinFIFO(f, initial, pinners)
	}
	fr := &fifoRec{port: op.p, producer: u, f: f}
	fr.live.Store(int32(len(cs)))
	op.w = f.Writer()
	op.fr = fr
	r.fifos = append(r.fifos, fr)
	for i, c := range cs {
		cr := &chanRec{c: c, fr: fr, reader: i, consumer: byActor[c.To.Actor], peer: pr}
		fr.chans = append(fr.chans, cr)
		r.chans = append(r.chans, cr)
		cu := cr.consumer
		for ii := range cu.ins {
			if cu.ins[ii].p == c.To {
				cu.ins[ii].r = f.Reader(i)
				cu.ins[ii].ch = cr
			}
		}
	}
	return nil
}

// linkNeighbours checks every firing's rates against its channels'
// capacities and records each unit's producers and consumers (the units
// it wakes).
func (r *run) linkNeighbours() error {
	for _, u := range r.units {
		for _, ip := range u.ins {
			if ip.ring != nil {
				u.addNeighbour(ip.ring.prod)
				continue
			}
			if ip.r == nil {
				return fmt.Errorf("runtime: input %s has no channel", ip.p.FullName())
			}
			if !isProcess(u) && ip.max > ip.ch.fr.f.Capacity() {
				return fmt.Errorf("runtime: channel %s has capacity %d tokens but %s consumes %d per firing: expected a capacity ≥ the rate", ip.ch.c.Name, ip.ch.fr.f.Capacity(), ip.p.FullName(), ip.max)
			}
			u.addNeighbour(ip.ch.fr.producer)
		}
		for _, op := range u.outs {
			if op.ring != nil {
				for _, c := range op.ring.chans {
					u.addNeighbour(c.consumer)
				}
				continue
			}
			if !isProcess(u) && op.fr != nil && op.max > op.fr.f.Capacity() {
				return fmt.Errorf("runtime: channel %s has capacity %d tokens but %s produces %d per firing: expected a capacity ≥ the rate", op.fr.chans[0].c.Name, op.fr.f.Capacity(), op.p.FullName(), op.max)
			}
			if op.fr != nil {
				for _, c := range op.fr.chans {
					u.addNeighbour(c.consumer)
				}
			}
		}
	}
	return nil
}

// assignModes runs actors next to a KPN process, or pinned to CPUs, on
// their own goroutine (the others on the pools), and makes the manager of
// a kernel actor next to a process poll: a process moves its streams
// without waking anyone.
func (r *run) assignModes() error {
	for _, u := range r.units {
		if !u.mode.pooled() {
			continue // a process, a kernel actor, a remote actor, a stage of a fused chain
		}
		own := len(u.affinity) > 0
		for _, n := range u.neigh {
			own = own || isProcess(n)
		}
		if own {
			if err := u.dedicate(); err != nil {
				return err
			}
		}
	}
	for _, u := range r.units {
		du := u.kernel()
		if du == nil {
			continue
		}
		for _, n := range u.neigh {
			if isProcess(n) {
				du.drv.nextToProcess = true
			}
		}
	}
	return nil
}

// setupPools sizes the CPU and I/O pools by the pooled units' replicas
// (at most Options.Workers and Options.IOWorkers), gives each unit its
// pool and windows, and places kernel actors on their devices.
func (r *run) setupPools() error {
	workers := r.opts.Workers
	if workers <= 0 {
		workers = defaultWorkers()
	}
	ioWorkers := r.opts.IOWorkers
	if ioWorkers <= 0 {
		ioWorkers = 4
	}
	ncpu, nio := 0, 0
	for _, u := range r.poolUnits() {
		if !u.mode.pooled() {
			continue
		}
		if u.a.IO {
			nio += u.replicas
		} else {
			ncpu += u.replicas
		}
		u.maxRound = u.roundLimit()
		u.roundCap = max(firstRoundFirings, u.minRound())
	}
	r.cpu = newPool(min(workers, max(ncpu, 0)))
	r.io = newPool(min(ioWorkers, nio))
	for _, u := range r.poolUnits() {
		if u.mode.pooled() {
			if u.a.IO {
				u.pool = r.io
			} else {
				u.pool = r.cpu
			}
		}
		u.maxPorts = max(len(u.ins), len(u.outs))
		u.inWin = padded[[]byte](len(u.ins)) // written every round
		u.outWin = padded[[]byte](len(u.outs))
		if u.kernel() != nil {
			if err := r.placeDevice(u); err != nil {
				return err
			}
		}
	}
	return nil
}

func fifoName(p *graph.Port, cs []*graph.Channel) string {
	if len(cs) == 1 {
		return cs[0].Name
	}
	return p.FullName() + " (broadcast)"
}

// inFlight is the tokens of rate (per firing) that unit u holds at once:
// for a kernel actor G firings per invocation, depth invocations; for a Go
// actor one firing per replica.
func inFlight(u *unit, rate int) int {
	if du := u.kernel(); du != nil {
		return rate * int(du.G) * du.drv.depth
	}
	return rate * u.replicas
}

// bigSlot is the invocation size (bytes of one port) from which a host
// FIFO next to a kernel actor is sized to what is in flight (kernelFIFO).
const bigSlot = 1 << 20

// kernelFIFO is the default capacity, less initial tokens, of channel c
// with a kernel actor on one end at least: room for twice the tokens the
// larger end holds in flight (inFlight) — a team of Go actors does not
// multiply the kernel actor's windows. Between a Go actor and a kernel
// actor whose invocation moves more than a megabyte, the FIFO is sized so
// that the host's copies into and out of it stay in its cache: into a
// kernel actor, half the kernel end's invocations in flight plus twice the
// Go end's firings (its tokens are released as soon as their copy into
// the device completes, releaseCopied, so the producer refills it while
// the kernels run); out of one, the kernel end's invocations in flight
// and a quarter more plus twice the Go end's (their windows are held
// until the copy out completes). A ring in device memory (kernel actors on
// both ends) keeps twice. (The image pipeline, 4.9 MB invocations, depth
// 24, on an H200 machine: 559k–564k frames/s with these sizes, 510k–512k
// with input FIFOs of 1¼ and no early release, 467k–477k with rings of 1¼
// as well.)
func kernelFIFO(c *graph.Channel, pu, cu *unit, prod, cons int) int {
	kin, goin, slot := 0, 0, int64(0)
	for _, e := range [...]struct {
		u    *unit
		rate int
	}{{pu, prod}, {cu, cons}} {
		du := e.u.kernel()
		if du == nil {
			goin = max(goin, inFlight(e.u, e.rate))
			continue
		}
		kin = max(kin, inFlight(e.u, e.rate))
		slot = max(slot, du.G*int64(e.rate)*int64(c.From.Type.Size))
	}
	if slot <= bigSlot || goin == 0 { // or a ring in device memory: kernels on both ends
		return 2 * max(kin, goin)
	}
	if cu.kernel() != nil {
		return kin/2 + 2*goin
	}
	return kin + kin/4 + 2*goin
}

// pageBytes is the floor of the default capacity: a channel holds at least
// this many bytes of tokens, so that rate-1 actors fire in batches.
const pageBytes = 64 << 10

// capacity returns a channel's capacity in tokens: its own, Options'
// DefaultCapacity's, or max(minimal buffer, initial + 2×max(prod, cons
// rate)×replicas, 64 KiB worth of tokens) — with a kernel actor on either
// end, initial + kernelFIFO.
func (r *run) capacity(c *graph.Channel, by map[*graph.Actor]*unit, mins map[*graph.Channel]int) int {
	if c.Capacity > 0 {
		return c.Capacity
	}
	if r.opts.DefaultCapacity != nil {
		if n := r.opts.DefaultCapacity(c); n > 0 {
			return max(n, c.Initial)
		}
	}
	pu, cu := by[c.From.Actor], by[c.To.Actor]
	prod, cons := c.From.Rate.Max(), c.To.Rate.Max()
	var n int
	if pu.kernel() == nil && cu.kernel() == nil {
		n = c.Initial + 2*max(prod, cons)*max(pu.replicas, cu.replicas)
		n = max(n, fusedCapacity(c, pu, cu))
	} else {
		n = c.Initial + kernelFIFO(c, pu, cu, prod, cons)
	}
	n = max(n, mins[c])
	if ts := c.From.Type.Size; ts > 0 {
		n = max(n, pageBytes/ts)
	}
	return max(n, 1)
}
