package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"time"

	"github.com/sluicehq/sluice/fifo"
)

// ownGoroutine is the executor of a unit on a goroutine of its own: an
// SDF actor next to a KPN process or pinned to CPUs (dedicated), or a KPN
// process (kpnProcess). It is part of the CPU world.
type ownGoroutine struct {
	u    *unit
	what string                            // names the goroutine's context: "actor", "process"
	run  func(r *run, c *execCtx, u *unit) // the goroutine
}

func (o ownGoroutine) Name() string       { return "cpu (" + o.u.name + ")" }
func (o ownGoroutine) Kind() ExecutorKind { return KindCPU }
func (o ownGoroutine) launch(r *run) {
	c := r.newCtx(o.what + " " + o.u.name)
	r.wg.Add(1)
	go o.run(r, c, o.u)
}

// dedicated is the mode of an SDF/CSDF actor on a goroutine of its own
// that blocks on its FIFOs: next to a KPN process (which moves its
// streams without waking anyone), or pinned to CPUs. It fires in order,
// one replica.
type dedicated struct{ offPool }

func (m *dedicated) executor(u *unit) launcher {
	return ownGoroutine{u: u, what: "actor", run: m.run}
}

// ahead: the actor may have checked its barrier or cap and begun one
// firing more.
func (*dedicated) ahead(*unit) (int64, bool) { return 1, true }

// dedicate runs u on a goroutine of its own (assignModes): one replica,
// which fires in order. A team with replicated state cannot: it runs on
// the worker pool.
func (u *unit) dedicate() error {
	if _, ok := u.mode.(*replicaTeam); ok {
		return fmt.Errorf("runtime: actor %s: a team with replicated state runs on the worker pool, but the actor runs on its own goroutine (next to a KPN process, or pinned to CPUs)", u.name)
	}
	u.mode = &dedicated{}
	u.replicas = 1
	return nil
}

// kpnProcess is the mode of a KPN process (a ProcessFunc) on a goroutine
// of its own: it reads and writes its streams itself.
type kpnProcess struct {
	offPool
	proc ProcessFunc
}

// isProcess reports whether u is a KPN process.
func isProcess(u *unit) bool {
	_, ok := u.mode.(*kpnProcess)
	return ok
}

func (m *kpnProcess) executor(u *unit) launcher {
	return ownGoroutine{u: u, what: "process", run: m.run}
}

// stats: a process's busy time is its run's, less what its FIFOs blocked it.
func (*kpnProcess) stats(_ *unit, as *ActorStats, fifoIn, fifoOut time.Duration) {
	as.Kind = "process"
	as.BlockedIn, as.BlockedOut = fifoIn, fifoOut
	as.Busy = max(0, as.Busy-fifoIn-fifoOut)
}

func (*kpnProcess) checkpointable(*checkpoints, *unit) string {
	return "is a KPN process (it reads and writes its streams itself, so the runtime cannot stop it at a barrier): run it as an SDF actor, or run without checkpoints"
}

// run fires the actor on its own goroutine with blocking FIFO accesses
// (HDPC style).
func (*dedicated) run(r *run, c *execCtx, u *unit) {
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
		if ck := r.ck; ck != nil && !ck.awaitBarrier(ctx, u) {
			return // cancelled: the run is stopping
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

// run runs the process on its own goroutine.
func (m *kpnProcess) run(r *run, c *execCtx, u *unit) {
	defer r.wg.Done()
	u.state.Store(stateBusy)
	p := &Process{ctx: r.ctx, run: r, actor: u.a}
	for i := range u.ins {
		p.ins = append(p.ins, u.ins[i].r)
	}
	for i := range u.outs {
		p.outs = append(p.outs, u.outs[i].w)
	}
	t0 := c.now()
	err := callProc(m.proc, p)
	t1 := c.now()
	if c.tracing {
		c.addTrace(traceEvent{unit: int32(u.idx), firing: -1, ts: t0, dur: t1 - t0})
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
		a = &unitAcc{}
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
