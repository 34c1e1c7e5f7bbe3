package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/mapping"
)

// sweepTiny runs the sweep on testdata/tiny.yaml with the test machine
// model and checks the report: every candidate measured and predicted,
// the best one named, the picked mapping measured and the ratio picked ÷
// best computed from them; the printed table says the same.
func sweepTiny(t *testing.T, backend graph.ImplKind, devs []string, wantCandidates int) *Report {
	t.Helper()
	m, err := machine.Load("testdata/machine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := Config{Graph: "testdata/tiny.yaml", Backend: backend, Devices: devs, Machine: m, Warmup: 20, Iterations: 200,
		MinTime: 20 * time.Millisecond, Max: 40, Seed: 1, G: []int{4, 16}, Replicas: []int{1, 2}, WorkItems: 16, Workers: 2,
		Evaluations: 60, SearchIterations: 64, Rounds: 2, Finalists: 2}
	rep, err := Sweep(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Exhaustive || len(rep.Candidates) != wantCandidates {
		t.Fatalf("%d candidates (exhaustive %v) of a space of %.0f: expected all %d", len(rep.Candidates), rep.Exhaustive, rep.SpaceSize, wantCandidates)
	}
	best := 0.0
	for _, c := range rep.Candidates {
		if c.Err != "" || !(c.Measured > 0) || !(c.Predicted > 0) || c.Iterations < cfg.Iterations || math.IsNaN(c.ErrorPct) {
			t.Errorf("candidate %s (%s): measured %g, predicted %g, error %g%%, %d iterations, %q: expected positive figures, at least %d iterations, no error",
				c.Name, c.Mapping, c.Measured, c.Predicted, c.ErrorPct, c.Iterations, c.Err, cfg.Iterations)
		}
		best = max(best, c.Measured)
	}
	if rep.BestIterS != best || rep.Best == "" {
		t.Errorf("best %q at %g it/s: expected the highest measured, %g", rep.Best, rep.BestIterS, best)
	}
	if rep.Picked.Measured <= 0 || rep.PickedBy == "" || rep.Picked.Mapping == "" {
		t.Fatalf("picked %+v by %q: expected a measured mapping and a strategy", rep.Picked, rep.PickedBy)
	}
	if want := rep.Picked.Measured / best; math.Abs(rep.Ratio-want) > 1e-9*want {
		t.Errorf("ratio %g: expected picked ÷ best = %g", rep.Ratio, want)
	}
	checkFinals(t, rep, cfg)
	checkOutputs(t, rep)
	return rep
}

// checkFinals checks the finalists measured again: the pick first (as
// written: no capacities), then the pick with the search's capacities
// when it raised any, then the fastest candidates, each run cfg.Rounds
// times (the sweep's run first), and the ratio of the medians.
func checkFinals(t *testing.T, rep *Report, cfg Config) {
	t.Helper()
	want := cfg.Finalists + 1
	if len(rep.Capacity) > 0 {
		want++
	}
	if len(rep.Finals) != want || rep.Finals[0].Name != "picked" {
		t.Fatalf("finals %+v (search capacities %v): expected the pick and %d more", rep.Finals, rep.Capacity, want-1)
	}
	if rep.Finals[0].Runs[0] != rep.Picked.Measured || rep.Picked.Capacity != nil {
		t.Errorf("the pick's first run %g with capacities %v: expected the sweep's measurement %g, with none", rep.Finals[0].Runs[0], rep.Picked.Capacity, rep.Picked.Measured)
	}
	best := 0.0
	for _, f := range rep.Finals {
		if len(f.Runs) != cfg.Rounds || f.Median != (f.Runs[0]+f.Runs[1])/2 || !(f.Median > 0) {
			t.Errorf("finalist %s: runs %v, median %g: expected %d positive runs and their median", f.Name, f.Runs, f.Median, cfg.Rounds)
		}
		if f.Name != "picked-capacity" {
			best = max(best, f.Median)
		}
	}
	if want := rep.Finals[0].Median / best; math.Abs(rep.RatioRounds-want) > 1e-9 {
		t.Errorf("ratio of the medians %g: expected %g", rep.RatioRounds, want)
	}
	bestMapping := ""
	for _, c := range rep.Candidates {
		if c.Name == rep.Best {
			bestMapping = c.Mapping
		}
	}
	if i := want - cfg.Finalists; bestMapping != rep.Picked.Mapping && rep.Finals[i].Name != rep.Best {
		t.Errorf("first finalist after the pick %s: expected the sweep's best, %s", rep.Finals[i].Name, rep.Best)
	}
}

// checkOutputs checks the JSON report round-trips and the table prints
// the ratio, the best and every candidate.
func checkOutputs(t *testing.T, rep *Report) {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"candidates", "best", "best_iter_per_s", "picked", "ratio", "costs_ns"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON report: expected key %q, found keys of %s", k, b)
		}
	}
	var out bytes.Buffer
	Print(&out, rep)
	m := regexp.MustCompile(`ratio picked/best: ([0-9.]+)\n`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("table: expected a line 'ratio picked/best: R', found\n%s", out.String())
	}
	if r, _ := strconv.ParseFloat(m[1], 64); math.Abs(r-rep.Ratio) > 0.001 {
		t.Errorf("table ratio %s: expected %.3f", m[1], rep.Ratio)
	}
	for _, c := range rep.Candidates {
		if !strings.Contains(out.String(), c.Name+" ") || !strings.Contains(out.String(), c.Mapping) {
			t.Errorf("table: expected a row for %s (%s), found\n%s", c.Name, c.Mapping, out.String())
		}
	}
}

