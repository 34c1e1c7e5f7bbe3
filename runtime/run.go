package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// DefaultTraceLimit is the most events a run's trace holds when
// Options.TraceLimit is 0: 128 MB of memory while the run goes on, about
// 470 MB of JSON.
const DefaultTraceLimit = 4_000_000

// Options configure Run. The zero value runs the graph until its sources
// close, with pools sized to the machine and the default watchdog.
type Options struct {
	// Iterations is the number of graph iterations to run: every SDF/CSDF
	// actor fires Iterations times its repetition-vector entry, then stops
	// and closes its outputs. 0 runs until the sources end their streams
	// (ErrEndOfStream) and everything downstream has drained.
	Iterations int64
	// Mapping gives per-actor replicas, priority and CPU affinity. Every
	// placement's device must be "" or "cpu" (this runtime runs CPU actors).
	Mapping *graph.Mapping
	// Workers is the size of the CPU pool; 0 means runtime.GOMAXPROCS(0).
	Workers int
	// IOWorkers is the size of the pool for actors marked IO; 0 means 4.
	IOWorkers int
	// Wait is the FIFOs' wait strategy for blocking accesses (KPN processes
	// and actors on dedicated goroutines).
	Wait fifo.WaitStrategy
	// DefaultCapacity, when set, sizes channels whose Capacity is 0; a
	// result ≤ 0 falls back to the built-in rule (see docs/runtime.md).
	DefaultCapacity func(c *graph.Channel) int
	// Watchdog is how long every live actor must be blocked, with no token
	// moving, before Run reports a deadlock; 0 means 500ms, < 0 disables it.
	Watchdog time.Duration
	// CheckEmpty makes Run fail if a channel does not hold exactly its
	// initial tokens at the end (HDPC's "all channels empty" debug check).
	CheckEmpty bool
	// Trace, when set, receives a Chrome Trace Event JSON file (opens in
	// Perfetto and chrome://tracing): one track per worker, one slice per
	// firing.
	Trace io.Writer
	// TraceLimit is the most events (firings, processes' lives, copies)
	// the trace holds: the run keeps them in memory until it ends (32
	// bytes each), and a long run of small firings would take all of it.
	// Once the trace holds that many, later events are counted
	// (Stats.TraceDropped), not recorded. 0 means DefaultTraceLimit; < 0
	// keeps every event.
	TraceLimit int64
	// Priority, when set, gives each actor's priority (higher fires first
	// when workers are scarce), overriding the mapping's Priority.
	Priority func(a *graph.Actor) int
	// Progress, when set, is called every ProgressInterval (0 means 200ms)
	// with live statistics, from the goroutine that called Run.
	Progress         func(Snapshot)
	ProgressInterval time.Duration
	// DeviceMode says how kernel actors' invocations are enqueued on their
	// device: EnqueueAhead (the default) or the Callback baseline.
	DeviceMode DeviceMode
	// DeviceDepth is the most invocations of one kernel actor in flight
	// with EnqueueAhead; 0 chooses by the largest staging slot (one
	// invocation's tokens of one port) of the device's kernel actors: 16
	// up to 64 KiB, 8 up to 1 MiB, else 4 — or, where rounds spread over
	// lanes (CUDA), four rounds of at least 16 MiB of a port (8 to 32).
	DeviceDepth int
	// DeviceLanes is the most lanes (CUDA streams) a device's round of
	// invocations is spread over, so that a chain's successive invocations
	// run concurrently (docs/runtime.md, "Lanes"); 0 lets the device's
	// lanes and the round's invocations per actor decide, 1 keeps each
	// chain on one stream.
	DeviceLanes int
	// DeviceRound is the most invocations of one kernel actor in a round
	// (one CUDA Graph); 0 lets the runtime choose (docs/runtime.md,
	// "Rounds"): a quarter of DeviceDepth when the device's kernel actors
	// copy to or from host FIFOs, so that four rounds are in flight (copies
	// in, kernels, copies out and the host's turn), else half.
	DeviceRound int
	// SwapMode says how iterated kernel actors pass their swap pairs
	// between iterations: Swap (the default), CopyDevice or CopyHost.
	SwapMode SwapMode
	// NoGraphs turns off the replay of GPU-resident chains as CUDA Graphs:
	// each iteration's kernel launches are then enqueued one by one (the
	// baseline; `sluice run --no-graphs`).
	NoGraphs bool
	// Remote, when set, runs the actors that the mapping places on remote
	// workers ("worker:NAME/DEVICE" or any: requirements); package cluster
	// provides one (sluice run --broker URL).
	Remote RemoteExecutor
	// Firings, when set, caps the named actors' firings (a worker running
	// one actor of a client's graph uses it to do the client's count).
	Firings map[string]int64
	// StateIn gives, by actor name, the state copied in before the first
	// firing of actors with graph.CopyInState.
	StateIn map[string][]byte
	// NoFuseCPU turns off the fusion of chains of stateless CPU actors
	// (docs/runtime.md, "Fused chains"): every actor is then a scheduling
	// unit of its own (`sluice run --no-fuse-cpu`).
	NoFuseCPU bool
	// Tags makes the run track stream tags (Firing.AddTag, Firing.Tags);
	// it is also on when some actor has a "tags" attribute.
	Tags bool
	// Checkpoint, when set, takes checkpoints while the run goes, or
	// resumes one (docs/recovery.md).
	Checkpoint *CheckpointOptions
	// Files is how built-in actors reach the files they name: a root they
	// are confined to, or refused (FileAccess); the zero value is
	// unconfined.
	Files FileAccess

	// tune turns parts of the runtime off for A/B measurements and tests
	// (tuning.go); the zero value is every user's run.
	tune tuning
}

