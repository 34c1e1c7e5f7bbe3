package graph

import "fmt"

// Lifetime flags say how the runtime treats an actor's declared state
// (ACOTES state clauses). Without any, the state is undefined at the start
// (zero bytes) and dropped at the end.
type Lifetime uint8

const (
	// InitializeState sets the state to State.Init before the first firing.
	InitializeState Lifetime = 1 << iota
	// CopyInState copies the state in from the caller (runtime
	// Options.StateIn) before the first firing.
	CopyInState
	// CopyOutState copies the state out to the caller at the end (runtime
	// Stats.State): for a team, the leader's (replica 0's) value.
	CopyOutState
	// FinalizeState calls the actor's Finalize with each replica's state
	// after its last firing.
	FinalizeState
)

// State declares an actor's state: Size bytes per replica, kept by the
// runtime across firings (runtime Firing.State).
type State struct {
	// Size is the state's size in bytes.
	Size int
	// Init is the initial value with InitializeState (Size bytes).
	Init []byte
	// Lifetime combines the Lifetime flags.
	Lifetime Lifetime
}

// WithState declares the actor's state.
func WithState(size int, init []byte, lt Lifetime) ActorOption {
	return func(a *Actor) {
		a.StateDecl = &State{Size: size, Init: init, Lifetime: lt}
	}
}

// ValidateState checks an actor's state declaration.
func ValidateState(a *Actor) []string {
	s := a.StateDecl
	if s == nil {
		return nil
	}
	var out []string
	if s.Size <= 0 {
		out = append(out, fmt.Sprintf("actor %s: state size %d: expected a positive number of bytes", a.Name, s.Size))
	}
	if s.Lifetime&InitializeState != 0 && len(s.Init) != s.Size {
		out = append(out, fmt.Sprintf("actor %s: initializestate with %d bytes of initial value: expected %d", a.Name, len(s.Init), s.Size))
	}
	if s.Lifetime&InitializeState != 0 && s.Lifetime&CopyInState != 0 {
		out = append(out, fmt.Sprintf("actor %s: state is both initialized and copied in: expected one of initializestate, copyinstate", a.Name))
	}
	return out
}
