package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// ErrWorkerLost is matched (errors.Is) by the errors of a run that lost a
// worker: it stopped answering, or one of its data streams was cut.
var ErrWorkerLost = errors.New("worker lost")

// WorkerLostError is the error of a remote actor whose worker was lost;
// its message is the one the run reports.
type WorkerLostError struct {
	// Worker names the lost worker.
	Worker string
	msg    string
}

func (e *WorkerLostError) Error() string { return e.msg }

// Is matches ErrWorkerLost.
func (e *WorkerLostError) Is(target error) bool { return target == ErrWorkerLost }

func lostWorker(worker, format string, args ...any) error {
	return &WorkerLostError{Worker: worker, msg: fmt.Sprintf(format, args...)}
}

// RecoveryOptions configure RunRecovering.
type RecoveryOptions struct {
	// Attempts is the most recoveries of one run; 0 means 3.
	Attempts int
	// Recovered, when set, is called when a resumed run fired again after
	// a lost worker.
	Recovered func(Recovery)
	// Logf, when set, receives a line when the checkpoint store does not
	// answer (within StoreAttempt of the first try) and every 5 s while
	// it is retried, and when a resumed run waits for workers to come
	// back.
	Logf func(format string, args ...any)
	// StoreWait is the store's own timeout: how long a recovery retries a
	// checkpoint store that does not answer, and places a resumed run
	// whose workers are still reconnecting. 0 means no timeout of its
	// own: the store is retried until the run's context ends (sluice
	// run's --max-time, an interrupt), placement for 30 s. The run's
	// context bounds both.
	StoreWait time.Duration
}

// StoreAttempt bounds one attempt to read the checkpoint store during a
// recovery: a store that does not answer is reported after it.
const StoreAttempt = 2 * time.Second

// Recovery describes one recovery from a lost worker.
type Recovery struct {
	// Worker is the lost worker; Err the run's error that said so.
	Worker string
	Err    error
	// Broker, when set, is the broker whose connection the client lost
	// (restarted, say): the loss was not the worker's, and every worker
	// stayed eligible for the resumed run.
	Broker string
	// From is the checkpoint the run resumed from (nil: from the start).
	From *runtime.Checkpoint
	// Failed is when the run ended with the loss; Firing when the resumed
	// run's first firing after the restore was seen.
	Failed, Firing time.Time
}

