package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRunStateMachine feeds event sequences to a job's run state machine,
// without processes or connections, and checks the phase, the error and
// the actions after each sequence.
func TestRunStateMachine(t *testing.T) {
	t.Parallel()
	env := runEnv{worker: "w1", actors: func() string { return "lowpass" }, broker: "nats://127.0.0.1:4222", heartbeatTimeout: 3 * time.Second}
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	cut := errors.New("input x: the receiver closed the data stream: EOF")
	outCut := errors.New("output y: data stream cut before its end: EOF")
	ok := evResult{JobResult{Firings: 10}}
	tick := func(s float64, sinceBeat float64) evTick {
		return evTick{now: at(s), sinceBeat: time.Duration(sinceBeat * float64(time.Second)), connected: true}
	}
	for _, tc := range []struct {
		name   string
		events []runEvent
		phase  runPhase
		err    string // "" = none; else a substring
		lost   bool   // the error is a lost worker
		stop   bool   // some step stopped the inputs
		drain  bool   // some step asked for the queued errors
		tell   bool   // the worker must be told to drop the job
	}{
		{name: "done, then outputs", events: []runEvent{ok, evOutputsEnded{}, evDrained{}},
			phase: phaseEnded, stop: true, drain: true},
		{name: "outputs, then done", events: []runEvent{evOutputsEnded{}, ok, evDrained{}},
			phase: phaseEnded, stop: true, drain: true},
		{name: "done, outputs pending", events: []runEvent{ok, tick(1, 0.5)},
			phase: phaseRunning, stop: true, tell: false},
		{name: "the actor failed", events: []runEvent{evResult{JobResult{Error: "fir: bad taps"}}},
			phase: phaseEnded, err: "fir: bad taps", tell: true},
		{name: "the worker's data path was cut", events: []runEvent{evResult{JobResult{Error: "chunks were lost", Cut: true}}},
			phase: phaseEnded, err: "worker w1: chunks were lost; its actors in this run: lowpass", lost: true, tell: true},
		{name: "heartbeat lost", events: []runEvent{tick(1, 1), tick(2, 2), tick(4, 3.5)},
			phase: phaseEnded, err: "worker w1 stopped answering: no heartbeat for 3.5s; its actors in this run: lowpass", lost: true, tell: true},
		{name: "heartbeat lost with the broker", events: []runEvent{evTick{now: at(4), sinceBeat: 4 * time.Second}},
			phase: phaseEnded, err: "lost the connection to broker nats://127.0.0.1:4222, and with it worker w1 (no heartbeat for 4s)", lost: true, tell: true},
		{name: "broker reconnected", events: []runEvent{evTick{now: at(1), reconnected: true, connected: true}},
			phase: phaseEnded, err: "lost the connection to broker nats://127.0.0.1:4222 for a while (it reconnected)", lost: true, tell: true},
		{name: "cancelled", events: []runEvent{evCancelled{context.Canceled}},
			phase: phaseEnded, err: "context canceled", tell: true},
		{name: "cancelled after the result", events: []runEvent{ok, evCancelled{context.Canceled}},
			phase: phaseEnded, err: "context canceled", stop: true, tell: true},
		{name: "input cut, then success: the actor needed no more", events: []runEvent{evStream{cut, true, at(0)}, ok, evOutputsEnded{}, evDrained{}},
			phase: phaseEnded, stop: true, drain: true},
		{name: "input cut after success", events: []runEvent{ok, evStream{cut, true, at(1)}, evOutputsEnded{}, evDrained{}},
			phase: phaseEnded, stop: true, drain: true},
		{name: "input cut, no result within the timeout", events: []runEvent{evStream{cut, true, at(0)}, tick(1, 0.1), tick(3.5, 0.1)},
			phase: phaseEnded, err: "worker w1: input x: the receiver closed the data stream: EOF; its actors in this run: lowpass", lost: true, tell: true},
		{name: "input cut, then the actor's error says why", events: []runEvent{evStream{cut, true, at(0)}, evResult{JobResult{Error: "out of memory"}}},
			phase: phaseEnded, err: "out of memory", tell: true},
		{name: "output cut, then success: the output's error stands", events: []runEvent{evStream{outCut, false, at(0)}, ok},
			phase: phaseEnded, err: "output y: data stream cut before its end", lost: true, tell: true},
		{name: "output cut after success, while draining", events: []runEvent{ok, evOutputsEnded{}, evStream{outCut, false, at(1)}, evDrained{}},
			phase: phaseEnded, err: "output y: data stream cut", lost: true, stop: true, drain: true, tell: true},
		{name: "input error while draining is ignored", events: []runEvent{ok, evOutputsEnded{}, evStream{cut, true, at(1)}, evDrained{}},
			phase: phaseEnded, stop: true, drain: true},
		{name: "output cut after success, before the outputs ended", events: []runEvent{ok, evStream{outCut, false, at(1)}, evOutputsEnded{}, evDrained{}},
			phase: phaseEnded, err: "output y: data stream cut", lost: true, stop: true, drain: true, tell: true},
		{name: "checkpoint lost, then success", events: []runEvent{evCheckpointLost{lostWorker("w1", "worker w1: snapshot at firing 5: timeout"), at(0)}, ok, evOutputsEnded{}, evDrained{}},
			phase: phaseEnded, stop: true, drain: true},
		{name: "checkpoint lost, nothing more", events: []runEvent{evCheckpointLost{lostWorker("w1", "worker w1: snapshot at firing 5: timeout"), at(0)}, tick(2, 1), tick(3.5, 1)},
			phase: phaseEnded, err: "worker w1: snapshot at firing 5: timeout", lost: true, tell: true},
		{name: "checkpoint lost, then the heartbeat", events: []runEvent{evCheckpointLost{lostWorker("w1", "worker w1: snapshot at firing 5"), at(0)}, tick(3, 3.2)},
			phase: phaseEnded, err: "no heartbeat for 3.2s", lost: true, tell: true},
		{name: "the first error stands", events: []runEvent{evStream{outCut, false, at(0)}, evStream{cut, true, at(1)}, tick(3.5, 0)},
			phase: phaseEnded, err: "output y", lost: true, tell: true},
		{name: "a second result is ignored", events: []runEvent{ok, evResult{JobResult{Error: "late"}}, evOutputsEnded{}, evDrained{}},
			phase: phaseEnded, stop: true, drain: true},
		{name: "events after the end change nothing", events: []runEvent{evCancelled{context.Canceled}, ok, evOutputsEnded{}, evDrained{}},
			phase: phaseEnded, err: "context canceled", tell: true},
	} {
		var s runState
		var stop, drain bool
		for _, ev := range tc.events {
			var act runActions
			s, act = s.step(ev, env)
			stop = stop || act.stopInputs
			drain = drain || act.drain
			if act.end != (s.phase == phaseEnded) {
				t.Errorf("%s: after %T: end %v in phase %s", tc.name, ev, act.end, s.phase)
			}
		}
		if s.phase != tc.phase {
			t.Errorf("%s: phase %s, expected %s", tc.name, s.phase, tc.phase)
		}
		switch {
		case tc.err == "" && s.err != nil:
			t.Errorf("%s: error %v, expected none", tc.name, s.err)
		case tc.err != "" && (s.err == nil || !strings.Contains(s.err.Error(), tc.err)):
			t.Errorf("%s: error %v, expected one with %q", tc.name, s.err, tc.err)
		}
		if tc.err != "" && errors.Is(s.err, ErrWorkerLost) != tc.lost {
			t.Errorf("%s: error %v: a lost worker %v, expected %v", tc.name, s.err, !tc.lost, tc.lost)
		}
		if stop != tc.stop || drain != tc.drain {
			t.Errorf("%s: stopped the inputs %v, drained %v; expected %v, %v", tc.name, stop, drain, tc.stop, tc.drain)
		}
		if s.tellWorker() != tc.tell {
			t.Errorf("%s: tell the worker %v, expected %v", tc.name, s.tellWorker(), tc.tell)
		}
	}
}
