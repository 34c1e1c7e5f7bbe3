package main

import (
	"testing"

	"github.com/sluicehq/sluice/examples/vca"
)

// TestMeasure times the small graph and the sequential version for a few
// cubes and checks the report.
func TestMeasure(t *testing.T) {
	vca.DefaultSink.SetOutput(nil)
	for _, seq := range []bool{true, false} {
		r, err := measure("../vca.yaml", "", seq, 2, 2, 4, 2, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cubes != 4 || len(r.Seconds) != 2 || r.Mean <= 0 || r.CubesPerS <= 0 || r.Bands != 64 || r.Pixels != 1024 {
			t.Errorf("seq %v: report %+v", seq, r)
		}
		if r.MaxAngle <= 0 || r.MaxAngle > 8 {
			t.Errorf("seq %v: worst angle %g°, want in (0, 8]", seq, r.MaxAngle)
		}
		if !seq && (r.J != 2 || r.Replicas != 2) {
			t.Errorf("graph: J %d replicas %d, want 2 and 2", r.J, r.Replicas)
		}
	}
	if _, err := measure("../vca.yaml", "", false, 0, 0, 0, 1, 0, 0); err == nil {
		t.Error("J 0 accepted")
	}
}
