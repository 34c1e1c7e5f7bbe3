package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// ExecutorKind says which world an Executor runs actors in.
type ExecutorKind string

const (
	// KindCPU is the host's CPU pool (and the I/O pool): Go and built-in
	// actors, fired by pool workers when ready (runtime/sched.go).
	KindCPU ExecutorKind = "cpu"
	// KindDevice is one device's runtime-manager: the kernel actors placed
	// on one GPU or OpenCL device (runtime/devexec_*.go).
	KindDevice ExecutorKind = "device"
	// KindRemote is a remote worker reached over the network: the actor
	// runs on another host and its ports are this host's FIFOs (package
	// cluster implements it).
	KindRemote ExecutorKind = "remote"
)

// Executor is what the runtime sees of every place an actor can run: the
// CPU pool, each device's runtime-manager and each remote actor. The run
// launches every executor the same way (one door); what differs is behind
// it. The CPU pool and device managers are built in; remote executors come
// from Options.Remote.
type Executor interface {
	// Name names the executor in errors, statistics and traces ("cpu",
	// "device cuda:0", "worker w1/cpu").
	Name() string
	// Kind says which world it is.
	Kind() ExecutorKind
}

// launcher is an Executor the run can start: launch starts its goroutines
// (each calls r.wg.Done when it ends).
type launcher interface {
	Executor
	launch(r *run)
}

// RemoteExecutor places actors that the mapping puts off this host (on a
// worker) and runs them there. Package cluster implements it over NATS; the
// runtime never imports it.
type RemoteExecutor interface {
	Executor
	// Claims reports whether the placement is a remote one this executor
	// handles (e.g. "worker:NAME/DEVICE" or an any: requirement).
	Claims(pl *graph.Placement) bool
	// Prepare chooses the worker, checks its limits and reserves the actor
	// there, before anything runs; an error (limit exceeded, no worker
	// fits, refused credentials) fails the run before it starts.
	Prepare(ctx context.Context, ra *RemoteActor) (RemoteJob, error)
}

// RemoteJob is one actor prepared on a remote worker.
type RemoteJob interface {
	// Where names the worker and device running the actor.
	Where() string
	// Run runs the actor: it forwards the tokens of ra's inputs to the
	// worker and writes what the worker produces to ra's outputs, until
	// the actor finishes (target reached or inputs ended), fails, or ctx
	// ends. It closes nothing: the runtime closes the FIFOs.
	Run(ctx context.Context) (RemoteResult, error)
	// Cancel releases a prepared job that will not run (another actor's
	// preparation failed). It is safe after Run.
	Cancel()
}

// RemoteActor is an actor the runtime hands to a RemoteExecutor: the
// actor, its placement, how many firings to do, and its ports as this
// host's FIFO endpoints.
type RemoteActor struct {
	// Actor is the (flattened, atomic) actor.
	Actor *graph.Actor
	// Placement is its mapping entry.
	Placement *graph.Placement
	// Target is the number of firings to do; -1 runs until the inputs end.
	Target int64
	// Ins are the actor's inputs in port order.
	Ins []RemotePort
	// Outs are the actor's outputs in port order (Writer nil when an output
	// feeds no channel).
	Outs []RemotePort
	// Moved must be called after tokens were read from an input or written
	// to an output: it wakes the local neighbours.
	Moved func()
	// Trace is set when the run records a trace: the executor should bring
	// back the firings' times (RemoteResult.Spans).
	Trace bool
	// Fired, when the executor learns how many firings the worker has done
	// so far, records it (for progress displays).
	Fired func(n int64)
	// Resume, when set, is the actor's snapshot in the checkpoint the run
	// resumes from: the worker restores it and starts at its Firing.
	Resume *ActorSnapshot
}

// RemotePort is one port of a RemoteActor.
type RemotePort struct {
	// Port is the graph port.
	Port *graph.Port
	// Reader is the input's FIFO reader (inputs only).
	Reader *fifo.Reader
	// Writer is the output's FIFO writer (outputs only).
	Writer *fifo.Writer
	// Capacity is the channel's capacity in tokens: the remote side sizes
	// its FIFO, and its credits, from it.
	Capacity int
}

// RemoteResult is what a finished remote actor reports.
type RemoteResult struct {
	// Firings is the number of firings done on the worker.
	Firings int64
	// Busy is the time the worker spent firing the actor.
	Busy time.Duration
	// Spans, when known, are the firings' times, from the start of the
	// actor's run on the worker; they become the actor's statistics
	// (mean, min, max, p50) and trace slices, shifted to when this host
	// started the job (so clocks need not agree; the network's setup time
	// is the error).
	Spans []Span
}

// Span is one remote firing's time.
type Span struct {
	// Firing is the firing's index; Start and Dur its time.
	Firing     int64
	Start, Dur time.Duration
}

// IsRemotePlacement reports whether a placement names a remote worker
// ("worker:NAME/DEVICE") or asks for any device by requirements.
func IsRemotePlacement(pl *graph.Placement) bool {
	return pl != nil && (strings.HasPrefix(pl.Device, "worker:") || pl.Any != "")
}

// cpuPool is the CPU (or I/O) pool as an Executor: the work-stealing
// workers of sched.go.
type cpuPool struct {
	name string
	p    *pool
}

func (p *cpuPool) Name() string       { return p.name }
func (p *cpuPool) Kind() ExecutorKind { return KindCPU }
func (p *cpuPool) launch(r *run) {
	for i, w := range p.p.ws {
		c := r.newCtx(fmt.Sprintf("%s-%d", p.name, i))
		r.wg.Add(1)
		go r.work(c, w)
	}
}

// Name names the device manager.
func (d *devRunner) Name() string { return "device " + d.id }

