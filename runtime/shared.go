package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// sharedSet holds a run's shared variables.
type sharedSet struct {
	vars map[string]*sharedVar
	q    map[*graph.Actor]int64 // firings per iteration (1 for dynamic actors)

	mu     sync.Mutex
	staged map[*Firing][]staged                   // sync and async updates of firings in progress
	async  map[*graph.Actor]map[*sharedVar][]byte // last async value per variable
}

type staged struct {
	v   *sharedVar
	val []byte
}

// sharedVar is one variable: its published value (an immutable byte slice
// behind an atomic pointer: readers never lock) and its update count.
type sharedVar struct {
	decl    *graph.SharedVar
	cur     atomic.Pointer[[]byte]
	updates atomic.Int64
	by      atomic.Pointer[graph.Actor] // the actor whose update took effect last
}

// newShared returns g's shared variables, nil when it has none (firings
// then look for no staged update: see fireOnce).
func newShared(g *graph.Graph) *sharedSet {
	if len(g.Shared) == 0 {
		return nil
	}
	s := &sharedSet{vars: map[string]*sharedVar{}, q: map[*graph.Actor]int64{},
		staged: map[*Firing][]staged{}, async: map[*graph.Actor]map[*sharedVar][]byte{}}
	for _, d := range g.Shared {
		v := &sharedVar{decl: d}
		init := make([]byte, d.Type.Size)
		copy(init, d.Init)
		v.cur.Store(&init)
		s.vars[d.Name] = v
	}
	if rv, err := analysis.RepetitionVector(g); err == nil {
		for _, a := range g.Actors {
			s.q[a] = max(1, rv.Firings[a.Name])
		}
	}
	return s
}

func sharedOf(f *Firing, name string, size int) (*sharedSet, *sharedVar, error) {
	var s *sharedSet
	if f.run != nil {
		s = f.run.shared
	}
	if s == nil || s.vars[name] == nil {
		return nil, nil, fmt.Errorf("shared variable %q is not declared in the graph", name)
	}
	v := s.vars[name]
	if size != v.decl.Type.Size {
		return nil, nil, fmt.Errorf("shared variable %q is %s (%d bytes): accessed as a %d-byte type", name, v.decl.Type, v.decl.Type.Size, size)
	}
	return s, v, nil
}

// SharedValue returns the current value of the graph's shared variable
// name (ACOTES check): the value published by the last update that took
// effect before this call. T must have the variable's size.
func SharedValue[T any](f *Firing, name string) (T, error) {
	var zero T
	_, v, err := sharedOf(f, name, int(sizeOf[T]()))
	if err != nil {
		return zero, err
	}
	return fifo.Tokens[T](*v.cur.Load())[0], nil
}

// UpdateShared stages a new value of the shared variable name (ACOTES
// update). A sync variable takes it when this firing returns without
// error; an async one at the end of the updating actor's current
// iteration. Updates from replicas that are not the firing's leader are
// ignored (their outputs do not count either).
func UpdateShared[T any](f *Firing, name string, val T) error {
	s, v, err := sharedOf(f, name, int(sizeOf[T]()))
	if err != nil {
		return err
	}
	if !f.leader {
		return nil
	}
	b := make([]byte, v.decl.Type.Size)
	fifo.Tokens[T](b)[0] = val
	s.mu.Lock()
	s.staged[f] = append(s.staged[f], staged{v, b})
	s.mu.Unlock()
	return nil
}

func sizeOf[T any]() uintptr {
	var t [1]T
	return uintptr(len(fifo.Bytes(t[:])))
}

