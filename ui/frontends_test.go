package ui

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/doccmd"
	"github.com/sluicehq/sluice/internal/filekind"
)

// exampleGraphs lists every graph file under examples/ (YAML of kind
// graph, and ETH XML graphs).
func exampleGraphs(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".xml":
			if k, _ := driver.Kind(path); k == filekind.Graph {
				out = append(out, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// buildSluice builds the sluice binary for a test (the command line's
// path through the driver): the one the documented-command tests build,
// with -trimpath, so that a fresh clone reuses the packages compiled for
// them instead of compiling every one again.
func buildSluice(t *testing.T) string {
	t.Helper()
	return filepath.Join(doccmd.Sluice(t, ".."), "sluice")
}

// TestPredictionSameInEveryFrontEnd holds the command line and the
// workbench to one prediction: for every graph under examples/ and one
// machine model, sluice simulate --json (the CLI's path) and the
// workbench's comparison and findings (its path) give the same plan and
// the same predicted throughput.
func TestPredictionSameInEveryFrontEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sluice binary")
	}
	bin := buildSluice(t)
	const machineFile = "../examples/machines/two-cpus.yaml"
	mach, err := driver.LoadMachine(machineFile)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Machine: mach}
	compared := 0
	for _, file := range exampleGraphs(t) {
		ctx := context.Background()
		l, err := driver.Load(ctx, file, driver.Options{})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		p, err := driver.Prepare(ctx, l, driver.PrepareOptions{})
		var gate *driver.GateError
		if errors.As(err, &gate) {
			continue // refused alike by both (the gate is the driver's)
		}
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		wb, err := compare(ctx, p, mach, nil)
		if err != nil {
			t.Errorf("%s: workbench: %v", file, err)
			continue
		}
		out, err := exec.Command(bin, "simulate", file, "--machine", machineFile, "--json").Output()
		if err != nil {
			if wb.Placement != nil {
				t.Errorf("%s: the workbench predicts (%v it/s) but sluice simulate fails: %v", file, wb.Graph.Predicted, err)
			}
			continue
		}
		var cli struct {
			Throughput *float64          `json:"throughput"`
			Mapping    map[string]string `json:"mapping"`
		}
		if err := json.Unmarshal(out, &cli); err != nil {
			t.Fatalf("%s: sluice simulate --json: %v\n%s", file, err, out)
		}
		want := math.Inf(1)
		if cli.Throughput != nil {
			want = *cli.Throughput
		}
		got := wb.Graph.Predicted
		if math.IsInf(want, 1) {
			got = math.Inf(1) // the workbench shows 0 with a note: unbounded
		}
		if !sameRate(got, want) {
			t.Errorf("%s: predicted %v it/s in the workbench, %v by sluice simulate", file, got, want)
		}
		for a, proc := range cli.Mapping {
			if wb.Placement[a] != proc {
				t.Errorf("%s: actor %s on %s by sluice simulate, on %q in the workbench", file, a, proc, wb.Placement[a])
			}
		}
		if len(wb.Placement) != len(cli.Mapping) {
			t.Errorf("%s: plans of %d and %d actors", file, len(wb.Placement), len(cli.Mapping))
		}
		// The findings panel's number is the same prediction.
		g, err := driver.Load(ctx, file, driver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep := s.report(g.Graph); rep.IterationsPerSecond != 0 && !sameRate(rep.IterationsPerSecond, want) {
			t.Errorf("%s: findings %v it/s, sluice simulate %v", file, rep.IterationsPerSecond, want)
		}
		compared++
	}
	if compared < 10 {
		t.Fatalf("compared %d example graphs: expected the examples tree", compared)
	}
	t.Logf("%d example graphs predicted alike", compared)
}

// sameRate reports whether two printed predictions are one number (the
// CLI's JSON carries it in full; both come from one simulation).
func sameRate(a, b float64) bool {
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return math.IsInf(a, 1) && math.IsInf(b, 1)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestCheckErrorsSameAsCLI: the workbench's check of a file's text gives
// the lines the command line prints for the file (the driver's), causes
// first.
func TestCheckErrorsSameAsCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"open.yaml": "kind: graph\nname: x\nactors: [\n",
		"typo.yaml": "kind: graph\nname: x\nactors:\n  A: {out: {o: {type: f32, rate: 1}}}\n  B: {in: {i: {type: f32, rate: 1}}}\nchanels:\n  - {from: A.o, to: B.i}\n",
		"bin.yaml":  "kind: graph\nname: \x00\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := driver.Load(context.Background(), path, driver.Options{})
		if err == nil {
			t.Fatalf("%s: loads", name)
		}
		want := graph.ErrorLines(err)
		srv := &Server{File: path, Token: "frontends-test-token"}
		ts := httptest.NewServer(srv.Handler())
		req, _ := http.NewRequest("POST", ts.URL+"/api/check", strings.NewReader(text))
		req.Header.Set("Content-Type", "application/yaml")
		req.Header.Set("Authorization", "Bearer "+srv.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got errorJSON
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ts.Close()
		if strings.Join(got.Errors, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the workbench says\n%s\nthe command line\n%s", name, strings.Join(got.Errors, "\n"), strings.Join(want, "\n"))
		}
	}
}