// RunRecovering runs g as runtime.Run does and survives lost workers: when
// the run fails because a worker stopped answering (or its data stream
// was cut), the actors the mapping placed on that worker are placed anew
// on other workers with the same device (any: placements are chosen
// again without that worker), and the run resumes from the last
// checkpoint in opts.Checkpoint.Store: every actor's state and every
// source's position restored, file sinks cut back to the checkpoint. A run
// without checkpoints is run once, as runtime.Run does. The statistics
// are the last run's, with Checkpoints.Recoveries counting the recoveries.
func RunRecovering(ctx context.Context, g *graph.Graph, opts runtime.Options, ro RecoveryOptions) (*runtime.Stats, error) {
	if opts.Checkpoint == nil || opts.Checkpoint.Store == nil || opts.Checkpoint.External {
		return runtime.Run(ctx, g, opts)
	}
	attempts := ro.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	wait := ro.StoreWait // the store's; 0: until ctx ends
	place := wait
	if place <= 0 {
		place = replaceWait
	}
	logf := ro.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	ex, _ := opts.Remote.(*Executor)
	ck := *opts.Checkpoint
	opts.Checkpoint = &ck
	var recoveries int64
	mapping := opts.Mapping
	var lostSet []string       // lost workers not seen back in the tree
	var replaceUntil time.Time // while placing a recovered run, retry
	waitNoted := false
	for attempt := 0; ; attempt++ {
		conn := ex.connState()
		st, err := runtime.Run(ctx, g, opts)
		if st != nil && st.Checkpoints != nil {
			st.Checkpoints.Recoveries = recoveries
		}
		if err != nil && st == nil && ctx.Err() == nil && time.Now().Before(replaceUntil) {
			// The resumed run could not be placed (workers still
			// reconnecting after a broker's restart): try again.
			if !waitNoted {
				logf("recovery: the resumed run cannot be placed yet (%v): retrying for up to %s while workers reconnect", err, time.Until(replaceUntil).Round(time.Second))
				waitNoted = true
			}
			attempt--
			time.Sleep(250 * time.Millisecond)
			continue
		}
		waitNoted = false
		var lost *WorkerLostError
		if err != nil && ctx.Err() == nil && !errors.As(err, &lost) && ex.connState() != conn {
			// The client's connection to the broker went away during the
			// run, and a worker ended its job for it first (its client's
			// heartbeats stopped): the broker's fault, recovered as one.
			lost = &WorkerLostError{msg: err.Error()}
		}
		if err == nil || ctx.Err() != nil || lost == nil {
			return st, err
		}
		if attempt >= attempts {
			return st, fmt.Errorf("%w (after %d recoveries, the most allowed)", err, attempts)
		}
		failed := time.Now()
		// The client's own connection to the broker went away during
		// the run: the broker (restarted, say) cut the worker off, not
		// the worker's end.
		broker := ""
		if ex != nil && ex.connState() != conn {
			broker = redact(ex.c.url)
		}
		if pinned := strictOn(mapping, lost.Worker); pinned != "" && broker == "" {
			return st, fmt.Errorf("%w (not recovered: actor %s is pinned to worker %s with strict: true)", err, pinned, lost.Worker)
		}
		cp, lerr := latest(ctx, ck.Store, wait, logf)
		if lerr != nil {
			return st, fmt.Errorf("%w; recovery: reading the last checkpoint: %v", err, lerr)
		}
		replaceUntil = time.Now().Add(place)
		if ex != nil {
			ex.forget()
		}
		lostSet = stillLost(ctx, ex, lostSet)
		if broker == "" {
			lostSet = append(lostSet, lost.Worker)
		}
		opts.Mapping = replaceWorkers(mapping, lostSet)
		ck.Resume = cp
		recoveries++
		rec := Recovery{Worker: lost.Worker, Err: err, From: cp, Failed: failed, Broker: broker}
		userProgress := opts.Progress
		opts.Progress = resumedProgress(userProgress, func(t time.Time) {
			rec.Firing = t
			if ro.Recovered != nil {
				ro.Recovered(rec)
			}
		})
		if opts.ProgressInterval <= 0 || opts.ProgressInterval > 10*time.Millisecond {
			if userProgress == nil {
				opts.ProgressInterval = 10 * time.Millisecond
			}
		}
	}
}

// replaceWait is how long a recovery keeps trying to place the resumed
// run, and to read the last checkpoint (a restarted broker, workers
// reconnecting).
const replaceWait = 30 * time.Second

