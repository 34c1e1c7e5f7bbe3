package stitch_test

import (
	"context"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/sluicehq/sluice/examples/stitch"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

func needCUFFT(t *testing.T) {
	v, lib, err := stitch.CUFFTVersion()
	if err != nil {
		if os.Getenv("SLUICE_REQUIRE_CUDA") == "1" || !errors.Is(err, stitch.ErrNoCUFFT) {
			t.Fatal(err)
		}
		t.Skipf("no CUDA GPU with cuFFT here: %v", err)
	}
	t.Logf("cuFFT %d (%s)", v, lib)
}

// TestCUFFTTransformMatchesGo compares cuFFT's transforms of 64×64 and
// 1024×1024 tiles with FFT2's: |Δ| ≤ 1e-5 of the largest magnitude.
func TestCUFFTTransformMatchesGo(t *testing.T) {
	needCUFFT(t)
	for _, n := range []int{64, 1024} {
		c := stitch.DefaultConfig()
		c.Width, c.Height = n, n
		tile := make([]uint16, n*n)
		c.Tile(stitch.SceneFor(c), c.Known(), 0, tile)
		want, got := make([]complex64, n*n), make([]complex64, n*n)
		stitch.Transform(tile, want, n, n)
		c.FFT = "cufft"
		e, err := stitch.EngineFor(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := stitch.TransformWith(e, tile, got, n, n); err != nil {
			t.Fatal(err)
		}
		var peak, diff float64
		for i := range want {
			peak = max(peak, math.Hypot(float64(real(want[i])), float64(imag(want[i]))))
			d := want[i] - got[i]
			diff = max(diff, math.Hypot(float64(real(d)), float64(imag(d))))
		}
		if diff > 1e-5*peak {
			t.Errorf("%d×%d: largest difference %.3g of the peak magnitude, want ≤ 1e-5", n, n, diff/peak)
		}
		t.Logf("%d×%d: largest difference %.3g of the peak magnitude", n, n, diff/peak)
	}
}

// TestCUFFTGraph runs stitch.yaml with every FFT on cuFFT and checks the
// positions.
func TestCUFFTGraph(t *testing.T) {
	needCUFFT(t)
	g, err := spec.Load("stitch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.Actors {
		a.Attrs["mosaic"] = ""
		a.Attrs["fft"] = "cufft"
	}
	stitch.Last()
	if _, err := runtime.Run(context.Background(), g, runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	if res := stitch.Last(); res == nil || res.Mismatches != 0 {
		t.Fatalf("result %+v: want every position equal to the known one", res)
	}
}
