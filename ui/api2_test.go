package ui

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// Two workers' slices aggregated into buckets: busy fractions and the
// actor that fired longest in each bucket.
func TestBucketsOfTrace(t *testing.T) {
	tr := `{"traceEvents": [
		{"ph": "M", "name": "thread_name", "tid": 1, "args": {"name": "cpu 0"}},
		{"ph": "X", "name": "A", "tid": 1, "ts": 0, "dur": 10},
		{"ph": "X", "name": "B", "tid": 1, "ts": 10, "dur": 5},
		{"ph": "X", "name": "A", "tid": 2, "ts": 12, "dur": 8}]}`
	ts, err := parseTrace([]byte(tr))
	if err != nil {
		t.Fatal(err)
	}
	b := ts.buckets(0, 20, 2)
	if b.T0 != 0 || b.T1 != 20 || len(b.Rows) != 2 || b.Rows[0].Name != "cpu 0" || b.Rows[1].Name != "worker 2" || b.Firings != 3 {
		t.Fatalf("unexpected buckets %+v", b)
	}
	want := []struct {
		busy  []float64
		actor []string
	}{{[]float64{1, 0.5}, []string{"A", "B"}}, {[]float64{0, 0.8}, []string{"", "A"}}}
	for i, w := range want {
		for k := range 2 {
			name := ""
			if a := b.Rows[i].Actor[k]; a >= 0 {
				name = b.Actors[a]
			}
			if math.Abs(b.Rows[i].Busy[k]-w.busy[k]) > 1e-9 || name != w.actor[k] {
				t.Fatalf("row %d bucket %d: expected busy %g by %q, found %g by %q", i, k, w.busy[k], w.actor[k], b.Rows[i].Busy[k], name)
			}
		}
	}
	if z := ts.buckets(14, 16, 4); z.Firings != 2 || z.Rows[0].Busy[0] != 1 || z.Rows[0].Busy[3] != 0 || z.Rows[1].Busy[3] != 1 {
		t.Fatalf("zoomed [14, 16]: %+v", z)
	}
}

// A run's trace served as buckets: as many per row as asked, whatever the
// number of firings, and a window that holds fewer firings when zoomed in.
func TestRunTraceBuckets(t *testing.T) {
	s := &Server{File: rampGraph(t)}
	h := s.Handler()
	if rec, m := do(t, h, "POST", "/api/run/start?iterations=3000", ""); rec.Code != 202 {
		t.Fatalf("start: %d %v", rec.Code, m)
	}
	waitRun(t, s)
	rec, m := do(t, h, "GET", "/api/run/trace?px=200", "")
	var all BucketsJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &all); err != nil || rec.Code != 200 {
		t.Fatalf("buckets: %d %v", rec.Code, m)
	}
	if all.Firings != 3*3000 || len(all.Rows) == 0 || len(all.Rows[0].Busy) != 200 || len(all.Actors) != 3 {
		t.Fatalf("whole trace: expected 9000 firings in rows of 200 buckets, found %d firings, %d rows, actors %v", all.Firings, len(all.Rows), all.Actors)
	}
	mid := (all.T0 + all.T1) / 2
	rec, _ = do(t, h, "GET", "/api/run/trace?px=50&from="+ftoa(all.T0)+"&to="+ftoa(mid), "")
	var half BucketsJSON
	json.Unmarshal(rec.Body.Bytes(), &half)
	if rec.Code != 200 || half.Firings == 0 || half.Firings >= all.Firings || len(half.Rows[0].Busy) != 50 {
		t.Fatalf("first half: expected fewer firings than %d, found %d (status %d)", all.Firings, half.Firings, rec.Code)
	}
	for _, q := range []string{"px=0", "px=abc", "px=10&from=5&to=5", "px=10&from=x", "px=99999"} {
		if rec, _ := do(t, h, "GET", "/api/run/trace?"+q, ""); rec.Code != 400 {
			t.Errorf("trace?%s: expected 400, found %d", q, rec.Code)
		}
	}
}

func ftoa(f float64) string { b, _ := json.Marshal(f); return string(b) }

// Predicted and measured throughput side by side after a run of a graph
// with costs (cd2dat, synthetic actors firing for their cost).
func TestRunCompare(t *testing.T) {
	s := &Server{File: tempExample(t)}
	h := s.Handler()
	if rec, _ := do(t, h, "GET", "/api/run/compare", ""); rec.Code != 404 {
		t.Fatalf("compare before a run: expected 404, found %d", rec.Code)
	}
	if rec, m := do(t, h, "POST", "/api/run/start?iterations=200", ""); rec.Code != 202 {
		t.Fatalf("start: %d %v", rec.Code, m)
	}
	if st := waitRun(t, s); st.Error != "" {
		t.Fatal(st.Error)
	}
	rec, m := do(t, h, "GET", "/api/run/compare", "")
	var c CompareJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil || rec.Code != 200 {
		t.Fatalf("compare: %d %v", rec.Code, m)
	}
	if len(c.Actors) != 6 || c.Actors[0].Name != "A" || c.Actors[0].Repetitions != 147 || c.Simulated == 0 {
		t.Fatalf("compare: expected cd2dat's 6 actors (A=147) and a simulation, found %+v", c)
	}
	if c.Graph.Predicted <= 0 || c.Graph.Measured <= 0 {
		t.Fatalf("compare: expected both throughputs, found %+v", c.Graph)
	}
	// Every actor ran 200 × its count: the measured rates are in the
	// repetition vector's proportions (the run's speed itself depends on
	// the machine's load, so it is only shown, not bounded here).
	if a, f := c.Actors[0], c.Actors[5]; math.Abs(a.Measured/f.Measured-147.0/160) > 1e-9 {
		t.Fatalf("measured A/F: expected 147/160, found %g/%g", a.Measured, f.Measured)
	}
	if a := c.Actors[0]; math.Abs(a.Predicted-147*c.Graph.Predicted) > 1e-6*a.Predicted || a.Measured <= 0 {
		t.Fatalf("actor A: expected 147 × the graph's rate predicted and a measured rate, found %+v", a)
	}
}

