package cluster

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nuid"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/internal/wire"
	"github.com/sluicehq/sluice/runtime"
)

// Heartbeats: both sides of a job publish one every HeartbeatInterval; a
// side that hears nothing for HeartbeatTimeout ends the job.
const (
	DefaultHeartbeatInterval = 250 * time.Millisecond
	DefaultHeartbeatTimeout  = 2 * time.Second
)

// WorkerOptions configure a worker.
type WorkerOptions struct {
	// Broker is the URL of the broker to join (nats://host:port).
	Broker string
	// Creds are presented to the broker.
	Creds Credentials
	// Name is the worker's name, unique in the tree.
	Name string
	// Devices are the devices the worker lends (device.Discover's).
	Devices []device.Info
	// Limits are what it accepts.
	Limits Limits
	// HeartbeatInterval and HeartbeatTimeout; 0 means the defaults.
	HeartbeatInterval, HeartbeatTimeout time.Duration
	// DataListen, when set, accepts direct TCP data streams there
	// (HOST:PORT); DataAdvertise is the address clients dial (default: the
	// listener's address, which must then be reachable).
	DataListen, DataAdvertise string
	// Logf, when set, receives one line per job start and end, and one
	// per refused or failed request.
	Logf func(format string, args ...any)
	// Requests bound what one request may ask (validate.go); zero fields
	// take DefaultRequestLimits'.
	Requests RequestLimits
	// DataDir, when set, is the directory the file actors (file.read,
	// file.write, csv.*, image.*) of the jobs run here are confined to
	// (internal/fsroot): relative paths resolve inside it; absolute
	// paths, ".." above it and symbolic links out of it are refused.
	// Without it, file actors are refused on this worker.
	DataDir string
}

// Worker is a running worker: a NATS micro service that runs actors.
type Worker struct {
	o     WorkerOptions
	lim   RequestLimits
	files runtime.FileAccess
	nc    *nats.Conn
	svc   micro.Service
	dir   string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	jobs   map[string]context.CancelCauseFunc
	closed bool

	data     net.Listener
	dataAddr string
	dataWG   sync.WaitGroup
	dataJobs map[string]*workerJob
}

// StartWorker connects to the broker and registers the worker's service.
func StartWorker(ctx context.Context, o WorkerOptions) (*Worker, error) {
	if o.Name == "" {
		h, _ := os.Hostname()
		o.Name = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	if err := checkWorkerName(o.Name); err != nil {
		return nil, err
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if len(o.Devices) == 0 {
		return nil, fmt.Errorf("worker %s: no device to lend: expected at least the CPU", o.Name)
	}
	files := runtime.FileAccess{Refused: fmt.Sprintf("worker %s lends no files: it was started without --data-dir DIR, so file actors (file.read, file.write, csv.read, csv.write, image.read, image.write) cannot run on it", o.Name)}
	if o.DataDir != "" {
		root, err := fsroot.Open(o.DataDir)
		if err != nil {
			return nil, fmt.Errorf("worker %s: --data-dir: %w", o.Name, err)
		}
		files = runtime.FileAccess{Root: root}
	}
	nc, err := dial(ctx, o.Broker, "worker "+o.Name, o.Creds)
	if err != nil {
		_ = files.Root.Close()
		return nil, fmt.Errorf("worker %s: %w", o.Name, err)
	}
	dir, err := os.MkdirTemp("", "sluice-worker-")
	if err != nil {
		nc.Close()
		_ = files.Root.Close()
		return nil, fmt.Errorf("worker %s: %w", o.Name, err)
	}
	w := &Worker{o: o, lim: o.Requests.withDefaults(), files: files, nc: nc, dir: dir, jobs: map[string]context.CancelCauseFunc{}, dataJobs: map[string]*workerJob{}}
	// A connection the client library closes for good (never on a
	// network fault: it reconnects) leaves the worker unreachable: say so.
	nc.SetClosedHandler(func(c *nats.Conn) {
		w.mu.Lock()
		closing := w.closed
		w.mu.Unlock()
		if !closing {
			w.logf("worker %s: the connection to broker %s was closed (%v): the worker is no longer reachable", o.Name, redact(o.Broker), c.LastError())
		}
	})
	w.ctx, w.cancel = context.WithCancel(context.Background())
	if o.DataListen != "" {
		l, err := net.Listen("tcp", o.DataListen)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("worker %s: --data-listen %s: %w", o.Name, o.DataListen, err)
		}
		w.data, w.dataAddr = l, o.DataAdvertise
		if w.dataAddr == "" {
			w.dataAddr = l.Addr().String()
		}
		w.dataWG.Add(1)
		go w.acceptData()
	}
	svc, err := micro.AddService(nc, micro.Config{Name: ServiceName, Version: "0.1.0",
		Description: "sluice worker: runs actors on the devices it lends",
		Metadata:    map[string]string{"worker": o.Name},
		ErrorHandler: func(_ micro.Service, e *micro.NATSError) {
			w.logf("worker %s: service error on %s: %s", o.Name, e.Subject, e.Description)
		}})
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("worker %s: registering the service: %w", o.Name, err)
	}
	w.svc = svc
	grp := svc.AddGroup(workerGroup(o.Name))
	if err := grp.AddEndpoint("info", micro.HandlerFunc(func(r micro.Request) {
		defer w.recoverRequest("info", func(err error) { _ = r.Error("500", err.Error(), nil) })
		_ = r.RespondJSON(w.Info())
	})); err != nil {
		w.Close()
		return nil, fmt.Errorf("worker %s: %w", o.Name, err)
	}
	if err := svc.AddEndpoint("run", micro.HandlerFunc(w.handleRun), micro.WithEndpointSubject(runSubjectAny(o.Name))); err != nil {
		w.Close()
		return nil, fmt.Errorf("worker %s: %w", o.Name, err)
	}
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		w.Close()
		return nil, fmt.Errorf("worker %s: %w", o.Name, err)
	}
	return w, nil
}

