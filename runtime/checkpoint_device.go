package runtime

import (
	"context"
	"fmt"
	"time"
)

// Checkpoints of kernel actors and of actors on their own goroutine.
//
// A kernel actor keeps no state of its own between invocations (its
// kernels write only their output windows), so its snapshot is its
// position, plus the tokens of its inputs with initial tokens: a feedback
// loop through a device ring holds them in device memory, and they are
// copied out. Its runtime-manager enqueues invocations up to the barrier
// (deviceRound); an actor without such inputs records its snapshot as soon
// as it has enqueued them, without waiting for them to complete, since
// its position alone is its state. One with them waits until its
// invocations have completed and the producers of those inputs have
// reached the barrier; the manager then copies the tokens out between two
// rounds (deviceSnapshots).

// deviceCheckpointable reports why kernel actor u cannot be
// checkpointed, or "".
func (c *checkpoints) deviceCheckpointable(u *unit) string {
	for i := range u.ins {
		if u.ins[i].ch.c.Initial > 0 && u.kernel().ins[i].peer != nil {
			return fmt.Sprintf("is a kernel actor whose input %s has initial tokens on a channel between two devices (copying them out is not supported): map both ends to one device", u.ins[i].p.Name)
		}
	}
	return ""
}

// deviceRound returns how many of the k firings kernel actor u may enqueue
// now: none while a barrier is being chosen, else at most up to the
// barrier; at the barrier, an actor without inputs with initial tokens
// records its snapshot and goes on, one with them waits for
// deviceSnapshots. Only u's runtime-manager calls it (from plan).
func (c *checkpoints) deviceRound(u *unit, k int64) int64 {
	if c.external {
		return k
	}
	if c.hold.Load() {
		return 0
	}
	n, b, at := c.toBarrier(u, u, k)
	if !at {
		return n
	}
	if len(c.delay[u.idx]) > 0 {
		return 0 // deviceSnapshots copies the tokens out
	}
	c.record(u, b, ActorSnapshot{Firing: u.next}, nil)
	c.taken[u.idx] = b
	return k
}

// deviceSnapshots takes the snapshots of the kernel actors of d waiting at
// the barrier whose invocations have completed and whose inputs' initial
// tokens are in place, copying those tokens out of device memory. The
// manager calls it between rounds; it reports whether it took any.
func (d *devRunner) deviceSnapshots() (progressed bool) {
	c := d.r.ck
	if c == nil || c.external || c.hold.Load() {
		return false
	}
	b := c.barrier.Load()
	for _, u := range d.units {
		if c.taken[u.idx] >= b || len(c.delay[u.idx]) == 0 || u.next != b*c.q[u.idx] ||
			u.kernel().inflight > 0 || !c.producersAt(u, b) {
			continue
		}
		toks := map[string][]byte{}
		for _, i := range c.delay[u.idx] {
			t, err := d.delayTokens(u, i)
			if err != nil {
				c.fail(fmt.Errorf("runtime: checkpoint at iteration %d: %w", b, err))
				return false
			}
			toks[u.ins[i].ch.c.Name] = t
		}
		c.record(u, b, ActorSnapshot{Firing: u.next}, toks)
		c.taken[u.idx] = b
		progressed = true
	}
	return progressed
}

// delayTokens copies out the initial-token window of kernel actor u's
// input i at the barrier: from its device ring, or from its host FIFO.
func (d *devRunner) delayTokens(u *unit, i int) ([]byte, error) {
	p := &u.kernel().ins[i]
	name := u.ins[i].ch.c.Name
	n := int64(u.ins[i].ch.c.Initial)
	g := p.ring
	if g == nil {
		win := u.ins[i].r.TryAcquire(int(n))
		if int64(len(win)) != n*p.tsize {
			return nil, fmt.Errorf("channel %s holds %d bytes at the barrier: expected %d", name, len(win), n*p.tsize)
		}
		return append([]byte(nil), win...), nil
	}
	if a := g.avail(p.reader); a < n {
		return nil, fmt.Errorf("channel %s (device ring) holds %d tokens at the barrier: expected %d", name, a, n)
	}
	out := make([]byte, n*g.tsize)
	at := g.rpos[p.reader] % g.cap
	first := min(n, g.cap-at)
	if err := d.readRing(g, at, out[:first*g.tsize]); err != nil {
		return nil, fmt.Errorf("channel %s: copying its tokens out of %s: %w", name, d.id, err)
	}
	if first < n {
		if err := d.readRing(g, 0, out[first*g.tsize:]); err != nil {
			return nil, fmt.Errorf("channel %s: copying its tokens out of %s: %w", name, d.id, err)
		}
	}
	return out, nil
}

// readRing copies len(dst) bytes of ring g from token position at, after
// every command enqueued before it.
func (d *devRunner) readRing(g *devRing, at int64, dst []byte) error {
	ev, err := d.q.Read(dst, g.buf, at*g.tsize)
	if err != nil {
		return err
	}
	if err := d.q.Flush(); err != nil {
		ev.Release()
		return err
	}
	err = ev.Wait(d.r.ctx)
	ev.Release()
	return err
}

// restoreRing writes the checkpoint's tokens of kernel actor u's input i,
// a device ring with initial tokens, where the fresh ring holds its
// initial tokens.
func restoreRing(u *unit, i int, toks []byte) error {
	g := u.kernel().ins[i].ring
	if int64(len(toks)) != int64(u.ins[i].ch.c.Initial)*g.tsize {
		return fmt.Errorf("channel %s has %d bytes in the checkpoint: expected %d", u.ins[i].ch.c.Name, len(toks), int64(u.ins[i].ch.c.Initial)*g.tsize)
	}
	ev, err := u.kernel().drv.q.Write(g.buf, 0, toks)
	if err != nil {
		return err
	}
	err = ev.Wait(context.Background())
	ev.Release()
	return err
}

// awaitBarrier holds an actor on its own goroutine at a checkpoint's
// barrier until it has taken its snapshot (round does, once the producers
// of its inputs with initial tokens are there). It returns false when the
// run is stopping.
func (c *checkpoints) awaitBarrier(ctx context.Context, u *unit) bool {
	for wait := time.Microsecond; c.round(u, 1) == 0; wait = min(2*wait, time.Millisecond) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
	return true
}
