package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/spec"
)

// TestCompareUsesCalibratedModel checks that "predicted vs measured" says
// which model it used: the plain CPU machine until this host has a
// calibrated model in the cache, then that model.
func TestCompareUsesCalibratedModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	g, err := spec.Load("../examples/cd2dat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := compare(g, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Machine, "run sluice calibrate") {
		t.Fatalf("without a calibrated model: machine %q, want the plain CPU machine", out.Machine)
	}
	path, err := calibrate.CachePath()
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile("../examples/machines/host2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, model, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err = compare(g, 2, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Machine, "calibrated model ("+path) || out.Graph.Predicted <= 0 {
		t.Fatalf("with a calibrated model at %s: machine %q, predicted %v it/s", path, out.Machine, out.Graph.Predicted)
	}
}