// Snapshot is the live state of a run passed to Options.Progress.
type Snapshot struct {
	// Elapsed is the time since the run started.
	Elapsed time.Duration
	// Actors lists every actor's progress, in graph order.
	Actors []ActorProgress
	// Channels lists every channel's fill, in graph order (see live.go).
	Channels []ChannelProgress
	// Devices lists the kernel-actor invocations in flight per device.
	Devices []DeviceProgress
}

// ActorProgress is one actor's progress in a Snapshot.
type ActorProgress struct {
	// Name is the (flattened) actor name.
	Name string
	// Firings done so far.
	Firings int64
	// Started counts the firings begun so far: those done and those
	// running now (or claimed by a round in progress), so that an actor
	// whose firings last seconds shows its progress before the first
	// ends. It is at least Firings.
	Started int64
	// Target is the number of firings the run asks for; -1 when it runs
	// until end of stream (and for KPN processes).
	Target int64
	// Done reports whether the actor has finished.
	Done bool
	// Busy is the time its firings, its process or its kernel invocations
	// (enqueue to completion) have taken so far, and Blocked the time it
	// waited for input or room (CPU actors; 0 for kernel and remote
	// actors).
	Busy, Blocked time.Duration
}

// run is the state of one Run call.
type run struct {
	ctx    context.Context
	cancel context.CancelFunc
	opts   Options
	g      *graph.Graph
	start  time.Time
	t0     int64 // nanotime() at start

	units []*unit
	fused []*unit // fused chains (fuse.go): scheduling units, not actors
	fifos []*fifoRec
	chans []*chanRec

	cpu, io *pool
	ctxs    []*execCtx // all execution contexts (workers, dedicated, processes)

	live    atomic.Int64 // units not yet finished
	allDone chan struct{}

	errOnce sync.Once
	err     error
	failed  chan struct{}
	stopped atomic.Bool

	wg sync.WaitGroup

	// Devices of kernel actors: one runtime-manager each.
	devs      []*devRunner
	liveStats bool // Options.Progress is set: keep the live mirrors
	devByName map[string]*devRunner
	devByID   map[string]*devRunner
	devBufs   []device.Buffer
	unpins    []func() error // pinned host FIFOs
	pinned    map[*fifo.FIFO]bool
	hostBufs  []device.HostBuffer // pinned bounce slots

	// Remote actors: one prepared job each.
	remotes  []*remoteUnit
	traceCap int
	// traceBudget is how many more events the trace may take
	// (Options.TraceLimit); contexts reserve them in chunks (addTrace).
	traceBudget atomic.Int64
	spans       spanLanes // device work Go actors reported (Firing.TraceDevice)

	ck *checkpoints // Options.Checkpoint (checkpoint.go)

	// What firings reach through their run (Firing.run), nil when the
	// run has none: shared variables (shared.go), stream tags (tags.go)
	// and declared state (state.go).
	shared *sharedSet
	tags   tagSet
	states actorStates
	handle Handle // the run as its actors see it (handle.go)
}

