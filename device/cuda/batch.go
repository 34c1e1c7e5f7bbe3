package cuda

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/cu"
)

// Batches of launches (device.Batcher). A batch records its launches —
// function, grid, block, shared memory and the arguments' bytes — in one
// key, and the same without the argument values in its shape. EndBatch
// launches a cached CUDA Graph of the batch's shape: launches whose
// arguments differ from the graph's last launch get them set in the
// executable graph first (cuGraphExecKernelNodeSetParams, on the nodes
// the capture named), so a round of kernel actors over ring windows that
// move costs one cuGraphLaunch plus one call per changed launch. A shape
// seen once before is captured (stream capture of the recorded launches)
// and cached; others are launched one by one. Where the driver cannot
// name a captured launch's node or set its arguments, graphs are keyed by
// the whole key instead (argument values included), as they are replayed
// only when the same launches over the same memory recur.

// Graph cache bounds per queue: at most maxGraphs graphs are kept, and the
// keys seen once are forgotten when there are more than maxSeen.
const (
	maxGraphs = 64
	maxSeen   = 1024
)

type batchLaunch struct {
	k           *Kernel
	grid, block cu.Dim3
	shared      uint32
	args        []int // offsets of the argument values in batch.key
	argEnd      int   // end of the last argument value in batch.key
	fork        bool  // independent of the batch's earlier launches
	lane        int   // Lane: 0, or a side stream
	after       []int // After: earlier launches (indices) it waits for
}

type batch struct {
	replay   bool
	launches []batchLaunch
	key      []byte
	shape    []byte // key without the argument values
	ptrs     []uintptr
	offs     []int
	fork     bool        // the next launch is independent of the earlier ones
	forks    bool        // some launch is
	lane     int         // the next launch's lane
	lanes    int         // 1 + the highest lane used
	after    []int       // the next launch's After list
	deps     []int       // every launch's After list, one after another
	waited   []bool      // per launch: a later launch waits for it (After)
	streams  []cu.Stream // per launch: its stream (launchAll)
}

// MaxLanes is the number of lanes (streams) a batch's launches may use.
const MaxLanes = 8

var _ device.LaneBatcher = (*Queue)(nil)

// Lanes returns MaxLanes (device.LaneBatcher).
func (q *Queue) Lanes() int { return MaxLanes }

// After makes the batch's next launch wait for the batch's launch number i
// (device.LaneBatcher): when the two run on different streams, an event
// recorded after launch i joins them (an edge of the CUDA Graph when the
// batch is replayed). Outside a batch, or with i not an earlier launch, it
// does nothing.
func (q *Queue) After(i int) {
	if q.inBatch && i >= 0 && i < len(q.bt.launches) {
		q.bt.after = append(q.bt.after, i)
	}
}

// Lane puts the batch's next launch on lane l (0 ≤ l < MaxLanes): lane 0
// is the queue's stream, the others side streams. Launches of one lane run
// in order, after everything enqueued before the batch; launches of
// different lanes may run concurrently, so they must not depend on each
// other; every lane is joined into the queue's stream at the batch's end.
// The runtime gives independent kernel actors (no device ring between
// them) different lanes. Outside a batch, or with l out of range, it does
// nothing. A launch on a lane other than 0 is not also forked (Fork).
func (q *Queue) Lane(l int) {
	if q.inBatch && l >= 0 && l < MaxLanes {
		q.bt.lane = l
	}
}

// sideLanes makes the side streams of lanes 1…n-1 and their join events,
// and the fork event; the context is current and the thread locked.
func (q *Queue) sideLanes(n int) error {
	if err := q.side(); err != nil {
		return err
	}
	for len(q.lanes) < n-1 {
		s, e, err := q.sideStream()
		if err != nil {
			return err
		}
		q.lanes, q.evLane = append(q.lanes, s), append(q.evLane, e)
	}
	return nil
}

// sideStream makes a non-blocking stream and an event without timing to
// join it; the context is current.
func (q *Queue) sideStream() (cu.Stream, cu.Event, error) {
	s, err := q.dev.ctx.StreamCreate(cu.StreamNonBlocking)
	if err != nil {
		return 0, 0, err
	}
	e, err := q.dev.ctx.EventCreate(cu.EventDisableTiming)
	if err != nil {
		_ = q.dev.ctx.StreamDestroy(s)
		return 0, 0, err
	}
	return s, e, nil
}

// Fork marks the batch's next launch as independent of the batch's
// earlier launches (it still follows everything enqueued before the
// batch): it runs on a second stream, concurrently with them, and the
// launches after it (unless marked too) wait for it. Outside a batch it
// does nothing. (The runtime puts independent actors on lanes instead:
// Lane.)
func (q *Queue) Fork() {
	if q.inBatch {
		q.bt.fork = true
	}
}