// TestSweepCPU sweeps the tiny graph on the CPU: half with 1 or 2
// replicas, ramp likewise (the sink is stateful): 4 candidates.
func TestSweepCPU(t *testing.T) {
	rep := sweepTiny(t, "", nil, 4)
	if rep.Candidates[0].Name != "all-cpu" {
		t.Errorf("first candidate %s: expected all-cpu", rep.Candidates[0].Name)
	}
	if rep.Costs["half"]["cpu"] <= 0 {
		t.Errorf("cost table %v: expected half's CPU cost", rep.Costs)
	}
}

// TestSweepOpenCL sweeps the tiny graph with half on the CPU (1 or 2
// replicas) or on the first OpenCL device (G 4 or 16), ramp with 1 or 2
// replicas: 8 candidates. It needs an OpenCL device (PoCL runs on the
// CPU: scripts/install-pocl.sh).
func TestSweepOpenCL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the OpenCL device")
	}
	var id string
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "opencl" && len(r.Devices) > 0 {
			id = r.Devices[0].ID
			break
		}
	}
	if id == "" {
		t.Skip("no OpenCL device here (install PoCL with scripts/install-pocl.sh to run this test)")
	}
	rep := sweepTiny(t, graph.ImplOpenCL, []string{id}, 8)
	if rep.Costs["half"]["gpu"] <= 0 || rep.Costs["half"]["cpu"] <= 0 {
		t.Errorf("cost table %v: expected half's CPU and device costs", rep.Costs)
	}
	if !strings.Contains(rep.Candidates[1].Mapping, "half="+id+"/G") {
		t.Errorf("candidate %s (%s): expected half on %s", rep.Candidates[1].Name, rep.Candidates[1].Mapping, id)
	}
	checkReplay(t, rep)
}

// checkReplay saves the sweep and replays it on the same model: every
// candidate's prediction from its saved profile must equal the sweep's.
func checkReplay(t *testing.T, rep *Report) {
	t.Helper()
	dir := t.TempDir()
	if err := Save(dir, rep); err != nil {
		t.Fatal(err)
	}
	m, err := machine.Load("testdata/machine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg := Config{G: []int{4, 16}, WorkItems: 16, Evaluations: 60, SearchIterations: 64}
	if err := Replay(context.Background(), dir, m, cfg, &out); err != nil {
		t.Fatal(err)
	}
	for _, c := range append(rep.Candidates, rep.Picked) {
		row := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(c.Name) + `\s+(\d+)\s+(\d+)\s+(\d+)\s`).FindStringSubmatch(out.String())
		if row == nil {
			t.Errorf("replay: no row for %s in\n%s", c.Name, out.String())
			continue
		}
		if got, _ := strconv.ParseFloat(row[3], 64); math.Abs(got-c.Predicted) > 1+1e-6*c.Predicted {
			t.Errorf("replay of %s on the same model: predicted %s it/s, expected the sweep's %.0f", c.Name, row[3], c.Predicted)
		}
	}
	if !strings.Contains(out.String(), "sluice map's pick on this model") {
		t.Errorf("replay: expected the pick, found\n%s", out.String())
	}
}

