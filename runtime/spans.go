package runtime

import (
	"sync"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// DeviceSpan is work a Go actor did on a device itself, through a library
// of its own (a GPU it drives directly), for the run's trace: the device
// computing, or (Copy) a copy of Bytes between host memory and the device
// in the direction ToDevice says. Start and End are wall-clock times.
type DeviceSpan struct {
	Device     string // the device's ID, e.g. "cuda:0"
	Copy       bool
	ToDevice   bool
	Bytes      int64
	Start, End time.Time
}

// Tracing reports whether the run writes a trace (Options.Trace), so that
// an actor measures its device work for TraceDevice only then. It is false
// for a Firing made by NewFiring.
func (f *Firing) Tracing() bool { return f.run != nil && f.run.traceCap > 0 }

// TraceDevice records device work the firing did itself on the trace's
// lanes of that device — "device D" for computing, "link to D" and "link
// from D" for copies, as the runtime's own kernel actors have them — each
// span a slice named after the actor. It does nothing when the run is not
// traced. Safe for concurrent firings.
func (f *Firing) TraceDevice(spans ...DeviceSpan) {
	if !f.Tracing() {
		return
	}
	r := f.run
	u := r.unitOf(f.actor)
	if u == nil {
		return
	}
	s := &r.spans
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range spans {
		name := "device " + sp.Device
		if sp.Copy {
			name = "link from " + sp.Device
			if sp.ToDevice {
				name = "link to " + sp.Device
			}
		}
		l := s.lane(r, name, sp.Device)
		ts := sp.Start.Sub(r.start).Nanoseconds()
		e := traceEvent{unit: int32(u.idx), firing: f.index, ts: ts, dur: max(sp.End.Sub(sp.Start).Nanoseconds(), 0)}
		if sp.Copy {
			e.firing = sp.Bytes
		}
		l.addTrace(e)
	}
}

// unitOf returns the unit of actor a (nil when none: a fused chain's
// stage reports through its own actor all the same).
func (r *run) unitOf(a *graph.Actor) *unit {
	for _, u := range r.units {
		if u.a == a {
			return u
		}
	}
	return nil
}

// spanLanes are the trace lanes of device work Go actors reported
// (Firing.TraceDevice), made on first use; they follow the run's own
// contexts in the trace.
type spanLanes struct {
	mu    sync.Mutex
	lanes []*execCtx // each only a name, the copies flag and its events
}

// lane returns the lane named name, made on first use with its device's
// other two (its kernels, its link to it, its link from it, in that
// order), its events counted against r's trace budget. The caller holds
// mu.
func (s *spanLanes) lane(r *run, name, dev string) *execCtx {
	for _, c := range s.lanes {
		if c.name == name {
			return c
		}
	}
	var want *execCtx
	for i, p := range [3]string{"device ", "link to ", "link from "} {
		c := &execCtx{r: r, name: p + dev, copies: i > 0, tracing: true}
		s.lanes = append(s.lanes, c)
		if c.name == name {
			want = c
		}
	}
	return want
}
