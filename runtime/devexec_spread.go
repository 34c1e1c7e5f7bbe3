package runtime

import "github.com/sluicehq/sluice/device"

// Spreading a round over lanes. Within one round (one batch, one CUDA
// Graph), pass p of every unit goes to lane (unit's lane + p) mod lanes, so
// that a chain's successive invocations run concurrently on several
// streams rather than one after another on one: an invocation of G firings
// of an actor with one work-group per firing may fill only part of a GPU.
// Rounds still follow each other (a batch starts after the previous one
// has ended), so only the launches of one round need ordering, and they
// get it from what they touch:
//
//   - a device-ring window read after a write of the round that overlaps it
//     (RAW: a channel's initial tokens, unequal rates);
//   - a device-ring window written over tokens that a launch of the round
//     read (WAR: the ring's capacity is smaller than the round's tokens);
//   - a stateful or iterated unit (swap buffers) after its own previous
//     invocation.
//
// A launch waits (device.LaneBatcher.After) only for such launches of other
// lanes; its own lane is in order already. Host ports need nothing: each
// invocation has its own staging slot, its input copies are waited for
// before the batch starts, and its output copies wait for the batch's end.

// ringUse is one launch's window on a device ring in the open round:
// tokens [s, e) (absolute positions), the launch that last touches them
// and its lane.
type ringUse struct {
	s, e   int64
	launch int
	lane   int
}

// roundLog is a device ring's windows in the open round.
type roundLog struct {
	round int64
	wr    []ringUse
	rd    []ringUse
}

// ringWin is an enqueued invocation's window on a device ring.
type ringWin struct {
	g    *devRing
	s, e int64
}

// maySpread reports whether the device's rounds may spread over lanes:
// its queue has them (device.LaneBatcher), and neither Options.DeviceLanes
// nor a benchmark's switch keeps a round on one stream. Ring capacities
// and the default depth are sized for it before the rounds are set up.
func (d *devRunner) maySpread() bool {
	_, ok := d.q.(device.LaneBatcher)
	return ok && !d.r.opts.tune.noSpread && !d.r.opts.tune.noFork && d.r.opts.DeviceLanes != 1
}

// setupSpread turns spreading on when the device's rounds may spread and
// some unit takes more than one invocation a round.
func (d *devRunner) setupSpread() {
	if d.lb == nil || !d.maySpread() || d.passes < 2 {
		return
	}
	d.nLanes = min(d.lb.Lanes(), d.passes)
	if n := d.r.opts.DeviceLanes; n > 1 {
		d.nLanes = min(d.nLanes, n)
	}
	d.spread = d.nLanes > 1
}

// laneOf is the lane of u's invocation in pass p of the round.
func (d *devRunner) laneOf(du *devUnit) int {
	if !d.spread {
		return du.lane
	}
	return (du.lane + d.pass) % d.nLanes
}

// log returns g's record of the open round, emptied when it is a new one.
func (d *devRunner) log(g *devRing) *roundLog {
	if g.log.round != d.roundNo {
		g.log.round = d.roundNo
		g.log.wr, g.log.rd = g.log.wr[:0], g.log.rd[:0]
	}
	return &g.log
}

// spreadDeps asks the batcher to order the invocation being enqueued (on
// lane) after the round's launches of other lanes it depends on.
func (d *devRunner) spreadDeps(op *enqOp, lane int) {
	after := func(us []ringUse, s, e int64) {
		for _, x := range us {
			if x.lane != lane && x.s < e && s < x.e {
				d.lb.After(x.launch)
			}
		}
	}
	for _, w := range op.rin {
		after(d.log(w.g).wr, w.s, w.e)
	}
	for _, w := range op.rout {
		after(d.log(w.g).rd, w.s-w.g.cap, w.e-w.g.cap)
	}
	du := op.du
	if (op.u.a.Stateful || du.iters > 1) && du.lastRound == d.roundNo && du.inRound > 0 && du.lastLane != lane {
		d.lb.After(du.lastLaunch)
	}
}

// logSpread records the enqueued invocation's ring windows, touched last by
// the batch's launch number launch on lane.
func (d *devRunner) logSpread(op *enqOp, launch, lane int) {
	for _, w := range op.rin {
		l := d.log(w.g)
		l.rd = append(l.rd, ringUse{s: w.s, e: w.e, launch: launch, lane: lane})
	}
	for _, w := range op.rout {
		l := d.log(w.g)
		l.wr = append(l.wr, ringUse{s: w.s, e: w.e, launch: launch, lane: lane})
	}
	op.du.lastLaunch, op.du.lastLane = launch, lane
}

// roundReady reports whether a spread round should begin now: at once when
// nothing is in flight, else only when every unit can take a whole round
// (perRound invocations: room in flight, and the tokens of its host
// inputs). The manager would otherwise begin a round whenever one
// invocation's data arrives, and rounds of one invocation leave the lanes
// they would spread over idle (an image pipeline's kernels of 64 one-block
// firings fill half an H100); while rounds are in flight the device is
// busy, so waiting for a whole one costs nothing. A host input that can
// never hold a round beyond what is in flight, is closed, or is near the
// actor's last firing does not hold it back.
func (d *devRunner) roundReady() bool {
	if !d.spread || len(d.inflight) == 0 {
		return true
	}
	for _, u := range d.units {
		du := u.kernel()
		if du.stopped || u.state.Load() == stateDone {
			continue
		}
		if du.inflight+du.perRound > d.depth {
			return false
		}
		round := int64(du.perRound) * du.G
		if u.target >= 0 && u.target-u.next < round {
			continue
		}
		for i := range du.ins {
			p := &du.ins[i]
			if p.ring != nil || p.peer != nil || p.rate == 0 {
				continue
			}
			f, need := p.up.ch.fr.f, round*p.rate
			if int64(f.Capacity()) < need+int64(p.pending) || f.Writer().Closed() {
				continue
			}
			if int64(p.up.r.Available()-p.pending) < need {
				return false
			}
		}
	}
	return true
}
