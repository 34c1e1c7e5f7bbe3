package sim

// The CPU runtime's pool (machine.Processor.Pool): units run rounds of
// firings, keep an actor while it is ready for up to a time slice, poll
// for work for a while when idle and then park.

// dispatchPool starts rounds on the free units of pool processor pi. A
// unit that has just ended a round keeps its task while the task is ready
// and its turn is shorter than the slice (or no other task is ready);
// other ready tasks go round-robin to the unit that just freed, then to
// polling units, else parked units are woken.
func (e *engine) dispatchPool(pi int) {
	ps := &e.procs[pi]
	for l, busy := range ps.units {
		if busy || ps.freeAt[l] != e.now {
			continue
		}
		ti := ps.lastTask[l]
		if ti < 0 || !e.ready(ti) {
			continue
		}
		if e.now-ps.turnStart[l] >= ps.slice && e.otherReady(ps, ti) {
			continue // its turn is over: it goes to the back of the queue
		}
		e.startRound(ti, pi, l, false)
	}
	for ps.free > 0 {
		n := len(ps.tasks)
		pick := e.pickReady(ps)
		if pick < 0 {
			return
		}
		lane := e.awakeUnit(ps)
		if lane < 0 {
			e.wakeUnits(ps, pi)
			return
		}
		ps.rot = (pick + 1) % n
		e.startRound(ps.tasks[pick], pi, lane, true)
	}
}

// otherReady reports whether a task of the processor other than ti is
// ready.
func (e *engine) otherReady(ps *procState, ti int) bool {
	for _, tj := range ps.tasks {
		if tj != ti && e.ready(tj) {
			return true
		}
	}
	return false
}

// spinningUnit returns a free unit of a pool that is still polling for
// work (freed or woken less than the spin time ago, and among the
// spinners most recently freed), or -1.
func (e *engine) spinningUnit(ps *procState) int {
	if ps.spin <= 0 {
		return -1
	}
	best := -1
	for l, busy := range ps.units {
		if busy || e.now-ps.freeAt[l] > ps.spin {
			continue
		}
		rank := 0
		for m, b := range ps.units {
			if !b && m != l && e.now-ps.freeAt[m] <= ps.spin && ps.freeAt[m] > ps.freeAt[l] {
				rank++
			}
		}
		if rank < ps.spinners && (best < 0 || ps.freeAt[l] > ps.freeAt[best]) {
			best = l
		}
	}
	return best
}

// batchSize is the number of firings the task's next kernel invocation
// runs: its Batch, or fewer for the last invocation; 0 for a task that is
// not batched.
func (e *engine) batchSize(ts *taskState) int64 {
	if ts.t.Batch <= 1 {
		return 0
	}
	return max(1, min(ts.t.Batch, ts.target-ts.firings))
}

// streamBytes accumulates the bytes a round moves on one stream.
type streamBytes struct {
	stream int
	push   bool
	bytes  int64
}