// Kind is KindDevice.
func (d *devRunner) Kind() ExecutorKind { return KindDevice }

func (d *devRunner) launch(r *run) {
	d.c = r.newCtx("device " + d.id)
	if r.traceCap > 0 {
		d.link = newLinkTrace(r, d.id)
	}
	r.wg.Add(1)
	go d.loop()
}

// remoteUnit is a remote actor's local side, and its unit's mode: a
// prepared job and the unit whose FIFOs it moves. The run launches it
// with the remote executors (r.remotes).
type remoteUnit struct {
	offPool
	u   *unit
	ex  RemoteExecutor
	job RemoteJob
}

// quiet: the worker and the heartbeats watch a remote actor.
func (*remoteUnit) quiet(*unit) bool { return false }

func (*remoteUnit) stats(_ *unit, as *ActorStats, fifoIn, fifoOut time.Duration) {
	as.Kind = "remote"
	as.BlockedIn, as.BlockedOut = fifoIn, fifoOut
}

func (ru *remoteUnit) checkpointable(c *checkpoints, _ *unit) string {
	return c.remoteCheckpointable(ru)
}

// ahead: the worker may have begun a firing past those it reported.
func (*remoteUnit) ahead(*unit) (int64, bool) { return 1, false }

func (ru *remoteUnit) Name() string       { return ru.job.Where() }
func (ru *remoteUnit) Kind() ExecutorKind { return KindRemote }
func (ru *remoteUnit) launch(r *run) {
	c := r.newCtx("remote " + ru.u.name + " on " + ru.job.Where())
	r.wg.Add(1)
	go ru.run(r, c)
}

func (ru *remoteUnit) run(r *run, c *execCtx) {
	defer r.wg.Done()
	u := ru.u
	u.state.Store(stateBusy)
	t0 := c.now()
	res, err := ru.job.Run(r.ctx)
	t1 := c.now()
	u.firings.Store(res.Firings)
	if len(res.Spans) > 0 {
		for _, sp := range res.Spans {
			c.record(u, sp.Firing, t0+int64(sp.Start), t0+int64(sp.Start+sp.Dur))
		}
	} else {
		if c.tracing {
			c.addTrace(traceEvent{unit: int32(u.idx), firing: -1, ts: t0, dur: t1 - t0})
		}
		a := c.accOf(u)
		a.n += res.Firings
		a.busy += int64(res.Busy)
	}
	if err != nil && !errors.Is(err, ErrEndOfStream) && !errors.Is(err, fifo.ErrClosed) {
		if r.ctx.Err() == nil {
			r.fail(fmt.Errorf("actor %s (on %s): %w", u.name, ru.job.Where(), err))
		}
	}
	u.finish()
}

// setupRemote makes u a remote actor: the executor claims its placement.
func (r *run) setupRemote(u *unit, pl *graph.Placement) error {
	ex := r.opts.Remote
	if ex == nil || !ex.Claims(pl) {
		return fmt.Errorf("runtime: actor %s is placed on %s: a remote placement needs a remote executor (sluice run --broker URL, Options.Remote), found none that claims it", u.name, placementName(pl))
	}
	ru := &remoteUnit{u: u, ex: ex}
	u.mode = ru
	r.remotes = append(r.remotes, ru)
	return nil
}

// prepareRemotes hands every remote actor to its executor, once the FIFOs
// exist, so that placement errors (limits, no worker) fail the run before
// any actor starts.
func (r *run) prepareRemotes(ctx context.Context) error {
	for _, ru := range r.remotes {
		u := ru.u
		ra := &RemoteActor{Actor: u.a, Placement: r.opts.Mapping.Actors[u.name], Target: u.target, Moved: u.notify, Trace: r.opts.Trace != nil,
			Fired: func(n int64) { // only forward: a late report must not lower it
				for o := u.firings.Load(); n > o && !u.firings.CompareAndSwap(o, n); o = u.firings.Load() {
				}
			}}
		if ck := r.opts.Checkpoint; ck != nil && ck.Resume != nil {
			if s, ok := ck.Resume.Actors[u.name]; ok {
				ra.Resume = &s
			}
		}
		for i := range u.ins {
			p := &u.ins[i]
			ra.Ins = append(ra.Ins, RemotePort{Port: p.p, Reader: p.r, Capacity: p.ch.fr.f.Capacity()})
		}
		for i := range u.outs {
			p := &u.outs[i]
			rp := RemotePort{Port: p.p, Writer: p.w}
			if p.fr != nil {
				rp.Capacity = p.fr.f.Capacity()
			}
			ra.Outs = append(ra.Outs, rp)
		}
		job, err := ru.ex.Prepare(ctx, ra)
		if err != nil {
			r.cancelRemotes()
			return fmt.Errorf("runtime: actor %s: %w", u.name, err)
		}
		ru.job = job
	}
	return nil
}

// cancelRemotes releases every prepared remote job.
func (r *run) cancelRemotes() {
	for _, ru := range r.remotes {
		if ru.job != nil {
			ru.job.Cancel()
		}
	}
}

func placementName(pl *graph.Placement) string {
	if pl.Any != "" {
		return "any device with " + pl.Any
	}
	return pl.Device
}

// executors lists the run's executors in launch order: the CPU and I/O
// pools, the device managers, the actors on their own goroutines and the
// remote actors.
func (r *run) executors() []launcher {
	ls := []launcher{&cpuPool{name: "cpu", p: r.cpu}, &cpuPool{name: "io", p: r.io}}
	for _, d := range r.devs {
		ls = append(ls, d)
	}
	for _, u := range r.units {
		if l := u.mode.executor(u); l != nil {
			ls = append(ls, l)
		}
	}
	for _, ru := range r.remotes {
		ls = append(ls, ru)
	}
	return ls
}
