package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// Checkpointer is implemented by actors that keep state across firings
// outside the runtime's declared state (graph.WithState) and history
// windows: a FIR filter's delay line, a file source's offset, a file
// sink's length. With checkpoints on (Options.Checkpoint), Snapshot is
// called by the actor's runner between two firings, when the actor has
// fired exactly its firings of the checkpoint's iterations; Restore is
// called before Start when a run resumes from a checkpoint, with what
// Snapshot returned.
type Checkpointer interface {
	Snapshot() ([]byte, error)
	Restore(state []byte) error
}

// CheckpointCommitter is implemented by sinks that make their output
// durable when a checkpoint completes (a file sink syncs its file): the
// coordinator calls CommitCheckpoint, off the firing path, before it
// stores the checkpoint.
type CheckpointCommitter interface {
	CommitCheckpoint(id int64) error
}

// CheckpointOptions turn on checkpoints: aligned barrier snapshots of
// every actor's state, taken while the run goes on (docs/recovery.md).
type CheckpointOptions struct {
	// Interval is the time between two checkpoints; it must be > 0.
	Interval time.Duration
	// Store keeps the completed checkpoints (a DirStore for local runs).
	Store CheckpointStore
	// Resume, when set, is the checkpoint the run continues from: every
	// actor starts at the checkpoint's firing, with its state restored,
	// and channels with initial tokens hold what they held then.
	Resume *Checkpoint
	// Completed, when set, is called after each checkpoint is stored, from
	// the run's checkpoint goroutine.
	Completed func(*Checkpoint)
	// SpillDir is where sources that cannot rewind (stdin) keep what they
	// read, so that a resumed run reads it again (SpillDir(ctx)); without
	// it such sources refuse checkpoints.
	SpillDir string
	// External takes no checkpoints of its own: snapshots are taken on
	// request (SnapshotActor), as a worker does for the actor a client
	// placed on it; Interval and Store are not used, and Resume restores
	// the actors it holds at their own firings.
	External bool
}

// RemoteCheckpointer is implemented by RemoteJobs that take part in
// checkpoints. Barrier forwards the actor's inputs only up to the tokens
// of its first firing firings, asks the worker for the actor's snapshot
// once it has done them, calls done with it (or why not), and then
// forwards the rest. It returns at once; the limit is in place when it
// returns.
type RemoteCheckpointer interface {
	Barrier(firing int64, done func(ActorSnapshot, error))
}

// Checkpoint is one consistent snapshot of a run: the state of every
// actor after Iteration iterations of the graph (each actor a has fired
// Iteration × its repetition-vector entry firings) and the tokens then
// held by the channels with initial tokens.
type Checkpoint struct {
	// ID numbers a run's checkpoints from 1 (continued across resumes).
	ID int64
	// Graph is the graph's name.
	Graph string
	// Iteration is the graph iteration the snapshot was taken at.
	Iteration int64
	// Actors holds each actor's snapshot by (flattened) name.
	Actors map[string]ActorSnapshot
	// Channels holds, by channel name, the tokens a channel with initial
	// tokens held at the cut.
	Channels map[string][]byte
	// Taken is when the checkpoint was triggered.
	Taken time.Time
}

// ActorSnapshot is one actor's part of a Checkpoint.
type ActorSnapshot struct {
	// Firing is the index of the actor's next firing.
	Firing int64
	// Impl is what the implementation's Checkpointer.Snapshot returned.
	Impl []byte
	// Declared holds the declared state (graph.WithState) per replica.
	Declared [][]byte
	// History holds each input's history window (nil for inputs without).
	History [][]byte
	// Shared holds the shared variables whose last update was this
	// actor's, by name, as they were at its barrier.
	Shared map[string][]byte `json:",omitempty"`
}

