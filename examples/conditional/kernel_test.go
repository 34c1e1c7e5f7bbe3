package conditional_test

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"   // registers the CUDA backend
	_ "github.com/sluicehq/sluice/device/opencl" // registers the OpenCL backend
	"github.com/sluicehq/sluice/examples/conditional"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// TestKernelBranch runs kernel.yaml with the darken branch in Go, then as
// an OpenCL and a CUDA kernel actor where a device exists, and checks
// every frame, in order.
func TestKernelBranch(t *testing.T) {
	for _, c := range []struct{ name, mapping, backend, require string }{
		{"go", "", "", ""},
		{"opencl", "kernel-opencl-map.yaml", "opencl", "SLUICE_REQUIRE_OPENCL"},
		{"cuda", "kernel-cuda-map.yaml", "cuda", "SLUICE_REQUIRE_CUDA"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.backend != "" && !device.Available(context.Background(), c.backend) {
				if os.Getenv(c.require) == "1" {
					t.Fatalf("%s=1 but no %s device", c.require, c.backend)
				}
				t.Skipf("no %s device", c.backend)
			}
			g, err := spec.LoadGraph("kernel.yaml")
			if err != nil {
				t.Fatal(err)
			}
			// The first OpenCL run compiles the kernel (PoCL: can exceed the
			// default 500 ms watchdog while no token moves).
			opts := runtime.Options{Watchdog: 30 * time.Second}
			if c.mapping != "" {
				if opts.Mapping, err = spec.LoadMapping(c.mapping); err != nil {
					t.Fatal(err)
				}
			}
			const frames = 200
			g.Actor("src").Impls[0].Func = runtime.FireFunc(func(f *runtime.Firing) error {
				if f.Index() >= frames {
					return runtime.ErrEndOfStream
				}
				return conditional.Source(f)
			})
			conditional.DefaultSink.Take()
			st, err := runtime.Run(context.Background(), g, opts)
			if err != nil {
				t.Fatal(err)
			}
			means := conditional.DefaultSink.Take()
			if len(means) != frames {
				t.Fatalf("%d frames out, want %d", len(means), frames)
			}
			for f := int64(0); f < frames; f++ {
				if want := conditional.Mean(conditional.Want(f)); math.Abs(float64(means[f]-want)) > 1e-6 {
					t.Errorf("frame %d: mean %g, want %g", f, means[f], want)
				}
			}
			if c.backend != "" {
				if a := st.Actor("darken"); a.Kind != "kernel" || a.Firings == 0 {
					t.Errorf("darken ran as %s with %d firings: want a kernel actor", a.Kind, a.Firings)
				}
			}
		})
	}
}