// Name returns the worker's name.
func (w *Worker) Name() string { return w.o.Name }

// Info returns what the worker advertises.
func (w *Worker) Info() WorkerInfo {
	w.mu.Lock()
	n := len(w.jobs)
	w.mu.Unlock()
	return WorkerInfo{Name: w.o.Name, Broker: w.nc.ConnectedServerName(), Devices: w.o.Devices, Limits: w.o.Limits, Jobs: n, DataAddr: w.dataAddr}
}

// Close cancels the running jobs, waits for them, and leaves the broker.
func (w *Worker) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	if w.data != nil {
		_ = w.data.Close()
	}
	w.dataWG.Wait()
	w.wg.Wait()
	if w.svc != nil {
		_ = w.svc.Stop()
	}
	w.nc.Close()
	_ = os.RemoveAll(w.dir)
	_ = w.files.Root.Close()
}

func (w *Worker) logf(format string, args ...any) {
	if w.o.Logf != nil {
		w.o.Logf(format, args...)
	}
}

// recoverRequest, deferred by every request handler, turns a panic into a
// logged line and an answer (answer), so that no message can take the
// worker's service down.
func (w *Worker) recoverRequest(what string, answer func(error)) {
	if p := recover(); p != nil {
		err := fmt.Errorf("worker %s: internal error handling a %s request: %v", w.o.Name, what, p)
		w.logf("%v\n%s", err, debug.Stack())
		if answer != nil {
			answer(err)
		}
	}
}

// refuse answers a run request with ok: false and logs why.
func (w *Worker) refuse(r micro.Request, err error) {
	w.logf("worker %s: refused a run request: %v", w.o.Name, err)
	_ = r.RespondJSON(RunReply{Error: err.Error()})
}

// decodeRun reads and checks a run request (validate.go).
func (w *Worker) decodeRun(data []byte) (*RunRequest, error) {
	if err := w.lim.checkMessage(data); err != nil {
		return nil, fmt.Errorf("worker %s: bad run request: %w", w.o.Name, err)
	}
	var req RunRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("worker %s: bad run request: expected a JSON run request: %v", w.o.Name, err)
	}
	ids := make([]string, len(w.o.Devices))
	for i, d := range w.o.Devices {
		ids[i] = d.ID
	}
	if err := w.lim.validateRun(&req, ids); err != nil {
		return nil, fmt.Errorf("worker %s: bad run request: %w", w.o.Name, err)
	}
	if err := refuseConsole(w.o.Name, &req.Actor); err != nil {
		return nil, err
	}
	if req.Chunk == 0 {
		req.Chunk = DefaultChunk
	}
	if !(req.Transport == "tcp" && w.data != nil) {
		// Tokens go over NATS: a chunk and its header in one message.
		if most := int(w.nc.MaxPayload()) - wire.HeaderLen; req.Chunk > most {
			return nil, fmt.Errorf("worker %s: bad run request: %w", w.o.Name, bad("chunk", fmt.Sprintf("at most %d bytes over NATS (the broker's largest message less the chunk header)", most), req.Chunk))
		}
	}
	return &req, nil
}

