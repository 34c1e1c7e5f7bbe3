package runtime

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// fuseBatchBytes is the most bytes of one port's window that a worker's
// claimed batch of a fused chain moves (at least one firing): a batch's
// input, output and two intermediate windows (32 KiB) then stay in a
// core's L1 or L2 cache while every stage runs over it. Each stage's time
// is read once per batch: on a virtual machine whose clock costs about
// 50–100 ns a read, batches of 4 KiB (1024 float32, a hand-fused loop's)
// spent 14 % of a 16-stage saxpy chain's CPU time reading it.
const fuseBatchBytes = 8 << 10

// fuseRoundBatches is how many batches per replica a round of a fused unit
// holds (the boundary channels are sized for it): enough that the round's
// last batches, which leave other replicas idle, are a small part of it.
const fuseRoundBatches = 8

// fuseTailShare and fuseTailDiv shape a team round's end (guided
// self-scheduling): once fewer than fuseTailShare batches per replica are
// left unclaimed, a claim takes 1/(fuseTailShare × replicas) of what is
// left, rounded up, down to a batch ÷ fuseTailDiv (at least one firing).
// With whole batches to the end, a replica that takes the round's last
// batch runs it while the others, done, wait: about half a batch per
// replica and round, 6 % of a 64-stage chain's time on 16 cores. Smaller
// claims cost a clock read per stage each, so they stop at a quarter of a
// batch and come only at the round's end.
const (
	fuseTailShare = 2
	fuseTailDiv   = 4
)

// fuseMaxCost is the declared cost of one firing (graph.Actor.Cost) from
// which an actor is not fused. A fused chain runs its stages back to back
// on one worker, batch after batch, so a producer and its consumer never
// overlap within a batch: what fusion saves is the channel's commit and
// the scheduling between them (a few µs a round), and a round's
// (roundTargetNs) worth of a stage's firings already pays that once per
// round unfused. Firings of this cost or more run one or a few per round
// unfused, and pipeline across the workers as the simulator assumes.
const fuseMaxCost = roundTargetNs * time.Nanosecond

// fusion is the mode of a fused unit: a chain of stateless CPU actors
// run as one scheduling unit. A worker claims a batch of firings and runs
// it through every stage back to back, the windows between stages in the
// worker's scratch buffer, and the unit is a team of one replica per
// worker, so the chain runs data parallel with its outputs committed in
// firing order (the team's ordered merge).
type fusion struct {
	onPool
	teamRound
	name   string
	stages []*unit
	// batch is the firings one claim takes (minBatch the fewest, at a
	// team round's end: see claimSize); scratch the bytes of one
	// intermediate buffer (batch × the largest window between stages).
	batch    int64
	minBatch int64
	scratch  int
	// inner lists the channels between stages (no token ever moves
	// through their FIFOs).
	inner []*chanRec
}

// fusedStage is the mode of an actor inside a fused chain: it is never
// queued itself; its fused unit (by) fires it.
type fusedStage struct {
	offPool
	by *unit
}

// fused returns the unit's fused chain when it is a fused unit, else nil.
func (u *unit) fused() *fusion {
	fz, _ := u.mode.(*fusion)
	return fz
}

// fusedBy returns the fused unit that runs the unit when it is a stage of
// a fused chain, else nil.
func (u *unit) fusedBy() *unit {
	if s, ok := u.mode.(*fusedStage); ok {
		return s.by
	}
	return nil
}

// quiet: the fused unit's runner fires the stage.
func (*fusedStage) quiet(*unit) bool { return true }

// blockedOn: the fused unit speaks for its stages.
func (*fusedStage) blockedOn(*unit) ([]string, bool) { return nil, false }