// Size returns the bytes of state and tokens the checkpoint holds.
func (c *Checkpoint) Size() int64 {
	var n int64
	for _, a := range c.Actors {
		n += int64(len(a.Impl))
		for _, s := range a.Declared {
			n += int64(len(s))
		}
		for _, h := range a.History {
			n += int64(len(h))
		}
		for _, v := range a.Shared {
			n += int64(len(v))
		}
	}
	for _, t := range c.Channels {
		n += int64(len(t))
	}
	return n
}

// CheckpointStats summarise a run's checkpoints (Stats.Checkpoints).
type CheckpointStats struct {
	// Completed counts the checkpoints stored by this run.
	Completed int64 `json:"completed"`
	// LastID and LastIteration identify the last one stored.
	LastID        int64 `json:"last_id"`
	LastIteration int64 `json:"last_iteration"`
	// LastBytes is the last checkpoint's size (Checkpoint.Size), TotalBytes
	// the sum over the run.
	LastBytes  int64 `json:"last_bytes"`
	TotalBytes int64 `json:"total_bytes"`
	// MeanDuration and MaxDuration are the times from a checkpoint's
	// trigger to its being stored.
	MeanDuration time.Duration `json:"mean_ns"`
	MaxDuration  time.Duration `json:"max_ns"`
	// ResumedFrom is the ID of the checkpoint the run resumed from (0: a
	// fresh run), and ResumedIteration its iteration.
	ResumedFrom      int64 `json:"resumed_from,omitempty"`
	ResumedIteration int64 `json:"resumed_iteration,omitempty"`
	// Recoveries counts the times the run resumed after a lost worker
	// (set by cluster.RunRecovering).
	Recoveries int64 `json:"recoveries,omitempty"`
}

// checkpoints coordinates a run's checkpoints. A checkpoint is an aligned
// barrier: the coordinator chooses an iteration B beyond every actor's
// position; each actor runs up to its firing B×q (q: its repetition-vector
// entry) and no further until it has taken its snapshot there. In an SDF
// graph the firing counts fix the token counts, so the barrier sits in
// every channel after the tokens of those firings: an actor at B×q has
// consumed exactly the tokens before the barrier on all its inputs. A
// channel with initial tokens holds tokens across the cut; its consumer
// copies them once its producer has passed the barrier.
type checkpoints struct {
	r     *run
	opts  CheckpointOptions
	q     []int64 // per unit (by unit.idx)
	base  []int64 // firings done before this run (resume)
	taken []int64 // per unit: the last barrier it snapshotted (runner-owned)
	delay [][]int // per unit: its inputs with initial tokens

	external bool // CheckpointOptions.External
	remote   map[int]RemoteCheckpointer

	hold    atomic.Bool  // a barrier is being chosen: no unit starts a round
	barrier atomic.Int64 // the current barrier's iteration
	// reach holds, per unit, the firing its current (or last) round ends
	// at (reserve): no unit fires past it before it reads hold again.
	reach []atomic.Int64
	// capAt holds, per unit of a run with External checkpoints, the
	// firing it may not pass (capFree: none; capPausing: none at all
	// while HoldActor reads its position): how a source, which no input
	// bounds, is held at a barrier (HoldActor, SnapshotActor).
	capAt   []atomic.Int64
	holders map[int]RemoteHolder // remote sources (remoteCheckpointable)

	mu      sync.Mutex
	pending *Checkpoint
	got     int
	hist    map[int][][]byte // per unit: its history windows (see attachHistory)
	resume  map[int][][]byte // per unit: history windows to restore

	done  chan *Checkpoint
	stats CheckpointStats
	durNs int64
	next  int64 // the next checkpoint's ID
}

// checkpointable reports why the unit cannot be checkpointed, or "".
func (c *checkpoints) checkpointable(u *unit) string { return u.mode.checkpointable(c, u) }

// implCheckpointable reports why the unit's implementation cannot be
// checkpointed, or "": a stateful one must take snapshots, unless the
// runtime keeps its state (declared state, history windows).
func (u *unit) implCheckpointable() string {
	if _, ok := u.lifecycle()[0].(Checkpointer); ok {
		return ""
	}
	if u.a.Stateful && u.a.StateDecl == nil && !hasHistory(u.a) {
		return fmt.Sprintf("is stateful but its implementation (%T) has no Snapshot/Restore methods (runtime.Checkpointer)", u.impl)
	}
	return ""
}

