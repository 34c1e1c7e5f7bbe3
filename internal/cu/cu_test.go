package cu

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestResultNames(t *testing.T) {
	if got := ErrOutOfMemory.Error(); got != "CUDA_ERROR_OUT_OF_MEMORY (2)" {
		t.Fatalf("got %q", got)
	}
	err := error(&Error{Op: "cuMemAlloc", Result: ErrOutOfMemory, Detail: "1099511627776 bytes"})
	if !errors.Is(err, ErrOutOfMemory) || !IsOutOfMemory(err) || !strings.HasPrefix(err.Error(), "cuMemAlloc (1099511627776 bytes): CUDA_ERROR_OUT_OF_MEMORY (2)") {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(Result(12345).Error(), "12345") {
		t.Fatal(Result(12345).Error())
	}
}

// Without a driver Load says why; with one, the device is described.
func TestLoad(t *testing.T) {
	err := Load()
	if err != nil {
		if !errors.Is(err, ErrLibraryNotFound) && !strings.Contains(err.Error(), "cuInit") {
			t.Fatalf("unexpected reason %v", err)
		}
		if os.Getenv("SLUICE_REQUIRE_CUDA") != "" {
			t.Fatal(err)
		}
		t.Skipf("no CUDA driver (libcuda.so.1 not found): %v", err)
	}
	n, err := DeviceCount()
	if err != nil || n == 0 {
		t.Fatalf("%d devices, %v", n, err)
	}
	d, err := GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	in, err := d.Info()
	if err != nil || in.SMs <= 0 || in.Major <= 0 || in.TotalMem <= 0 {
		t.Fatalf("%+v %v", in, err)
	}
	t.Logf("%+v", in)
	c, err := d.RetainPrimary()
	if err != nil {
		t.Fatal(err)
	}
	defer d.ReleasePrimary()
	p, err := c.MemAlloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MemFree(p); err != nil {
		t.Fatal(err)
	}
	_, err = c.MemAlloc(1 << 50)
	if !IsOutOfMemory(err) {
		t.Fatalf("1 PiB: %v", err)
	}
	t.Log(err)
}

// NVRTC compiles to PTX without a GPU; a syntax error comes with its log.
func TestNVRTC(t *testing.T) {
	if err := LoadNVRTC(); err != nil {
		if os.Getenv("SLUICE_REQUIRE_CUDA") != "" {
			t.Fatal(err)
		}
		t.Skipf("no NVRTC: %v", err)
	}
	c, err := Compile(`extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1; }`, "k.cu", []string{"--gpu-architecture=compute_80"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.PTX || !strings.Contains(string(c.Image), ".entry k") {
		t.Fatalf("PTX lacks the entry:\n%s", c.Image)
	}
	_, err = Compile("__global__ void k( {", "bad.cu", nil)
	var ce *CompileError
	if !errors.As(err, &ce) || !strings.Contains(ce.Log, "bad.cu(1)") {
		t.Fatalf("want a compile error at bad.cu(1), got %v", err)
	}
	t.Log(ce.Log)
}