func (w *Worker) handleRun(r micro.Request) {
	defer w.recoverRequest("run", func(err error) { _ = r.RespondJSON(RunReply{Error: err.Error()}) })
	reqp, err := w.decodeRun(r.Data())
	if err != nil {
		w.refuse(r, err)
		return
	}
	req := *reqp
	w.mu.Lock()
	_, dup := w.jobs[req.Job]
	w.mu.Unlock()
	if dup {
		w.refuse(r, fmt.Errorf("worker %s: bad run request: field job: expected a job ID not running here, found %q (running)", w.o.Name, req.Job))
		return
	}
	// The subject names the user (only that user may publish there); the
	// reply, which carries the data-path secret, goes to its inbox only.
	user, err := runUser(r.Subject())
	if err == nil && !ownerInbox(user, r.Reply()) {
		err = fmt.Errorf("reply subject %q: expected user %s's inbox %s.>", r.Reply(), user, userInbox(user))
	}
	if err != nil {
		_ = r.RespondJSON(RunReply{Error: fmt.Sprintf("worker %s: %v", w.o.Name, err)})
		return
	}
	j, err := w.prepare(user, &req)
	if err != nil {
		w.refuse(r, err)
		return
	}
	// Register before replying, so a cancel that follows the reply finds it.
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		j.unsubscribe()
		_ = r.RespondJSON(RunReply{Error: fmt.Sprintf("worker %s is shutting down", w.o.Name)})
		return
	}
	if _, dup := w.jobs[req.Job]; dup {
		w.mu.Unlock()
		j.unsubscribe()
		j.cancel(nil)
		w.refuse(r, fmt.Errorf("worker %s: bad run request: field job: expected a job ID not running here, found %q (running)", w.o.Name, req.Job))
		return
	}
	w.jobs[req.Job] = j.cancel
	rep := RunReply{OK: true}
	if j.dataC != nil {
		w.dataJobs[req.Job] = j
		rep.DataAddr, rep.Secret = w.dataAddr, j.secret
	}
	w.wg.Add(1)
	w.mu.Unlock()
	if err := r.RespondJSON(rep); err != nil {
		j.cancel(err)
	}
	go w.runJob(j)
}

// workerJob is one actor a worker runs for a client.
type workerJob struct {
	w      *Worker
	user   string // the job's owner: its subjects are under sluice.u.USER
	req    *RunRequest
	g      *graph.Graph
	actor  *graph.Actor
	mp     *graph.Mapping
	ctx    context.Context
	cancel context.CancelCauseFunc
	// actorDone ends the input streams once the actor has finished (its
	// target reached) so that they stop waiting for tokens.
	inCtx    context.Context
	inCancel context.CancelFunc
	snaps    *workerSnaps // snapshot requests (checkpoint.go)
	subs     []*nats.Subscription
	ins      []*nats.Subscription // data per input
	outCreds []*nats.Subscription // credits per output
	hb       *nats.Subscription
	cancelS  *nats.Subscription
	// Direct TCP data: the job's secret and one connection per stream
	// ("in.N", "out.N"), handed over by the data listener.
	secret string
	dataC  map[string]chan net.Conn
	// fired is the actor's firings so far, sent with the heartbeats.
	fired atomic.Int64
}

// checkLimits refuses a job whose streams exceed --max-stream.
func (w *Worker) checkLimits(req *RunRequest) error {
	m := w.o.Limits.MaxStream
	if m <= 0 {
		return nil
	}
	check := func(ss []StreamSpec, ps []PortSpec, dir string) error {
		for i, s := range ss {
			if s.Bytes > m {
				return fmt.Errorf("worker %s refuses actor %s: its %s stream %s is %d bytes, over the worker's --max-stream of %d bytes", w.o.Name, req.Actor.Name, dir, ps[i].Name, s.Bytes, m)
			}
		}
		return nil
	}
	if err := check(req.Ins, req.Actor.Inputs, "input"); err != nil {
		return err
	}
	return check(req.Outs, req.Actor.Outputs, "output")
}