// stats corrects a stage's statistics: its tokens are its firings' (the
// channels inside the chain move none), the chain's blocked time is its
// head's (input) and its tail's (output), and Fused names the unit.
func (s *fusedStage) stats(u *unit, as *ActorStats, _, _ time.Duration) {
	fu := s.by
	fz := fu.fused()
	as.Fused = fu.name
	as.TokensIn, as.BytesIn, as.TokensOut, as.BytesOut = 0, 0, 0, 0
	for i := range u.ins {
		t := as.Firings * u.ins[i].sum
		as.TokensIn += t
		as.BytesIn += t * int64(u.ins[i].tsize)
	}
	for i := range u.outs {
		t := as.Firings * u.outs[i].sum
		as.TokensOut += t
		as.BytesOut += t * int64(u.outs[i].tsize)
	}
	as.BlockedIn, as.BlockedOut = 0, 0
	if u == fz.stages[0] {
		as.BlockedIn = time.Duration(fu.blockedIn)
	}
	if u == fz.stages[len(fz.stages)-1] {
		as.BlockedOut = time.Duration(fu.blockedOu)
	}
}

// fusable reports whether u may be a stage of a fused chain: a pooled,
// stateless, single-phase CPU actor with a firing function, no state,
// history, iteration, conditional pattern, I/O mark, affinity, mapped
// replicas or firing cap, and no KPN process next to it.
func (r *run) fusable(u *unit, byActor map[*graph.Actor]*unit) bool {
	a := u.a
	if _, ok := u.mode.(*sequential); !ok || u.fire == nil || u.replicas > 1 || len(u.affinity) > 0 {
		return false
	}
	if a.Stateful || a.IO || a.StateDecl != nil || a.Pattern != nil || a.Iterations > 1 || hasHistory(a) || a.Dynamic() || a.Phases() != 1 {
		return false
	}
	if a.Cost >= fuseMaxCost {
		return false // long firings gain from overlap: see fuseMaxCost
	}
	if _, capped := r.opts.Firings[a.Name]; capped {
		return false
	}
	if len(u.ins) == 0 && len(u.outs) == 0 {
		return false
	}
	for _, ps := range [][]*graph.Port{a.Inputs, a.Outputs} {
		for _, p := range ps {
			for _, c := range r.g.ChannelsOf(p) {
				for _, n := range []*unit{byActor[c.From.Actor], byActor[c.To.Actor]} {
					if n == nil || isProcess(n) {
						return false
					}
				}
			}
		}
	}
	return true
}

// fuseNext returns the stage after u in a fused chain: the consumer of
// u's only output, over one channel without initial tokens, when that
// consumer is fusable, has no other input, consumes what u produces per
// firing and fires as often; nil otherwise.
func (r *run) fuseNext(u *unit, ok map[*unit]bool, byActor map[*graph.Actor]*unit) *unit {
	if len(u.outs) != 1 {
		return nil
	}
	cs := r.g.ChannelsOf(u.outs[0].p)
	if len(cs) != 1 || cs[0].Initial != 0 {
		return nil
	}
	n := byActor[cs[0].To.Actor]
	if n == nil || n == u || !ok[n] || len(n.ins) != 1 {
		return nil
	}
	if n.ins[0].sum != u.outs[0].sum || n.ins[0].sum == 0 || n.target != u.target {
		return nil
	}
	return n
}

// fuseWorkers is the replicas of every fused unit: the CPU pool's size.
func (r *run) fuseWorkers() int {
	if r.opts.Workers > 0 {
		return r.opts.Workers
	}
	return defaultWorkers()
}