// remoteCheckpointable reports why a remote unit cannot be checkpointed,
// or "": its executor must take part, and its inputs, fed from this host
// and capped at each barrier, must bound its firings.
func (c *checkpoints) remoteCheckpointable(ru *remoteUnit) string {
	u, job := ru.u, ru.job
	rc, ok := job.(RemoteCheckpointer)
	if !ok {
		return fmt.Sprintf("runs on a remote worker whose executor (%T) takes no snapshots", job)
	}
	if len(u.ins) == 0 {
		h, ok := job.(RemoteHolder)
		if !ok {
			return fmt.Sprintf("runs on a remote worker and has no input, and its executor (%T) cannot hold it at a barrier", job)
		}
		c.holders[u.idx] = h
	}
	for i := range u.ins {
		if u.ins[i].ch.c.Initial > 0 {
			return fmt.Sprintf("runs on a remote worker and its input %s has initial tokens", u.ins[i].p.Name)
		}
	}
	c.remote[u.idx] = rc
	return ""
}

// newCheckpoints prepares the run's checkpoints after setup, and restores
// Options.Checkpoint.Resume when set: positions, implementations' state,
// declared state and the tokens of channels with initial tokens. It
// sets r.ck, which the history windows and the run's Handle find.
func (r *run) newCheckpoints() error {
	o := r.opts.Checkpoint
	if o == nil {
		return nil
	}
	if o.External {
		return r.externalCheckpoints(o)
	}
	if o.Interval <= 0 {
		return fmt.Errorf("runtime: checkpoint interval is %v: expected > 0", o.Interval)
	}
	if o.Store == nil {
		return fmt.Errorf("runtime: checkpoints need a store (CheckpointOptions.Store is nil)")
	}
	rv, err := repetitions(r.g)
	if err != nil {
		return fmt.Errorf("runtime: checkpoints need a repetition vector: %w", err)
	}
	n := len(r.units)
	c := &checkpoints{r: r, opts: *o, q: make([]int64, n), base: make([]int64, n), taken: make([]int64, n), reach: make([]atomic.Int64, n),
		delay: make([][]int, n), hist: map[int][][]byte{}, done: make(chan *Checkpoint, 1), next: 1, remote: map[int]RemoteCheckpointer{},
		holders: map[int]RemoteHolder{}}
	for _, u := range r.units {
		if why := c.checkpointable(u); why != "" {
			return fmt.Errorf("runtime: checkpoints: actor %s %s", u.name, why)
		}
		c.q[u.idx] = rv[u.a]
		if c.q[u.idx] <= 0 {
			return fmt.Errorf("runtime: checkpoints: actor %s has no repetition-vector entry", u.name)
		}
		for i := range u.ins {
			if u.ins[i].ch.c.Initial > 0 {
				c.delay[u.idx] = append(c.delay[u.idx], i)
			}
		}
	}
	if cp := o.Resume; cp != nil {
		if err := c.restore(cp); err != nil {
			return err
		}
	}
	r.ck = c
	return nil
}

