package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/wire"
	"github.com/sluicehq/sluice/runtime"
)

// ExecutorOptions configure the remote executor.
type ExecutorOptions struct {
	// Chunk is the largest data message's payload in bytes; 0 means
	// DefaultChunk.
	Chunk int
	// HeartbeatInterval and HeartbeatTimeout; 0 means the defaults.
	HeartbeatInterval, HeartbeatTimeout time.Duration
	// Transport chooses the data path: "" or "auto" uses a worker's direct
	// TCP data address when it offers one and the broker connection is not
	// TLS, and NATS otherwise; "nats" always sends the tokens over NATS;
	// "tcp" uses the direct streams wherever offered (they are not
	// encrypted).
	Transport string
	// Flush is how long a cross-machine channel's sender waits for a
	// chunk's worth of small firings before it sends what it has (both
	// ways: the worker's outputs too): 0 means wire.DefaultFlush (500 µs),
	// negative sends what is ready at once. A batch is at most half the
	// channel's capacity, so a producer that fills it never waits.
	Flush time.Duration
}

// Executor is the remote executor: it implements runtime.RemoteExecutor
// over a Client, placing actors on "worker:NAME/DEVICE" or on any device
// meeting an any: requirement.
type Executor struct {
	c *Client
	o ExecutorOptions

	mu      sync.Mutex
	devs    []RemoteDevice // the tree's devices, queried once
	queried bool
	placed  map[string][]string // worker → actors placed on it
	load    map[string]int      // worker → jobs placed by this executor
}

var _ runtime.RemoteExecutor = (*Executor)(nil)

// NewExecutor returns a remote executor over c.
func NewExecutor(c *Client, o ExecutorOptions) *Executor {
	if o.Chunk <= 0 {
		o.Chunk = DefaultChunk
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	return &Executor{c: c, o: o, placed: map[string][]string{}, load: map[string]int{}}
}

// Name names the executor.
func (e *Executor) Name() string { return "cluster via " + redact(e.c.url) }

// forget drops what earlier runs placed (a recovered run places anew).
func (e *Executor) forget() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.placed)
	clear(e.load)
}

// Client returns the executor's connection to the tree.
func (e *Executor) Client() *Client { return e.c }

// Kind is runtime.KindRemote.
func (e *Executor) Kind() runtime.ExecutorKind { return runtime.KindRemote }

// Claims reports whether pl is a remote placement.
func (e *Executor) Claims(pl *graph.Placement) bool { return runtime.IsRemotePlacement(pl) }

// Placement is where a remote actor goes.
type Placement struct {
	// Worker and Device name the worker and its device ID.
	Worker, Device string
	// DataAddr is the worker's direct TCP data address, if any.
	DataAddr string
}

// ParseWorkerPlacement parses "worker:NAME/DEVICE" ("worker:NAME" means the
// worker's CPU).
func ParseWorkerPlacement(s string) (Placement, error) {
	rest, ok := strings.CutPrefix(s, "worker:")
	if !ok || rest == "" {
		return Placement{}, fmt.Errorf("placement %q: expected worker:NAME/DEVICE", s)
	}
	name, dev, _ := strings.Cut(rest, "/")
	if dev == "" {
		dev = "cpu"
	}
	if name == "" {
		return Placement{}, fmt.Errorf("placement %q: expected a worker name after worker:", s)
	}
	return Placement{Worker: name, Device: dev}, nil
}

func (e *Executor) devices(ctx context.Context) ([]RemoteDevice, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.queried {
		ds, err := e.c.Devices(ctx)
		if err != nil {
			return nil, err
		}
		e.devs, e.queried = ds, true
	}
	return e.devs, nil
}

// streamBytes returns the bytes a port moves in target firings, or -1.
func streamBytes(p *graph.Port, target int64) int64 {
	if target < 0 {
		return -1
	}
	ph := p.Rate.List()
	if len(ph) == 0 {
		return 0
	}
	n := int64(len(ph))
	tok := target / n * int64(p.Rate.Sum())
	for i := int64(0); i < target%n; i++ {
		tok += int64(ph[i])
	}
	return tok * int64(p.Type.Size)
}

// hasWorker reports whether ds holds a device of worker name.
func hasWorker(ds []RemoteDevice, name string) bool {
	for _, d := range ds {
		if d.Worker == name {
			return true
		}
	}
	return false
}

