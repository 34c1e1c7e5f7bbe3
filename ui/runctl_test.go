package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/sluicehq/sluice/actors" // the built-in actors the test graph uses
)

// waitRun polls GET /api/run/state until the run ends (45 s at most: a
// loaded machine running the race detector).
func waitRun(t *testing.T, s *Server) RunStateJSON {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		if st := s.ctl.state(); !st.Running {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the run did not end within 45 s")
	return RunStateJSON{}
}

// rampGraph writes a graph of built-in actors that runs on the CPU: a ramp
// of 256 samples per firing, a gain and a file sink.
func rampGraph(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	g := filepath.Join(dir, "ramp.yaml")
	yaml := `name: ramp
actors:
  src:  {use: gen.ramp, with: {start: 0, step: 1, count: 1000000000}, out: {y: {type: f32, rate: 256}}, stateful: true}
  gain: {use: scale, with: {gain: 2}, in: {x: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 256}}}
  sink: {use: file.write, with: {path: ` + filepath.Join(dir, "out.f32") + `}, in: {x: {type: f32, rate: 256}}, stateful: true}
channels:
  - {from: src.y, to: gain.x}
  - {from: gain.y, to: sink.x}
`
	if err := os.WriteFile(g, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRunStartAndTrace(t *testing.T) {
	s := &Server{File: rampGraph(t)}
	h := s.Handler()
	if rec := doRaw(t, h, "GET", "/api/run/trace", ""); rec.Code != 404 {
		t.Fatalf("trace before any run: expected 404, found %d", rec.Code)
	}
	if rec := doRaw(t, h, "POST", "/api/run/start?iterations=0", ""); rec.Code != 400 {
		t.Fatalf("iterations=0: expected 400, found %d", rec.Code)
	}
	s.ctl.running = true // as if a run were going on
	if rec := doRaw(t, h, "POST", "/api/run/start", ""); rec.Code != 409 {
		t.Fatalf("start while a run is going on: expected 409, found %d", rec.Code)
	}
	s.ctl.running = false
	rec, m := do(t, h, "POST", "/api/run/start?iterations=2000", "")
	if rec.Code != 202 {
		t.Fatalf("start: expected 202, found %d: %v", rec.Code, m)
	}
	st := waitRun(t, s)
	if st.Error != "" || !st.Trace {
		t.Fatalf("run: %+v", st)
	}
	rec, _ = do(t, h, "GET", "/api/run", "")
	var run RunJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	firings := map[string]int64{}
	for _, a := range run.Actors {
		firings[a.Name] = a.Firings
	}
	if firings["src"] != 2000 || firings["sink"] != 2000 {
		t.Fatalf("after 2000 iterations: expected 2000 firings of src and sink, found %v", firings)
	}
	rec = doRaw(t, h, "GET", "/api/run/trace", "")
	var tr struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &tr) != nil || len(tr.TraceEvents) < 10 {
		t.Fatalf("trace: status %d, %d events", rec.Code, len(tr.TraceEvents))
	}
}

func TestRunStop(t *testing.T) {
	g := rampGraph(t)
	s := &Server{File: g}
	h := s.Handler()
	if rec, m := do(t, h, "POST", "/api/run/start?iterations=1000000", ""); rec.Code != 202 {
		t.Fatalf("start: expected 202, found %d: %v", rec.Code, m)
	}
	// stop once the run is under way: its sink has written
	out := filepath.Join(filepath.Dir(g), "out.f32")
	for deadline := time.Now().Add(45 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if fi, err := os.Stat(out); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run wrote nothing to %s within 45 s", out)
		}
	}
	if rec, _ := do(t, h, "POST", "/api/run/stop", ""); rec.Code != 200 {
		t.Fatalf("stop: expected 200, found %d", rec.Code)
	}
	st := waitRun(t, s)
	rec, _ := do(t, h, "GET", "/api/run", "")
	var run RunJSON
	json.Unmarshal(rec.Body.Bytes(), &run)
	sink := int64(-1)
	for _, a := range run.Actors {
		if a.Name == "sink" {
			sink = a.Firings
		}
	}
	if sink < 0 || sink >= 1000000 {
		t.Fatalf("stop: expected the run cut short with sink's firings reported, found %d (state %+v)", sink, st)
	}
}

// A graph with rates and costs but no code yet (examples/cd2dat.yaml) runs
// from the page: its actors fire as synthetic ones, each firing as long as
// its cost, the repetition vector's counts per iteration.
func TestRunDesignOnlyGraph(t *testing.T) {
	s := &Server{File: tempExample(t)}
	h := s.Handler()
	if rec, m := do(t, h, "POST", "/api/run/start?iterations=3", ""); rec.Code != 202 {
		t.Fatalf("start: expected 202, found %d: %v", rec.Code, m)
	}
	if st := waitRun(t, s); st.Error != "" {
		t.Fatalf("run of cd2dat: %s", st.Error)
	}
	rec, _ := do(t, h, "GET", "/api/run", "")
	var run RunJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"A": 3 * 147, "B": 3 * 147, "C": 3 * 98, "D": 3 * 28, "E": 3 * 32, "F": 3 * 160}
	for _, a := range run.Actors {
		if a.Firings != want[a.Name] {
			t.Errorf("actor %s fired %d times, expected %d (3 iterations of the repetition vector)", a.Name, a.Firings, want[a.Name])
		}
	}
	if len(run.Actors) != len(want) {
		t.Fatalf("actors = %+v", run.Actors)
	}
}