// restore sets every unit at the checkpoint's position with its state.
func (c *checkpoints) restore(cp *Checkpoint) error {
	r := c.r
	if cp.Graph != r.g.Name {
		return fmt.Errorf("runtime: resume: the checkpoint is of graph %q: expected %q", cp.Graph, r.g.Name)
	}
	st := r.states
	c.resume = map[int][][]byte{}
	for _, u := range r.units {
		s, ok := cp.Actors[u.name]
		if !ok {
			return fmt.Errorf("runtime: resume: checkpoint %d has no snapshot of actor %s", cp.ID, u.name)
		}
		if want := cp.Iteration * c.q[u.idx]; s.Firing != want {
			return fmt.Errorf("runtime: resume: actor %s is at firing %d in checkpoint %d: expected %d (iteration %d × %d); was the graph changed?", u.name, s.Firing, cp.ID, want, cp.Iteration, c.q[u.idx])
		}
		for _, impl := range u.lifecycle() { // every replica of a team
			if cr, ok := impl.(Checkpointer); ok {
				if err := cr.Restore(s.Impl); err != nil {
					return fmt.Errorf("runtime: resume: actor %s: restore: %w", u.name, err)
				}
			}
		}
		if reps := st[u.a]; reps != nil {
			if len(s.Declared) != len(reps) {
				return fmt.Errorf("runtime: resume: actor %s has %d state replicas in checkpoint %d: expected %d", u.name, len(s.Declared), cp.ID, len(reps))
			}
			for i := range reps {
				if len(s.Declared[i]) != len(reps[i]) {
					return fmt.Errorf("runtime: resume: actor %s state has %d bytes in checkpoint %d: expected %d", u.name, len(s.Declared[i]), cp.ID, len(reps[i]))
				}
				copy(reps[i], s.Declared[i])
			}
		}
		if s.History != nil {
			c.resume[u.idx] = s.History
		}
		for _, i := range c.delay[u.idx] {
			p := &u.ins[i]
			name := p.ch.c.Name
			toks, ok := cp.Channels[name]
			if ok && p.ring != nil {
				if err := restoreRing(u, i, toks); err != nil {
					return fmt.Errorf("runtime: resume: checkpoint %d: %w", cp.ID, err)
				}
				continue
			}
			want := p.ch.c.Initial * p.tsize
			if !ok || len(toks) != want {
				return fmt.Errorf("runtime: resume: channel %s has %d bytes in checkpoint %d: expected %d", name, len(toks), cp.ID, want)
			}
			win := p.r.TryAcquire(p.ch.c.Initial)
			if len(win) != want {
				return fmt.Errorf("runtime: resume: channel %s offers %d bytes of initial tokens: expected %d", name, len(win), want)
			}
			copy(win, toks)
		}
		u.next = s.Firing
		c.base[u.idx] = s.Firing
		c.reach[u.idx].Store(s.Firing)
		c.taken[u.idx] = cp.Iteration
	}
	if err := restoreFused(r); err != nil {
		return fmt.Errorf("runtime: resume: checkpoint %d: %w", cp.ID, err)
	}
	c.barrier.Store(cp.Iteration)
	c.next = cp.ID + 1
	c.stats.ResumedFrom, c.stats.ResumedIteration = cp.ID, cp.Iteration
	return nil
}

// round returns how many of the k firings the unit may start now: none
// while a barrier is being chosen or while the unit waits at the barrier,
// else at most up to the barrier. At the barrier it takes the unit's
// snapshot first. Only the unit's runner calls it (from prepare).
func (c *checkpoints) round(u *unit, k int64) int64 {
	if c.external {
		return c.capped(u, k)
	}
	if c.hold.Load() {
		return 0
	}
	if fz := u.fused(); fz != nil {
		return c.fusedRound(u, fz, k)
	}
	n, b, at := c.toBarrier(u, u, k)
	if !at {
		return n
	}
	if !c.producersAt(u, b) {
		return 0
	}
	c.snapshot(u, b)
	c.taken[u.idx] = b
	return k
}

// toBarrier limits the k firings unit u may start from its next firing to
// the current barrier b of unit h (u itself, or the head of u's fused
// chain, whose stages fire together): it returns k or fewer, and at true
// (with n 0) when u is at the barrier and h has not taken its snapshot
// there, which the caller then takes or waits for.
func (c *checkpoints) toBarrier(u, h *unit, k int64) (n, b int64, at bool) {
	b = c.barrier.Load()
	if c.taken[h.idx] >= b {
		return k, b, false
	}
	lim := b * c.q[h.idx]
	switch {
	case u.next < lim:
		return min(k, lim-u.next), b, false
	case u.next > lim:
		c.fail(fmt.Errorf("runtime: checkpoint at iteration %d: actor %s passed its barrier (firing %d) before taking its snapshot (at firing %d)", b, u.name, lim, u.next))
		c.taken[h.idx] = b
		return k, b, false
	}
	return 0, b, true
}