func (w *Worker) prepare(user string, req *RunRequest) (*workerJob, error) {
	if len(req.Ins) != len(req.Actor.Inputs) || len(req.Outs) != len(req.Actor.Outputs) {
		return nil, fmt.Errorf("worker %s: run request for actor %s has %d/%d streams for %d inputs and %d outputs", w.o.Name, req.Actor.Name, len(req.Ins), len(req.Outs), len(req.Actor.Inputs), len(req.Actor.Outputs))
	}
	if err := w.checkLimits(req); err != nil {
		return nil, err
	}
	found := false
	var ids []string
	for _, d := range w.o.Devices {
		found = found || d.ID == req.Device
		ids = append(ids, d.ID)
	}
	if !found {
		return nil, fmt.Errorf("worker %s has no device %q: expected one of %s", w.o.Name, req.Device, strings.Join(ids, ", "))
	}
	j := &workerJob{w: w, user: user, req: req}
	j.ctx, j.cancel = context.WithCancelCause(w.ctx)
	j.inCtx, j.inCancel = context.WithCancel(j.ctx)
	g := graph.New("job " + req.Actor.Name)
	jobDir, err := os.MkdirTemp(w.dir, "job-")
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", w.o.Name, err)
	}
	a, err := req.Actor.build(g, jobDir)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", w.o.Name, err)
	}
	j.g, j.actor = g, a
	fail := func(err error) (*workerJob, error) {
		j.unsubscribe()
		j.cancel(err)
		return nil, err
	}
	sub := func(subj string) (*nats.Subscription, error) {
		s, err := w.nc.SubscribeSync(subj)
		if err != nil {
			return nil, fmt.Errorf("worker %s: subscribing to %s: %w", w.o.Name, subj, err)
		}
		_ = s.SetPendingLimits(-1, -1) // bounded by the credits
		j.subs = append(j.subs, s)
		return s, nil
	}
	if req.Transport == "tcp" && w.data != nil {
		j.secret = nuid.Next()
		j.dataC = map[string]chan net.Conn{}
		for i := range a.Inputs {
			j.dataC[wire.DataName(wire.In, i)] = make(chan net.Conn, 1)
		}
		for i := range a.Outputs {
			j.dataC[wire.DataName(wire.Out, i)] = make(chan net.Conn, 1)
		}
	}
	for i, p := range a.Inputs {
		if j.dataC == nil {
			s, err := sub(jobSubject(user, req.Job, wire.DataName(wire.In, i)))
			if err != nil {
				return fail(err)
			}
			j.ins = append(j.ins, s)
		}
		src := g.AddActor("net-in:"+p.Name, graph.WithFunc(runtime.ProcessFunc(j.netIn(i))))
		g.Join(src.AddPort("out", graph.Out, p.Type, graph.Dynamic(), ""), p, graph.Capacity(max(req.Ins[i].Capacity, p.Rate.Max(), 1)))
	}
	for i, p := range a.Outputs {
		if j.dataC == nil {
			s, err := sub(jobSubject(user, req.Job, wire.CreditName(wire.Out, i)))
			if err != nil {
				return fail(err)
			}
			j.outCreds = append(j.outCreds, s)
		}
		dst := g.AddActor("net-out:"+p.Name, graph.WithFunc(runtime.ProcessFunc(j.netOut(i))))
		g.Join(p, dst.AddPort("in", graph.In, p.Type, graph.Dynamic(), ""), graph.Capacity(max(req.Outs[i].Capacity, p.Rate.Max(), 1)))
	}
	if j.hb, err = sub(jobSubject(user, req.Job, "hb.c")); err != nil {
		return fail(err)
	}
	if j.cancelS, err = sub(jobSubject(user, req.Job, "cancel")); err != nil {
		return fail(err)
	}
	j.snaps = newWorkerSnaps(w.lim.MaxInFlight, w.recoverRequest)
	snapSub, err := w.nc.Subscribe(jobSubject(user, req.Job, "snap"), j.snaps.handler(j.ctx, a.Name))
	if err != nil {
		return fail(fmt.Errorf("worker %s: subscribing to snapshot requests: %w", w.o.Name, err))
	}
	j.subs = append(j.subs, snapSub)
	for what, h := range map[string]nats.MsgHandler{"hold": j.snaps.holdHandler(j.ctx, a.Name), "release": j.snaps.releaseHandler(j.ctx, a.Name)} {
		s, err := w.nc.Subscribe(jobSubject(user, req.Job, what), h)
		if err != nil {
			return fail(fmt.Errorf("worker %s: subscribing to %s requests: %w", w.o.Name, what, err))
		}
		j.subs = append(j.subs, s)
	}
	if err := g.Validate(); err != nil {
		return fail(fmt.Errorf("worker %s: actor %s: %w", w.o.Name, req.Actor.Name, err))
	}
	pl := &graph.Placement{Device: req.Device, Impl: req.Impl, WorkGroups: req.WorkGroups, WorkItems: req.WorkItems, Replicas: req.Replicas, Distribution: req.Distribution}
	j.mp = &graph.Mapping{Name: "job", Actors: map[string]*graph.Placement{a.Name: pl}}
	if err := w.nc.FlushTimeout(5 * time.Second); err != nil {
		return fail(fmt.Errorf("worker %s: %w", w.o.Name, err))
	}
	return j, nil
}

