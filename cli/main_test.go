package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sluice runs the CLI in-process from the repository root and returns its
// standard output, standard error and exit status.
func sluice(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return sluiceCtx(t, context.Background(), stdin, args...)
}

// sluiceCtx is sluice with a context: the command is cancelled when ctx
// ends, and sluiceCtx returns only when it has (the working directory is
// the repository root until then).
func sluiceCtx(t *testing.T, ctx context.Context, stdin string, args ...string) (string, string, int) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(".."); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(stdin))
	err := root.ExecuteContext(ctx)
	code := 0
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else {
			errb.WriteString(err.Error())
			code = 2
		}
	}
	return out.String(), errb.String(), code
}

func TestCheckJSONRepetitionVector(t *testing.T) {
	out, errs, code := sluice(t, "", "check", "--json", "examples/cd2dat.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	var rep struct {
		Valid       bool             `json:"valid"`
		Errors      []string         `json:"errors"`
		Consistent  bool             `json:"consistent"`
		Repetitions map[string]int64 `json:"repetitions"`
		Deadlock    bool             `json:"deadlock"`
		Initialize  map[string]int   `json:"initialize"`
		Buffers     map[string]int   `json:"buffers"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	want := map[string]int64{"A": 147, "B": 147, "C": 98, "D": 28, "E": 32, "F": 160}
	for k, v := range want {
		if rep.Repetitions[k] != v {
			t.Errorf("repetitions[%s] = %d, want %d", k, rep.Repetitions[k], v)
		}
	}
	if !rep.Valid || !rep.Consistent || rep.Deadlock || len(rep.Buffers) != 5 || rep.Errors == nil {
		t.Errorf("report = %+v", rep)
	}
}

func TestCheckDeadlockNamesChannels(t *testing.T) {
	out, _, code := sluice(t, "", "check", "--json", "examples/feedback-deadlock.yaml")
	if code != 1 {
		t.Fatalf("check on a deadlocking graph exited %d, want 1:\n%s", code, out)
	}
	var rep struct {
		Deadlock   bool           `json:"deadlock"`
		Initialize map[string]int `json:"initialize"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Deadlock || len(rep.Initialize) == 0 {
		t.Fatalf("deadlock report = %+v", rep)
	}
	text, _, _ := sluice(t, "", "check", "examples/feedback-deadlock.yaml")
	for ch, n := range rep.Initialize {
		if !strings.Contains(text, ch) || n <= 0 {
			t.Errorf("readable report does not name channel %s (+%d):\n%s", ch, n, text)
		}
	}
	if out, _, code := sluice(t, "", "check", "examples/feedback.yaml"); code != 0 {
		t.Errorf("check on feedback.yaml exited %d:\n%s", code, out)
	}
}

func TestCheckInvalidFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nactors:\n  a: {out: {y: {type: f33, rate: 1}}}\n"), 0o644)
	out, _, code := sluice(t, "", "check", "--json", bad)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(out, `"valid": false`) || !strings.Contains(out, "bad.yaml:3:") {
		t.Errorf("invalid report lacks valid=false or file:line:\n%s", out)
	}
}

func TestDot(t *testing.T) {
	out, errs, code := sluice(t, "", "dot", "examples/feedback-deadlock.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(out, "digraph") || !strings.Contains(out, "initial") || !strings.Contains(out, "color=red") {
		t.Errorf("DOT lacks the highlighted channel to initialise:\n%s", out)
	}
}

func TestRunStdinSaxpy(t *testing.T) {
	// stdin sinks and sources use the process's standard streams; run a
	// graph that writes a file instead.
	dir := t.TempDir()
	g := filepath.Join(dir, "g.yaml")
	out := filepath.Join(dir, "out.f32")
	os.WriteFile(g, []byte(`name: ramp-scale
actors:
  src:  {use: gen.ramp, with: {start: 0, step: 1, count: 4}, out: {y: {type: f32, rate: 256}}, stateful: true}
  gain: {use: scale, with: {gain: 2}, in: {x: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 256}}}
  sink: {use: file.write, with: {path: `+out+`}, in: {x: {type: f32, rate: 256}}, stateful: true}
channels:
  - {from: src.y, to: gain.x}
  - {from: gain.y, to: sink.x}
`), 0o644)
	prof := filepath.Join(dir, "p.yaml")
	_, errs, code := sluice(t, "", "run", g, "--stats", "--progress", "off", "--profile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil || len(b) != 4*256*4 {
		t.Fatalf("output file: %d bytes, %v; want %d", len(b), err, 4*256*4)
	}
	if !strings.Contains(errs, "gain") || !strings.Contains(errs, "firings") {
		t.Errorf("stats table missing:\n%s", errs)
	}
	if p, _ := os.ReadFile(prof); !strings.Contains(string(p), "mean_ns") {
		t.Errorf("profile lacks mean_ns:\n%s", p)
	}
	// Several profiles are for several G of kernel actors: this one has none.
	_, errs, code = sluice(t, "", "simulate", g, "--machine", "examples/machines/two-cpus.yaml", "--profile", prof, "--profile", prof)
	if code == 0 || !strings.Contains(errs, "expected kernel actors with their work_groups") {
		t.Errorf("simulate with two profiles without kernel actors: exit %d, stderr:\n%s", code, errs)
	}
}