// side returns the queue's second stream and its fork and join events,
// made on first use; the context is current and the thread locked.
func (q *Queue) side() error {
	if q.s2 != 0 {
		return nil
	}
	s2, ej, err := q.sideStream()
	if err != nil {
		return err
	}
	ef, err := q.dev.ctx.EventCreate(cu.EventDisableTiming)
	if err != nil {
		_ = q.dev.ctx.EventDestroy(ej)
		_ = q.dev.ctx.StreamDestroy(s2)
		return err
	}
	q.s2, q.evFork, q.evJoin = s2, ef, ej
	return nil
}

var _ device.Batcher = (*Queue)(nil)

// BeginBatch starts a batch (device.Batcher): until EndBatch, LaunchQuiet
// records launches. With replay, recurring batches become CUDA Graphs.
func (q *Queue) BeginBatch(replay bool) {
	if q.bt == nil {
		q.bt = &batch{}
	}
	b := q.bt
	b.replay = replay && !q.dev.noGraphs.Load()
	b.launches = b.launches[:0]
	b.key, b.shape = b.key[:0], b.shape[:0]
	b.offs = b.offs[:0]
	b.fork, b.forks = false, false
	b.lane, b.lanes = 0, 1
	b.after, b.deps = b.after[:0], b.deps[:0]
	q.inBatch = true
}