func (j *workerJob) unsubscribe() {
	for _, s := range j.subs {
		_ = s.Unsubscribe()
	}
}

func (j *workerJob) streamLimit(port, dir string) streamLimit {
	m := j.w.o.Limits.MaxStream
	return streamLimit{max: m, what: func(n int64) error {
		return fmt.Errorf("worker %s: actor %s's %s stream %s passed the worker's --max-stream of %d bytes (%d bytes so far)", j.w.o.Name, j.req.Actor.Name, dir, port, m, n)
	}}
}

// netIn is the process feeding input i from the network. It stops with
// the run, and quietly once the actor has finished (j.inCtx).
func (j *workerJob) netIn(i int) func(p *runtime.Process) error {
	return func(p *runtime.Process) error {
		j.snaps.started(p.Context(), p.Run())
		ctx, stop := context.WithCancel(p.Context())
		defer stop()
		defer context.AfterFunc(j.inCtx, stop)()
		port := j.actor.Inputs[i]
		var err error
		if j.dataC != nil {
			var c net.Conn
			if c, err = j.conn(ctx, wire.DataName(wire.In, i)); err == nil {
				err = tcpRecv(ctx, c, p.Out(0), port.Type.Size, max(j.req.Ins[i].Capacity, 1), nil, j.streamLimit(port.Name, "input"))
			}
		} else {
			err = recvStream(ctx, j.w.nc, j.ins[i], jobSubject(j.user, j.req.Job, wire.CreditName(wire.In, i)), p.Out(0),
				port.Type.Size, max(j.req.Ins[i].Capacity, 1), nil, j.streamLimit(port.Name, "input"))
		}
		if err != nil && j.inCtx.Err() != nil && p.Context().Err() == nil {
			return nil // the actor finished: the rest of the stream is not needed
		}
		return err
	}
}

// netOut is the process draining output i to the network.
func (j *workerJob) netOut(i int) func(p *runtime.Process) error {
	return func(p *runtime.Process) error {
		j.snaps.started(p.Context(), p.Run()) // a source has no netIn
		port := j.actor.Outputs[i]
		if j.dataC != nil {
			c, err := j.conn(p.Context(), wire.DataName(wire.Out, i))
			if err != nil {
				return err
			}
			return tcpSend(p.Context(), c, p.In(0), port.Type.Size, max(j.req.Outs[i].Capacity, 1), j.req.Chunk, j.req.Flush, nil, j.streamLimit(port.Name, "output"))
		}
		return sendStream(p.Context(), j.w.nc, jobSubject(j.user, j.req.Job, wire.DataName(wire.Out, i)), j.outCreds[i], p.In(0),
			port.Type.Size, max(j.req.Outs[i].Capacity, 1), j.req.Chunk, j.req.Flush, nil, j.streamLimit(port.Name, "output"))
	}
}