func TestRunRefusesDeadlock(t *testing.T) {
	_, errs, code := sluice(t, "", "run", "examples/feedback-deadlock.yaml", "--progress", "off")
	if code == 0 || !strings.Contains(errs, "refusing to run") {
		t.Fatalf("run of a deadlocking graph: exit %d, stderr:\n%s", code, errs)
	}
}

func TestCheckStructure(t *testing.T) {
	out, errs, code := sluice(t, "", "check", "--unfold", "1", "--peast", "A", "examples/cd2dat.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"single-rate expansion (J=1): 612 firings", "critical path", "6 stages", "PEA-ST from root A", "repeat:"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	js, _, code := sluice(t, "", "check", "--json", "--unfold", "2", "examples/feedback.yaml")
	var rep struct {
		Repetitions map[string]int64 `json:"repetitions"`
		Structure   struct {
			Vertices int        `json:"hsdf_vertices"`
			Stages   [][]string `json:"stages"`
		} `json:"structure"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, js)
	}
	var firings int64
	for _, q := range rep.Repetitions {
		firings += 2 * q
	}
	if int64(rep.Structure.Vertices) != firings || len(rep.Structure.Stages) == 0 {
		t.Errorf("J=2 expansion has %d vertices, want %d (2 × Σ repetitions)", rep.Structure.Vertices, firings)
	}
	if _, _, code := sluice(t, "", "check", "--unfold", "1", "--limit", "10", "examples/cd2dat.yaml"); code != 2 {
		t.Errorf("an expansion over --limit exited %d, want 2 (a clear error)", code)
	}
}

func TestRunProgressBarsEnd(t *testing.T) {
	// The bars must complete and the command return, whether the run hits
	// its iteration target or ends its streams first. 3 000 iterations
	// last about a second under the race detector: the display redraws
	// several times before the run's last updates, which it once missed.
	for _, args := range [][]string{
		{"run", "examples/predict/pipeline.yaml", "-n", "3000", "--progress", "bars"},
		{"run", "examples/predict/pipeline.yaml", "--progress", "bars", "-n", "1"},
	} {
		// A stuck display is cancelled after two minutes (a few seconds'
		// work on a quiet machine), and the command is waited for: it
		// runs in the repository root, which later tests must not inherit.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_, errs, code := sluiceCtx(t, ctx, "", args...)
		stuck := ctx.Err() != nil
		cancel()
		if stuck {
			t.Fatalf("%v: still running after 2 minutes (progress display stuck?): %s", args, errs)
		}
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
}

// TestCheckEveryExampleQuickly: check must answer within seconds on every
// example graph (a throughput-buffer search once ran for 45 s on
// fft-filter.yaml).
func TestCheckEveryExampleQuickly(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("../examples/*/*.yaml")
	for _, f := range append(files, more...) {
		rel := strings.TrimPrefix(f, "../")
		if strings.Contains(rel, "map") || strings.Contains(rel, "machines/") || strings.HasSuffix(rel, "opencl.yaml") || strings.HasSuffix(rel, "cuda.yaml") {
			continue // mappings and machine models, not graphs
		}
		if strings.HasPrefix(rel, "examples/mpi/") || strings.HasPrefix(rel, "examples/carsh/") || rel == "examples/flowmodel/saxpy.yaml" {
			continue // flow-models, shell executables and batches, not graphs
		}
		start := time.Now()
		_, errs, code := sluice(t, "", "check", rel)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("check %s took %s", rel, d)
		}
		want := 0
		if strings.Contains(rel, "deadlock") {
			want = 1
		}
		if code != want {
			t.Errorf("check %s: exit %d, want %d: %s", rel, code, want, errs)
		}
	}
}

// TestSimulateUntilSteady: a fast source whose channel holds 1 000
// tokens ends, in a run of 100 iterations, before any completes; without
// -n, simulate runs 4 times as many iterations until a steady state
// shows, and with -n it says to simulate more.
func TestSimulateUntilSteady(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "g.yaml")
	m := filepath.Join(dir, "m.yaml")
	os.WriteFile(g, []byte(`name: fast-slow
actors:
  s: {out: {o: {type: f32, rate: 1}}, cost: 1ns}
  t: {in: {i: {type: f32, rate: 1}}, cost: 1ms}
channels:
  - {from: s.o, to: t.i, capacity: 1000}
`), 0o644)
	os.WriteFile(m, []byte("mapping:\n  s: {device: cpu0}\n  t: {device: cpu1}\n"), 0o644)
	out, errs, code := sluice(t, "", "simulate", g, "--machine", "examples/machines/two-cpus.yaml", "--mapping", m)
	if code != 0 || !strings.Contains(out, "6400 iterations simulated") || strings.Contains(out+errs, "simulate more") {
		t.Errorf("simulate without -n: exit %d, expected 6 400 iterations (100 × 4³: the first run whose source ends after a steady stretch) and no note:\n%s%s", code, out, errs)
	}
	out, errs, code = sluice(t, "", "simulate", g, "--machine", "examples/machines/two-cpus.yaml", "--mapping", m, "-n", "100")
	if code != 0 || !strings.Contains(out+errs, "simulate more iterations") {
		t.Errorf("simulate -n 100: exit %d, expected a note to simulate more:\n%s%s", code, out, errs)
	}
}