// planFusion finds the maximal chains of fusable actors (at least two)
// and makes a fused unit for each, before the channels are made (their
// capacities depend on it). Nothing is fused with Options.NoFuseCPU, or
// when the run tracks stream tags or has shared variables (both follow
// each firing of each actor through its channels).
func (r *run) planFusion(byActor map[*graph.Actor]*unit) {
	if r.opts.NoFuseCPU || r.opts.Tags || len(r.g.Shared) > 0 {
		return
	}
	for _, a := range r.g.Actors {
		if _, tagged := a.Attrs["tags"]; tagged {
			return
		}
	}
	ok := map[*unit]bool{}
	for _, u := range r.units {
		if r.fusable(u, byActor) {
			ok[u] = true
		}
	}
	next := map[*unit]*unit{}
	hasPrev := map[*unit]bool{}
	for _, u := range r.units {
		if !ok[u] {
			continue
		}
		if n := r.fuseNext(u, ok, byActor); n != nil {
			next[u] = n
			hasPrev[n] = true
		}
	}
	workers := r.fuseWorkers()
	for _, head := range r.units {
		if !ok[head] || hasPrev[head] || next[head] == nil {
			continue
		}
		stages := []*unit{head}
		for n := next[head]; n != nil; n = next[n] {
			stages = append(stages, n)
		}
		r.newFusion(stages, workers)
	}
}

// newFusion makes the fused unit of stages (their ports are attached to
// it later, by attachFusion).
func (r *run) newFusion(stages []*unit, workers int) {
	head, tail := stages[0], stages[len(stages)-1]
	fz := &fusion{name: fmt.Sprintf("fused(%s..%s)", head.name, tail.name), stages: stages}
	win, inner := 1, 1
	for i, s := range stages {
		for _, p := range s.ins {
			win = max(win, int(p.sum)*p.tsize)
		}
		for _, p := range s.outs {
			win = max(win, int(p.sum)*p.tsize)
			if i < len(stages)-1 {
				inner = max(inner, int(p.sum)*p.tsize)
			}
		}
	}
	fz.batch = int64(max(1, fuseBatchBytes/win))
	var cost time.Duration
	for _, s := range stages {
		cost += s.a.Cost
	}
	if cost > 0 {
		// A batch of declared cost lasts at most about a round's time:
		// the replicas share a round's batches from its first.
		fz.batch = min(fz.batch, max(1, int64(roundTargetNs*time.Nanosecond/cost)))
	}
	fz.minBatch = max(1, fz.batch/fuseTailDiv)
	fz.scratch = int(fz.batch) * inner
	fu := &unit{mode: fz, r: r, idx: -1, a: head.a, name: fz.name, replicas: workers, target: head.target, phases: 1}
	for _, s := range stages {
		s.mode = &fusedStage{by: fu}
		fu.prio = max(fu.prio, s.prio)
	}
	r.fused = append(r.fused, fu)
}

// fusedCapacity is the least capacity of a channel into or out of a fused
// chain: room for two rounds of fuseRoundBatches batches per replica, so
// that the producer fills one round's inputs while the replicas run the
// other. 0 for other channels (and those inside a chain).
func fusedCapacity(c *graph.Channel, pu, cu *unit) int {
	var fu *unit
	rate := 0
	pf, cf := pu.fusedBy(), cu.fusedBy()
	switch {
	case cf != nil && cf != pf && cu == cf.fused().stages[0]:
		fu, rate = cf, c.To.Rate.Max()
	case pf != nil && pf != cf:
		fu, rate = pf, c.From.Rate.Max()
	default:
		return 0
	}
	return c.Initial + 2*fuseRoundBatches*int(fu.fused().batch)*fu.replicas*rate
}

