package scenario_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/internal/cu"
)

// discoverMu serialises device discovery (concurrent discovery can crash
// PoCL).
var discoverMu sync.Mutex

// openCL opens the first OpenCL device (a GPU when there is one) or skips.
func openCL(t testing.TB) (device.Device, device.Queue) {
	t.Helper()
	discoverMu.Lock()
	defer discoverMu.Unlock()
	ctx := context.Background()
	for _, r := range device.Discover(ctx) {
		if r.Backend != "opencl" {
			continue
		}
		if !r.Available() {
			skipOrFail(t, "SLUICE_REQUIRE_OPENCL", "OpenCL unavailable on this machine: %s (scripts/install-pocl.sh installs PoCL)", r.Reason)
		}
		id := r.Devices[0].ID
		for _, d := range r.Devices {
			if d.Kind == device.GPU {
				id = d.ID
				break
			}
		}
		return openID(t, id)
	}
	skipOrFail(t, "SLUICE_REQUIRE_OPENCL", "the opencl backend is not registered")
	return nil, nil
}

// openCUDA opens cuda:0 (or $SLUICE_CUDA_DEVICE) or skips with the reason.
func openCUDA(t testing.TB) (device.Device, device.Queue) {
	t.Helper()
	if err := cuda.Reason(); err != nil {
		if errors.Is(err, cu.ErrLibraryNotFound) {
			skipOrFail(t, "SLUICE_REQUIRE_CUDA", "no CUDA driver (libcuda.so.1 not found): %v", err)
		}
		skipOrFail(t, "SLUICE_REQUIRE_CUDA", "no CUDA device: %v", err)
	}
	id := os.Getenv("SLUICE_CUDA_DEVICE")
	if id == "" {
		id = "cuda:0"
	}
	discoverMu.Lock()
	defer discoverMu.Unlock()
	return openID(t, id)
}

func openID(t testing.TB, id string) (device.Device, device.Queue) {
	d, err := device.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	q, err := d.NewQueue()
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := errors.Join(q.Release(), d.Close()); err != nil {
			t.Error(err)
		}
	})
	return d, q
}

func skipOrFail(t testing.TB, env, format string, args ...any) {
	t.Helper()
	if v := os.Getenv(env); v != "" && v != "0" {
		t.Fatalf(env+" is set but: "+format, args...)
	}
	t.Skipf(format, args...)
}

func f32bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func bytesf32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// wait returns a function that waits for an enqueued command's event.
func wait(t testing.TB) func(device.Event, error) {
	return func(ev device.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		ev.Release()
	}
}