// waits reports, from atomic state only, whether the unit cannot fire
// now because of a checkpoint (readyAtomic and mayFire use it).
func (c *checkpoints) waits(u *unit) bool {
	if c.external {
		return false
	}
	if c.hold.Load() {
		return true
	}
	if fz := u.fused(); fz != nil {
		u = fz.stages[0] // its stages fire together: the head's count
	}
	b := c.barrier.Load()
	pos := c.base[u.idx] + u.firings.Load()
	return pos == b*c.q[u.idx] && !c.producersAt(u, b)
}

// What reserve tells prepare.
const (
	reserveOK    = iota // the round may run
	reserveHold         // a barrier is being chosen: wait (the trigger reschedules the unit)
	reserveStale        // a barrier was chosen since round: prepare again
)

// reserve records that u's round ends at firing end, before it acquires
// the round's windows. Storing reach before loading hold makes the
// trigger, which stores hold before loading reach, see either the new
// reach or this unit stopped; and a barrier chosen between the unit's
// round (which limited end) and this store, which the trigger chose from
// the old reach, is seen here: the round is then limited again.
func (c *checkpoints) reserve(u *unit, end int64) int {
	if fz := u.fused(); fz != nil {
		u = fz.stages[0]
	}
	c.reach[u.idx].Store(end)
	if c.external {
		if capAt := c.capAt[u.idx].Load(); capAt == capFree || (capAt >= 0 && end <= capAt) {
			return reserveOK
		}
		return reserveStale
	}
	if c.hold.Load() {
		return reserveHold
	}
	if b := c.barrier.Load(); c.taken[u.idx] < b && end > b*c.q[u.idx] {
		return reserveStale
	}
	return reserveOK
}

// fusedRound is round for fused unit u: its stages are stateless and
// fire together, so at the barrier each stage's snapshot is its position,
// plus the head's inputs with initial tokens.
func (c *checkpoints) fusedRound(u *unit, fz *fusion, k int64) int64 {
	h := fz.stages[0]
	n, b, at := c.toBarrier(u, h, k)
	if !at {
		return n
	}
	if !c.producersAt(h, b) {
		return 0
	}
	for _, st := range fz.stages {
		s, toks, err := c.take(st, u.next)
		if err != nil {
			c.fail(fmt.Errorf("runtime: checkpoint at iteration %d: %w", b, err))
			return 0
		}
		c.record(st, b, s, toks)
		c.taken[st.idx] = b
	}
	return k
}

// producersAt reports whether the producers of u's inputs with initial
// tokens have reached barrier b, so that those tokens are in the channel.
func (c *checkpoints) producersAt(u *unit, b int64) bool {
	for _, i := range c.delay[u.idx] {
		var p *unit
		if g := u.ins[i].ring; g != nil {
			p = g.prod // a device ring has no FIFO
		} else {
			p = u.ins[i].ch.fr.producer
		}
		if fz := p.fused(); fz != nil {
			p = fz.stages[0] // a fused chain's stages fire together
		}
		if c.base[p.idx]+p.firings.Load() < b*c.q[p.idx] {
			return false
		}
	}
	return true
}

// snapshot takes u's snapshot at barrier b and records it.
func (c *checkpoints) snapshot(u *unit, b int64) {
	s, toks, err := c.take(u, u.next)
	if err != nil {
		c.fail(fmt.Errorf("runtime: checkpoint at iteration %d: %w", b, err))
		return
	}
	c.record(u, b, s, toks)
}

