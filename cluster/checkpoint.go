package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/runtime"
)

// Checkpoints across machines (docs/recovery.md): at a barrier the client
// forwards a remote actor's inputs only up to the tokens of the barrier's
// firing (a sendGate per input stream), asks the worker for the actor's
// snapshot at that firing (request/reply on sluice.u.USER.job.JOB.snap), and then
// forwards the rest. The worker takes the snapshot with
// runtime.SnapshotActor once the actor has done exactly those firings.

// sendGate bounds the tokens a sender may send (limit; < 0: no bound).
type sendGate struct {
	limit atomic.Int64
}

func newSendGate() *sendGate {
	g := &sendGate{}
	g.limit.Store(-1)
	return g
}

// allow returns how many of want tokens the sender may send after sent,
// waiting while the gate is closed at sent. A nil gate allows all.
func (g *sendGate) allow(ctx context.Context, sent int64, want int) (int, error) {
	if g == nil {
		return want, nil
	}
	for wait := time.Microsecond; ; wait = min(2*wait, 500*time.Microsecond) {
		l := g.limit.Load()
		if l < 0 {
			return want, nil
		}
		if l > sent {
			return int(min(int64(want), l-sent)), nil
		}
		select {
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// clamp returns how many of n tokens, taken after sent, stay below the
// gate now. A sender checks it after it took its tokens: the gate may have
// closed meanwhile, and the producer may have gone past the barrier.
func (g *sendGate) clamp(sent int64, n int) int {
	if g == nil {
		return n
	}
	if l := g.limit.Load(); l >= 0 {
		return int(max(0, min(int64(n), l-sent)))
	}
	return n
}

// snapReply is the worker's answer to a snapshot request.
type snapReply struct {
	Snapshot *runtime.ActorSnapshot `json:"snapshot,omitempty"`
	Error    string                 `json:"error,omitempty"`
	// Finished: the actor ended before the barrier (not an error: that
	// checkpoint is not completed, the run is ending).
	Finished bool `json:"finished,omitempty"`
}

// errFinished is snapshot's error for a reply with Finished.
var errFinished = errors.New("the actor finished before the barrier")

// Barrier implements runtime.RemoteCheckpointer: it closes the input
// gates at the tokens of firing firings and asks the worker for the
// actor's snapshot there.
func (j *job) Barrier(firing int64, done func(runtime.ActorSnapshot, error)) {
	// The inputs' tokens already sent count from the run's start firing.
	start := int64(0)
	if j.ra.Resume != nil {
		start = j.ra.Resume.Firing
	}
	for i, in := range j.ra.Ins {
		j.gates[i].limit.Store(in.Port.Rate.TokensBefore(firing) - in.Port.Rate.TokensBefore(start))
	}
	go func() {
		s, err := j.snapshot(firing)
		for _, g := range j.gates {
			g.limit.Store(-1)
		}
		if errors.Is(err, ErrWorkerLost) {
			select { // the run weighs it with the heartbeats and the result
			case j.ckLost <- err:
			default:
			}
		}
		if errors.Is(err, ErrWorkerLost) || errors.Is(err, errFinished) {
			return // the checkpoint stays incomplete; the run reports the loss, or ends
		}
		done(s, err)
	}()
}

// snapshot asks the worker for the actor's snapshot at firing.
func (j *job) snapshot(firing int64) (runtime.ActorSnapshot, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := context.AfterFunc(j.runCtx(), cancel)
	defer stop()
	m, err := j.e.c.nc.RequestWithContext(ctx, jobSubject(j.e.c.user, j.id, "snap"), binary.LittleEndian.AppendUint64(nil, uint64(firing)))
	if err != nil {
		// No answer: the worker or the run is gone (the heartbeats
		// tell which).
		return runtime.ActorSnapshot{}, lostWorker(j.p.Worker, "worker %s: snapshot at firing %d: %v", j.p.Worker, firing, err)
	}
	var rep snapReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return runtime.ActorSnapshot{}, fmt.Errorf("worker %s: bad snapshot reply: %w", j.p.Worker, err)
	}
	if rep.Finished {
		return runtime.ActorSnapshot{}, errFinished
	}
	if rep.Error != "" || rep.Snapshot == nil {
		return runtime.ActorSnapshot{}, fmt.Errorf("worker %s: snapshot at firing %d: %s", j.p.Worker, firing, rep.Error)
	}
	return *rep.Snapshot, nil
}

// holdReply is the worker's answer to a hold or release request.
type holdReply struct {
	Firing int64  `json:"firing"`
	Error  string `json:"error,omitempty"`
}

// Hold implements runtime.RemoteHolder: the worker caps the actor (a
// source) at the firing its current round ends at and answers with it.
func (j *job) Hold(ctx context.Context) (int64, error) {
	rep, err := j.holdRequest(ctx, "hold")
	return rep.Firing, err
}

// Release implements runtime.RemoteHolder: the worker lifts the cap.
func (j *job) Release(ctx context.Context) error {
	_, err := j.holdRequest(ctx, "release")
	return err
}

func (j *job) holdRequest(ctx context.Context, what string) (holdReply, error) {
	var rep holdReply
	m, err := j.e.c.nc.RequestWithContext(ctx, jobSubject(j.e.c.user, j.id, what), nil)
	if err != nil {
		return rep, lostWorker(j.p.Worker, "worker %s: %s request for actor %s: %v", j.p.Worker, what, j.ra.Actor.Name, err)
	}
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return rep, fmt.Errorf("worker %s: bad %s reply: %w", j.p.Worker, what, err)
	}
	if rep.Error != "" {
		return rep, fmt.Errorf("worker %s: %s: %s", j.p.Worker, what, rep.Error)
	}
	return rep, nil
}

// runCtx returns the context of the job's Run (Background before it).
func (j *job) runCtx() context.Context {
	if c := j.ctxp.Load(); c != nil {
		return *c
	}
	return context.Background()
}

// workerSnaps answers a job's snapshot requests on the worker, once the
// job's run has started (the network processes publish its context).
type workerSnaps struct {
	mu  sync.Mutex
	ctx context.Context // the job's run
	run *runtime.Handle
	set chan struct{}
	// slots bounds the requests waiting for an answer (RequestLimits'
	// MaxInFlight); guard recovers a handler's panic (Worker.recoverRequest).
	slots chan struct{}
	guard func(what string, answer func(error))
}

func newWorkerSnaps(inFlight int, guard func(string, func(error))) *workerSnaps {
	return &workerSnaps{set: make(chan struct{}), slots: make(chan struct{}, max(inFlight, 1)), guard: guard}
}

// serve answers m with f's reply in a goroutine of its own, when fewer than
// the bound of requests wait; else at once with busy.
func (s *workerSnaps) serve(m *nats.Msg, what string, busy func() any, f func() any) {
	respond := func(v any) {
		data, _ := json.Marshal(v)
		_ = m.Respond(data)
	}
	select {
	case s.slots <- struct{}{}:
	default:
		respond(busy())
		return
	}
	go func() {
		defer func() { <-s.slots }()
		if s.guard != nil {
			defer s.guard(what, func(err error) { respond(holdReply{Error: err.Error()}) })
		}
		respond(f())
	}()
}

// started records the run's context and handle (from a network process).
func (s *workerSnaps) started(ctx context.Context, run *runtime.Handle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		s.ctx, s.run = ctx, run
		close(s.set)
	}
}

