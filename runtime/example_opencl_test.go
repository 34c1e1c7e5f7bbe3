package runtime_test

import (
	"context"
	"os"
	"sync"
	"testing"

	_ "github.com/sluicehq/sluice/actors" // built-in actors
	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// The examples/opencl graph gives the same tokens with its Go built-ins
// and with its OpenCL kernels, and the kernels' channel copies nothing.
func TestExampleOpenCLSaxpy(t *testing.T) {
	avail := false
	for _, r := range device.Discover(context.Background()) {
		avail = avail || (r.Backend == "opencl" && r.Available())
	}
	if !avail {
		if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
			t.Fatal("SLUICE_REQUIRE_OPENCL=1 but no OpenCL device")
		}
		t.Skip("no OpenCL device")
	}
	if _, err := os.Stat("../examples/opencl/saxpy.yaml"); err != nil {
		t.Skip("examples/opencl not found (test binary run outside the repository)")
	}
	run := func(withMapping bool) ([]float32, *runtime.Stats) {
		g, err := spec.Load("../examples/opencl/saxpy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var got []float32
		g.Actor("print").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(func(f *runtime.Firing) error {
			mu.Lock()
			got = append(got, runtime.Input[float32](f, 0)...)
			mu.Unlock()
			return nil
		})}}
		var opts runtime.Options
		if withMapping {
			if opts.Mapping, err = spec.LoadMapping("../examples/opencl/saxpy-map.yaml"); err != nil {
				t.Fatal(err)
			}
		}
		st, err := runtime.Run(context.Background(), g, opts)
		if err != nil {
			t.Fatal(err)
		}
		return got, st
	}
	goGot, _ := run(false)
	clGot, st := run(true)
	if len(goGot) != 128 || len(clGot) != 128 {
		t.Fatalf("got %d and %d tokens, want 128", len(goGot), len(clGot))
	}
	for i := range goGot {
		if goGot[i] != float32(i)+0.5 || clGot[i] != goGot[i] {
			t.Fatalf("token %d: Go %v, OpenCL %v, want %v", i, goGot[i], clGot[i], float32(i)+0.5)
		}
	}
	for _, c := range st.Channels {
		if c.Name == "axpy.z->half.z" && (c.Device == "" || c.CopiedBytes != 0) {
			t.Fatalf("channel %s: device %q, %d bytes copied: want a device ring, no copies", c.Name, c.Device, c.CopiedBytes)
		}
	}
	if a := st.Actor("axpy"); a == nil || a.Kind != "kernel" || a.Firings != 8 {
		t.Fatalf("axpy stats %+v", a)
	}
}
