package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sluicehq/sluice/runtime"
)

// Live keeps the latest snapshot of a run for GET /api/run. Pass its
// Observe as runtime.Options.Progress. It is safe for concurrent use.
type Live struct {
	mu   sync.Mutex
	last *RunJSON
}

// RunJSON is the answer of GET /api/run: the run's elapsed time and each
// actor's firings so far.
type RunJSON struct {
	ElapsedNS int64          `json:"elapsed_ns"`
	Actors    []ActorRunJSON `json:"actors"`
	// Channels gives each channel's fill, in graph order.
	Channels []ChannelRunJSON `json:"channels"`
	// Checkpoints summarises the checkpoints and recoveries of a run that
	// took them (`sluice run --checkpoint-dir`; nil otherwise).
	Checkpoints *runtime.CheckpointStats `json:"checkpoints,omitempty"`
}

// ChannelRunJSON is one channel's fill: the tokens it holds of its
// capacity (Fill is -1 for a ring in device memory, unknown while it runs).
type ChannelRunJSON struct {
	Name     string `json:"name"`
	Capacity int    `json:"capacity"`
	Fill     int64  `json:"fill"`
}

// ActorRunJSON is one actor's progress; Target is -1 when the actor runs
// until its streams end.
type ActorRunJSON struct {
	Name    string `json:"name"`
	Firings int64  `json:"firings"`
	Target  int64  `json:"target"`
	Done    bool   `json:"done"`
	// BusyNS is the time its firings took so far; Replicas the team size
	// (the page's busy share is BusyNS / (elapsed × Replicas)).
	BusyNS   int64 `json:"busy_ns"`
	Replicas int   `json:"replicas,omitempty"`
	// Fused names the fused chain the actor ran in, once the run ended
	// (empty: it ran on its own; see runtime.ActorStats.Fused).
	Fused string `json:"fused,omitempty"`
}

// Observe records s as the latest snapshot.
func (l *Live) Observe(s runtime.Snapshot) {
	r := &RunJSON{ElapsedNS: s.Elapsed.Nanoseconds(), Actors: make([]ActorRunJSON, len(s.Actors)),
		Channels: make([]ChannelRunJSON, len(s.Channels))}
	for i, a := range s.Actors {
		r.Actors[i] = ActorRunJSON{Name: a.Name, Firings: a.Firings, Target: a.Target, Done: a.Done, BusyNS: a.Busy.Nanoseconds()}
	}
	for i, c := range s.Channels {
		r.Channels[i] = ChannelRunJSON{Name: c.Name, Capacity: c.Capacity, Fill: c.Fill}
	}
	l.set(r)
}

// set records r as the latest snapshot.
func (l *Live) set(r *RunJSON) {
	l.mu.Lock()
	l.last = r
	l.mu.Unlock()
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	if s.Live == nil {
		writeErr(w, http.StatusNotFound, "no run: start `sluice run FILE --ui ADDR`")
		return
	}
	s.Live.mu.Lock()
	last := s.Live.last
	s.Live.mu.Unlock()
	if last == nil {
		last = &RunJSON{Actors: []ActorRunJSON{}, Channels: []ChannelRunJSON{}}
	}
	writeJSON(w, http.StatusOK, last)
}

// eventPeriod is how often GET /api/run/events looks for a new snapshot.
const eventPeriod = 100 * time.Millisecond

// getRunEvents streams each new snapshot as a server-sent event ("data:
// RunJSON") until the client leaves.
func (s *Server) getRunEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if s.Live == nil || !ok {
		writeErr(w, http.StatusNotFound, "no run: start `sluice run FILE --ui ADDR`")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	tick := time.NewTicker(eventPeriod)
	defer tick.Stop()
	var sent *RunJSON
	for {
		s.Live.mu.Lock()
		last := s.Live.last
		s.Live.mu.Unlock()
		if last != nil && last != sent {
			b, _ := json.Marshal(last)
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
			sent = last
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