// take takes u's snapshot at its firing next, from its runner (or while
// it cannot fire): its implementation's state, declared state, history
// and the tokens of its inputs with initial tokens.
func (c *checkpoints) take(u *unit, next int64) (ActorSnapshot, map[string][]byte, error) {
	s := ActorSnapshot{Firing: next}
	var err error
	// A team with replicated state: every replica ran every firing, so
	// their states are one; the first replica's is the snapshot.
	if cr, ok := u.lifecycle()[0].(Checkpointer); ok {
		if s.Impl, err = cr.Snapshot(); err != nil {
			err = fmt.Errorf("actor %s: snapshot: %w", u.name, err)
		}
	}
	if st := c.r.states; st != nil {
		for _, rep := range st[u.a] {
			s.Declared = append(s.Declared, append([]byte(nil), rep...))
		}
	}
	s.Shared = c.r.shared.ofActor(u.a)
	var toks map[string][]byte
	for _, i := range c.delay[u.idx] {
		p := &u.ins[i]
		n := p.ch.c.Initial
		win := p.r.TryAcquire(n)
		if len(win) != n*p.tsize && err == nil {
			err = fmt.Errorf("channel %s holds %d bytes at the barrier: expected %d", p.ch.c.Name, len(win), n*p.tsize)
		}
		if toks == nil {
			toks = map[string][]byte{}
		}
		toks[p.ch.c.Name] = append([]byte(nil), win...)
	}
	c.mu.Lock()
	if h := c.hist[u.idx]; h != nil {
		s.History = make([][]byte, len(h))
		for i, w := range h {
			s.History[i] = append([]byte(nil), w...)
		}
	} else if rh := c.resume[u.idx]; rh != nil {
		s.History = rh // not fired since the resume: the restored windows
	}
	c.mu.Unlock()
	return s, toks, err
}

// record adds u's snapshot at barrier b to the pending checkpoint, which
// is complete with the last actor's.
func (c *checkpoints) record(u *unit, b int64, s ActorSnapshot, toks map[string][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := c.pending
	if cp == nil || cp.Iteration != b {
		return
	}
	cp.Actors[u.name] = s
	for name, t := range toks {
		cp.Channels[name] = t
	}
	c.got++
	if c.got == len(c.r.units) {
		c.pending = nil
		c.done <- cp
	}
}

// fail fails the run with a checkpoint's error.
func (c *checkpoints) fail(err error) { c.r.fail(err) }

// attachHistory registers the history windows of actor a (each input's
// window, nil for inputs without) for snapshots, after restoring them
// from the resumed checkpoint. The history wrapper calls it before its
// first firing.
func attachHistory(r *run, a *graph.Actor, wins [][]byte) {
	if r == nil || r.ck == nil {
		return
	}
	c := r.ck
	if c == nil {
		return
	}
	for _, u := range c.r.units {
		if u.a != a {
			continue
		}
		c.mu.Lock()
		if rh := c.resume[u.idx]; rh != nil {
			for i := range wins {
				if i < len(rh) && len(rh[i]) == len(wins[i]) {
					copy(wins[i], rh[i])
				}
			}
		}
		c.hist[u.idx] = wins
		c.mu.Unlock()
		return
	}
}

// start runs the coordinator until the returned function is called; a nil
// coordinator returns a no-op.
func (c *checkpoints) start() (stop func()) {
	if c == nil || c.external {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.loop(quit)
	}()
	return func() {
		close(quit)
		wg.Wait()
	}
}

// loop triggers a checkpoint every interval once the previous one is
// stored, and stores the completed ones.
func (c *checkpoints) loop(quit chan struct{}) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	busy := false
	for {
		select {
		case <-quit:
			return
		case <-c.r.failed:
			return
		case <-t.C:
			if !busy && !c.r.stopped.Load() {
				busy = c.trigger()
			}
		case cp := <-c.done:
			for _, u := range c.r.units {
				if cm, ok := u.impl.(CheckpointCommitter); ok {
					if err := cm.CommitCheckpoint(cp.ID); err != nil {
						c.fail(fmt.Errorf("runtime: checkpoint %d: actor %s: commit: %w", cp.ID, u.name, err))
						return
					}
				}
			}
			// The run may end meanwhile: the save goes on (30 s at most).
			sctx, cancel := context.WithTimeout(context.WithoutCancel(c.r.ctx), 30*time.Second)
			err := c.opts.Store.Save(sctx, cp)
			cancel()
			if err != nil {
				if !c.r.stopped.Load() {
					c.fail(fmt.Errorf("runtime: storing checkpoint %d: %w", cp.ID, err))
				}
				return
			}
			d := time.Since(cp.Taken)
			c.mu.Lock()
			c.stats.Completed++
			c.stats.LastID, c.stats.LastIteration = cp.ID, cp.Iteration
			c.stats.LastBytes = cp.Size()
			c.stats.TotalBytes += c.stats.LastBytes
			c.durNs += int64(d)
			c.stats.MeanDuration = time.Duration(c.durNs / c.stats.Completed)
			c.stats.MaxDuration = max(c.stats.MaxDuration, d)
			c.mu.Unlock()
			if c.opts.Completed != nil {
				c.opts.Completed(cp)
			}
			busy = false
		}
	}
}