// handler returns the NATS handler of sluice.u.USER.job.JOB.snap for actor.
func (s *workerSnaps) handler(jobCtx context.Context, actor string) nats.MsgHandler {
	return func(m *nats.Msg) {
		busy := func() any {
			return snapReply{Error: fmt.Sprintf("%d snapshot requests already wait for actor %s: expected at most that many at once", cap(s.slots), actor)}
		}
		s.serve(m, "snapshot", busy, func() any {
			rep := snapReply{}
			firing, err := validateSnapRequest(m.Data)
			if err != nil {
				rep.Error = err.Error()
				return rep
			}
			select {
			case <-s.set:
				snap, err := s.run.SnapshotActor(s.ctx, actor, firing)
				if err != nil {
					rep.Error = err.Error()
					// The actor ended first, or its run did.
					rep.Finished = errors.Is(err, runtime.ErrFinishedBeforeBarrier) || s.ctx.Err() != nil
				} else {
					rep.Snapshot = &snap
				}
			case <-jobCtx.Done():
				rep.Error, rep.Finished = "the job ended", true
			}
			return rep
		})
	}
}

// holdHandler returns the NATS handler of sluice.u.USER.job.JOB.hold for actor:
// runtime.HoldActor once the job's run has started.
func (s *workerSnaps) holdHandler(jobCtx context.Context, actor string) nats.MsgHandler {
	return s.onRun(jobCtx, func(context.Context) holdReply {
		pos, err := s.run.HoldActor(actor)
		if err != nil {
			return holdReply{Error: err.Error()}
		}
		return holdReply{Firing: pos}
	})
}

// releaseHandler returns the handler of sluice.u.USER.job.JOB.release.
func (s *workerSnaps) releaseHandler(jobCtx context.Context, actor string) nats.MsgHandler {
	return s.onRun(jobCtx, func(context.Context) holdReply {
		if err := s.run.ReleaseActor(actor); err != nil {
			return holdReply{Error: err.Error()}
		}
		return holdReply{}
	})
}

// onRun answers a request with f's reply once the job's run has started.
func (s *workerSnaps) onRun(jobCtx context.Context, f func(ctx context.Context) holdReply) nats.MsgHandler {
	return func(m *nats.Msg) {
		busy := func() any {
			return holdReply{Error: fmt.Sprintf("%d hold or snapshot requests already wait: expected at most that many at once", cap(s.slots))}
		}
		s.serve(m, "hold", busy, func() any {
			if len(m.Data) != 0 {
				return holdReply{Error: bad("(hold request)", "an empty message", fmt.Sprintf("%d bytes", len(m.Data))).Error()}
			}
			select {
			case <-s.set:
				return f(s.ctx)
			case <-jobCtx.Done():
				return holdReply{Error: "the job ended"}
			}
		})
	}
}