// LaunchQuiet launches k over r without recording an event: inside a
// batch the launch is recorded (its wait list applies at once), outside
// one it is enqueued at once.
func (q *Queue) LaunchQuiet(k device.Kernel, r device.Range, wait ...device.Event) error {
	if q.released {
		return fmt.Errorf("launch on %s: queue %w", q.dev.info, device.ErrReleased)
	}
	kk, ok := k.(*Kernel)
	if !ok || kk.dev.ctx != q.dev.ctx {
		return fmt.Errorf("launch of kernel %s on %s: expected a kernel built for this device", k.Name(), q.dev.info)
	}
	grid, block, err := shape(r)
	if err != nil {
		return fmt.Errorf("launch of kernel %s on %s: %w", kk.name, q.dev.info, err)
	}
	params, err := kk.params()
	if err != nil {
		return err
	}
	if q.inBatch {
		if len(wait) > 0 {
			if err := q.dev.run(func() error { return q.waits(wait) }); err != nil {
				return fmt.Errorf("launch of kernel %s on %s: %w", kk.name, q.dev.info, err)
			}
		}
		q.recordLaunch(kk, grid, block)
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := q.dev.ctx.SetCurrent(); err != nil {
		return err
	}
	if err := q.waits(wait); err != nil {
		return fmt.Errorf("launch of kernel %s on %s: %w", kk.name, q.dev.info, err)
	}
	if err := kk.f.Launch(q.s, grid, block, kk.shared, params); err != nil {
		return fmt.Errorf("kernel %s: %w", kk.name, q.fail("launch", err))
	}
	if q.capturing != nil {
		q.capturing.n++
	}
	return nil
}

// recordLaunch adds a launch of kk to the batch: to its launches, its key and
// its shape.
func (q *Queue) recordLaunch(kk *Kernel, grid, block cu.Dim3) {
	b := q.bt
	l := batchLaunch{k: kk, grid: grid, block: block, shared: kk.shared, lane: b.lane}
	l.fork = b.fork && len(b.launches) > 0 && l.lane == 0
	b.fork, b.lane = false, 0
	at := len(b.key)
	if len(b.after) > 0 {
		from := len(b.deps)
		b.deps = append(b.deps, b.after...)
		l.after = b.deps[from:len(b.deps):len(b.deps)]
		b.after = b.after[:0]
		b.key = append(b.key, 'a', byte(len(l.after)))
		for _, i := range l.after {
			b.key = binary.LittleEndian.AppendUint32(b.key, uint32(i))
		}
	}
	b.forks = b.forks || l.fork
	b.lanes = max(b.lanes, l.lane+1)
	b.key = binary.LittleEndian.AppendUint64(b.key, uint64(kk.f))
	if l.fork {
		b.key = append(b.key, 'f')
	}
	if l.lane > 0 {
		b.key = append(b.key, 'l', byte(l.lane))
	}
	for _, v := range [...]uint32{grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, kk.shared, uint32(len(kk.vals))} {
		b.key = binary.LittleEndian.AppendUint32(b.key, v)
	}
	start := len(b.offs)
	for _, v := range kk.vals {
		b.key = binary.LittleEndian.AppendUint32(b.key, uint32(len(v)))
		for len(b.key)%8 != 0 {
			b.key = append(b.key, 0)
		}
		b.shape = append(b.shape, b.key[at:]...)
		b.offs = append(b.offs, len(b.key))
		b.key = append(b.key, v...)
		at = len(b.key)
	}
	b.shape = append(b.shape, b.key[at:]...)
	l.args = b.offs[start:len(b.offs):len(b.offs)]
	l.argEnd = len(b.key)
	b.launches = append(b.launches, l)
}

// launchAll launches the batch's launches on q.s; the context is current
// and the thread locked.
func (q *Queue) launchAll(b *batch) error {
	if b.forks || b.lanes > 1 {
		if err := q.sideLanes(b.lanes); err != nil {
			return q.fail("fork", err)
		}
		if err := q.evFork.Record(q.s); err != nil {
			return q.fail("fork", err)
		}
	}
	var laneOpen [MaxLanes]bool // lane's stream waited for the batch's start
	joinLanes := func() error {
		for l := 1; l < b.lanes; l++ {
			if !laneOpen[l] {
				continue
			}
			if err := q.evLane[l-1].Record(q.lanes[l-1]); err != nil {
				return q.fail("lane join", err)
			}
			if err := q.s.WaitEvent(q.evLane[l-1]); err != nil {
				return q.fail("lane join", err)
			}
		}
		return nil
	}
	open := false // launches on s2 not yet joined into s
	join := func() error {
		if !open {
			return nil
		}
		open = false
		if err := q.evJoin.Record(q.s2); err != nil {
			return q.fail("join", err)
		}
		if err := q.s.WaitEvent(q.evJoin); err != nil {
			return q.fail("join", err)
		}
		return nil
	}
	if err := q.depEvents(b); err != nil {
		return err
	}
	b.streams = b.streams[:0]
	for i, l := range b.launches {
		s := q.s
		if l.lane > 0 {
			s = q.lanes[l.lane-1]
			if !laneOpen[l.lane] {
				if err := s.WaitEvent(q.evFork); err != nil {
					return q.fail("lane", err)
				}
				laneOpen[l.lane] = true
			}
		} else if l.fork {
			if !open {
				if err := q.s2.WaitEvent(q.evFork); err != nil {
					return q.fail("fork", err)
				}
				open = true
			}
			s = q.s2
		} else if err := join(); err != nil {
			return err
		}
		b.streams = append(b.streams, s)
		for _, j := range l.after {
			if b.streams[j] == s {
				continue // in order on one stream already
			}
			if err := s.WaitEvent(q.evDep[j]); err != nil {
				return q.fail("lane wait", err)
			}
		}
		b.ptrs = b.ptrs[:0]
		for _, o := range l.args {
			b.ptrs = append(b.ptrs, uintptr(unsafe.Pointer(&b.key[o])))
		}
		var params unsafe.Pointer
		if len(b.ptrs) > 0 {
			params = unsafe.Pointer(&b.ptrs[0])
		}
		if err := l.k.f.Launch(s, l.grid, l.block, l.shared, params); err != nil {
			return fmt.Errorf("kernel %s: %w", l.k.name, q.fail("launch", err))
		}
		if c := q.capturing; c != nil {
			c.n++
			if c.nodes != nil {
				if n, err := s.LastCaptured(); err == nil {
					c.nodes = append(c.nodes, n)
				} else {
					c.nodes = nil // not named: the graph is keyed by argument values
				}
			}
		}
		if b.waited[i] {
			if err := q.evDep[i].Record(s); err != nil {
				return q.fail("lane event", err)
			}
		}
	}
	runtime.KeepAlive(b.key)
	if err := join(); err != nil {
		return err
	}
	return joinLanes()
}

// depEvents marks the launches that later ones wait for (After) and makes
// an event for each, once per launch index; the context is current.
func (q *Queue) depEvents(b *batch) error {
	b.waited = b.waited[:0]
	for range b.launches {
		b.waited = append(b.waited, false)
	}
	for _, l := range b.launches {
		for _, j := range l.after {
			b.waited[j] = true
		}
	}
	for i, w := range b.waited {
		for w && len(q.evDep) <= i {
			e, err := q.dev.ctx.EventCreate(cu.EventDisableTiming)
			if err != nil {
				return q.fail("lane event", err)
			}
			q.evDep = append(q.evDep, e)
		}
	}
	return nil
}

// batchGraph is a cached CUDA Graph of a batch's launches: the key of its
// last launch (argument values included) and, when its arguments can be
// set in place, the node of each launch.
type batchGraph struct {
	g     *Graph
	key   []byte
	nodes []cu.GraphNode
}

// EndBatch enqueues the batch's launches (as one CUDA Graph when the batch
// recurs and replay was asked) and returns the event of their completion,
// or nil when the batch was empty.
func (q *Queue) EndBatch() (device.Event, error) {
	if !q.inBatch {
		return nil, fmt.Errorf("end of batch on %s: no batch begun", q.dev.info)
	}
	q.inBatch = false
	b := q.bt
	if len(b.launches) == 0 {
		return nil, nil
	}
	q.counts.Batches++
	q.counts.Launches += int64(len(b.launches))
	if b.replay && len(b.launches) > 1 {
		if ev, ok, err := q.graphLaunch(b); ok || err != nil {
			return ev, err
		}
	}
	return q.enqueue("launch", nil, nil, func() error { return q.launchAll(b) })
}

// graphLaunch launches batch b as a cached graph, capturing it when its
// shape (or, without argument updates, its key) was seen once before; ok
// is false when b is to be launched directly.
func (q *Queue) graphLaunch(b *batch) (ev device.Event, ok bool, err error) {
	update := !q.noUpdates && cu.CanUpdateKernels()
	k := b.key
	if update {
		k = b.shape
	}
	if g := q.graphs[string(k)]; g != nil {
		if string(g.key) != string(b.key) {
			if !update || q.setArgs(b, g) != nil {
				q.updatesOff()
				return nil, false, nil
			}
			q.counts.Updated++
		}
		q.counts.Replayed++
		ev, err = g.g.Launch(q)
		return ev, true, err
	}
	if q.seen == nil {
		q.seen = map[string]bool{}
		q.graphs = map[string]*batchGraph{}
	}
	if !q.seen[string(k)] || len(q.graphs) >= maxGraphs {
		if len(q.seen) >= maxSeen {
			clear(q.seen)
		}
		q.seen[string(k)] = true
		return nil, false, nil
	}
	g, err := q.capture(b, update)
	if err != nil {
		q.dev.noGraphs.Store(true) // capture does not work here: launch directly from now on
		return nil, false, nil
	}
	if update && g.nodes == nil {
		_ = g.g.Release()
		q.updatesOff()
		return nil, false, nil
	}
	q.counts.Captured++
	q.graphs[string(k)] = g
	delete(q.seen, string(k))
	q.counts.Replayed++
	ev, err = g.g.Launch(q)
	return ev, true, err
}

// capture captures the batch's launches as a CUDA Graph; with nodes it
// also asks for the node of each launch (the graph's nodes are nil if the
// driver could not name them).
func (q *Queue) capture(b *batch, nodes bool) (*batchGraph, error) {
	var named []cu.GraphNode
	g, err := q.Capture(func() error {
		if nodes {
			q.capturing.nodes = make([]cu.GraphNode, 0, len(b.launches))
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := q.dev.ctx.SetCurrent(); err != nil {
			return err
		}
		err := q.launchAll(b)
		named = q.capturing.nodes
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(named) != len(b.launches) {
		named = nil
	}
	return &batchGraph{g: g, key: append([]byte(nil), b.key...), nodes: named}, nil
}

// setArgs sets, in cached graph g of b's shape, the arguments of the
// launches whose values differ from g's last launch, and makes b's key
// g's. On failure some launches may hold new values already.
func (q *Queue) setArgs(b *batch, g *batchGraph) error {
	if g.nodes == nil || len(g.key) != len(b.key) {
		return fmt.Errorf("graph arguments on %s: launches not named", q.dev.info)
	}
	err := q.dev.run(func() error {
		for i, l := range b.launches {
			if len(l.args) == 0 || string(b.key[l.args[0]:l.argEnd]) == string(g.key[l.args[0]:l.argEnd]) {
				continue
			}
			b.ptrs = b.ptrs[:0]
			for _, o := range l.args {
				b.ptrs = append(b.ptrs, uintptr(unsafe.Pointer(&b.key[o])))
			}
			if err := g.g.exec.SetKernelParams(g.nodes[i], l.k.f, l.grid, l.block, l.shared, unsafe.Pointer(&b.ptrs[0])); err != nil {
				return err
			}
		}
		runtime.KeepAlive(b.key)
		return nil
	})
	if err != nil {
		return err
	}
	copy(g.key, b.key)
	return nil
}

// updatesOff keys the queue's graphs by argument values from now on,
// releasing those cached by shape (launches in flight complete).
func (q *Queue) updatesOff() {
	q.noUpdates = true
	_ = q.releaseGraphs()
	clear(q.seen)
}

// BatchStats returns the queue's batch counts (device.BatchCounter).
func (q *Queue) BatchStats() device.BatchStats { return q.counts }

var _ device.BatchCounter = (*Queue)(nil)

// Graphs returns the number of CUDA Graphs the queue's batches cached.
func (q *Queue) Graphs() int { return len(q.graphs) }

func (q *Queue) releaseGraphs() error {
	var err error
	for k, g := range q.graphs {
		if e := g.g.Release(); e != nil && err == nil {
			err = e
		}
		delete(q.graphs, k)
	}
	return err
}
