package graph

import "fmt"

// SharedMode says when an update of a shared variable becomes visible.
type SharedMode int

const (
	// SharedSync: an update takes effect at the updating firing's boundary
	// (when the firing returns): firings that start later see it.
	SharedSync SharedMode = iota
	// SharedAsync: updates are held and applied by the runtime at the end
	// of an iteration of the updating actor (after its repetition-vector
	// count of firings); the last update of the iteration wins.
	SharedAsync
)

// String returns "sync" or "async".
func (m SharedMode) String() string {
	if m == SharedAsync {
		return "async"
	}
	return "sync"
}

// SharedVar is a variable shared by the actors of a graph (ACOTES shared
// variables): one actor updates it, others check it, through the runtime's
// SharedValue and UpdateShared.
type SharedVar struct {
	// Name is unique among the graph's shared variables.
	Name string
	// Type is the value's type (one token).
	Type TokenType
	// Init is the initial value, Type.Size little-endian bytes (zeros when
	// nil).
	Init []byte
	// Mode says when updates take effect.
	Mode SharedMode
	// Origin says where it was declared, if known.
	Origin string
}

// AddShared declares a shared variable of type t with initial value init
// (nil for zero) and adds it to g. A duplicate name or an initial value of
// the wrong size is recorded as a problem that Validate reports.
func (g *Graph) AddShared(name string, t TokenType, init []byte, mode SharedMode, origin string) *SharedVar {
	for _, s := range g.Shared {
		if s.Name == name {
			g.problem(origin, "shared variable %q declared twice (first at %s)", name, at(s.Origin))
		}
	}
	if init != nil && len(init) != t.Size {
		g.problem(origin, "shared variable %q: initial value has %d bytes: expected one %s (%d bytes)", name, len(init), t, t.Size)
	}
	v := &SharedVar{Name: name, Type: t, Init: init, Mode: mode, Origin: origin}
	g.Shared = append(g.Shared, v)
	return v
}

// SharedNamed returns the shared variable called name, or nil.
func (g *Graph) SharedNamed(name string) *SharedVar {
	for _, s := range g.Shared {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// ParseSharedMode reads "sync" or "async".
func ParseSharedMode(s string) (SharedMode, error) {
	switch s {
	case "sync", "":
		return SharedSync, nil
	case "async":
		return SharedAsync, nil
	}
	return 0, fmt.Errorf("shared mode %q: expected sync or async", s)
}
