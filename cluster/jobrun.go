package cluster

import (
	"errors"
	"fmt"
	"time"
)

// A remote job's local side (job.Run) is a state machine: the events that
// reach it — a stream's error, the worker's result, the outputs' end, the
// run's cancellation, a heartbeat tick, a checkpoint that found the worker
// gone — move it through its phases, and each step says what Run does
// next. step is a pure function of the state, the event and the job's
// fixed facts (runEnv); Run only gathers the events and carries out the
// actions.

// runPhase is where a job's run is.
type runPhase int

const (
	// phaseRunning: the streams move tokens; no result yet, or the result
	// came and outputs are still draining.
	phaseRunning runPhase = iota
	// phaseDraining: the result came and every output ended; stream
	// errors that were already queued are taken (evStream), then
	// evDrained ends the run.
	phaseDraining
	// phaseEnded: the run is over; state.err is its error.
	phaseEnded
)

func (p runPhase) String() string {
	return [...]string{"running", "draining", "ended"}[p]
}

// runState is a job's run state.
type runState struct {
	phase runPhase
	// result is the worker's result once it came.
	result *JobResult
	// outsDone: every output stream ended.
	outsDone bool
	// suspect is a stream's error (or a checkpoint's) that came before
	// the result: often the sign of the worker's own end, so the run waits
	// for the result, which says why, for up to a heartbeat timeout.
	suspect   error
	suspectAt time.Time
	// suspectIn: the suspect came from an input (or a checkpoint), which
	// a successful result excuses: the actor needed no more input.
	suspectIn bool
	// err is the run's error once ended.
	err error
}

// runEnv is what step needs to know about the job.
type runEnv struct {
	worker string
	// actors names the actors placed on the worker, for messages.
	actors func() string
	// broker is the broker's URL without credentials.
	broker           string
	heartbeatTimeout time.Duration
}

// runActions is what Run does after a step.
type runActions struct {
	// stopInputs stops the input streams quietly (the actor finished).
	stopInputs bool
	// drain: take the stream errors already queued (each an evStream),
	// then send evDrained.
	drain bool
	// end: the run is over (state.err, and the cancellation of whatever
	// still runs).
	end bool
}

// runEvent is one event of a job's run.
type runEvent interface{ runEvent() }

type (
	// evStream: a stream failed.
	evStream struct {
		err   error
		input bool
		at    time.Time
	}
	// evResult: the worker's result came.
	evResult struct{ r JobResult }
	// evOutputsEnded: every output stream reached its end (or failed).
	evOutputsEnded struct{}
	// evCancelled: the run's context ended with cause.
	evCancelled struct{ cause error }
	// evTick: a heartbeat interval passed. reconnected: the connection
	// to the broker was lost and came back since the run started;
	// sinceBeat: the time since the worker's last heartbeat; connected:
	// whether the connection is up now.
	evTick struct {
		now         time.Time
		reconnected bool
		sinceBeat   time.Duration
		connected   bool
	}
	// evCheckpointLost: a checkpoint's snapshot request went unanswered.
	evCheckpointLost struct {
		err error
		at  time.Time
	}
	// evDrained: the queued stream errors were all taken.
	evDrained struct{}
)

func (evStream) runEvent()         {}
func (evResult) runEvent()         {}
func (evOutputsEnded) runEvent()   {}
func (evCancelled) runEvent()      {}
func (evTick) runEvent()           {}
func (evCheckpointLost) runEvent() {}
func (evDrained) runEvent()        {}

// lost wraps a stream's error as the loss of the worker.
func (env runEnv) lost(err error) error {
	return lostWorker(env.worker, "worker %s: %v; its actors in this run: %s", env.worker, err, env.actors())
}

// step returns the state after ev, and what to do.
func (s runState) step(ev runEvent, env runEnv) (runState, runActions) {
	var act runActions
	if s.phase == phaseEnded {
		return s, runActions{end: true}
	}
	end := func(err error) (runState, runActions) {
		s.phase, s.err = phaseEnded, err
		act.end = true
		return s, act
	}
	if s.phase == phaseDraining {
		switch ev := ev.(type) {
		case evStream:
			// An output that ended by an error reported it before
			// its end; an input's error no longer matters.
			if !ev.input && s.err == nil {
				s.err = env.lost(ev.err)
			}
			return s, act
		case evDrained:
			if s.suspect != nil && !s.suspectIn && s.err == nil {
				s.err = s.suspect
			}
			return end(s.err)
		case evCancelled:
			return end(ev.cause)
		}
		return s, act
	}
	switch ev := ev.(type) {
	case evStream:
		if s.suspect == nil {
			s.suspect, s.suspectAt, s.suspectIn = env.lost(ev.err), ev.at, ev.input
		}
		if s.result != nil && s.result.Error == "" && ev.input {
			s.suspect = nil // the actor finished: it needed no more input
		}
	case evCheckpointLost:
		if s.suspect == nil {
			s.suspect, s.suspectAt, s.suspectIn = ev.err, ev.at, true
		}
		if s.result != nil && s.result.Error == "" {
			s.suspect = nil // the actor finished before the barrier
		}
	case evResult:
		if s.result != nil {
			return s, act // one result a job
		}
		r := ev.r
		s.result = &r
		if r.Error != "" {
			err := errors.New(r.Error)
			if r.Cut {
				err = lostWorker(env.worker, "worker %s: %s; its actors in this run: %s", env.worker, r.Error, env.actors())
			}
			return end(err)
		}
		if s.suspect != nil && !s.suspectIn {
			return end(s.suspect)
		}
		// An input cut before the result came: the actor finished and
		// the worker stopped reading; not an error.
		s.suspect = nil
		act.stopInputs = true
	case evOutputsEnded:
		s.outsDone = true
	case evCancelled:
		return end(ev.cause)
	case evTick:
		if ev.reconnected {
			// Messages on NATS (chunks, credits, requests) may have been
			// lost while the broker was away.
			return end(lostWorker(env.worker, "lost the connection to broker %s for a while (it reconnected), and with it worker %s's streams; its actors in this run: %s", env.broker, env.worker, env.actors()))
		}
		if s.suspect != nil && ev.now.Sub(s.suspectAt) > env.heartbeatTimeout {
			return end(s.suspect)
		}
		if ev.sinceBeat > env.heartbeatTimeout {
			why := fmt.Sprintf("worker %s stopped answering: no heartbeat for %s", env.worker, ev.sinceBeat.Round(time.Millisecond))
			if !ev.connected {
				why = fmt.Sprintf("lost the connection to broker %s, and with it worker %s (no heartbeat for %s)", env.broker, env.worker, ev.sinceBeat.Round(time.Millisecond))
			}
			return end(lostWorker(env.worker, "%s; its actors in this run: %s", why, env.actors()))
		}
	case evDrained:
	}
	if s.result != nil && s.outsDone {
		s.phase = phaseDraining
		act.drain = true
	}
	return s, act
}

// tellWorker reports whether the worker must be told to drop the job: it
// may still run it.
func (s runState) tellWorker() bool { return s.result == nil || s.err != nil }