// TestRunRefusesStdin: a page's run of a graph with a stdin actor ends at
// once with a sentence saying why and what to do (the server's standard
// input is its terminal: a read there outlived the page's stop), and the
// next run starts.
func TestRunRefusesStdin(t *testing.T) {
	t.Parallel()
	s := &Server{File: exampleCopy(t, "run/stdin-saxpy.yaml")}
	h := s.Handler()
	for run := 1; run <= 2; run++ {
		if rec, m := do(t, h, "POST", "/api/run/start?iterations=3", ""); rec.Code != 202 {
			t.Fatalf("start %d: expected 202, found %d: %v", run, rec.Code, m)
		}
		st := waitRun(t, s)
		for _, want := range []string{"actor read (stdin)", "no standard input", "sluice run", "file.read"} {
			if !strings.Contains(st.Error, want) {
				t.Fatalf("run %d of a graph reading stdin: error %q: expected it to contain %q", run, st.Error, want)
			}
		}
	}
}

// exampleCopy copies examples/NAME into a directory of the test's own and
// returns the copy's path: a server serving it writes nothing in the tree.
func exampleCopy(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "examples", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(f, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRunTraceLimit: a run whose trace reaches the server's limit keeps
// at most that many of the run's first events, and the run's state says
// how many it did not keep; the trace's own otherData says so too.
func TestRunTraceLimit(t *testing.T) {
	t.Parallel()
	s := &Server{File: rampGraph(t), TraceLimit: 500}
	h := s.Handler()
	if rec, m := do(t, h, "POST", "/api/run/start?iterations=1000", ""); rec.Code != 202 {
		t.Fatalf("start: expected 202, found %d: %v", rec.Code, m)
	}
	st := waitRun(t, s)
	if st.Error != "" || !st.Trace || st.TraceLimit != 500 || st.TraceDropped < 3*1000-500 {
		t.Fatalf("a run of 3000 firings, its trace limited to 500 events: state %+v: expected the limit and 2500 events or more not kept", st)
	}
	rec := doRaw(t, h, "GET", "/api/run/trace", "")
	var tr struct {
		OtherData struct {
			Dropped int64 `json:"dropped_events"`
		} `json:"otherData"`
		TraceEvents []struct {
			Ph string `json:"ph"`
		} `json:"traceEvents"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &tr) != nil || tr.OtherData.Dropped != st.TraceDropped {
		t.Fatalf("trace: status %d, otherData.dropped_events %d: expected 200 and %d", rec.Code, tr.OtherData.Dropped, st.TraceDropped)
	}
	held := 0
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" {
			held++
		}
	}
	if held == 0 || held > 500 || int64(held)+st.TraceDropped != 3000 {
		t.Fatalf("trace: %d firings held, %d not kept: expected at most 500 held, 3000 in all", held, st.TraceDropped)
	}
}

// TestSavedRunTraceLimit: a saved run whose trace reached its limit says
// so in the run's state, as a run started on the page does.
func TestSavedRunTraceLimit(t *testing.T) {
	t.Parallel()
	stats, trace := recordRunLimited(t, example, 5000)
	saved, err := LoadSavedRun(stats, trace)
	if err != nil {
		t.Fatal(err)
	}
	if saved.TraceLimit != 5000 || saved.TraceDropped < 200*612-5000 {
		t.Fatalf("a saved run of 200 iterations of cd2dat traced up to 5000 events: limit %d, dropped %d: expected 5000 and 117,400 or more", saved.TraceLimit, saved.TraceDropped)
	}
	s := &Server{File: example, Saved: saved}
	h := s.Handler()
	rec, _ := do(t, h, "GET", "/api/run/state", "")
	var st RunStateJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.TraceLimit != 5000 || st.TraceDropped != saved.TraceDropped {
		t.Fatalf("state %s: expected trace_limit 5000 and trace_dropped %d", rec.Body.Bytes(), saved.TraceDropped)
	}
	if l, d := traceLimits([]byte(`{"traceEvents":[]}`)); l != 0 || d != 0 {
		t.Fatalf("a trace without otherData: limit %d, dropped %d: expected none", l, d)
	}
}
