package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/internal/testtmp"
)

// TestMain makes the test binary a cluster worker when the -cluster
// comparison starts it as one (workerEnv set).
func TestMain(m *testing.M) {
	if spec := os.Getenv(workerEnv); spec != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := workerMain(ctx, spec)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testtmp.Main(m)
}

// TestClusterPrediction runs the -cluster comparison end to end on
// loopback (a broker, two worker processes, examples/predict/
// cluster-chain.yaml across them) and fails when the prediction from the
// profile misses the measured throughput by more than 50 %, a tolerance
// for a loaded 2-core machine that runs the client, the broker and both
// workers on the same cores (on this VM the error was within 15 %).
func TestClusterPrediction(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and two worker processes: skipped with -short")
	}
	r, err := CompareCluster(context.Background(), ClusterConfig{
		Graph:      filepath.Join(root, "examples", "predict", "cluster-chain.yaml"),
		Mapping:    filepath.Join(root, "examples", "predict", "cluster-chain.map.yaml"),
		Warmup:     50,
		Iterations: 600, // the workers are this race-instrumented binary: about 140 it/s
		Reps:       1,
		Cluster:    calibrate.ClusterOptions{Hops: 200, Bytes: 16 << 20, Rounds: 1},
		Log:        t.Logf,
		Host:       calibrated(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Links) != 2 || r.Links[0].Worker != "w1" || r.Links[1].Worker != "w2" {
		t.Fatalf("links %+v: expected w1 and w2", r.Links)
	}
	for _, l := range r.Links {
		if !(l.HopNs > 0) || !(l.Bandwidth > 0) || l.Transport != "tcp" {
			t.Errorf("link %+v: expected a positive hop latency and bandwidth over tcp", l)
		}
	}
	if !(r.Declared > 0) {
		t.Errorf("declared prediction %g: expected a positive throughput (the graph declares costs)", r.Declared)
	}
	t.Logf("measured %.0f it/s, predicted %.0f it/s from the profile (%+.1f%%), %.0f it/s from declared costs (%+.1f%%)",
		r.Measured, r.Predicted, r.ErrorPct, r.Declared, r.DeclaredErrorPct)
	if r.ErrorPct > 50 || r.ErrorPct < -50 {
		t.Errorf("predicted %.0f it/s from the profile, measured %.0f it/s: error %+.1f%%, expected within ±50%%", r.Predicted, r.Measured, r.ErrorPct)
	}
}