// attachFusion gives each fused unit its head's inputs and its tail's
// outputs, makes it the producer and consumer of record of those channels
// and the neighbour of every unit that had a stage as neighbour, and
// takes the stages off the pools. The channels inside a chain are marked
// drained: nothing ever reads them.
func (r *run) attachFusion() {
	if len(r.fused) == 0 {
		return
	}
	stageOf := map[*unit]*unit{}
	for _, fu := range r.fused {
		fz := fu.fused()
		head, tail := fz.stages[0], fz.stages[len(fz.stages)-1]
		fu.ins = append([]uport(nil), head.ins...)
		fu.outs = append([]uport(nil), tail.outs...)
		for i := range fu.ins {
			fu.ins[i].ch.consumer = fu
		}
		for i := range fu.outs {
			if fr := fu.outs[i].fr; fr != nil {
				fr.producer = fu
			}
		}
		for i, s := range fz.stages {
			stageOf[s] = fu
			s.replicas = fu.replicas
			if i > 0 {
				ch := s.ins[0].ch
				ch.leftSet.Store(true)
				fz.inner = append(fz.inner, ch)
			}
		}
	}
	for _, fu := range r.fused {
		for _, s := range fu.fused().stages {
			for _, n := range s.neigh {
				if stageOf[n] != fu {
					fu.addNeighbour(n)
				}
			}
		}
	}
	for _, u := range append(r.units[:len(r.units):len(r.units)], r.fused...) {
		if u.fusedBy() != nil {
			continue
		}
		neigh := u.neigh[:0:0]
		for _, n := range u.neigh {
			if fu := stageOf[n]; fu != nil {
				n = fu
			}
			if n != u && !containsUnit(neigh, n) {
				neigh = append(neigh, n)
			}
		}
		u.neigh = neigh
	}
}

func containsUnit(us []*unit, u *unit) bool {
	for _, v := range us {
		if v == u {
			return true
		}
	}
	return false
}

// poolUnits returns the units the pools may run: the actors' and the
// fused chains'.
func (r *run) poolUnits() []*unit {
	if len(r.fused) == 0 {
		return r.units
	}
	return append(r.units[:len(r.units):len(r.units)], r.fused...)
}

// fusedError is the error of one stage's firing inside a fused chain: the
// run reports it under the stage's name and firing, as if unfused.
type fusedError struct {
	stage *unit
	idx   int64
	err   error
}

func (e *fusedError) Error() string {
	return fmt.Sprintf("actor %s firing %d: %v", e.stage.name, e.idx, e.err)
}

func (e *fusedError) Unwrap() error { return e.err }

// round runs k firings of fused unit u from its next firing, the first
// batch starting at t0: on this worker alone when the pool has one worker
// or k is one batch, else as a team round whose replicas claim batches.
// It reports when its last batch ended (-1 after a team round: the time
// was not read), k, and whether this worker goes on running the unit.
func (fz *fusion) round(u *unit, c *execCtx, k, t0 int64) (int64, int64, bool) {
	b := fz.batch
	if u.replicas <= 1 || k <= b {
		base := u.next
		if u.r.liveStats {
			u.noteStarted(base + k)
		}
		var done int64
		var err error
		start := t0
		for done < k && err == nil {
			var n int64
			n, t0, err = fz.runBatch(u, c, base, done, min(b, k-done), t0)
			done += n
			if t0-start >= roundTargetNs {
				break // the round has lasted its time: commit what is done
			}
		}
		u.commit(base, done)
		if err != nil {
			u.stopWith(base+done, err)
			return t0, k, false
		}
		return t0, k, true
	}
	helpers := min(int64(u.replicas), (k+b-1)/b) - 1
	// Work that waits on this worker (most often the chain's producer or
	// consumer, readied by the last round's commit) runs now, beside the
	// round, rather than after it: the round gets one helper more and
	// this worker leaves it. A serial producer then refills the chain's
	// input while the replicas run, instead of between rounds.
	leave := c.wk != nil && c.wk.localWork()
	if leave {
		helpers++
	}
	id := fz.startRound(u, k, helpers)
	if leave {
		return -1, k, false
	}
	return -1, k, fz.join(u, c, id)
}

