package runtime_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	_ "github.com/sluicehq/sluice/actors" // built-in actors
	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// The examples/opencl graph gives the same tokens with its Go built-ins
// and with its OpenCL kernels, and the kernels' channel copies nothing.
func TestExampleOpenCLSaxpy(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	exampleSaxpy(t, "opencl", "../examples/opencl/saxpy.yaml", "../examples/opencl/saxpy-map.yaml")
}

// The examples/cuda graph (Go, OpenCL and CUDA versions of each kernel)
// gives the same tokens with Go, with its CUDA kernels (its mapping) and
// with its OpenCL kernels (the examples/opencl mapping).
func TestExampleCUDASaxpy(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	exampleSaxpy(t, "cuda", "../examples/cuda/saxpy.yaml", "../examples/cuda/saxpy-map.yaml")
	if avail("opencl") {
		t.Run("opencl-mapping", func(t *testing.T) {
			exampleSaxpy(t, "opencl", "../examples/cuda/saxpy.yaml", "../examples/opencl/saxpy-map.yaml")
		})
	}
}

// With two CUDA devices, the examples/cuda graph mapped across them gives
// the same tokens, and the channel between the GPUs is a peer ring on the
// second one (every token copied once, device to device).
func TestExampleCUDASaxpyTwoGPUs(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	n := 0
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "cuda" {
			n = len(r.Devices)
		}
	}
	if n < 2 {
		t.Skipf("%d CUDA device(s): the two-GPU mapping needs two", n)
	}
	exampleSaxpy(t, "cuda", "../examples/cuda/saxpy.yaml", "../examples/cuda/saxpy-two-gpus-map.yaml")
}

func avail(backend string) bool {
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend && r.Available() {
			return true
		}
	}
	return false
}

func exampleSaxpy(t *testing.T, backend, spec_, mapping string) {
	if !avail(backend) {
		env := "SLUICE_REQUIRE_" + strings.ToUpper(backend)
		if os.Getenv(env) == "1" {
			t.Fatalf("%s=1 but no %s device", env, backend)
		}
		t.Skipf("no %s device", backend)
	}
	if _, err := os.Stat(spec_); err != nil {
		t.Skipf("%s not found (test binary run outside the repository)", spec_)
	}
	run := func(withMapping bool) ([]float32, *runtime.Stats) {
		g, err := spec.Load(spec_)
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
			if opts.Mapping, err = spec.LoadMapping(mapping); err != nil {
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
	kGot, st := run(true)
	if len(goGot) != 128 || len(kGot) != 128 {
		t.Fatalf("got %d and %d tokens, want 128", len(goGot), len(kGot))
	}
	for i := range goGot {
		if goGot[i] != float32(i)+0.5 || kGot[i] != goGot[i] {
			t.Fatalf("token %d: Go %v, %s %v, want %v", i, goGot[i], backend, kGot[i], float32(i)+0.5)
		}
	}
	twoGPUs := strings.Contains(mapping, "two-gpus")
	for _, c := range st.Channels {
		if c.Name != "axpy.z->half.z" {
			continue
		}
		if twoGPUs {
			if !strings.HasPrefix(c.Peer, "cuda:1") || c.CopiedBytes != 128*4 {
				t.Fatalf("channel %s: peer %q, %d bytes copied: want a peer ring on cuda:1, 512 bytes", c.Name, c.Peer, c.CopiedBytes)
			}
			t.Logf("channel %s: peer ring on %s", c.Name, c.Peer)
		} else if !strings.HasPrefix(c.Device, backend) || c.CopiedBytes != 0 {
			t.Fatalf("channel %s: device %q, %d bytes copied: want a %s device ring, no copies", c.Name, c.Device, c.CopiedBytes, backend)
		}
	}
	if a := st.Actor("axpy"); a == nil || a.Kind != "kernel" || a.Firings != 8 {
		t.Fatalf("axpy stats %+v", a)
	}
}
