package main

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/examples/motion"
)

// A short CPU run loops the clip, delivers every frame and measures a rate
// and each actor's load.
func TestRunCPU(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	r, err := run(context.Background(), "../../examples/motion", "cpu", "", motion.DecoderAuto, 120, 20, 1, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.FPS <= 0 || r.Frames != 120 || len(r.Actors) != 7 || r.Bottle == "" {
		t.Fatalf("result %+v: expected a rate, 120 frames, 7 actors and a bottleneck", r)
	}
	t.Logf("%.0f frames/s, bottleneck %s", r.FPS, r.Bottle)
}

// A backend without a device is an error that says so.
func TestRunNoDevice(t *testing.T) {
	if ok, _ := available("cuda"); ok {
		t.Skip("this machine has a CUDA device")
	}
	if _, err := run(context.Background(), "../../examples/motion", "cuda", "", motion.DecoderAuto, 10, 1, 0, 0, 0, 0); err == nil {
		t.Fatal("cuda without a device: expected an error")
	} else {
		t.Log(err)
	}
}
