package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Holding a remote source at a barrier. A remote actor with inputs stops
// at a barrier because the client forwards its inputs only up to the
// barrier's tokens; a source has no input, so the client first asks its
// worker to hold it (HoldActor): the worker caps the source at the firing
// its current round ends at and answers with that position; the client
// chooses the barrier at or beyond it, and the snapshot request
// (SnapshotActor) moves the cap to the barrier's firing, takes the
// snapshot there and lifts the cap.

// RemoteHolder is implemented by RemoteJobs whose worker can hold a
// source at a barrier. Hold caps the actor at the firing its current
// round ends at and returns that firing; Release lifts the cap (a
// checkpoint given up). A snapshot (RemoteCheckpointer.Barrier) at or past
// the held firing lifts it too, once taken.
type RemoteHolder interface {
	Hold(ctx context.Context) (int64, error)
	Release(ctx context.Context) error
}

const (
	capFree    = -1 // the actor may fire on
	capPausing = -2 // HoldActor is reading its position: no round starts
)

// holdTimeout bounds a remote source's hold request: the local actors
// wait for it, held at a barrier being chosen.
const holdTimeout = 5 * time.Second

// holdSources holds the run's remote sources and returns, by unit index,
// the firing each is held at. If one cannot be held, those held are
// released and the checkpoint is given up (the error says why).
func (c *checkpoints) holdSources() (map[int]int64, error) {
	if len(c.holders) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(c.r.ctx, holdTimeout)
	defer cancel()
	held := map[int]int64{}
	for idx, h := range c.holders {
		pos, err := h.Hold(ctx)
		if err != nil {
			for j := range held {
				_ = c.holders[j].Release(ctx)
			}
			return nil, fmt.Errorf("runtime: checkpoint: holding actor %s: %w", c.r.units[idx].name, err)
		}
		held[idx] = pos
	}
	return held, nil
}

// capped returns how many of the k firings u may start under its cap (a
// run with External checkpoints).
func (c *checkpoints) capped(u *unit, k int64) int64 {
	if fz := u.fused(); fz != nil {
		u = fz.stages[0]
	}
	switch capAt := c.capAt[u.idx].Load(); {
	case capAt == capFree:
		return k
	case capAt < 0 || u.next >= capAt:
		return 0
	default:
		return min(k, capAt-u.next)
	}
}

// release lifts u's cap and lets it fire on.
func (c *checkpoints) release(u *unit) {
	c.capAt[u.idx].Store(capFree)
	u.schedule()
}

// HoldActor caps the named actor of the run at the firing its current
// round ends at, and returns
// that firing: the actor does not pass it until SnapshotActor takes its
// snapshot at or beyond it, or ReleaseActor. The run must have
// CheckpointOptions.External; the actor must be run by the CPU pools or
// on its own goroutine.
func (h *Handle) HoldActor(actor string) (int64, error) {
	c, u, err := h.externalUnit("HoldActor", actor)
	if err != nil {
		return 0, err
	}
	ahead, holdable := u.mode.ahead(u)
	if !holdable {
		return 0, fmt.Errorf("runtime: HoldActor: actor %s is not run by the CPU pools or on its own goroutine: it cannot be held", actor)
	}
	if !c.capAt[u.idx].CompareAndSwap(capFree, capPausing) {
		return 0, fmt.Errorf("runtime: HoldActor: actor %s is held already", actor)
	}
	// A runner stores its round's end (reserve) before it loads the cap:
	// it saw capPausing, or its end is in reach now.
	// An actor on its own goroutine may have checked its cap and begun
	// one more firing (ahead).
	pos := max(c.base[u.idx]+u.firings.Load(), c.reach[u.idx].Load()) + ahead
	c.capAt[u.idx].Store(pos)
	u.schedule() // a round refused while pausing may run up to pos
	return pos, nil
}

// ReleaseActor lifts the cap HoldActor put on the named actor.
func (h *Handle) ReleaseActor(actor string) error {
	c, u, err := h.externalUnit("ReleaseActor", actor)
	if err != nil {
		return err
	}
	c.release(u)
	return nil
}

// SpillDir returns the directory where the run keeps what sources that
// cannot rewind read (CheckpointOptions.SpillDir), or "" without
// checkpoints or without one (and for a nil Handle).
func (h *Handle) SpillDir() string {
	if c := h.checkpoints(); c != nil {
		return c.opts.SpillDir
	}
	return ""
}

// externalUnit finds the named actor of the run, which must have External
// checkpoints.
func (h *Handle) externalUnit(op, actor string) (*checkpoints, *unit, error) {
	c := h.checkpoints()
	if c == nil || !c.external {
		return nil, nil, fmt.Errorf("runtime: %s(%s): the run has no external checkpoints (CheckpointOptions.External)", op, actor)
	}
	for _, u := range c.r.units {
		if u.name == actor {
			return c, u, nil
		}
	}
	return nil, nil, errors.New("runtime: " + op + ": the run has no actor " + actor)
}