// askWorker asks worker name for its devices directly, when the tree's
// listing did not hold it (a listing collects the answers that come
// within its quiet period, which a loaded host can miss), adds them to the
// executor's devices and returns those.
func (e *Executor) askWorker(ctx context.Context, name string) []RemoteDevice {
	wi, err := e.c.Worker(ctx, name)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil || hasWorker(e.devs, name) {
		return e.devs
	}
	for _, d := range wi.Devices {
		e.devs = append(e.devs, RemoteDevice{Info: d, Worker: wi.Name, Path: wi.Broker, Limits: wi.Limits, Jobs: wi.Jobs, DataAddr: wi.DataAddr})
	}
	return e.devs
}

// choose finds the worker and device for a placement.
func (e *Executor) choose(ctx context.Context, ra *runtime.RemoteActor) (Placement, error) {
	pl := ra.Placement
	ds, err := e.devices(ctx)
	if err != nil {
		return Placement{}, err
	}
	if pl.Any == "" {
		p, err := ParseWorkerPlacement(pl.Device)
		if err != nil {
			return p, err
		}
		if !hasWorker(ds, p.Worker) {
			ds = e.askWorker(ctx, p.Worker)
		}
		var have []string
		for _, d := range ds {
			if d.Worker == p.Worker {
				if d.ID == p.Device {
					p.DataAddr = d.DataAddr
					return p, nil
				}
				have = append(have, d.ID)
			}
		}
		if have == nil {
			return p, fmt.Errorf("placement %s: no worker %q in the tree (workers: %s)", pl.Device, p.Worker, workerList(ds))
		}
		return p, fmt.Errorf("placement %s: worker %s has no device %q (it has %s)", pl.Device, p.Worker, p.Device, strings.Join(have, ", "))
	}
	rs, err := ParseRequirements(pl.Any)
	if err != nil {
		return Placement{}, err
	}
	var fit []RemoteDevice
	over := ""
	for _, d := range ds {
		if !d.Matches(rs) {
			continue
		}
		if m := d.Limits.MaxStream; m > 0 {
			big := false
			for _, p := range append(append([]*graph.Port(nil), ra.Actor.Inputs...), ra.Actor.Outputs...) {
				if streamBytes(p, ra.Target) > m {
					big = true
					over = fmt.Sprintf("worker %s's --max-stream of %d bytes is below stream %s's %d bytes", d.Worker, m, p.Name, streamBytes(p, ra.Target))
				}
			}
			if big {
				continue
			}
		}
		fit = append(fit, d)
	}
	if len(fit) == 0 {
		if over != "" {
			return Placement{}, fmt.Errorf("any: %s: no device fits the actor's streams (%s)", pl.Any, over)
		}
		return Placement{}, fmt.Errorf("any: %s: no device in the tree meets it (devices: %s)", pl.Any, deviceList(ds))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	sort.SliceStable(fit, func(i, j int) bool {
		li, lj := e.load[fit[i].Worker]+fit[i].Jobs, e.load[fit[j].Worker]+fit[j].Jobs
		if li != lj {
			return li < lj
		}
		return fit[i].Worker < fit[j].Worker
	})
	return Placement{Worker: fit[0].Worker, Device: fit[0].ID, DataAddr: fit[0].DataAddr}, nil
}

func workerList(ds []RemoteDevice) string {
	seen := map[string]bool{}
	var ws []string
	for _, d := range ds {
		if !seen[d.Worker] {
			seen[d.Worker] = true
			ws = append(ws, d.Worker)
		}
	}
	if len(ws) == 0 {
		return "none"
	}
	return strings.Join(ws, ", ")
}

func deviceList(ds []RemoteDevice) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprintf("%s/%s (%s, %s, %d units)", d.Worker, d.ID, d.Backend, d.Name, d.ComputeUnits))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}