// latest reads the store's last checkpoint: each attempt bounded by
// StoreAttempt, a store that does not answer reported through logf at
// once and every 5 s after, retried for wait (0: no bound of its own)
// while ctx lasts. When ctx ends first, the error says for how long the
// store did not answer and wraps ctx's cause (a run's --max-time).
func latest(ctx context.Context, s runtime.CheckpointStore, wait time.Duration, logf func(string, ...any)) (*runtime.Checkpoint, error) {
	start := time.Now()
	deadline := start.Add(wait)
	if wait <= 0 {
		deadline = time.Time{}
	}
	var noted time.Time
	for {
		actx, cancel := context.WithTimeout(ctx, StoreAttempt)
		cp, err := s.Latest(actx)
		cancel()
		if err == nil {
			if !noted.IsZero() {
				logf("recovery: the checkpoint store answered again after %s", time.Since(start).Round(time.Millisecond))
			}
			return cp, nil
		}
		if errors.Is(err, ErrCheckpointDamaged) { // the store answered: asking again changes nothing
			return nil, fmt.Errorf("%w (the run cannot resume from it)", err)
		}
		if ctx.Err() != nil {
			return nil, storeGaveUp(ctx, start, err)
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return nil, fmt.Errorf("the checkpoint store did not answer for %s (the store's timeout): %w", wait.Round(time.Second), err)
		}
		if noted.IsZero() || time.Since(noted) >= 5*time.Second {
			logf("recovery: the checkpoint store does not answer (%v): %s", err, retryingFor(ctx, deadline))
			noted = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, storeGaveUp(ctx, start, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// retryingFor says how long the store is retried: until the store's
// deadline, the context's (a run's --max-time), or the run's end.
func retryingFor(ctx context.Context, deadline time.Time) string {
	if dl, ok := ctx.Deadline(); ok && (deadline.IsZero() || dl.Before(deadline)) {
		return fmt.Sprintf("retrying for up to %s more, until the run's time limit", time.Until(dl).Round(time.Second))
	}
	if !deadline.IsZero() {
		return fmt.Sprintf("retrying for up to %s more", time.Until(deadline).Round(time.Second))
	}
	return "retrying until it answers or the run is stopped (--max-time, an interrupt)"
}

// storeGaveUp is the error of a store retried until ctx ended: how long
// it did not answer, its last error, and ctx's cause (wrapped).
func storeGaveUp(ctx context.Context, start time.Time, last error) error {
	return fmt.Errorf("the checkpoint store did not answer for %s (%v), retried until the run ended: %w", time.Since(start).Round(time.Millisecond), last, context.Cause(ctx))
}

// resumedProgress wraps a Progress callback so that first is called once,
// at the first snapshot in which an actor has fired.
func resumedProgress(user func(runtime.Snapshot), first func(time.Time)) func(runtime.Snapshot) {
	seen := false
	return func(s runtime.Snapshot) {
		if !seen {
			for _, a := range s.Actors {
				if a.Firings > 0 {
					seen = true
					first(time.Now())
					break
				}
			}
		}
		if user != nil {
			user(s)
		}
	}
}

// stillLost returns the workers of lost that the tree does not show
// again (a restarted worker comes back under its name).
func stillLost(ctx context.Context, ex *Executor, lost []string) []string {
	if ex == nil || len(lost) == 0 {
		return lost
	}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ds, err := ex.devices(qctx)
	if err != nil {
		return lost
	}
	var out []string
	for _, w := range lost {
		back := false
		for _, d := range ds {
			back = back || d.Worker == w
		}
		if !back {
			out = append(out, w)
		}
	}
	return out
}

// strictOn names an actor that m pins (strict: true) to worker w, or "".
func strictOn(m *graph.Mapping, w string) string {
	if m == nil {
		return ""
	}
	var names []string
	for name, pl := range m.Actors {
		if p, err := ParseWorkerPlacement(pl.Device); pl.Strict && err == nil && p.Worker == w {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// replaceWorkers returns a copy of m in which the placements on a lost
// worker ask for the same device on any worker not lost, and any:
// placements exclude the lost workers.
func replaceWorkers(m *graph.Mapping, lost []string) *graph.Mapping {
	m = m.Clone()
	if m == nil {
		return nil
	}
	var not strings.Builder
	for _, w := range lost {
		not.WriteString(",worker!=" + w)
	}
	for _, pl := range m.Actors {
		switch {
		case pl.Any != "":
			pl.Any += not.String()
		case runtime.IsRemotePlacement(pl):
			p, err := ParseWorkerPlacement(pl.Device)
			if err != nil || !slices.Contains(lost, p.Worker) {
				continue
			}
			pl.Device = ""
			pl.Any = "id=" + p.Device + not.String()
		}
	}
	return m
}

// connState identifies the client's connection to the broker: it changes
// when the connection drops or comes back (a broker restarted). A nil
// executor's is constant.
func (e *Executor) connState() string {
	if e == nil {
		return ""
	}
	nc := e.c.nc
	return fmt.Sprintf("%d/%v", nc.Stats().Reconnects, nc.IsConnected())
}
