package ui

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// MaxIterations is the most iterations POST /api/run/start accepts.
const MaxIterations = 1_000_000

// RunTraceLimit is the most events the trace of a run started on the page
// keeps when Server.TraceLimit is 0: the server holds the last run's
// trace, about 120 MB of JSON at this many (a million iterations of a
// graph of many actors would be tens of gigabytes).
const RunTraceLimit = 1_000_000

// runControl is the state of the runs started by POST /api/run/start: one
// at a time, the last one's error and trace kept.
type runControl struct {
	mu      sync.Mutex
	running bool
	runs    int
	err     string
	trace   []byte
	dropped int64              // events the last run's trace did not keep (its limit reached)
	limit   int64              // that trace's limit
	cancel  context.CancelFunc // stops the run going on

	prepared *driver.Prepared // the last run's graph, for GET /api/run/compare
	mapping  *graph.Mapping   // the last run's mapping as given (nil: all on the CPU)
	workers  int              // the last run's CPU workers
	parsed   *parsedTrace     // the last trace, parsed in the background once the run ends
}

// RunStateJSON is the answer of GET /api/run/state and POST /api/run/start.
type RunStateJSON struct {
	Running bool   `json:"running"`
	Runs    int    `json:"runs"`
	Error   string `json:"error,omitempty"`
	Trace   bool   `json:"trace"`
	// TraceDropped counts the events the last run's trace did not keep,
	// TraceLimit reached: the trace holds the run's first TraceLimit.
	TraceDropped int64 `json:"trace_dropped,omitempty"`
	TraceLimit   int64 `json:"trace_limit,omitempty"`
	// Compare is true when GET /api/run/compare has a run to compare
	// (a run started here, not a saved one).
	Compare bool `json:"compare"`
}

func (c *runControl) state() RunStateJSON {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := RunStateJSON{Running: c.running, Runs: c.runs, Error: c.err, Trace: c.trace != nil, Compare: c.prepared != nil && !c.running}
	if c.dropped > 0 && !c.running {
		st.TraceDropped, st.TraceLimit = c.dropped, c.limit
	}
	return st
}

// noStdin is why the page's runs refuse the stdin actor: the server's
// standard input is the terminal it was started in (or nothing), and a
// read there would hold the run past the page's stop.
const noStdin = "the workbench's runs have no standard input (the stdin actor would wait on the terminal sluice ui runs in): run the graph with sluice run and feed it there (seq 5 | sluice run FILE), or read a file with file.read or csv.read"

// postRunStart runs FILE with the runtime for ?iterations=N (default 100)
// graph iterations, in the background, its actors placed by the server's
// mapping (none: all on the CPU); 409 while a run is on.
func (s *Server) postRunStart(w http.ResponseWriter, r *http.Request) {
	if s.File == "" {
		writeErr(w, http.StatusNotFound, "no graph file to run: start `sluice ui FILE`")
		return
	}
	n := int64(100)
	if q := r.URL.Query().Get("iterations"); q != "" {
		v, err := strconv.ParseInt(q, 10, 64)
		if err != nil || v < 1 || v > MaxIterations {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("iterations: expected an integer from 1 to %d, found %q", MaxIterations, q))
			return
		}
		n = v
	}
	p, err := s.loadServed(r.Context())
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: graph.ErrorLines(err)})
		return
	}
	m := s.currentMapping()
	pl, err := driver.Place(r.Context(), p, driver.PlaceOptions{Mapping: m})
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: graph.ErrorLines(err)})
		return
	}
	c := &s.ctl
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		writeErr(w, http.StatusConflict, "a run is already going on: wait for it to end (GET /api/run/state)")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.running, c.runs, c.err, c.trace, c.dropped, c.cancel = true, c.runs+1, "", nil, 0, cancel
	c.prepared, c.mapping, c.workers, c.parsed = p, m, goruntime.GOMAXPROCS(0), nil
	c.mu.Unlock()
	live := s.Live
	limit := s.TraceLimit
	if limit == 0 {
		limit = RunTraceLimit
	}
	go func() {
		defer cancel()
		var trace bytes.Buffer
		// The page's runs open files only inside the server's root, and
		// have no standard input.
		opts := runtime.Options{Iterations: n, Trace: &trace, TraceLimit: limit, Progress: live.Observe, ProgressInterval: 100 * time.Millisecond,
			Files: runtime.FileAccess{Root: s.root.At(s.cwd), NoStdin: noStdin}}
		stats, err := driver.Run(ctx, pl, opts)
		if stats != nil {
			live.set(finalRun(stats))
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.running = false
		if err != nil {
			c.err = err.Error()
		}
		if stats != nil {
			c.dropped, c.limit = stats.TraceDropped, limit
		}
		if trace.Len() > 0 {
			c.trace = trace.Bytes()
			c.parsed = &parsedTrace{data: c.trace}
			go c.parsed.get() // ready by the time the page asks, for a long trace
		}
	}()
	writeJSON(w, http.StatusAccepted, c.state())
}