// TestSpaceAndRunnable checks the enumeration and the translation of a
// mapping onto the model's processors into a runnable one (sluice map's,
// mapping.ForRuntime).
func TestSpaceAndRunnable(t *testing.T) {
	g, err := load("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := newSpace(g, graph.ImplOpenCL, []string{"opencl:0:0"}, []int{1, 2}, []int{4, 16}, 16, &graph.Mapping{Actors: map[string]*graph.Placement{}})
	if err != nil {
		t.Fatal(err)
	}
	if sp.size() != 2*3*1*2 {
		t.Errorf("space of %g points: expected 12 (ramp 2 × half 3 × sink 1 × G 2)", sp.size())
	}
	if n := len(sp.candidates(40, 1, nil)); n != 8 {
		t.Errorf("%d distinct candidates: expected 8 (G matters only with half on the device)", n)
	}
	if n := len(sp.candidates(5, 1, nil)); n != 5 {
		t.Errorf("%d sampled candidates: expected 5", n)
	}
	m, err := machine.Load("testdata/machine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := mapping.ForRuntime(g, m, &graph.Mapping{Actors: map[string]*graph.Placement{"half": {Device: "opencl00"}, "ramp": {Device: "cpu", Replicas: 2}}},
		mapping.RunnableOptions{WorkGroups: 4, WorkItems: 16})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(r), "half=opencl:0:0/G4 ramp=cpu×2"; got != want {
		t.Errorf("runnable: %s, expected %s", got, want)
	}
	if r.Actors["half"].Impl != graph.ImplOpenCL || r.Actors["half"].WorkItems != 16 {
		t.Errorf("half: %+v: expected impl opencl and 16 work-items", r.Actors["half"])
	}
}

// TestFinalists checks who is measured again: the pick, the pick with the
// search's capacities when it raised any, then the fastest candidates
// other than the pick's twin, as many as Config.Finalists.
func TestFinalists(t *testing.T) {
	m := &graph.Mapping{}
	cand := func(name, mapping string, it float64) Candidate {
		return Candidate{Name: name, Mapping: mapping, Measured: it, m: m}
	}
	rep := &Report{
		Candidates: []Candidate{cand("a", "A", 10), cand("b", "B", 30), cand("twin", "P", 40), cand("c", "C", 20), {Name: "failed", Mapping: "F", Measured: 50, Err: "x"}},
		Picked:     cand("picked", "P", 25),
		Capacity:   map[string]int{"x.o->y.i": 64},
	}
	cfg := Config{Finalists: 2}
	var names []string
	for _, c := range cfg.finalists(rep) {
		names = append(names, c.Name)
		if c.Name == "picked-capacity" && (c.Capacity["x.o->y.i"] != 64 || c.Mapping != "P" || c.Measured != 0) {
			t.Errorf("picked-capacity %+v: expected the pick's mapping with the search's capacities, not yet measured", c)
		}
	}
	if got, want := strings.Join(names, ","), "picked,picked-capacity,b,c"; got != want {
		t.Errorf("finalists %s: expected %s", got, want)
	}
	rep.Capacity = nil
	names = names[:0]
	for _, c := range cfg.finalists(rep) {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "picked,b,c"; got != want {
		t.Errorf("finalists without capacities %s: expected %s", got, want)
	}
	if v := median([]float64{3, 1, 2}); v != 2 {
		t.Errorf("median of 3, 1, 2: %g", v)
	}
	if v := median([]float64{4, 1, 2, 3}); v != 2.5 {
		t.Errorf("median of 4, 1, 2, 3: %g", v)
	}
}
