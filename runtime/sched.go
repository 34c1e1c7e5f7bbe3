package runtime

import (
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"unsafe" // go:linkname, Sizeof
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// task is a run-queue entry: run a unit (round 0) or help its team round.
type task struct {
	u     *unit
	round uint64
}

type qitem struct {
	t    task
	prio int
	seq  uint64
}

// taskHeap is a priority queue of tasks: higher priority first, then first
// come first served. It is owned by one worker and guarded by its mutex.
type taskHeap []qitem

func (h taskHeap) less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	return h[i].seq < h[j].seq
}

func (h *taskHeap) push(it qitem) {
	*h = append(*h, it)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *taskHeap) pop() qitem {
	q := *h
	it := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = qitem{}
	q = q[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(q) && q.less(l, m) {
			m = l
		}
		if l+1 < len(q) && q.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return it
}

// pool is a set of workers with a run queue each (work stealing). A unit
// readied by a worker goes to that worker's "next" slot, so the consumer of
// a window runs on the core that wrote it while the window is in cache; the
// slot's previous occupant moves to the worker's queue. A worker takes its
// next slot, then its queue (highest priority first), then the pool's
// injection queue (work readied from outside the pool: device managers,
// dedicated actors, the controller), then steals the best task of another
// worker. With nothing found it spins for spinTime (at most half of the
// workers at once), then parks on its own wake-up channel: there is no
// lock or condition variable that every commit goes through.
type pool struct {
	ws []*worker
	_  [64]byte

	// Read by every worker for every task it looks for: on a line of
	// their own, away from the counters that idle workers write.
	ninj atomic.Int32
	done atomic.Bool
	_    [64]byte

	injMu sync.Mutex
	inj   taskHeap
	iseq  uint64
	_     [64]byte

	idleMu sync.Mutex
	idle   []*worker
	nidle  atomic.Int32
	_      [64]byte

	spinning atomic.Int32
	_        [64]byte
}

// worker is one pool worker's run queue and parking state, on cache lines of
// its own.
type worker struct {
	_ [64]byte
	// Read and written by the owner and by thieves.
	mu      sync.Mutex
	next    task
	hasNext bool
	h       taskHeap
	seq     uint64
	n       atomic.Int32 // tasks in next and h
	_       [64]byte
	// The owner's, read by others only rarely (wake-ups, the watchdog).
	p    *pool
	id   int
	busy atomic.Bool // running a task
	wake chan struct{}
	rnd  uint32
	spin atomic.Uint32 // pause's counter
	_    [64]byte
}

// pause waits for about n atomic increments of a counter that only w
// touches: a pause between polls that stays on w's own cache line.
func (w *worker) pause(n int) {
	for range n {
		w.spin.Add(1)
	}
}

// spinTime is how long an idle worker polls the run queues before it
// parks. A parked worker woken by another takes tens of microseconds to run
// again (the wake-up lands on the signalling worker's processor until
// another one steals it), longer than many firings: polling a little keeps
// short firings flowing between workers.
const spinTime = 30_000 // ns

func newPool(workers int) *pool {
	p := &pool{ws: padded[*worker](workers)} // read by every thief and spinner
	for i := range p.ws {
		p.ws[i] = &worker{p: p, id: i, wake: make(chan struct{}, 1), rnd: uint32(i)*2654435761 + 1}
	}
	return p
}

// workers returns the number of workers.
func (p *pool) workers() int { return len(p.ws) }

// push queues t: on worker from's next slot when from belongs to this pool
// (the task was readied by that worker), else on the injection queue. It
// wakes a parked worker when no worker is spinning.
func (p *pool) push(from *worker, t task) {
	if from != nil && from.p == p {
		from.mu.Lock()
		if from.hasNext {
			from.seq++
			from.h.push(qitem{t: from.next, prio: from.next.u.prio, seq: from.seq})
		}
		from.next, from.hasNext = t, true
		from.n.Add(1)
		from.mu.Unlock()
	} else {
		p.inject(t)
	}
	p.signal()
}

// pushBack queues t at the back of worker from's queue (a unit yielding its
// turn, or a team round's helpers), or on the injection queue.
func (p *pool) pushBack(from *worker, t task) {
	if from != nil && from.p == p {
		from.mu.Lock()
		from.seq++
		from.h.push(qitem{t: t, prio: t.u.prio, seq: from.seq})
		from.n.Add(1)
		from.mu.Unlock()
	} else {
		p.inject(t)
	}
	p.signal()
}

// yield queues t, a unit that gave up its turn while still ready: on the
// injection queue when another worker is idle or spinning, so that the
// worker that looks for work next takes it (a thief would take the oldest
// task of from's queue, which may be the very task t made room for), else
// at the back of from's queue.
func (p *pool) yield(from *worker, t task) {
	if p.spinning.Load() > 0 || p.nidle.Load() > 0 {
		p.inject(t)
		p.signal()
		return
	}
	p.pushBack(from, t)
}

func (p *pool) inject(t task) {
	p.injMu.Lock()
	p.iseq++
	p.inj.push(qitem{t: t, prio: t.u.prio, seq: p.iseq})
	p.ninj.Add(1)
	p.injMu.Unlock()
}

// signal wakes one parked worker when none is spinning: a spinning worker
// finds the new task itself.
func (p *pool) signal() {
	if p.spinning.Load() == 0 && p.nidle.Load() > 0 {
		p.wakeOne()
	}
}

// wakeN wakes up to n parked workers (a team round's helpers need them at
// once, not one after another).
func (p *pool) wakeN(n int) {
	for ; n > 0 && p.nidle.Load() > 0; n-- {
		p.wakeOne()
	}
}

func (p *pool) wakeOne() {
	p.idleMu.Lock()
	var w *worker
	if k := len(p.idle); k > 0 {
		w = p.idle[k-1]
		p.idle = p.idle[:k-1]
		p.nidle.Add(-1)
	}
	p.idleMu.Unlock()
	if w != nil {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// pending returns the number of queued tasks (a snapshot).
func (p *pool) pending() int64 {
	n := int64(p.ninj.Load())
	for _, w := range p.ws {
		n += int64(w.n.Load())
	}
	return n
}

// running reports whether any worker is running a task.
func (p *pool) running() bool {
	for _, w := range p.ws {
		if w.busy.Load() {
			return true
		}
	}
	return false
}

// hasWork reports whether any queue holds a task (a snapshot).
func (p *pool) hasWork() bool {
	if p.ninj.Load() > 0 {
		return true
	}
	for _, w := range p.ws {
		if w.n.Load() > 0 {
			return true
		}
	}
	return false
}

// localWork reports whether w has a queued task.
func (w *worker) localWork() bool { return w.n.Load() > 0 }

// takeLocal pops w's best task: the next slot unless the queue holds one of
// higher priority.
func (w *worker) takeLocal() (task, bool) {
	if w.n.Load() == 0 {
		return task{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hasNext && (len(w.h) == 0 || w.h[0].prio <= w.next.u.prio) {
		t := w.next
		w.next, w.hasNext = task{}, false
		w.n.Add(-1)
		return t, true
	}
	if len(w.h) > 0 {
		t := w.h.pop().t
		w.n.Add(-1)
		return t, true
	}
	return task{}, false
}

// steal takes one task from victim v: its best queued task, or its next
// slot when its queue is empty.
func (v *worker) steal() (task, bool) {
	if v.n.Load() == 0 {
		return task{}, false
	}
	if !v.mu.TryLock() {
		return task{}, false
	}
	defer v.mu.Unlock()
	if len(v.h) > 0 {
		t := v.h.pop().t
		v.n.Add(-1)
		return t, true
	}
	if v.hasNext {
		t := v.next
		v.next, v.hasNext = task{}, false
		v.n.Add(-1)
		return t, true
	}
	return task{}, false
}

func (p *pool) takeInjected() (task, bool) {
	if p.ninj.Load() == 0 {
		return task{}, false
	}
	p.injMu.Lock()
	defer p.injMu.Unlock()
	if len(p.inj) == 0 {
		return task{}, false
	}
	t := p.inj.pop().t
	p.ninj.Add(-1)
	return t, true
}

// find looks for a task for w: local, injected, then stolen from the
// others starting at a random one.
func (w *worker) find() (task, bool) {
	if t, ok := w.takeLocal(); ok {
		return t, true
	}
	p := w.p
	if t, ok := p.takeInjected(); ok {
		return t, true
	}
	n := len(p.ws)
	if n == 1 {
		return task{}, false
	}
	w.rnd ^= w.rnd << 13
	w.rnd ^= w.rnd >> 17
	w.rnd ^= w.rnd << 5
	start := int(w.rnd % uint32(n))
	for i := range n {
		v := p.ws[(start+i)%n]
		if v == w {
			continue
		}
		if t, ok := v.steal(); ok {
			return t, true
		}
	}
	return task{}, false
}

// get returns w's next task, spinning and then parking while there is none;
// it returns false once the pool is closed.
func (w *worker) get() (task, bool) {
	p := w.p
	for {
		if p.done.Load() {
			return task{}, false
		}
		if t, ok := w.find(); ok {
			return t, true
		}
		// Spin: poll every queue for a while (at most half the workers).
		if p.spinning.Load() < int32(max(1, len(p.ws)/2)) {
			p.spinning.Add(1)
			deadline := nanotime() + spinTime
			for i := 1; !p.done.Load() && nanotime() < deadline; i++ {
				// Back off between polls (to about half a
				// microsecond): every poll reads each worker's
				// queue length, and each read costs the owner a
				// cache-line transfer on its next push or pop.
				w.pause(min(i, 64))
				if p.hasWork() {
					if t, ok := w.find(); ok {
						p.spinning.Add(-1)
						// The last spinner leaves: let a parked worker
						// look for what else there is.
						if p.spinning.Load() == 0 && p.hasWork() {
							p.signal()
						}
						return t, true
					}
				}
				if i%32 == 0 {
					goruntime.Gosched()
				}
			}
			p.spinning.Add(-1)
		}
		// Park: register as idle, look once more (a push that saw no idle
		// worker is visible now), then wait for a wake-up.
		p.idleMu.Lock()
		p.idle = append(p.idle, w)
		p.nidle.Add(1)
		p.idleMu.Unlock()
		if p.hasWork() || p.done.Load() {
			if !p.unidle(w) {
				<-w.wake // a waker took us off the list: its token is coming
			}
			continue
		}
		<-w.wake
	}
}

// unidle takes w off the idle list; false when a waker already did.
func (p *pool) unidle(w *worker) bool {
	p.idleMu.Lock()
	defer p.idleMu.Unlock()
	for i, x := range p.idle {
		if x == w {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			p.nidle.Add(-1)
			return true
		}
	}
	return false
}

// close stops the pool: workers return once their current task ends.
func (p *pool) close() {
	p.done.Store(true)
	p.idleMu.Lock()
	idle := p.idle
	p.idle = nil
	p.nidle.Store(0)
	p.idleMu.Unlock()
	for _, w := range idle {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// cacheLine is the padding, in bytes, that keeps data written by one
// goroutine off the cache lines that others use (two 64-byte lines: x86's
// spatial prefetcher fetches lines in pairs).
const cacheLine = 128

// padded returns a slice of n zero values alone on its cache lines: with
// at least cacheLine bytes of padding on either side, no other allocation
// shares a line with it. The small per-context and per-unit arrays that a
// worker writes or reads for every firing (the Firing's windows, their
// offsets, the accumulators) would otherwise sit beside another worker's
// in the allocator's size class, and every write would take the line from
// the other core (a 64-stage fused chain spent 14 % of its time on the
// load of its first window at two workers).
func padded[T any](n int) []T {
	var z T
	k := (cacheLine + int(unsafe.Sizeof(z)) - 1) / int(unsafe.Sizeof(z))
	s := make([]T, n+2*k)
	return s[k : k+n : k+n]
}

// execCtx is one execution context (a pool worker, a dedicated actor's
// goroutine or a process): its Firing, its statistics and its trace. It
// is padded at both ends: its owner writes its Firing for every firing,
// and contexts are allocated one after another.
type execCtx struct {
	_       [cacheLine]byte
	r       *run
	id      int
	name    string
	firing  Firing
	insBuf  [][]byte
	outBuf  [][]byte
	inOff   []int
	outOff  []int
	acc     []*unitAcc
	trace   []traceEvent
	tracing bool
	// traceLeft is how many events this context has reserved from the
	// run's trace budget and not used; traceFull says the budget is spent
	// and traceDropped counts the events not recorded since (addTrace).
	traceLeft, traceDropped int64
	traceFull               bool
	// copies: a lane of a device's copies (linkTrace), whose trace events
	// hold the bytes moved where a firing's index would be
	copies bool
	t0     int64
	wk     *worker // the pool worker this context is, or nil
	// lastTeamNs is how long this context's last firing of a team round
	// took (awaitRound's patience).
	lastTeamNs int64
	// fuseBuf is the scratch of the fused chains this context runs: the
	// windows between their stages (fuse.go).
	fuseBuf []byte
	_       [cacheLine]byte
}

func newExecCtx(r *run, id int, name string, nunits, traceCap int) *execCtx {
	mp := 0
	for _, u := range r.units {
		mp = max(mp, u.maxPorts)
	}
	c := &execCtx{
		r: r, id: id, name: name,
		insBuf: padded[[]byte](mp), outBuf: padded[[]byte](mp),
		inOff: padded[int](mp), outOff: padded[int](mp),
		acc: padded[*unitAcc](nunits), t0: r.t0,
	}
	if traceCap > 0 {
		c.tracing = true
		c.trace = make([]traceEvent, 0, traceCap)
	}
	return c
}

// addTrace records e on the context's trace lane, unless the run's trace
// holds Options.TraceLimit events already: then it counts it as dropped.
// Events are reserved from the run's budget a chunk at a time, so that
// pool workers do not contend on it at every firing.
func (c *execCtx) addTrace(e traceEvent) {
	if c.traceLeft == 0 && !c.reserveTrace() {
		c.traceDropped++
		return
	}
	c.traceLeft--
	c.trace = append(c.trace, e)
}

// reserveTrace takes up to a chunk of events from the run's trace budget
// for this context, reporting whether it got any: 4096 at most, a 64th of
// what is left once little is, so that the events other contexts reserved
// and did not use leave the trace short of its limit by little.
func (c *execCtx) reserveTrace() bool {
	if c.traceFull {
		return false
	}
	chunk := min(4096, max(16, c.r.traceBudget.Load()/64))
	before := c.r.traceBudget.Add(-chunk) + chunk
	if before <= 0 {
		c.traceFull = true
		return false
	}
	c.traceLeft = min(chunk, before)
	return true
}

// now returns nanoseconds since the run started.
func (c *execCtx) now() int64 { return nanotime() - c.t0 }

// firingFor prepares the context's Firing for unit u.
func (c *execCtx) firingFor(u *unit) *Firing {
	f := &c.firing
	f.ctx, f.run = c.r.ctx, c.r
	f.actor = u.a
	f.replica = 0
	f.replicas = u.replicas
	f.leader = true
	f.team = false // a team with replicated state sets it (replicaTeam.runReplica)
	f.ins = c.insBuf[:len(u.ins)]
	f.outs = c.outBuf[:len(u.outs)]
	return f
}

// record accounts one firing of u, [t0, t1) in run time.
func (c *execCtx) record(u *unit, idx, t0, t1 int64) {
	c.recordIn(c.accOf(u), u, idx, t0, t1)
}

// recordIn is record into accumulator a.
func (c *execCtx) recordIn(a *unitAcc, u *unit, idx, t0, t1 int64) {
	d := t1 - t0
	a.add(d)
	if c.r.liveStats {
		u.busyLive.Add(d)
	}
	if c.tracing {
		c.addTrace(traceEvent{unit: int32(u.idx), firing: idx, ts: t0, dur: d})
	}
}

// accOf returns u's accumulator in this context, made on first use.
func (c *execCtx) accOf(u *unit) *unitAcc {
	a := c.acc[u.idx]
	if a == nil {
		a = &unitAcc{}
		c.acc[u.idx] = a
	}
	return a
}

// recordInvocation records firings [base, base+k) of u that ran together
// from t0 to t1 (a kernel invocation), each taking an equal share: one
// accumulator update, and a trace event per firing when tracing.
func (c *execCtx) recordInvocation(u *unit, base, k, t0, t1 int64) {
	c.recordInvocationIn(c.accOf(u), u, base, k, t0, t1)
}

// recordInvocationIn is recordInvocation into accumulator a.
func (c *execCtx) recordInvocationIn(a *unitAcc, u *unit, base, k, t0, t1 int64) {
	span := t1 - t0
	a.addN(span, k)
	if c.r.liveStats {
		u.busyLive.Add(span)
	}
	if c.tracing {
		for j := range k {
			s, e := t0+span*j/k, t0+span*(j+1)/k
			c.addTrace(traceEvent{unit: int32(u.idx), firing: base + j, ts: s, dur: e - s})
		}
	}
}

// work is a pool worker's loop: it runs tasks until the pool closes.
func (r *run) work(c *execCtx, w *worker) {
	defer r.wg.Done()
	c.wk = w
	for {
		t, ok := w.get()
		if !ok {
			return
		}
		w.busy.Store(true)
		if t.round != 0 {
			if t.u.mode.join(t.u, c, t.round) {
				t.u.runPooled(c)
			}
		} else {
			t.u.runPooled(c)
		}
		w.busy.Store(false)
	}
}