// startRound runs a round of task ti on unit lane of pool processor pi:
// as many consecutive firings as are ready, up to the task's RoundLimit,
// each costing its subtask's time plus the processor's firing cost; the
// round costs the round cost plus, per stream, one acquire and one
// release of the round's bytes. Every firing of the round is released
// when the round ends (the runtime commits a round's outputs and releases
// its inputs once). A replicated task (a team) fires one firing at a time
// instead, as with start.
func (e *engine) startRound(ti, pi, lane int, newTurn bool) {
	ts := &e.tasks[ti]
	ps := &e.procs[pi]
	pr := e.p.Machine.Processors[pi]
	if ps.pool && (newTurn || ps.lastTask[lane] != ti) {
		ps.turnStart[lane], ps.lastTask[lane] = e.now, ti
	}
	batch := e.batchSize(ts)
	if ts.t.Replicas > 1 && batch <= 1 {
		e.start(ti, pi, lane)
		return
	}
	limit := max(1, ts.t.RoundLimit)
	if batch > 1 {
		limit = batch
	}
	ps.units[lane] = true
	ps.free--
	ts.lane = lane
	share := e.occupy(ps, lane, ti)
	t := e.now + ps.payWake(lane) + ps.roundT // the wakes its last commit signalled, then the round
	if batch > 1 {
		t += ps.firingT // one launch for the invocation
	}
	var moved []streamBytes
	add := func(stream int, push bool, bytes int64) {
		for i := range moved {
			if moved[i].stream == stream && moved[i].push == push {
				moved[i].bytes += bytes
				return
			}
		}
		moved = append(moved, streamBytes{stream, push, bytes})
	}
	first := len(ts.queue)
	name := ts.t.Subtasks[ts.next].Name
	ts.inRound = true
	e.roundPasses = e.roundPasses[:0]
	type send struct {
		stream int
		n      int64
	}
	var sends []send
	for k := int64(0); k < limit; k++ {
		if k > 0 && !e.readyTokens(ti) {
			break
		}
		st := &ts.t.Subtasks[ts.next]
		for _, a := range st.Pops {
			ss := &e.streams[a.Stream]
			ss.avail -= a.Count
			add(a.Stream, false, a.Count*ss.s.ElemSize)
		}
		for _, a := range st.Pushes {
			ss := &e.streams[a.Stream]
			ss.space -= a.Count
			add(a.Stream, true, a.Count*ss.s.ElemSize)
			if ss.remote {
				// One message per stream per round or invocation: the
				// round's commit, the invocation's copy.
				merged := false
				for i := range sends {
					if sends[i].stream == a.Stream {
						sends[i].n += a.Count
						merged = true
					}
				}
				if !merged {
					sends = append(sends, send{a.Stream, a.Count})
				}
			}
		}
		t += st.Time
		if batch <= 1 {
			t += ps.firingT
		}
		ts.queue = append(ts.queue, inflight{sub: int32(ts.next)})
		ts.running++
		ts.firings++
		ts.next = -2
		ts.next = e.nextSubtask(ti)
		if ts.next < 0 {
			break
		}
	}
	ts.inRound = false
	if batch > 1 {
		t = e.issue(ps, moved, t)
	}
	var cyc int64
	for _, m := range moved {
		if m.push {
			cyc += pr.PushAcq + pr.PushSend.Cycles(m.bytes)
		} else {
			cyc += pr.PopAcq.Cycles(m.bytes) + pr.PopDisc
		}
	}
	end := t + pr.Seconds(cyc)
	for _, sd := range sends {
		ss := &e.streams[sd.stream]
		rdy := max(end+e.sendLatency(ss), ss.lastRdy)
		ss.lastRdy = rdy
		m := e.newMsg(int32(sd.stream), sd.n, sd.n*ss.s.ElemSize)
		e.schedule(rdy, evMsgReady, int32(sd.stream), m, 0)
	}
	relT := max(end, ts.lastRel)
	ts.lastRel = relT
	for i := first; i < len(ts.queue); i++ {
		ts.queue[i].release = relT
	}
	e.schedule(relT, evRelease, int32(ti), 0, int32(len(ts.queue)-first))
	for _, it := range e.roundPasses {
		e.iterDone(ts, it, relT)
	}
	ps.busy += (end - e.now) * share
	if e.cfg.Trace {
		e.addSpan(Span{Element: ps.name, Lane: lane, Name: name, Task: ti, Start: e.now, End: end})
	}
	e.schedule(end, evUnitFree, int32(pi), int32(lane), 0)
}

// issue queues an invocation that would start its work at t for the
// device's issuing thread (ps.issueT, plus ps.copyIssueT per host copy:
// each of its streams from or to another processor) and returns when its
// work starts: after the invocations issued before it and its own issue.
func (e *engine) issue(ps *procState, moved []streamBytes, t float64) float64 {
	if ps.issueT == 0 && ps.copyIssueT == 0 {
		return t
	}
	cost := ps.issueT
	for _, m := range moved {
		if e.streams[m.stream].remote {
			cost += ps.copyIssueT
		}
	}
	at := max(e.now, ps.issueFree) + cost
	ps.issueFree = at
	return t + (at - e.now)
}

// SteadyIterations is the fewest iterations whose simulation shows a pool
// processor's steady state: 20 rounds of the task whose rounds span the
// most iterations (a round of RoundLimit firings spans RoundLimit /
// (firings per iteration) iterations), at least 1. Programs without pool
// processors need no more than 1.
func SteadyIterations(p *Program) int64 {
	n := int64(1)
	for _, t := range p.Tasks {
		if !p.Machine.Processors[t.Processor].Pool {
			continue
		}
		perIter := t.Passes * int64(max(1, len(t.Subtasks)))
		if perIter <= 0 {
			continue
		}
		n = max(n, 20*((max(1, t.RoundLimit)+perIter-1)/perIter))
	}
	return n
}