// newCtx makes an execution context (one per goroutine that fires actors).
func (r *run) newCtx(name string) *execCtx {
	c := newExecCtx(r, len(r.ctxs), name, len(r.units), r.traceCap)
	r.ctxs = append(r.ctxs, c)
	return c
}

// Run executes the graph on the CPU and returns its statistics. It
// validates and flattens g, resolves every actor's Go implementation,
// creates the channels and runs the actors until Options.Iterations
// iterations are done, or the streams end, or an actor fails, or ctx is
// cancelled, or the watchdog finds a deadlock. No goroutine it started
// outlives it. The statistics are returned also with an error, as far as
// the run got.
func Run(ctx context.Context, g *graph.Graph, opts Options) (*Stats, error) {
	if g == nil {
		return nil, errors.New("runtime: Run: nil graph")
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if g.HasComposites() {
		f, err := g.Flatten()
		if err != nil {
			return nil, err
		}
		g = f
	}
	if opts.Mapping != nil {
		if err := opts.Mapping.Check(g); err != nil {
			return nil, err
		}
	}
	r := &run{opts: opts, g: g, liveStats: opts.Progress != nil, allDone: make(chan struct{}), failed: make(chan struct{}),
		devByName: map[string]*devRunner{}, devByID: map[string]*devRunner{}, pinned: map[*fifo.FIFO]bool{}}
	if err := r.setup(ctx); err != nil {
		r.freeFifos()
		return nil, err
	}
	if err := r.prepareRemotes(ctx); err != nil {
		r.freeFifos()
		return nil, err
	}
	r.handle.r = r
	var err error
	if r.states, err = newStates(r.units, opts.StateIn); err != nil {
		r.freeFifos()
		return nil, err
	}
	if err = r.newCheckpoints(); err != nil {
		r.freeFifos()
		return nil, err
	}
	if r.tags, err = newTags(g, opts.Tags); err != nil {
		r.freeFifos()
		return nil, err
	}
	r.ctx, r.cancel = context.WithCancel(ctx)
	defer r.cancel()
	r.shared = newShared(g)
	if ck := opts.Checkpoint; ck != nil && ck.Resume != nil && !ck.External {
		if err := r.shared.restore(g, ck.Resume); err != nil {
			r.freeFifos()
			return nil, err
		}
	}

	// Start the actors that have a life cycle (every replica of a team
	// with replicated state).
	type startedImpl struct {
		u    *unit
		impl any
	}
	started := make([]startedImpl, 0, len(r.units))
	var startErr error
start:
	for _, u := range r.units {
		for _, impl := range u.lifecycle() {
			var err error
			switch s := impl.(type) {
			case RunStarter:
				err = s.StartRun(r.ctx, &r.handle)
			case Starter:
				err = s.Start(r.ctx)
			}
			if err != nil {
				startErr = fmt.Errorf("actor %s: start: %w", u.name, err)
				break start
			}
			started = append(started, startedImpl{u, impl})
		}
	}
	if startErr == nil {
		stopCk := r.ck.start()
		r.execute()
		stopCk()
	} else {
		r.fail(startErr)
	}
	r.cancelRemotes()
	var stopErrs []error
	for _, st := range started {
		if s, ok := st.impl.(Stopper); ok {
			if err := s.Stop(); err != nil {
				stopErrs = append(stopErrs, fmt.Errorf("actor %s: stop: %w", st.u.name, err))
			}
		}
	}
	st := r.stats()
	st.Shared = r.shared.stats(g)
	st.Checkpoints = r.ck.statistics()
	var stateErr error
	st.State, stateErr = finishState(r.states, r.units)
	err = r.err
	if err == nil {
		err = stateErr
	}
	if err == nil && len(stopErrs) > 0 {
		err = errors.Join(stopErrs...)
	}
	if err == nil && opts.CheckEmpty {
		err = r.checkEmpty()
	}
	if opts.Trace != nil && startErr == nil {
		st.TraceDropped = r.traceDropped()
		if terr := r.writeTrace(opts.Trace, st.TraceDropped); terr != nil && err == nil {
			err = fmt.Errorf("runtime: writing trace: %w", terr)
		}
	}
	r.freeFifos()
	return st, err
}

// fail records the run's first error and stops the run.
func (r *run) fail(err error) {
	r.errOnce.Do(func() {
		r.err = err
		close(r.failed)
	})
}

func (r *run) freeFifos() {
	r.freeDevices()
	for _, f := range r.fifos {
		_ = f.f.Free()
	}
}

// execute starts the pools, dedicated goroutines and processes, supervises
// them (completion, errors, cancellation, watchdog, progress) and waits for
// every goroutine to end.
func (r *run) execute() {
	r.start = time.Now()
	r.t0 = nanotime()
	r.live.Store(int64(len(r.units) + len(r.fused)))
	if len(r.units) == 0 {
		close(r.allDone)
	}
	traceCap := 0
	if r.opts.Trace != nil {
		traceCap = 4096
		limit := r.traceLimit()
		if limit < 0 {
			limit = math.MaxInt64 // every event
		}
		r.traceBudget.Store(limit)
	}
	r.traceCap = traceCap
	for _, e := range r.executors() {
		e.launch(r)
	}
	for _, u := range r.poolUnits() {
		if u.mode.pooled() {
			u.schedule()
		}
	}
	r.supervise()
	r.stopped.Store(true)
	r.cancel()
	r.cpu.close()
	r.io.close()
	r.wg.Wait()
}

// supervise is the controller's loop: it returns when every actor has
// finished, an actor failed, the context ended or a deadlock was found.
func (r *run) supervise() {
	var tick <-chan time.Time
	period := time.Duration(0)
	wd := r.opts.Watchdog
	if wd == 0 {
		wd = 500 * time.Millisecond
	}
	if wd > 0 {
		period = max(wd/5, time.Millisecond)
	}
	pi := r.opts.ProgressInterval
	if pi <= 0 {
		pi = 200 * time.Millisecond
	}
	if r.opts.Progress != nil && (period == 0 || pi < period) {
		period = pi
	}
	if period > 0 {
		t := time.NewTicker(period)
		defer t.Stop()
		tick = t.C
	}
	var (
		quietSince   time.Time
		lastProgress uint64
		lastReport   = time.Now()
	)
	for {
		select {
		case <-r.allDone:
			return
		case <-r.failed:
			return
		case <-r.ctx.Done():
			r.fail(fmt.Errorf("runtime: run of graph %q stopped: %w", r.g.Name, context.Cause(r.ctx)))
			return
		case now := <-tick:
			if r.opts.Progress != nil && now.Sub(lastReport) >= pi {
				lastReport = now
				r.opts.Progress(r.snapshot())
			}
			if wd <= 0 {
				continue
			}
			p := r.progressCount()
			if !r.quiescent() || p != lastProgress || quietSince.IsZero() {
				lastProgress = p
				quietSince = now
				if !r.quiescent() {
					quietSince = time.Time{}
				}
				continue
			}
			if now.Sub(quietSince) >= wd {
				select {
				case <-r.allDone:
					return
				default:
				}
				r.fail(r.deadlockError())
				return
			}
		}
	}
}

func (r *run) snapshot() Snapshot {
	s := Snapshot{Elapsed: time.Since(r.start), Actors: make([]ActorProgress, len(r.units))}
	for i, u := range r.units {
		n := u.firings.Load()
		s.Actors[i] = ActorProgress{Name: u.name, Firings: n, Started: max(n, u.started.Load()), Target: u.target,
			Done: u.state.Load() == stateDone, Busy: time.Duration(u.busyLive.Load()), Blocked: u.liveBlocked()}
	}
	s.Channels, s.Devices = r.liveChannels(), r.liveDevices()
	return s
}

// unitDone is called once per unit, by whoever finished it.
func (r *run) unitDone() {
	if r.live.Add(-1) == 0 {
		close(r.allDone)
	}
}

// checkEmpty reports channels that do not hold exactly their initial tokens.
func (r *run) checkEmpty() error {
	var bad []string
	for _, c := range r.chans {
		left := c.left()
		if left != int64(c.c.Initial) {
			bad = append(bad, fmt.Sprintf("%s holds %d tokens (expected %d)", c.c.Name, left, c.c.Initial))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("runtime: channels not empty at the end: %s", strings.Join(bad, "; "))
}

// defaultWorkers returns the CPU pool size.
func defaultWorkers() int { return goruntime.GOMAXPROCS(0) }
