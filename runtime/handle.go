package runtime

import "context"

// Handle is one run of Run as the code running inside it reaches it: a
// process's (Process.Run), a firing's (Firing.Run) and, at its start, an
// actor's that implements RunStarter. Its methods act on that run alone:
// the checkpoint controls that a cluster worker drives (HoldActor,
// ReleaseActor, SnapshotActor) and the spill directory of sources that
// cannot rewind (SpillDir). A nil *Handle (a Firing or Process made for a
// unit test) has no checkpoints.
type Handle struct {
	r *run
}

// RunStarter is implemented by actors whose setup needs their run (its
// spill directory): the runtime calls StartRun, instead of Start, once
// per actor before the first firing.
type RunStarter interface {
	StartRun(ctx context.Context, run *Handle) error
}

// Run returns the handle of the run firing f belongs to; nil for a Firing
// made by NewFiring.
func (f *Firing) Run() *Handle {
	if f.run == nil {
		return nil
	}
	return &f.run.handle
}

// Run returns the handle of the run process p belongs to; nil for a
// Process made by NewProcess.
func (p *Process) Run() *Handle {
	if p.run == nil {
		return nil
	}
	return &p.run.handle
}

// checkpoints returns the run's checkpoint coordinator, nil without one.
func (h *Handle) checkpoints() *checkpoints {
	if h == nil || h.r == nil {
		return nil
	}
	return h.r.ck
}