// join claims and runs batches of round id of fused unit u (smaller ones
// at the round's end: see claimSize) until none is left, as
// splitTeam.claimLoop does firings; whoever completes the round commits it and
// reports true. Batches that follow each other share a clock read: one's
// end is the next one's start. The context's lastTeamNs is a whole
// batch's time (a smaller claim's scaled up): awaitRound's wait is about
// the batches that other replicas may still be running.
func (fz *fusion) join(u *unit, c *execCtx, id uint64) bool {
	const mask = 1<<claimBits - 1
	t := int64(-1) // the last batch's end, while batches follow each other
	for {
		v := fz.claim.Load()
		if v>>claimBits != id {
			return false
		}
		k := fz.roundK.Load()
		j := int64(v & mask)
		if j >= k {
			nid, ok := fz.awaitRound(u, c, id, false)
			if !ok {
				return false
			}
			id, t = nid, -1
			continue
		}
		n := fz.claimSize(k-j, u.replicas)
		if !fz.claim.CompareAndSwap(v, v+uint64(n)) {
			continue
		}
		if j < fz.stopAt.Load() {
			if t < 0 {
				t = c.now()
			}
			t0 := t
			done, t1, err := fz.runBatch(u, c, fz.roundBase.Load(), j, n, t0)
			if err != nil {
				fz.failRound(j+done, err)
			}
			c.lastTeamNs, t = (t1-t0)*fz.batch/n, t1
		}
		if fz.doneN.Add(n) == k {
			u.cur = c.wk
			fz.endRound(u)
			return u.state.Load() != stateDone
		}
	}
}

// claimSize returns how many firings a claim of a team round takes when
// left firings remain unclaimed: a batch, or near the round's end a share
// of what is left (1/(fuseTailShare × replicas), rounded up) of at least
// minBatch, so that the replicas' last claims end close together. Claims
// of any size commit alike: the round's windows are consecutive.
func (fz *fusion) claimSize(left int64, replicas int) int64 {
	d := fuseTailShare * int64(max(1, replicas))
	return min(left, fz.batch, max(fz.minBatch, (left+d-1)/d))
}

// fuseScratch returns the context's scratch buffer of at least n bytes
// (kept for the run: a worker's intermediate windows stay in its cache).
func (c *execCtx) fuseScratch(n int) []byte {
	if len(c.fuseBuf) < n {
		c.fuseBuf = make([]byte, n)
	}
	return c.fuseBuf[:n]
}

// fusedBatch is one batch of a fused chain's firings on its way through
// the stages: where it stands, kept where the recovery from a panic in a
// firing finds it.
type fusedBatch struct {
	fz     *fusion  // the fused chain
	u, st  *unit    // the fused unit; the stage running
	c      *execCtx // the context running the batch
	f      *Firing  // the context's Firing, set up for st
	s      int      // st's place in the chain
	j, n   int64    // the batch's first firing in the round's windows; its firings still going
	m      int64    // the firing of st running, from the batch's first
	idx0   int64    // the batch's first firing's index
	t0     int64    // when st began
	in, to []byte   // st's input and output scratch windows
	err    error    // the first failure (a *fusedError)
}

// runBatch runs firings [base+j, base+j+n) of fused unit u through
// every stage, stage after stage, on the round's windows (offset j) and
// the context's scratch buffers, starting at t0. It returns how many of
// the firings went through every stage — all n, or those before the first
// that failed, with that failure (a *fusedError naming the stage and its
// firing) — and when the batch ended. Each stage's time over the batch is
// recorded as its firings' (busy time exact): the clock is read once per
// stage, the end of one stage being the start of the next.
func (fz *fusion) runBatch(u *unit, c *execCtx, base, j, n, t0 int64) (int64, int64, error) {
	buf := c.fuseScratch(2 * fz.scratch)
	b := fusedBatch{fz: fz, u: u, c: c, j: j, n: n, idx0: base + j, t0: t0, in: buf[:fz.scratch], to: buf[fz.scratch:]}
	for b.s < len(fz.stages) && b.n > 0 {
		b.runStages() // returns early only after a panic
	}
	return b.n, b.t0, b.err
}

