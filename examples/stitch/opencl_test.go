package stitch_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/opencl" // registers the OpenCL backend
	"github.com/sluicehq/sluice/examples/stitch"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

func hasOpenCL() bool { return device.Available(context.Background(), "opencl") }

func needOpenCL(t *testing.T) {
	if !hasOpenCL() {
		if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
			t.Fatal("SLUICE_REQUIRE_OPENCL=1 but no OpenCL device")
		}
		t.Skip("no OpenCL device (scripts/install-pocl.sh installs PoCL)")
	}
}

// transformGraph is src → fft → check: the check actor compares each
// transform with Transform's within a relative tolerance.
const transformGraph = `
name: fft-check
kind: graph
doc:
  data: &data {grid: "2x3", tile: "%s", jitter: "2"}
actors:
  src:   {kernel: {go: stitch.source}, attrs: *data, out: {tile: {type: u16, rate: %d}, tw: {type: u16, rate: %d}, tn: {type: u16, rate: %d}}}
  fft:   {kernel: {go: stitch.fft, opencl: fft2d.cl}, attrs: *data, in: {tile: {type: u16, rate: %d}}, out: {f: {type: c64, rate: %d}, fw: {type: c64, rate: %d}, fn: {type: c64, rate: %d}}}
  check: {kernel: {go: stitch-test.check}, in: {tile: {type: u16, rate: %d}, f: {type: c64, rate: %d}, fw: {type: c64, rate: %d}}}
  drop:  {kernel: {go: stitch-test.drop}, in: {tw: {type: u16, rate: %d}, tn: {type: u16, rate: %d}, fn: {type: c64, rate: %d}}}
channels:
  - {from: src.tile, to: fft.tile}
  - {from: src.tile, to: check.tile}
  - {from: fft.f, to: check.f}
  - {from: fft.fw, to: check.fw}
  - {from: src.tw, to: drop.tw}
  - {from: src.tn, to: drop.tn}
  - {from: fft.fn, to: drop.fn}
`

// TestOpenCLTransformMatchesGo runs fft2d.cl on 6 tiles of 64×64 and
// 256×256 and compares every value with Transform's: |Δ| ≤ 1e-5 of the
// transform's largest magnitude.
func TestOpenCLTransformMatchesGo(t *testing.T) {
	needOpenCL(t)
	for _, n := range []int{64, 256} {
		var mu sync.Mutex
		var worst float64
		checked := 0
		check := runtime.FireFunc(func(f *runtime.Firing) error {
			tile := runtime.Input[uint16](f, 0)
			got, got2 := runtime.Input[complex64](f, 1), runtime.Input[complex64](f, 2)
			want := make([]complex64, n*n)
			stitch.Transform(tile, want, n, n)
			var peak, diff float64
			for i := range want {
				peak = max(peak, math.Hypot(float64(real(want[i])), float64(imag(want[i]))))
				d := want[i] - got[i]
				diff = max(diff, math.Hypot(float64(real(d)), float64(imag(d))))
				if got2[i] != got[i] {
					diff = math.Inf(1)
				}
			}
			mu.Lock()
			worst = max(worst, diff/peak)
			checked++
			mu.Unlock()
			return nil
		})
		drop := runtime.FireFunc(func(*runtime.Firing) error { return nil })
		r := n * n
		src := sprintf(transformGraph, sprintf("%dx%d", n, n), r, r, r, r, r, r, r, r, r, r, r, r, r)
		g, err := spec.ParseGraph("fft-check.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		// The Go actors are attached in code (each n has its own check),
		// not registered: a name is registered once per program.
		attachGo(t, g, "check", check)
		attachGo(t, g, "drop", drop)
		m, err := spec.ParseMapping("map.yaml", []byte("name: m\nkind: mapping\nmapping:\n  fft: {device: opencl, impl: opencl, work-groups: 2, work-items: 64}\n"))
		if err != nil {
			t.Fatal(err)
		}
		st, err := runtime.Run(context.Background(), g, runtime.Options{Mapping: m, Watchdog: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if a := st.Actor("fft"); a.Kind != "kernel" {
			t.Fatalf("fft ran as %q: want a kernel actor", a.Kind)
		}
		if checked != 6 || worst > 1e-5 {
			t.Errorf("%d×%d: %d tiles checked (want 6), largest difference %.3g of the peak magnitude (want ≤ 1e-5)", n, n, checked, worst)
		}
		t.Logf("%d×%d: largest difference %.3g of the peak magnitude", n, n, worst)
	}
}

// attachGo gives actor name of g its Go implementation f in code.
func attachGo(t *testing.T, g *graph.Graph, name string, f runtime.FireFunc) {
	t.Helper()
	a := g.Actor(name)
	if a == nil {
		t.Fatalf("no actor %s", name)
	}
	for i := range a.Impls {
		if a.Impls[i].Kind == graph.ImplGo {
			a.Impls[i].Func = f
			return
		}
	}
	t.Fatalf("actor %s has no Go implementation to attach", name)
}

// TestOpenCLGraph runs stitch.yaml with opencl.yaml and checks the
// positions.
func TestOpenCLGraph(t *testing.T) {
	needOpenCL(t)
	g, err := spec.Load("stitch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := spec.LoadMapping("opencl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.Actors {
		a.Attrs["mosaic"] = ""
	}
	stitch.Last()
	st, err := runtime.Run(context.Background(), g, runtime.Options{Mapping: m, Watchdog: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Actor("fft"); a.Kind != "kernel" || a.Firings != 64 {
		t.Errorf("fft ran as %q with %d firings: want a kernel actor with 64", a.Kind, a.Firings)
	}
	res := stitch.Last()
	if res == nil || res.Mismatches != 0 {
		t.Fatalf("result %+v: want every position equal to the known one", res)
	}
}

var sprintf = fmt.Sprintf