// trigger chooses the next barrier: an iteration that no actor can have
// passed. While hold is set no unit starts a round, so a pooled unit is at
// most at the end of the round it reserved (reach), a kernel actor at most
// its device's depth of invocations past its completed firings, and a
// remote source at the firing its worker holds it at (holdSources). It
// reports false when it gave the checkpoint up (a source could not be
// held): the next tick tries again.
func (c *checkpoints) trigger() bool {
	r := c.r
	c.hold.Store(true)
	b := c.barrier.Load() + 1
	held, err := c.holdSources()
	if err != nil {
		c.hold.Store(false)
		for _, u := range r.poolUnits() {
			u.schedule()
		}
		return false
	}
	for idx, pos := range held {
		b = max(b, (pos+c.q[idx]-1)/c.q[idx])
	}
	for _, u := range r.units {
		q := c.q[u.idx]
		ahead, _ := u.mode.ahead(u) // begun but not committed nor reserved
		pos := max(c.base[u.idx]+u.firings.Load(), c.reach[u.idx].Load()) + ahead
		b = max(b, (pos+q-1)/q)
	}
	c.mu.Lock()
	c.pending = &Checkpoint{ID: c.next, Graph: r.g.Name, Iteration: b, Actors: map[string]ActorSnapshot{},
		Channels: map[string][]byte{}, Taken: time.Now()}
	c.next++
	c.got = 0
	c.mu.Unlock()
	for idx, rc := range c.remote {
		u := r.units[idx]
		rc.Barrier(b*c.q[idx], func(s ActorSnapshot, err error) {
			if err != nil {
				if !r.stopped.Load() {
					c.fail(fmt.Errorf("runtime: checkpoint at iteration %d: actor %s: %w", b, u.name, err))
				}
				return
			}
			c.record(u, b, s, nil)
		})
	}
	c.barrier.Store(b)
	c.hold.Store(false)
	for _, u := range r.poolUnits() {
		u.schedule()
	}
	return true
}

// statistics returns the run's checkpoint statistics (nil without
// checkpoints).
func (c *checkpoints) statistics() *CheckpointStats {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	return &s
}

