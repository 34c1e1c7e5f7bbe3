package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// Live keeps the latest snapshot of a run for GET /api/run. Pass its
// Observe as runtime.Options.Progress. It is safe for concurrent use.
type Live struct {
	mu   sync.Mutex
	last *RunJSON

	// ids caches the structure identity of the graphs runs were of (see
	// runGraphID), by graph, and of the server's file, read once.
	ids    map[*graph.Graph]string
	fileID *string
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
	// GraphID is the identity (GraphJSON.ID) of the graph the run is of:
	// its figures belong to that graph only. Empty when unknown.
	GraphID string `json:"graph_id,omitempty"`
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

// final reports whether r is the last snapshot of a run that ended: every
// actor done.
func (r *RunJSON) final() bool {
	for _, a := range r.Actors {
		if !a.Done {
			return false
		}
	}
	return len(r.Actors) > 0
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
	writeJSON(w, http.StatusOK, s.tagged(last))
}

// tagged is a copy of the snapshot r carrying the identity of the graph
// the run is of: the graph of the last run started here, or else (a run
// recorded elsewhere, `sluice run --ui`) the server's file as first read.
func (s *Server) tagged(r *RunJSON) *RunJSON {
	s.ctl.mu.Lock()
	var g *graph.Graph
	if s.ctl.prepared != nil {
		g = s.ctl.prepared.Graph
	}
	s.ctl.mu.Unlock()
	out := *r
	out.GraphID = s.Live.runGraphID(g, s.File)
	return &out
}

// runGraphID is GraphID(g), or the identity of file's graph when g is nil
// ("" when it does not load), each computed once.
func (l *Live) runGraphID(g *graph.Graph, file string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g != nil {
		id, ok := l.ids[g]
		if !ok {
			id = GraphID(g)
			l.ids = map[*graph.Graph]string{g: id} // one run's graph at a time
		}
		return id
	}
	if l.fileID == nil {
		id := ""
		if file != "" {
			if fg, err := spec.Load(file); err == nil {
				id = GraphID(fg)
			}
		}
		l.fileID = &id
	}
	return *l.fileID
}

// eventPeriod is how often GET /api/run/events looks for a new snapshot.
const eventPeriod = 100 * time.Millisecond

// getRunEvents streams each new snapshot as a server-sent event ("data:
// RunJSON") until the client leaves or, on a server that starts runs (POST
// /api/run/start), until the run ended: then, once the final snapshot is
// sent, an "end" event (data: the run's state) closes the stream, so that
// the page closes its EventSource before the server does.
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
	if s.ctl.state().Running {
		// A run just started: the snapshot held may still be the previous
		// run's final one; its own come within eventPeriod.
		s.Live.mu.Lock()
		if s.Live.last != nil && s.Live.last.final() {
			sent = s.Live.last
		}
		s.Live.mu.Unlock()
	}
	for {
		// The state first: a run's final snapshot is recorded before it
		// says the run ended.
		st := s.ctl.state()
		s.Live.mu.Lock()
		last := s.Live.last
		s.Live.mu.Unlock()
		if last != nil && last != sent {
			b, _ := json.Marshal(s.tagged(last))
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
			sent = last
		}
		if st.Runs > 0 && !st.Running {
			b, _ := json.Marshal(st)
			_, _ = fmt.Fprintf(w, "event: end\ndata: %s\n\n", b)
			fl.Flush()
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