// Prepare places the actor on a worker and has the worker get ready: the
// worker checks its limits and subscribes to the job's streams.
func (e *Executor) Prepare(ctx context.Context, ra *runtime.RemoteActor) (runtime.RemoteJob, error) {
	p, err := e.choose(ctx, ra)
	if err != nil {
		return nil, err
	}
	spec, err := specOf(ra.Actor)
	if err != nil {
		return nil, err
	}
	pl := ra.Placement
	req := RunRequest{Job: nuid.Next(), Client: e.c.nc.Opts.Name, Actor: spec, Device: p.Device, Impl: pl.Impl,
		WorkGroups: pl.WorkGroups, WorkItems: pl.WorkItems, Replicas: pl.Replicas, Distribution: pl.Distribution, Target: ra.Target, Chunk: e.o.Chunk, Flush: e.o.Flush, Transport: "nats", Trace: ra.Trace}
	// The direct streams are plain TCP: over a TLS connection to the
	// broker the tokens stay on NATS (encrypted) unless asked otherwise.
	if p.DataAddr != "" && (e.o.Transport == "tcp" || e.o.Transport != "nats" && !e.c.nc.TLSRequired()) {
		req.Transport = "tcp"
	}
	for _, in := range ra.Ins {
		req.Ins = append(req.Ins, StreamSpec{Capacity: in.Capacity, Bytes: streamBytes(in.Port, ra.Target)})
	}
	for _, out := range ra.Outs {
		req.Outs = append(req.Outs, StreamSpec{Capacity: out.Capacity, Bytes: streamBytes(out.Port, ra.Target)})
	}
	req.Resume = ra.Resume
	j := &job{e: e, ra: ra, p: p, id: req.Job, ckLost: make(chan error, 1)}
	for range ra.Ins {
		j.gates = append(j.gates, newSendGate())
	}
	nc := e.c.nc
	sub := func(subj string) (*nats.Subscription, error) {
		s, err := nc.SubscribeSync(subj)
		if err != nil {
			return nil, err
		}
		_ = s.SetPendingLimits(-1, -1) // bounded by the credits
		j.subs = append(j.subs, s)
		return s, nil
	}
	for i := range ra.Ins {
		s, err := sub(jobSubject(j.e.c.user, j.id, wire.CreditName(wire.In, i)))
		if err != nil {
			j.unsubscribe()
			return nil, err
		}
		j.inCreds = append(j.inCreds, s)
	}
	for i := range ra.Outs {
		s, err := sub(jobSubject(j.e.c.user, j.id, wire.DataName(wire.Out, i)))
		if err != nil {
			j.unsubscribe()
			return nil, err
		}
		j.outData = append(j.outData, s)
	}
	if j.done, err = sub(jobSubject(j.e.c.user, j.id, "done")); err != nil {
		j.unsubscribe()
		return nil, err
	}
	hb, err := nc.Subscribe(jobSubject(j.e.c.user, j.id, "hb.w"), func(m *nats.Msg) {
		j.lastHB.Store(time.Now().UnixNano())
		if len(m.Data) == 8 && ra.Fired != nil {
			ra.Fired(int64(binary.LittleEndian.Uint64(m.Data)))
		}
	})
	if err != nil {
		j.unsubscribe()
		return nil, err
	}
	j.subs = append(j.subs, hb)
	data, err := json.Marshal(req)
	if err != nil {
		j.unsubscribe()
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, runSubject(e.c.user, p.Worker), data)
	if err != nil {
		j.unsubscribe()
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, fmt.Errorf("worker %s does not answer (is it running and connected to the tree?)", p.Worker)
		}
		return nil, fmt.Errorf("asking worker %s to run the actor: %w", p.Worker, err)
	}
	var rep RunReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		j.unsubscribe()
		return nil, fmt.Errorf("worker %s: bad reply: %w", p.Worker, err)
	}
	if !rep.OK {
		j.unsubscribe()
		return nil, errors.New(rep.Error)
	}
	if rep.DataAddr != "" {
		if err := j.dial(ctx, rep.DataAddr, rep.Secret); err != nil {
			j.Cancel()
			return nil, fmt.Errorf("worker %s: %w", p.Worker, err)
		}
	}
	e.mu.Lock()
	e.placed[p.Worker] = append(e.placed[p.Worker], ra.Actor.Name)
	e.load[p.Worker]++
	e.mu.Unlock()
	j.lastHB.Store(time.Now().UnixNano())
	// Heartbeats from now on: the worker drops a job whose client is
	// silent, and the run may start a while after the preparation.
	j.beatStop = make(chan struct{})
	j.beatWG.Add(1)
	go j.beat()
	return j, nil
}

