package vca_test

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"   // registers the CUDA backend
	_ "github.com/sluicehq/sluice/device/opencl" // registers the OpenCL backend
	"github.com/sluicehq/sluice/examples/vca"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// Accuracy bounds: the largest spectral angle between a recovered
// endmember and the true one, and the abundances' RMSE, for the noisy
// (15 dB, projective branch) and the clean (40 dB, subspace branch) cubes.
const (
	maxAngleLow, maxRMSELow   = 8.0, 0.15
	maxAngleHigh, maxRMSEHigh = 1.0, 0.01
)

// checkAccuracy checks the results of cubes 0 … n−1 of p against the
// bounds and the branch each cube's SNR selects.
func checkAccuracy(t *testing.T, p vca.Params, res []vca.Result, n int) {
	t.Helper()
	if len(res) != n {
		t.Fatalf("%d results, want %d", len(res), n)
	}
	for i, r := range res {
		if r.Cube != int64(i) {
			t.Errorf("result %d is cube %d: out of order", i, r.Cube)
		}
		wantMode, maxA, maxR := vca.Projective, maxAngleLow, maxRMSELow
		if i%2 == 1 {
			wantMode, maxA, maxR = vca.Subspace, maxAngleHigh, maxRMSEHigh
		}
		if r.Mode != wantMode {
			t.Errorf("%v: want the other branch (threshold %.1f dB)", r, vca.SNRThreshold(p.Endmembers))
		}
		if r.MaxAngle > maxA || r.RMSE > maxR || math.IsNaN(r.MaxAngle) || math.IsNaN(r.RMSE) {
			t.Errorf("%v: want angles ≤ %g° and RMSE ≤ %g", r, maxA, maxR)
		}
	}
}

func TestSequential(t *testing.T) {
	res, err := vca.Sequential(vca.Small, 8)
	if err != nil {
		t.Fatal(err)
	}
	checkAccuracy(t, vca.Small, res, 8)
	for _, r := range res {
		t.Log(r)
	}
}

// TestSeedSize unmixes two cubes of the seed's size (224 bands, 128×128).
func TestSeedSize(t *testing.T) {
	if testing.Short() {
		t.Skip("seed-size cubes take a few seconds")
	}
	p := vca.Seed
	p.Distinct = 2
	res, err := vca.Sequential(p, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkAccuracy(t, p, res, 2)
}

func TestGenerateReproducible(t *testing.T) {
	a, b := vca.Small.Generate(3), vca.Small.Generate(3)
	for i := range a.Y {
		if a.Y[i] != b.Y[i] {
			t.Fatalf("sample %d: %g then %g", i, a.Y[i], b.Y[i])
		}
	}
	c := vca.Small.Generate(2)
	if a.Y[0] == c.Y[0] && a.Y[1] == c.Y[1] {
		t.Errorf("cubes 3 and 2 start alike: %g %g", a.Y[0], a.Y[1])
	}
	p := vca.Small
	for k := range p.Endmembers {
		i := p.PurePixel(k)
		if a.A[i*p.Endmembers+k] != 1 {
			t.Errorf("pixel %d: abundances %v, want pure endmember %d", i, a.A[i*p.Endmembers:(i+1)*p.Endmembers], k)
		}
	}
}

func TestParseParams(t *testing.T) {
	p, err := vca.ParseParams(map[string]string{"bands": "224", "width": "128", "height": "128", "block": "1024", "cubes": "200"})
	if err != nil || p.Bands != 224 || p.Blocks() != 16 || p.Cubes != 200 {
		t.Fatalf("%+v, %v", p, err)
	}
	for attrs, want := range map[string]map[string]string{
		"expected an integer":     {"bands": "many"},
		"does not divide":         {"block": "300"},
		"expected 2 ≤ endmembers": {"endmembers": "1"},
		"expected a number of dB": {"snr-low": "loud"},
		"expected an unsigned":    {"seed": "-1"},
	} {
		if _, err := vca.ParseParams(want); err == nil || !strings.Contains(err.Error(), attrs) {
			t.Errorf("%v: error %v, want one containing %q", want, err, attrs)
		}
	}
}

// TestGraphCheck proves vca.yaml consistent and deadlock-free, as
// `sluice check` does.
func TestGraphCheck(t *testing.T) {
	for _, file := range []string{"vca.yaml", "vca-seed.yaml"} {
		g, err := spec.LoadGraph(file)
		if err != nil {
			t.Fatal(err)
		}
		r := analysis.Check(g, analysis.CheckOptions{})
		if len(r.Errors) > 0 || r.Deadlock {
			t.Fatalf("%s: errors %v, deadlock %v", file, r.Errors, r.Deadlock)
		}
		B := vca.Small.Blocks()
		if file == "vca-seed.yaml" {
			B = vca.Seed.Blocks()
		}
		for a, want := range map[string]int64{"src": int64(B), "stats": int64(B), "svd": 1, "project": int64(B), "extract": 1, "unmix": int64(B), "sink": 1} {
			if r.Repetitions[a] != want {
				t.Errorf("%s: %s fires %d times per iteration, want %d", file, a, r.Repetitions[a], want)
			}
		}
	}
}

// run runs vca.yaml with the mapping file (none: all Go) and returns the
// sink's results; kernel says that the mapping makes stats, project and
// unmix kernel actors.
func run(t *testing.T, mapping string, kernel bool) []vca.Result {
	t.Helper()
	g, err := spec.LoadGraph("vca.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The first OpenCL run compiles the kernels (PoCL: can exceed the
	// default watchdog while no token moves).
	opts := runtime.Options{CheckEmpty: true, Watchdog: 60 * time.Second}
	if mapping != "" {
		if opts.Mapping, err = spec.LoadMapping(mapping); err != nil {
			t.Fatal(err)
		}
	}
	vca.DefaultSink.SetOutput(nil)
	defer vca.DefaultSink.SetOutput(os.Stdout)
	vca.DefaultSink.Take()
	st, err := runtime.Run(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"stats", "project", "unmix"} {
		s := st.Actor(a)
		if want := int64(vca.Small.Cubes * vca.Small.Blocks()); s.Firings != want {
			t.Errorf("%s: %d firings, want %d", a, s.Firings, want)
		}
		if kernel && s.Kind != "kernel" {
			t.Errorf("%s ran as %s: want a kernel actor", a, s.Kind)
		}
	}
	return vca.DefaultSink.Take()
}

// TestGraph runs vca.yaml in Go, without and with the CPU mapping's teams,
// and compares every cube with the sequential version.
func TestGraph(t *testing.T) {
	seq, err := vca.Sequential(vca.Small, vca.Small.Cubes)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"", "cpu.yaml"} {
		t.Run("mapping="+m, func(t *testing.T) {
			res := run(t, m, false)
			checkAccuracy(t, vca.Small, res, vca.Small.Cubes)
			compare(t, res, seq, 1e-3, 1e-4)
		})
	}
}

// compare checks that two runs found the same branches and endmembers
// (angles within angTol degrees) and abundances (RMSE within rmseTol).
func compare(t *testing.T, got, want []vca.Result, angTol, rmseTol float64) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.Mode != w.Mode || math.Abs(g.MaxAngle-w.MaxAngle) > angTol || math.Abs(g.MeanAngle-w.MeanAngle) > angTol ||
			math.Abs(g.RMSE-w.RMSE) > rmseTol || math.Abs(g.SNR-w.SNR) > 0.05 {
			t.Errorf("got  %v\nwant %v", g, w)
		}
	}
}

