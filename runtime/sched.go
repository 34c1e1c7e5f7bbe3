package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	_ "unsafe" // for go:linkname

	"github.com/sluicehq/sluice/fifo"
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// task is a queue entry: run a unit (round 0) or help its team round.
type task struct {
	u     *unit
	round uint64
}

type qitem struct {
	t    task
	prio int
	seq  uint64
}

// queue is an executor's firing request queue: a priority queue (higher
// priority first, then first come first served) with parked workers.
type queue struct {
	mu      sync.Mutex
	cond    sync.Cond
	h       []qitem
	seq     uint64
	closed  bool
	waiting int
	n       atomic.Int64
	workers int
	// done mirrors closed for the lock-free spin in pop.
	done atomic.Bool
	// spinning counts workers polling for work before they park.
	spinning atomic.Int32
}

// spinTime is how long an idle worker polls the queue before it parks. A
// parked worker woken by another takes tens of microseconds to run again
// (the wake-up lands on the signalling worker's processor until another
// one steals it), longer than many firings: polling a little keeps short
// firings flowing between workers.
const spinTime = 30_000 // ns

func newQueue(workers int) *queue {
	q := &queue{workers: workers, h: make([]qitem, 0, 64)}
	q.cond.L = &q.mu
	return q
}

func (q *queue) less(i, j int) bool {
	a, b := &q.h[i], &q.h[j]
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.seq < b.seq
}

func (q *queue) push(t task) {
	q.mu.Lock()
	q.seq++
	q.h = append(q.h, qitem{t: t, prio: t.u.prio, seq: q.seq})
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
	q.n.Add(1)
	if q.waiting > 0 {
		q.cond.Signal()
	}
	q.mu.Unlock()
}

// pop waits for a task; it returns false once the queue is closed. An idle
// worker first polls for spinTime (at most half the workers at once, and at
// least one), then parks.
func (q *queue) pop() (task, bool) {
	if q.n.Load() == 0 && !q.done.Load() && q.spinning.Load() < int32(max(1, q.workers/2)) {
		q.spinning.Add(1)
		deadline := nanotime() + spinTime
		for i := 1; q.n.Load() == 0 && !q.done.Load() && nanotime() < deadline; i++ {
			if i%32 == 0 {
				goruntime.Gosched()
			}
		}
		q.spinning.Add(-1)
	}
	q.mu.Lock()
	for len(q.h) == 0 && !q.closed {
		q.waiting++
		q.cond.Wait()
		q.waiting--
	}
	if q.closed {
		q.mu.Unlock()
		return task{}, false
	}
	t := q.h[0].t
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h[last] = qitem{}
	q.h = q.h[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(q.h) && q.less(l, m) {
			m = l
		}
		if l+1 < len(q.h) && q.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	q.n.Add(-1)
	q.mu.Unlock()
	return t, true
}

func (q *queue) pending() int64 { return q.n.Load() }

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.done.Store(true)
	q.cond.Broadcast()
	q.mu.Unlock()
}

// execCtx is one execution context (a pool worker, a dedicated actor's
// goroutine or a process): its Firing, its statistics and its trace.
type execCtx struct {
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
	t0      int64
}

func newExecCtx(r *run, id int, name string, nunits, traceCap int) *execCtx {
	mp := 0
	for _, u := range r.units {
		mp = max(mp, u.maxPorts)
	}
	c := &execCtx{
		r: r, id: id, name: name,
		insBuf: make([][]byte, mp), outBuf: make([][]byte, mp),
		inOff: make([]int, mp), outOff: make([]int, mp),
		acc: make([]*unitAcc, nunits), t0: r.t0,
	}
	if traceCap > 0 {
		c.tracing = true
		c.trace = make([]traceEvent, 0, traceCap)
	}
	return c
}

// now returns nanoseconds since the run started.
func (c *execCtx) now() int64 { return nanotime() - c.t0 }

// firingFor prepares the context's Firing for unit u.
func (c *execCtx) firingFor(u *unit) *Firing {
	f := &c.firing
	f.ctx = c.r.ctx
	f.actor = u.a
	f.replica = 0
	f.replicas = u.replicas
	f.leader = true
	f.team = u.team
	f.ins = c.insBuf[:len(u.ins)]
	f.outs = c.outBuf[:len(u.outs)]
	return f
}

// record accounts one firing of u, [t0, t1) in run time.
func (c *execCtx) record(u *unit, idx, t0, t1 int64) {
	d := t1 - t0
	c.accOf(u).add(d)
	if c.tracing {
		c.trace = append(c.trace, traceEvent{unit: int32(u.idx), firing: idx, ts: t0, dur: d})
	}
}

