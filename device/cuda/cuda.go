// Package cuda is the place of sluice's CUDA backend. This build carries
// only its probe: it loads libcuda.so.1 through purego (no cgo) and reports
// whether the driver is present and how many devices it sees, so `sluice
// devices` can say why CUDA is unavailable. The backend proper (contexts,
// streams, NVRTC) registers here, under the same name, in a later version.
package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/sluicehq/sluice/device"
)

// Name is the backend's name.
const Name = "cuda"

// ErrNotImplemented says the driver is there but this build cannot use it.
var ErrNotImplemented = errors.New("CUDA backend not implemented in this build")

func init() { device.Register(probe{}) }

type probe struct{}

func (probe) Name() string { return Name }

var (
	once   sync.Once
	result error
)

// Probe reports why CUDA is unavailable: libcuda.so.1 missing, the driver
// failing to initialise, or (driver present) ErrNotImplemented with the
// device count.
func Probe() error {
	once.Do(func() { result = probeDriver() })
	return result
}

func probeDriver() error {
	h, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("libcuda.so.1 not found (no NVIDIA driver): %w", err)
	}
	cuInit, err1 := purego.Dlsym(h, "cuInit")
	cuCount, err2 := purego.Dlsym(h, "cuDeviceGetCount")
	if err1 != nil || err2 != nil {
		return fmt.Errorf("driver present but libcuda.so.1 lacks cuInit/cuDeviceGetCount: %w", ErrNotImplemented)
	}
	if r, _, _ := purego.SyscallN(cuInit, 0); r != 0 {
		return fmt.Errorf("driver present but cuInit failed with CUresult %d (no usable GPU?); %w", int32(r), ErrNotImplemented)
	}
	var n int32
	if r, _, _ := purego.SyscallN(cuCount, uintptr(unsafe.Pointer(&n))); r != 0 {
		return fmt.Errorf("driver present but cuDeviceGetCount failed with CUresult %d; %w", int32(r), ErrNotImplemented)
	}
	return fmt.Errorf("driver present (%d device(s)), %w", n, ErrNotImplemented)
}

func (probe) Discover(context.Context) ([]device.Info, error) { return nil, Probe() }

func (probe) Open(_ context.Context, id string) (device.Device, error) {
	return nil, fmt.Errorf("open %s: %w", id, Probe())
}