// TestKernels runs the data-parallel steps as OpenCL and CUDA kernel actors
// where a device exists and compares every cube with the Go run: the same
// branch, the same endmembers and abundances within 0.05° and 0.005.
func TestKernels(t *testing.T) {
	goRes := run(t, "", false)
	for _, c := range []struct{ name, mapping, backend, require string }{
		{"opencl", "opencl.yaml", "opencl", "SLUICE_REQUIRE_OPENCL"},
		{"cuda", "cuda.yaml", "cuda", "SLUICE_REQUIRE_CUDA"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !device.Available(context.Background(), c.backend) {
				if os.Getenv(c.require) == "1" {
					t.Fatalf("%s=1 but no %s device", c.require, c.backend)
				}
				t.Skipf("no %s device", c.backend)
			}
			res := run(t, c.mapping, true)
			checkAccuracy(t, vca.Small, res, vca.Small.Cubes)
			compare(t, res, goRes, 0.05, 0.005)
		})
	}
}

// TestMappings loads every mapping of the directory and checks it against
// both graphs (actors, ports, teams).
func TestMappings(t *testing.T) {
	for _, gf := range []string{"vca.yaml", "vca-seed.yaml"} {
		g, err := spec.LoadGraph(gf)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range []string{"cpu.yaml", "opencl.yaml", "cuda.yaml", "workers.yaml"} {
			m, err := spec.LoadMapping(mf)
			if err != nil {
				t.Fatalf("%s: %v", mf, err)
			}
			if err := m.Check(g); err != nil {
				t.Errorf("%s on %s: %v", mf, gf, err)
			}
			if len(m.Actors) == 0 {
				t.Errorf("%s: no placements", mf)
			}
		}
	}
}

// TestRateMismatch changes stats' output rate without its attrs: the run
// fails at stats' first firing, naming the actor, the port, and the
// window found and expected.
func TestRateMismatch(t *testing.T) {
	g, err := spec.LoadGraph("vca.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g.Actor("stats").Attrs = map[string]string{"bands": "32", "block": "512"}
	vca.DefaultSink.SetOutput(nil)
	defer vca.DefaultSink.SetOutput(os.Stdout)
	_, err = runtime.Run(context.Background(), g, runtime.Options{})
	vca.DefaultSink.Take()
	if err == nil || !strings.Contains(err.Error(), "actor stats output 0: window of 4160 f32 tokens, expected 1056") {
		t.Fatalf("run: %v, want stats' window error", err)
	}
}