// accOf returns u's accumulator in this context, made on first use.
func (c *execCtx) accOf(u *unit) *unitAcc {
	a := c.acc[u.idx]
	if a == nil {
		a = &unitAcc{min: -1}
		c.acc[u.idx] = a
	}
	return a
}

// recordInvocation records firings [base, base+k) of u that ran together
// from t0 to t1 (a kernel invocation), each taking an equal share: one
// accumulator update, and a trace event per firing when tracing.
func (c *execCtx) recordInvocation(u *unit, base, k, t0, t1 int64) {
	span := t1 - t0
	c.accOf(u).addN(span, k)
	if c.tracing {
		for j := range k {
			s, e := t0+span*j/k, t0+span*(j+1)/k
			c.trace = append(c.trace, traceEvent{unit: int32(u.idx), firing: base + j, ts: s, dur: e - s})
		}
	}
}

// worker is a pool worker: it runs tasks from its queue until it closes.
func (r *run) worker(c *execCtx, q *queue) {
	defer r.wg.Done()
	for {
		t, ok := q.pop()
		if !ok {
			return
		}
		r.busy.Add(1)
		if t.round != 0 {
			if t.u.claimLoop(c, t.round) {
				t.u.runPooled(c)
			}
		} else {
			t.u.runPooled(c)
		}
		r.busy.Add(-1)
	}
}

// dedicated runs an SDF/CSDF actor on its own goroutine with blocking
// FIFO accesses (HDPC style): next to KPN processes, or pinned to CPUs.
func (r *run) dedicated(c *execCtx, u *unit) {
	defer r.wg.Done()
	u.state.Store(stateBusy)
	if len(u.affinity) > 0 {
		goruntime.LockOSThread()
		defer goruntime.UnlockOSThread()
		if err := setAffinity(u.affinity); err != nil {
			r.fail(fmt.Errorf("actor %s: CPU affinity %v: %w", u.name, u.affinity, err))
			u.finish()
			return
		}
	}
	ctx := r.ctx
	f := c.firingFor(u)
	for {
		if (u.target >= 0 && u.next >= u.target) || u.abandoned() {
			u.finish()
			return
		}
		idx := u.next
		for i := range u.ins {
			p := &u.ins[i]
			n := p.tokens(idx, 1)
			if n == 0 {
				f.ins[i] = nil
				continue
			}
			win, err := p.r.Acquire(ctx, n)
			if err != nil {
				if errors.Is(err, fifo.ErrClosed) {
					u.finish()
				}
				return // cancelled: the run is stopping
			}
			f.ins[i] = win
		}
		for i := range u.outs {
			p := &u.outs[i]
			n := p.tokens(idx, 1)
			if n == 0 || p.w == nil {
				f.outs[i] = nil
				continue
			}
			win, err := p.w.Acquire(ctx, n)
			if err != nil {
				return
			}
			f.outs[i] = win
		}
		f.index = idx
		f.phase = int(idx % u.phases)
		t0 := c.now()
		err := u.call(f)
		if err == nil {
			c.record(u, idx, t0, c.now())
		} else {
			u.commit(idx, 0)
			u.stopWith(idx, err)
			return
		}
		u.commit(idx, 1)
	}
}

// process runs a KPN process on its own goroutine.
func (r *run) process(c *execCtx, u *unit) {
	defer r.wg.Done()
	u.state.Store(stateBusy)
	p := &Process{ctx: r.ctx, actor: u.a}
	for i := range u.ins {
		p.ins = append(p.ins, u.ins[i].r)
	}
	for i := range u.outs {
		p.outs = append(p.outs, u.outs[i].w)
	}
	t0 := c.now()
	err := callProc(u.proc, p)
	t1 := c.now()
	if c.tracing {
		c.trace = append(c.trace, traceEvent{unit: int32(u.idx), firing: -1, ts: t0, dur: t1 - t0})
	}
	c.procTime(u, t1-t0)
	if err != nil && !errors.Is(err, ErrEndOfStream) && !errors.Is(err, fifo.ErrClosed) {
		if r.ctx.Err() == nil {
			r.fail(fmt.Errorf("actor %s (process): %w", u.name, err))
		}
	}
	u.finish()
}

func (c *execCtx) procTime(u *unit, d int64) {
	a := c.acc[u.idx]
	if a == nil {
		a = &unitAcc{min: -1}
		c.acc[u.idx] = a
	}
	a.busy += d
}

func callProc(fn ProcessFunc, p *Process) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v}
		}
	}()
	return fn(p)
}