// publishShared applies firing f's staged updates after it returned nil:
// sync ones now, async ones at the end of the actor's iteration.
func publishShared(f *Firing) {
	s := f.run.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.staged[f] {
		if u.v.decl.Mode == graph.SharedSync {
			u.v.set(u.val)
			u.v.by.Store(f.actor)
		} else {
			if s.async[f.actor] == nil {
				s.async[f.actor] = map[*sharedVar][]byte{}
			}
			s.async[f.actor][u.v] = u.val
		}
	}
	delete(s.staged, f)
	if q := s.q[f.actor]; len(s.async[f.actor]) > 0 && (q <= 1 || (f.index+1)%q == 0) {
		for v, val := range s.async[f.actor] {
			v.set(val)
			v.by.Store(f.actor)
		}
		delete(s.async, f.actor)
	}
}

// dropShared forgets a failed firing's staged updates.
func dropShared(f *Firing) {
	s := f.run.shared
	s.mu.Lock()
	delete(s.staged, f)
	s.mu.Unlock()
}

func (v *sharedVar) set(b []byte) {
	v.cur.Store(&b)
	v.updates.Add(1)
}

// SharedStats are a shared variable's statistics: its final value and
// how many updates took effect.
type SharedStats struct {
	Name    string `json:"name"`
	Mode    string `json:"mode"`
	Type    string `json:"type"`
	Value   any    `json:"value"`
	Updates int64  `json:"updates"`
}

// sharedStats reads the run's shared variables in declaration order.
func (s *sharedSet) stats(g *graph.Graph) []SharedStats {
	if s == nil {
		return nil
	}
	var out []SharedStats
	for _, d := range g.Shared {
		v := s.vars[d.Name]
		out = append(out, SharedStats{Name: d.Name, Mode: d.Mode.String(), Type: d.Type.String(),
			Value: decodeScalar(*v.cur.Load(), d.Type), Updates: v.updates.Load()})
	}
	return out
}

// decodeScalar returns a scalar value as a Go number, other types as bytes.
func decodeScalar(b []byte, t graph.TokenType) any {
	le := binary.LittleEndian
	switch t.Name {
	case "f32":
		return float64(math.Float32frombits(le.Uint32(b)))
	case "f64":
		return math.Float64frombits(le.Uint64(b))
	}
	if graph.IsIntegerType(t) {
		v, _ := controlValue(b, t)
		return v
	}
	return append([]byte(nil), b...)
}

// endFiringShared publishes firing f's staged updates when it succeeded
// and drops them when it failed; f's run has shared variables.
func endFiringShared(f *Firing, err error) {
	if err == nil {
		publishShared(f)
	} else {
		dropShared(f)
	}
}

// sharedOfActor returns the values of the shared variables whose last
// update that took effect was actor a's (a checkpoint's snapshot of a:
// the value at a's barrier), or nil.
func (s *sharedSet) ofActor(a *graph.Actor) map[string][]byte {
	if s == nil {
		return nil
	}
	var out map[string][]byte
	for name, v := range s.vars {
		if v.by.Load() == a {
			if out == nil {
				out = map[string][]byte{}
			}
			out[name] = append([]byte(nil), *v.cur.Load()...)
		}
	}
	return out
}

// restoreShared sets the shared variables to the values a checkpoint's
// actors recorded (each variable as its last updater saw it at its
// barrier).
func (s *sharedSet) restore(g *graph.Graph, cp *Checkpoint) error {
	for name, snap := range cp.Actors {
		for vname, val := range snap.Shared {
			var v *sharedVar
			if s != nil {
				v = s.vars[vname]
			}
			if v == nil {
				return fmt.Errorf("runtime: resume: checkpoint %d has shared variable %s (recorded by actor %s), which graph %s does not declare", cp.ID, vname, name, g.Name)
			}
			if len(val) != v.decl.Type.Size {
				return fmt.Errorf("runtime: resume: shared variable %s has %d bytes in checkpoint %d: expected %d", vname, len(val), cp.ID, v.decl.Type.Size)
			}
			b := append([]byte(nil), val...)
			v.cur.Store(&b)
			v.by.Store(g.Actor(name))
		}
	}
	return nil
}