// beat publishes the client's heartbeats until stopBeat.
func (j *job) beat() {
	defer j.beatWG.Done()
	t := time.NewTicker(j.e.o.HeartbeatInterval)
	defer t.Stop()
	subj := jobSubject(j.e.c.user, j.id, "hb.c")
	for {
		select {
		case <-j.beatStop:
			return
		case <-t.C:
			_ = j.e.c.nc.Publish(subj, nil)
		}
	}
}

func (j *job) stopBeat() {
	j.beatOnce.Do(func() {
		if j.beatStop != nil {
			close(j.beatStop)
			j.beatWG.Wait()
		}
	})
}

// actorsOn lists the actors placed on a worker.
func (e *Executor) actorsOn(w string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.placed[w], ", ")
}

// job is one remote actor's local side.
type job struct {
	e       *Executor
	ra      *runtime.RemoteActor
	p       Placement
	id      string
	subs    []*nats.Subscription
	inCreds []*nats.Subscription
	outData []*nats.Subscription
	done    *nats.Subscription
	lastHB  atomic.Int64
	ended   atomic.Bool
	// Direct TCP data streams, when the worker offered them.
	inConns, outConns []net.Conn
	// The client's heartbeats.
	beatStop chan struct{}
	beatOnce sync.Once
	beatWG   sync.WaitGroup
	// Checkpoints (checkpoint.go): a gate per input, Run's context, and
	// the snapshot requests that went unanswered (Run's evCheckpointLost).
	gates  []*sendGate
	ctxp   atomic.Pointer[context.Context]
	ckLost chan error
}

// dial opens the job's direct TCP data streams.
func (j *job) dial(ctx context.Context, addr, secret string) error {
	for i := range j.ra.Ins {
		c, err := dialData(ctx, addr, dataHello{Job: j.id, Secret: secret, Stream: wire.DataName(wire.In, i)})
		if err != nil {
			return err
		}
		j.inConns = append(j.inConns, c)
	}
	for i := range j.ra.Outs {
		c, err := dialData(ctx, addr, dataHello{Job: j.id, Secret: secret, Stream: wire.DataName(wire.Out, i)})
		if err != nil {
			return err
		}
		j.outConns = append(j.outConns, c)
	}
	return nil
}

func (j *job) closeConns() {
	for _, c := range append(append([]net.Conn(nil), j.inConns...), j.outConns...) {
		_ = c.Close()
	}
}

// Where names the worker and device.
func (j *job) Where() string { return "worker " + j.p.Worker + "/" + j.p.Device }

func (j *job) unsubscribe() {
	for _, s := range j.subs {
		_ = s.Unsubscribe()
	}
}

// Cancel tells the worker to drop the job (when it did not end already).
func (j *job) Cancel() {
	if j.ended.Swap(true) {
		return
	}
	j.stopBeat()
	_ = j.e.c.nc.Publish(jobSubject(j.e.c.user, j.id, "cancel"), nil)
	_ = j.e.c.nc.FlushTimeout(time.Second)
	j.unsubscribe()
	j.closeConns()
}

// errJobDone stops the input streams once the worker reported the end.
var errJobDone = errors.New("job done")