// runJob runs the job's graph and publishes its result.
func (w *Worker) runJob(j *workerJob) {
	defer w.wg.Done()
	defer func() {
		w.mu.Lock()
		delete(w.jobs, j.req.Job)
		delete(w.dataJobs, j.req.Job)
		w.mu.Unlock()
		for _, ch := range j.dataC { // connections that came too late
			select {
			case c := <-ch:
				c.Close()
			default:
			}
		}
		j.unsubscribe()
		j.inCancel()
		j.cancel(nil)
	}()
	w.logf("worker %s: job %s: actor %s on %s", w.o.Name, j.req.Job, j.req.Actor.Name, j.req.Device)
	ctx := j.ctx
	if mt := w.o.Limits.MaxTime; mt > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, mt, errMaxTime)
		defer stop()
	}
	// Heartbeats out; the client's heartbeats and cancel in.
	var hwg sync.WaitGroup
	hctx, hstop := context.WithCancel(j.ctx)
	hwg.Add(1)
	go func() {
		defer hwg.Done()
		j.heartbeat(hctx)
	}()
	opts := runtime.Options{Mapping: j.mp, Watchdog: -1, ProgressInterval: 50 * time.Millisecond,
		Progress: func(s runtime.Snapshot) {
			for _, a := range s.Actors {
				if a.Name != j.actor.Name {
					continue
				}
				j.fired.Store(a.Firings)
				if a.Done {
					j.inCancel()
				}
			}
		}}
	if j.req.Target >= 0 {
		opts.Firings = map[string]int64{j.actor.Name: j.req.Target}
	}
	opts.Checkpoint = &runtime.CheckpointOptions{External: true} // snapshots on request (checkpoint.go)
	opts.Files = w.files                                         // --data-dir, or file actors refused
	if s := j.req.Resume; s != nil {
		opts.Checkpoint.Resume = &runtime.Checkpoint{Actors: map[string]runtime.ActorSnapshot{j.actor.Name: *s}}
	}
	var trace bytes.Buffer
	if j.req.Trace {
		// The job brings back at most MaxSpans firings of its actor; its
		// boundary actors fire about as often, so three times that many
		// events cover them (not the runtime's default, 4,000,000: a
		// long job would hold hundreds of MB of trace for nothing).
		opts.Trace, opts.TraceLimit = &trace, 3*MaxSpans
	}
	st, err := runtime.Run(ctx, j.g, opts)
	hstop()
	hwg.Wait()
	res := JobResult{}
	if st != nil {
		for _, a := range st.Actors {
			if a.Name == j.actor.Name {
				res.Firings, res.Busy = a.Firings, a.Busy
			}
		}
	}
	if err != nil {
		switch c := context.Cause(ctx); {
		case errors.Is(c, errMaxTime):
			err = fmt.Errorf("worker %s: actor %s ran past the worker's --max-time of %s and was cancelled", w.o.Name, j.actor.Name, w.o.Limits.MaxTime)
		case c != nil && ctx.Err() != nil:
			err = fmt.Errorf("worker %s: actor %s stopped: %w", w.o.Name, j.actor.Name, c)
		default:
			err = fmt.Errorf("worker %s: %w", w.o.Name, err)
		}
		res.Error = err.Error()
		res.Cut = errors.Is(err, errTransit)
	}
	if j.req.Trace && trace.Len() > 0 {
		res.Spans = spansOf(trace.Bytes(), j.actor.Name)
	}
	data, _ := json.Marshal(res)
	if len(data) > int(w.nc.MaxPayload()) && res.Spans != nil {
		res.Spans = res.Spans[:len(res.Spans)*int(w.nc.MaxPayload())/len(data)/2]
		data, _ = json.Marshal(res)
	}
	_ = w.nc.Publish(jobSubject(j.user, j.req.Job, "done"), data)
	_ = w.nc.FlushTimeout(time.Second)
	w.logf("worker %s: job %s: actor %s: %d firings, %s", w.o.Name, j.req.Job, j.actor.Name, res.Firings, jobOutcome(ctx, err))
}

var errMaxTime = errors.New("--max-time exceeded")