// externalCheckpoints prepares a run whose snapshots are taken on request
// (CheckpointOptions.External) and restores Resume's actors.
func (r *run) externalCheckpoints(o *CheckpointOptions) error {
	n := len(r.units)
	c := &checkpoints{r: r, opts: *o, external: true, q: make([]int64, n), base: make([]int64, n), taken: make([]int64, n),
		reach: make([]atomic.Int64, n), capAt: make([]atomic.Int64, n),
		delay: make([][]int, n), hist: map[int][][]byte{}, resume: map[int][][]byte{}}
	for i := range c.capAt {
		c.capAt[i].Store(capFree)
	}
	st := r.states
	if cp := o.Resume; cp != nil {
		for _, u := range r.units {
			s, ok := cp.Actors[u.name]
			if !ok {
				continue
			}
			if isProcess(u) {
				return fmt.Errorf("runtime: resume: actor %s is a KPN process, whose position the runtime cannot restore", u.name)
			}
			if cr, ok := u.impl.(Checkpointer); ok {
				if err := cr.Restore(s.Impl); err != nil {
					return fmt.Errorf("runtime: resume: actor %s: restore: %w", u.name, err)
				}
			}
			if reps := st[u.a]; reps != nil && len(s.Declared) == len(reps) {
				for i := range reps {
					copy(reps[i], s.Declared[i])
				}
			}
			if s.History != nil {
				c.resume[u.idx] = s.History
			}
			u.next, c.base[u.idx] = s.Firing, s.Firing
			c.reach[u.idx].Store(s.Firing)
		}
		if err := restoreFused(r); err != nil {
			return fmt.Errorf("runtime: resume: %w", err)
		}
	}
	r.ck = c
	return nil
}

// ErrFinishedBeforeBarrier is matched by SnapshotActor's error when the
// actor ended its stream before the barrier: that checkpoint cannot be
// completed, and the run is ending anyway.
var ErrFinishedBeforeBarrier = errors.New("finished before the barrier")

// SnapshotActor takes the snapshot of the named actor of the run once the
// actor has done exactly firing firings and cannot do more (its inputs
// hold no more tokens): the run must have CheckpointOptions.External. It
// fails if the actor went past that firing, finished before it, or ctx
// ends.
func (h *Handle) SnapshotActor(ctx context.Context, actor string, firing int64) (ActorSnapshot, error) {
	c := h.checkpoints()
	if c == nil || !c.external {
		return ActorSnapshot{}, fmt.Errorf("runtime: SnapshotActor(%s): the run has no external checkpoints (CheckpointOptions.External)", actor)
	}
	var u *unit
	for _, x := range c.r.units {
		if x.name == actor {
			u = x
		}
	}
	if u == nil {
		return ActorSnapshot{}, fmt.Errorf("runtime: SnapshotActor: the run has no actor %s", actor)
	}
	if capAt := c.capAt[u.idx].Load(); capAt >= 0 {
		// held by HoldActor: let it go on up to the barrier, no further
		if firing < capAt {
			return ActorSnapshot{}, fmt.Errorf("runtime: actor %s is held at firing %d, past the barrier's %d", actor, capAt, firing)
		}
		c.capAt[u.idx].Store(firing)
		defer c.release(u)
		u.schedule()
	}
	for wait := time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		pos := c.base[u.idx] + u.firings.Load()
		switch {
		case pos > firing:
			return ActorSnapshot{}, fmt.Errorf("runtime: actor %s is at firing %d, past the barrier's %d", actor, pos, firing)
		case pos == firing:
			// The firings.Load above orders the actor's last firing
			// before this snapshot; with no tokens for firing "firing"
			// it cannot fire again until the barrier is lifted.
			s, _, err := c.take(u, firing)
			return s, err
		case u.state.Load() == stateDone:
			return ActorSnapshot{}, fmt.Errorf("runtime: actor %s finished at firing %d, before the barrier's %d: %w", actor, pos, firing, ErrFinishedBeforeBarrier)
		}
		select {
		case <-ctx.Done():
			return ActorSnapshot{}, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
}

// restoreFused sets each fused chain at its stages' restored firing,
// which must be one.
func restoreFused(r *run) error {
	for _, fu := range r.fused {
		fz := fu.fused()
		h := fz.stages[0]
		for _, st := range fz.stages[1:] {
			if st.next != h.next {
				return fmt.Errorf("the stages of fused chain %s are at firings %d (%s) and %d (%s): expected one (run with --no-fuse-cpu as the checkpoint's run did?)", fu.name, h.next, h.name, st.next, st.name)
			}
		}
		fu.next = h.next
	}
	return nil
}