// postRunStop cancels the run going on, if any, and answers the state.
func (s *Server) postRunStop(w http.ResponseWriter, r *http.Request) {
	s.ctl.mu.Lock()
	if s.ctl.running && s.ctl.cancel != nil {
		s.ctl.cancel()
	}
	s.ctl.mu.Unlock()
	writeJSON(w, http.StatusOK, s.ctl.state())
}

func (s *Server) getRunState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.ctl.state())
}

// getRunTrace answers the last finished run's Chrome Trace Event JSON or,
// with ?px=N, its firings aggregated into N buckets per worker over
// [?from, ?to] µs (BucketsJSON), or with ?counts=N each actor's firings
// per bucket of N over the run (CountsJSON).
func (s *Server) getRunTrace(w http.ResponseWriter, r *http.Request) {
	s.ctl.mu.Lock()
	tr, running, parsed := s.ctl.trace, s.ctl.running, s.ctl.parsed
	s.ctl.mu.Unlock()
	switch {
	case running:
		writeErr(w, http.StatusConflict, "the run is going on: its trace comes when it ends")
	case tr == nil:
		writeErr(w, http.StatusNotFound, "no trace: start a run with POST /api/run/start")
	case r.URL.Query().Has("px"):
		s.writeBuckets(w, r, parsed)
	case r.URL.Query().Has("counts"):
		writeCounts(w, r, parsed)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(tr)
	}
}

// writeBuckets answers the trace tr aggregated for the window asked.
func (s *Server) writeBuckets(w http.ResponseWriter, r *http.Request, p *parsedTrace) {
	t, err := p.get()
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	from, to, px, err := bucketQuery(r, t)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, t.buckets(from, to, px))
}

// parsedTrace is one run's trace, parsed once (about half a second for
// a million firings written by the runtime), in the background or by the
// first request.
type parsedTrace struct {
	once sync.Once
	data []byte
	t    *traceSlices
	err  error
}

func (p *parsedTrace) get() (*traceSlices, error) {
	p.once.Do(func() { p.t, p.err = parseTrace(p.data) })
	return p.t, p.err
}

// finalRun is the progress of a run that ended, from its statistics:
// every actor done with its firings and busy time, every channel with the
// tokens left in it.
func finalRun(st *runtime.Stats) *RunJSON {
	r := &RunJSON{ElapsedNS: st.Elapsed.Nanoseconds(), Actors: make([]ActorRunJSON, len(st.Actors)),
		Channels: make([]ChannelRunJSON, len(st.Channels)), Checkpoints: st.Checkpoints}
	for i, a := range st.Actors {
		r.Actors[i] = ActorRunJSON{Name: a.Name, Firings: a.Firings, Target: a.Firings, Done: true,
			BusyNS: a.Busy.Nanoseconds(), Replicas: a.Replicas, Fused: a.Fused}
	}
	for i, c := range st.Channels {
		r.Channels[i] = ChannelRunJSON{Name: c.Name, Capacity: c.Capacity, Fill: c.Left}
	}
	return r
}