// runStages runs the batch's firings through stages s and on. A firing
// that fails, or panics, stops the batch's later firings: the earlier
// ones go on through the later stages (their outputs are committed).
// After a panic it returns with s at the next stage, and the caller calls
// it again: one recovery per batch, not one per firing.
func (b *fusedBatch) runStages() {
	defer func() {
		if v := recover(); v != nil {
			b.fail(&PanicError{Value: v})
			b.endStage()
		}
	}()
	stages := b.fz.stages
	for b.s < len(stages) && b.n > 0 {
		b.st = stages[b.s]
		b.f = b.c.firingFor(b.st)
		b.f.replicas, b.f.phase = b.u.replicas, 0 // stages have one phase
		if b.s > 0 && b.s < len(stages)-1 {
			b.fireInner()
		} else {
			b.fireOuter()
		}
		b.endStage()
	}
}

// fireInner runs the batch's firings of a stage between the first and
// the last: one input and one output, both scratch windows.
func (b *fusedBatch) fireInner() {
	st, f := b.st, b.f
	in, out := &st.ins[0], &st.outs[0]
	wi, wo := int(in.sum)*in.tsize, int(out.sum)*out.tsize
	reps := int64(b.u.replicas)
	rep := b.idx0 % reps
	for b.m = 0; b.m < b.n; b.m++ {
		i, o := int(b.m)*wi, int(b.m)*wo
		f.ins[0] = b.in[i : i+wi : i+wi]
		f.outs[0] = b.to[o : o+wo : o+wo]
		f.index, f.replica = b.idx0+b.m, int(rep)
		if err := fireOnce(st.fire, f); err != nil {
			b.fail(err)
		}
		if rep++; rep == reps {
			rep = 0
		}
	}
}

// fireOuter runs the batch's firings of the first or the last stage.
func (b *fusedBatch) fireOuter() {
	for b.m = 0; b.m < b.n; b.m++ {
		b.windows()
		if err := fireOnce(b.st.fire, b.f); err != nil {
			b.fail(err)
		}
	}
}

// windows points the Firing at the windows of firing m of the first or
// the last stage: the round's input windows for the first stage, its
// output windows for the last, the scratch windows between.
func (b *fusedBatch) windows() {
	st, f, u := b.st, b.f, b.u
	first, last := b.s == 0, b.s == len(b.fz.stages)-1
	for i := range st.ins {
		w := int(st.ins[i].sum) * st.ins[i].tsize
		if first {
			o := int(b.j+b.m) * w
			f.ins[i] = u.inWin[i][o : o+w : o+w]
		} else {
			o := int(b.m) * w
			f.ins[i] = b.in[o : o+w : o+w]
		}
	}
	for i := range st.outs {
		w := int(st.outs[i].sum) * st.outs[i].tsize
		switch {
		case !last:
			o := int(b.m) * w
			f.outs[i] = b.to[o : o+w : o+w]
		case u.outWin[i] == nil:
			f.outs[i] = nil
		default:
			o := int(b.j+b.m) * w
			f.outs[i] = u.outWin[i][o : o+w : o+w]
		}
	}
	idx := b.idx0 + b.m
	f.index = idx
	f.replica = int(idx % int64(u.replicas))
}

// fail records that firing m of the running stage failed with err: it
// and the batch's later firings stop here.
func (b *fusedBatch) fail(err error) {
	b.err = &fusedError{stage: b.st, idx: b.idx0 + b.m, err: err}
	b.n = b.m
}

// endStage records the running stage's time over the batch's firings
// that it ran and moves to the next stage.
func (b *fusedBatch) endStage() {
	t1 := b.c.now()
	if b.n > 0 {
		b.c.recordInvocation(b.st, b.idx0, b.n, b.t0, t1)
	}
	b.t0 = t1
	b.in, b.to = b.to, b.in
	b.s++
}

// commitStages counts done firings of every stage of the chain.
func (fz *fusion) commitStages(done int64) {
	for _, s := range fz.stages {
		s.firings.Add(done)
	}
}

// finishStages ends the stages of the chain with its fused unit.
func (fz *fusion) finishStages(r *run) {
	for _, s := range fz.stages {
		if s.state.Swap(stateDone) != stateDone {
			r.unitDone()
		}
	}
}