// Runs from the page honour the server's mapping: a placement on a device
// that is not there fails the run and says so; one naming an unknown actor
// is refused before it starts.
func TestRunHonoursMapping(t *testing.T) {
	s := &Server{File: rampGraph(t), Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"gain": {Device: "cuda:7"}}}}
	h := s.Handler()
	if rec, m := do(t, h, "POST", "/api/run/start?iterations=10", ""); rec.Code != 202 {
		t.Fatalf("start: %d %v", rec.Code, m)
	}
	if st := waitRun(t, s); !strings.Contains(st.Error, "cuda:7") {
		t.Fatalf("gain on cuda:7: expected the run to fail naming the device, found %q", st.Error)
	}
	s = &Server{File: rampGraph(t), Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"nope": {Replicas: 2}}}}
	if rec, m := do(t, s.Handler(), "POST", "/api/run/start?iterations=10", ""); rec.Code != 422 || !strings.Contains(strings.Join(toStrings(m["errors"].([]any)), ""), "nope") {
		t.Fatalf("mapping of an unknown actor: expected 422 naming it, found %d %v", rec.Code, m)
	}
	s = &Server{File: rampGraph(t)}
	h = s.Handler()
	if rec, m := do(t, h, "POST", "/api/mapping", `{"actor": "gain", "replicas": 2}`); rec.Code != 200 {
		t.Fatalf("POST /api/mapping: %d %v", rec.Code, m)
	}
	if rec, m := do(t, h, "POST", "/api/run/start?iterations=100", ""); rec.Code != 202 {
		t.Fatalf("start: %d %v", rec.Code, m)
	}
	if st := waitRun(t, s); st.Error != "" || s.ctl.mapping == nil || s.ctl.mapping.Actors["gain"].Replicas != 2 {
		t.Fatalf("run with gain ×2: error %q, mapping %+v", st.Error, s.ctl.mapping)
	}
}

func TestMappingEdit(t *testing.T) {
	s := &Server{File: example}
	h := s.Handler()
	rec, m := do(t, h, "POST", "/api/mapping", `{"actor": "C", "device": "opencl:0:0", "replicas": 3}`)
	if rec.Code != 200 {
		t.Fatalf("POST /api/mapping: %d %v", rec.Code, m)
	}
	var res CheckResult
	json.Unmarshal(doRaw(t, h, "GET", "/api/graph", "").Body.Bytes(), &res)
	if p := res.Mapping["C"]; p.Device != "opencl:0:0" || p.Replicas != 3 {
		t.Fatalf("after the edit: expected C on opencl:0:0 ×3, found %+v", res.Mapping)
	}
	do(t, h, "POST", "/api/mapping", `{"actor": "C"}`)
	res = CheckResult{}
	json.Unmarshal(doRaw(t, h, "GET", "/api/graph", "").Body.Bytes(), &res)
	if len(res.Mapping) != 0 {
		t.Fatalf("after removing C's placement: expected none, found %+v", res.Mapping)
	}
	for _, body := range []string{"{", `{"actor": ""}`, `{"actor": "C", "replicas": -1}`} {
		if rec, _ := do(t, h, "POST", "/api/mapping", body); rec.Code != 400 {
			t.Errorf("POST /api/mapping %s: expected 400, found %d", body, rec.Code)
		}
	}
}

func TestGoGenEndpoint(t *testing.T) {
	s := &Server{File: example}
	h := s.Handler()
	rec, m := do(t, h, "POST", "/api/gogen", exampleText(t, example))
	var g GoJSON
	json.Unmarshal(rec.Body.Bytes(), &g)
	if rec.Code != 200 || !strings.Contains(g.Go, "package main") || !strings.Contains(g.Go, `g := graph.New("cd2dat")`) {
		t.Fatalf("gogen: %d %v", rec.Code, m)
	}
	if rec, _ := do(t, h, "POST", "/api/gogen", "name: x\nactors: [\n"); rec.Code != 422 {
		t.Fatalf("gogen of bad YAML: expected 422, found %d", rec.Code)
	}
	rec, _ = do(t, h, "POST", "/api/gogen", exampleText(t, "../examples/conditional/conditional.yaml"))
	if !strings.Contains(rec.Body.String(), "conditional pattern") {
		t.Fatalf("gogen of a conditional pattern: expected an error naming it, found %d %s", rec.Code, rec.Body)
	}
}

func TestBuiltinsListed(t *testing.T) {
	rec := doRaw(t, (&Server{}).Handler(), "GET", "/api/builtins", "")
	var bs []BuiltinJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &bs); err != nil || len(bs) < 5 {
		t.Fatalf("builtins: %v %s", err, rec.Body)
	}
	found := false
	for _, b := range bs {
		found = found || b.Name == "gen.ramp" && b.Doc != ""
	}
	if !found {
		t.Fatalf("expected gen.ramp with its doc among %v", bs)
	}
}
