package main

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/sluicehq/sluice/examples/stitch"
)

// TestPlainProgram stitches the default data set (8×8 tiles of 128×128)
// on the GPU with the plain program; it skips without a CUDA GPU (fails
// with SLUICE_REQUIRE_CUDA=1).
func TestPlainProgram(t *testing.T) {
	if _, err := stitch.GPUFor(128, 128); err != nil {
		if os.Getenv("SLUICE_REQUIRE_CUDA") == "1" || !errors.Is(err, stitch.ErrNoGPU) {
			t.Fatal(err)
		}
		t.Skipf("no CUDA GPU with cuFFT and NVRTC here: %v", err)
	}
	c := stitch.DefaultConfig()
	e, _ := stitch.GPUFor(c.Width, c.Height)
	live := e.Live()
	west, north, err := align(context.Background(), c, e, stitch.SceneFor(c), c.Known(), 4)
	if err != nil {
		t.Fatal(err)
	}
	res, err := stitch.Finish(c, west, north)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mismatches != 0 {
		t.Errorf("%d of %d positions differ from the known ones", res.Mismatches, c.Tiles())
	}
	if l := e.Live(); l != live {
		t.Errorf("%d spectra live after the run, want %d", l, live)
	}
}
