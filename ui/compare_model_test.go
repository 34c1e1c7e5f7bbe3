package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/driver"
)

// TestCompareUsesCalibratedModel checks that "predicted vs measured" says
// which model it used: the plain CPU machine until this host has a
// calibrated model in the cache, then that model.
func TestCompareUsesCalibratedModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	s := &Server{}
	p := prepared(t, "../examples/cd2dat.yaml", false)
	mach, err := s.predictionMachine(2)
	if err != nil {
		t.Fatal(err)
	}
	out, err := compare(context.Background(), p, mach, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Machine, "run sluice calibrate") {
		t.Fatalf("without a calibrated model: machine %q, want the plain CPU machine", out.Machine)
	}
	path := cacheModel(t)
	if mach, err = s.predictionMachine(2); err != nil {
		t.Fatal(err)
	}
	if out, err = compare(context.Background(), p, mach, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Machine, "calibrated model ("+path) || out.Graph.Predicted <= 0 {
		t.Fatalf("with a calibrated model at %s: machine %q, predicted %v it/s", path, out.Machine, out.Graph.Predicted)
	}
}

// TestCompareChargesBusyLoops: the synthetic actors of the run (cd2dat's,
// each burning its declared cost) are predicted as their busy loops last
// on the calibrated host, not at their declared costs.
func TestCompareChargesBusyLoops(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cacheModel(t)
	mach, err := (&Server{}).predictionMachine(2)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := compare(context.Background(), prepared(t, "../examples/cd2dat.yaml", false), mach, nil)
	if err != nil {
		t.Fatal(err)
	}
	burnt, err := compare(context.Background(), prepared(t, "../examples/cd2dat.yaml", true), mach, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every loop lasts 1.5 times its cost and 500 ns more (50 ns: 575 ns;
	// 3 µs: 5 µs), on 2 cores.
	if r := plain.Graph.Predicted / burnt.Graph.Predicted; r < 1.3 || r > 2.5 {
		t.Fatalf("predicted %.0f it/s at the declared costs and %.0f as the loops last: ratio %.2f, want 1.3 to 2.5 (the loops' stretch and extra)", plain.Graph.Predicted, burnt.Graph.Predicted, r)
	}
	if !strings.Contains(strings.Join(burnt.Notes, "\n"), "synthetic actors A, B, C, D, E, F") {
		t.Fatalf("notes %q: expected one naming the synthetic actors", burnt.Notes)
	}
}

// prepared loads file through the driver; synthetic keeps the actors the
// driver made synthetic (false: predicted at their declared costs).
func prepared(t *testing.T, file string, synthetic bool) *driver.Prepared {
	t.Helper()
	l, err := driver.Load(context.Background(), file, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := driver.Prepare(context.Background(), l, driver.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !synthetic {
		p.Synthetic = nil
	}
	return p
}

// cacheModel writes examples/machines/host2.yaml as this host's calibrated
// model in the cache (XDG_CACHE_HOME), with the busy loops of synthetic
// actors as sluice calibrate measures them (a 4 µs firing lasts 6.5 µs),
// and returns its path.
func cacheModel(t *testing.T) string {
	t.Helper()
	path, err := calibrate.CachePath()
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile("../examples/machines/host2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	model = append(model, "calibration: {burn_extra_ns: \"500\", burn_stretch: \"0.5\"}\n"...)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, model, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