// jobOutcome words how a job ended for the worker's log: done, failed with
// its error, or aborted (by its client, its limits, or the worker stopping).
func jobOutcome(ctx context.Context, err error) string {
	switch {
	case err != nil:
		return "failed: " + err.Error()
	case ctx.Err() != nil:
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
			return "aborted: " + c.Error()
		}
		return "aborted: the worker is stopping"
	}
	return "done"
}

// heartbeat publishes the worker's heartbeats and cancels the job when the
// client's stop (or a cancel arrives).
func (j *workerJob) heartbeat(ctx context.Context) {
	t := time.NewTicker(j.w.o.HeartbeatInterval)
	defer t.Stop()
	last := time.Now()
	subj := jobSubject(j.user, j.req.Job, "hb.w")
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], uint64(j.fired.Load()))
			_ = j.w.nc.Publish(subj, b[:])
			for {
				if _, err := j.hb.NextMsg(0); err != nil {
					break
				}
				last = now
			}
			if _, err := j.cancelS.NextMsg(0); err == nil {
				j.cancel(fmt.Errorf("the client cancelled the job"))
				return
			}
			if now.Sub(last) > j.w.o.HeartbeatTimeout {
				j.cancel(fmt.Errorf("the client stopped answering (no heartbeat for %s)", j.w.o.HeartbeatTimeout))
				return
			}
		}
	}
}

// dial connects to a broker.
func dial(ctx context.Context, url, name string, c Credentials) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second), nats.NoCallbacksAfterClientClose()}, c.natsOptions(url)...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to broker %s: %w", redact(url), explainTLS(err))
	}
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		nc.Close()
		return nil, fmt.Errorf("connecting to broker %s: %w", redact(url), err)
	}
	return nc, nil
}

// redact hides a URL's password.
func redact(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.LastIndex(u, "@"); j > i {
			return u[:i+3] + "***@" + u[j+1:]
		}
	}
	return u
}

// sortedNames returns a map's keys, sorted.
func sortedNames[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// conn waits for the job's data connection for stream s.
func (j *workerJob) conn(ctx context.Context, s string) (net.Conn, error) {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case c := <-j.dataC[s]:
		return c, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-t.C:
		return nil, fmt.Errorf("worker %s: the client did not open data stream %s of actor %s within 10 s", j.w.o.Name, s, j.req.Actor.Name)
	}
}

// acceptData hands each data connection to its job's stream.
func (w *Worker) acceptData() {
	defer w.dataWG.Done()
	for {
		c, err := w.data.Accept()
		if err != nil {
			return
		}
		w.dataWG.Add(1)
		go func() {
			defer w.dataWG.Done()
			h, err := readHello(c)
			if err != nil {
				c.Close()
				return
			}
			w.mu.Lock()
			j := w.dataJobs[h.Job]
			w.mu.Unlock()
			if j == nil || subtle.ConstantTimeCompare([]byte(h.Secret), []byte(j.secret)) != 1 || j.dataC[h.Stream] == nil {
				c.Close()
				return
			}
			select {
			case j.dataC[h.Stream] <- c:
			default:
				c.Close() // a second connection for one stream
			}
		}()
	}
}

// spansOf extracts an actor's firings from a Chrome trace: [start, duration,
// firing] in ns.
func spansOf(trace []byte, actor string) [][3]int64 {
	var t struct {
		Events []struct {
			Name string  `json:"name"`
			Cat  string  `json:"cat"`
			Ts   float64 `json:"ts"`
			Dur  float64 `json:"dur"`
			Args struct {
				Firing int64 `json:"firing"`
			} `json:"args"`
		} `json:"traceEvents"`
	}
	if json.Unmarshal(trace, &t) != nil {
		return nil
	}
	var out [][3]int64
	for _, e := range t.Events {
		if e.Name == actor && e.Cat == "firing" && len(out) < MaxSpans {
			out = append(out, [3]int64{int64(e.Ts * 1000), int64(e.Dur * 1000), e.Args.Firing})
		}
	}
	return out
}

// checkWorkerName refuses a name no worker can have: one that is not a
// single subject token (sluice.worker.NAME.…).
func checkWorkerName(name string) error {
	if name == "" || strings.ContainsAny(name, ". */>\t\r\n") {
		return fmt.Errorf("worker: name %q: expected no dots, spaces, slashes, '*' or '>'", name)
	}
	return nil
}