// Run moves the actor's tokens until the worker reports the end, and the
// outputs have reached their end of stream.
func (j *job) Run(ctx context.Context) (runtime.RemoteResult, error) {
	var res runtime.RemoteResult
	if j.ended.Load() {
		return res, errors.New("job was cancelled")
	}
	nc := j.e.c.nc
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	inCtx, inStop := context.WithCancelCause(jctx)
	defer inStop(nil)
	j.ctxp.Store(&jctx)
	var wg, outWG sync.WaitGroup
	// A stream that breaks is often the sign of the worker's own end (its
	// streams close before its result arrives): wait a little for the
	// result, which says why.
	type streamErr struct {
		err   error
		input bool
	}
	streamErrC := make(chan streamErr, len(j.ra.Ins)+len(j.ra.Outs))
	failed := func(err error, input bool) {
		if err != nil {
			streamErrC <- streamErr{err, input}
		}
	}
	for i, in := range j.ra.Ins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if j.inConns != nil {
				err = tcpSend(inCtx, j.inConns[i], in.Reader, in.Port.Type.Size, max(in.Capacity, 1), j.e.o.Chunk, j.e.o.Flush, j.ra.Moved, streamLimit{gate: j.gates[i]})
			} else {
				err = sendStream(inCtx, nc, jobSubject(j.e.c.user, j.id, wire.DataName(wire.In, i)), j.inCreds[i], in.Reader,
					in.Port.Type.Size, max(in.Capacity, 1), j.e.o.Chunk, j.e.o.Flush, j.ra.Moved, streamLimit{gate: j.gates[i]})
			}
			if err != nil && !errors.Is(context.Cause(inCtx), errJobDone) {
				failed(fmt.Errorf("input %s: %w", in.Port.Name, err), true)
			}
		}()
	}
	for i, out := range j.ra.Outs {
		if out.Writer == nil {
			continue
		}
		wg.Add(1)
		outWG.Add(1)
		go func() {
			defer wg.Done()
			defer outWG.Done()
			var err error
			if j.outConns != nil {
				err = tcpRecv(jctx, j.outConns[i], out.Writer, out.Port.Type.Size, max(out.Capacity, 1), j.ra.Moved, streamLimit{})
			} else {
				err = recvStream(jctx, nc, j.outData[i], jobSubject(j.e.c.user, j.id, wire.CreditName(wire.Out, i)), out.Writer,
					out.Port.Type.Size, max(out.Capacity, 1), j.ra.Moved, streamLimit{})
			}
			if err != nil {
				failed(fmt.Errorf("output %s: %w", out.Port.Name, err), false)
			}
		}()
	}
	outsDone := make(chan struct{})
	go func() { outWG.Wait(); close(outsDone) }()

	tick := time.NewTicker(j.e.o.HeartbeatInterval)
	defer tick.Stop()
	reconnects := nc.Stats().Reconnects
	doneC := make(chan JobResult, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		m, err := j.done.NextMsgWithContext(jctx)
		if err != nil {
			return
		}
		var r JobResult
		if err := json.Unmarshal(m.Data, &r); err != nil {
			r.Error = fmt.Sprintf("bad result message: %v", err)
		}
		doneC <- r
	}()
	// The state machine (jobrun.go) decides; this loop gathers its events
	// and carries out its actions.
	env := runEnv{worker: j.p.Worker, actors: func() string { return j.e.actorsOn(j.p.Worker) },
		broker: redact(j.e.c.url), heartbeatTimeout: j.e.o.HeartbeatTimeout}
	var st runState
	for st.phase != phaseEnded {
		var ev runEvent
		select {
		case e := <-streamErrC:
			ev = evStream{err: e.err, input: e.input, at: time.Now()}
		case err := <-j.ckLost:
			ev = evCheckpointLost{err: err, at: time.Now()}
		case r := <-doneC:
			res.Firings, res.Busy = r.Firings, r.Busy
			for _, sp := range r.Spans {
				res.Spans = append(res.Spans, runtime.Span{Start: time.Duration(sp[0]), Dur: time.Duration(sp[1]), Firing: sp[2]})
			}
			doneC = nil // one result a job
			ev = evResult{r}
		case <-outsDone:
			outsDone = nil
			ev = evOutputsEnded{}
		case <-jctx.Done():
			ev = evCancelled{context.Cause(jctx)}
		case now := <-tick.C:
			ev = evTick{now: now, reconnected: nc.Stats().Reconnects != reconnects,
				sinceBeat: now.Sub(time.Unix(0, j.lastHB.Load())), connected: nc.IsConnected()}
		}
		var act runActions
		st, act = st.step(ev, env)
		if act.stopInputs {
			inStop(errJobDone)
		}
		if act.drain {
			for len(streamErrC) > 0 {
				e := <-streamErrC
				st, _ = st.step(evStream{err: e.err, input: e.input, at: time.Now()}, env)
			}
			st, _ = st.step(evDrained{}, env)
		}
	}
	err := st.err
	if st.tellWorker() {
		// The worker may still run it: tell it to stop.
		_ = nc.Publish(jobSubject(j.e.c.user, j.id, "cancel"), nil)
	}
	cancel(err)
	wg.Wait()
	j.stopBeat()
	j.ended.Store(true)
	j.unsubscribe()
	j.closeConns()
	return res, err
}
