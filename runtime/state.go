package runtime

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/graph"
)

// actorStates maps each actor with declared state to one buffer per
// replica.
type actorStates map[*graph.Actor][][]byte

// StateFinalizer is implemented by actors with graph.FinalizeState: the
// runtime calls Finalize with each replica's state after the last firing.
type StateFinalizer interface {
	Finalize(replica int, state []byte) error
}

// newStates allocates the state of every unit whose actor declares one,
// per replica, applying initializestate or copyinstate (from in, by actor
// name); nil when no actor has state.
func newStates(units []*unit, in map[string][]byte) (actorStates, error) {
	st := actorStates{}
	for _, u := range units {
		d := u.a.StateDecl
		if d == nil {
			continue
		}
		var init []byte
		switch {
		case d.Lifetime&graph.InitializeState != 0:
			init = d.Init
		case d.Lifetime&graph.CopyInState != 0:
			v, ok := in[u.a.Name]
			if !ok {
				return nil, fmt.Errorf("runtime: actor %s has copyinstate but Options.StateIn has no value for it", u.a.Name)
			}
			if len(v) != d.Size {
				return nil, fmt.Errorf("runtime: actor %s: copied-in state has %d bytes: expected %d", u.a.Name, len(v), d.Size)
			}
			init = v
		}
		reps := make([][]byte, max(1, u.replicas))
		for i := range reps {
			reps[i] = make([]byte, d.Size)
			copy(reps[i], init)
		}
		st[u.a] = reps
	}
	if len(st) == 0 {
		return nil, nil
	}
	return st, nil
}

// State returns this replica's state of the actor (graph.Actor.StateDecl),
// kept by the runtime from one firing to the next; nil when the actor
// declares none. Only this replica's firings touch it.
func (f *Firing) State() []byte {
	if f.run == nil {
		return nil
	}
	reps := f.run.states[f.actor]
	if len(reps) == 0 {
		return nil
	}
	return reps[f.replica%len(reps)]
}

// finishState finalizes the states with finalize and returns the values
// copied out (copyoutstate: replica 0's, the team leader's).
func finishState(st actorStates, units []*unit) (map[string][]byte, error) {
	if st == nil {
		return nil, nil
	}
	var out map[string][]byte
	var errs []error
	for _, u := range units {
		reps := st[u.a]
		if reps == nil {
			continue
		}
		d := u.a.StateDecl
		if d.Lifetime&graph.FinalizeState != 0 {
			impls := u.lifecycle()
			for i, s := range reps {
				fz, ok := impls[min(i, len(impls)-1)].(StateFinalizer)
				if !ok {
					errs = append(errs, fmt.Errorf("actor %s has finalize state but its implementation (%T) has no Finalize(replica int, state []byte) error method", u.a.Name, impls[0]))
					break
				}
				if err := fz.Finalize(i, s); err != nil {
					errs = append(errs, fmt.Errorf("actor %s: finalize replica %d: %w", u.a.Name, i, err))
				}
			}
		}
		if d.Lifetime&graph.CopyOutState != 0 {
			if out == nil {
				out = map[string][]byte{}
			}
			out[u.a.Name] = append([]byte(nil), reps[0]...)
		}
	}
	return out, errors.Join(errs...)
}
