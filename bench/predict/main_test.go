package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"
)

// TestCompareSmoke runs the predictor end to end on one small graph and
// checks only that it produces sane figures: CI machines are too noisy to
// hold the prediction to the measurement.
func TestCompareSmoke(t *testing.T) {
	root := filepath.Join("..", "..")
	res, err := Compare(context.Background(), Config{
		Graphs:     []string{filepath.Join(root, "examples", "predict", "pipeline.yaml")},
		Machine:    filepath.Join(root, "examples", "machines", "host2.yaml"),
		Warmup:     20,
		Iterations: 200,
		Reps:       1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	r := res[0]
	for name, v := range map[string]float64{"predicted": r.Predicted, "measured": r.Measured,
		"no wake": r.PredictedNoWake, "firings only": r.PredictedFiringsOnly} {
		if !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("%s throughput %g: expected a positive finite number", name, v)
		}
	}
	if r.Graph != "predict-pipeline" || r.Units < 1 || r.BusyNs <= 0 {
		t.Errorf("result %+v", r)
	}
	t.Logf("predicted %.0f it/s, measured %.0f it/s (%+.1f%%)", r.Predicted, r.Measured, r.ErrorPct)
}

func TestMedian(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median %g", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median %g", m)
	}
}
