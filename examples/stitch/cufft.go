package stitch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/sluicehq/sluice/internal/cu"
)

// cuFFT, NVIDIA's FFT library, is loaded at run time with purego like the
// CUDA driver (package internal/cu): no cgo, and a machine without it
// builds and runs everything else. The engine transforms on the first
// CUDA GPU through a pool of slots, each a cuFFT plan on a stream of its
// own with a device buffer and a pinned host buffer of one tile, so that
// concurrent firings (replicas) keep several transforms in flight: a
// firing copies its data into a slot's pinned buffer, and the slot's
// stream copies it in, transforms in place and copies it back.

// ErrNoCUFFT is returned (wrapped) when the CUDA driver or libcufft cannot
// be loaded.
var ErrNoCUFFT = errors.New("cuFFT unavailable")

const (
	cufftC2C     = 0x29
	cufftForward = ^uintptr(0) // CUFFT_FORWARD = −1, an int argument
)

var (
	cufftOnce sync.Once
	cufftErr  error
	cufftLib  string
	cufftSym  struct{ plan2d, setStream, exec, execR2C, execC2R, destroy, version uintptr }
)

// cufftDirs are searched for libcufft.so* when the loader's own search
// finds none.
var cufftDirs = []string{
	"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
	"/usr/local/cuda-*/lib64", "/usr/local/cuda-*/targets/x86_64-linux/lib",
	"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/opt/cuda/lib64",
	"/usr/local/lib/python3*/dist-packages/nvidia/cufft/lib",
	"/usr/local/lib/python3*/site-packages/nvidia/cufft/lib",
}

func loadCUFFT() error {
	if err := cu.Load(); err != nil {
		return fmt.Errorf("%w: %v", ErrNoCUFFT, err)
	}
	names := []string{"libcufft.so.12", "libcufft.so.13", "libcufft.so.11", "libcufft.so"}
	dirs := cufftDirs
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(env); v != "" {
			dirs = append([]string{filepath.Join(v, "lib64"), filepath.Join(v, "lib")}, dirs...)
		}
	}
	var found []string
	for _, d := range dirs {
		ms, _ := filepath.Glob(filepath.Join(d, "libcufft.so*"))
		found = append(found, ms...)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i] > found[j] })
	var h uintptr
	var errs []string
	for _, n := range append(names, found...) {
		p, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			h, cufftLib = p, n
			break
		}
		errs = append(errs, n)
	}
	if h == 0 {
		return fmt.Errorf("%w: libcufft not found (tried %s; set CUDA_HOME)", ErrNoCUFFT, strings.Join(errs, ", "))
	}
	for _, s := range []struct {
		p    *uintptr
		name string
	}{{&cufftSym.plan2d, "cufftPlan2d"}, {&cufftSym.setStream, "cufftSetStream"}, {&cufftSym.exec, "cufftExecC2C"},
		{&cufftSym.execR2C, "cufftExecR2C"}, {&cufftSym.execC2R, "cufftExecC2R"},
		{&cufftSym.destroy, "cufftDestroy"}, {&cufftSym.version, "cufftGetVersion"}} {
		p, err := purego.Dlsym(h, s.name)
		if err != nil || p == 0 {
			return fmt.Errorf("%w: %s lacks %s", ErrNoCUFFT, cufftLib, s.name)
		}
		*s.p = p
	}
	return nil
}

// cufftCall calls a cuFFT function and turns a nonzero cufftResult into an
// error.
//
//go:uintptrescapes
func cufftCall(name string, f uintptr, args ...uintptr) error {
	r, _, _ := purego.SyscallN(f, args...)
	if int32(r) != 0 {
		return fmt.Errorf("stitch: %s: cufftResult %d", name, int32(r))
	}
	return nil
}

// CUFFTVersion returns the loaded cuFFT's version and library, or why it
// cannot be loaded.
func CUFFTVersion() (int, string, error) {
	cufftOnce.Do(func() { cufftErr = loadCUFFT() })
	if cufftErr != nil {
		return 0, "", cufftErr
	}
	var v int32
	if err := cufftCall("cufftGetVersion", cufftSym.version, uintptr(unsafe.Pointer(&v))); err != nil {
		return 0, cufftLib, err
	}
	return int(v), cufftLib, nil
}

type cufftSlot struct {
	plan   int32
	stream cu.Stream
	dev    cu.DevicePtr
	host   unsafe.Pointer // pinned, one tile of complex64
}

// CUFFT is a pool of cuFFT plans for w×h transforms on GPU 0.
type CUFFT struct {
	ctx   cu.Context
	w, h  int
	slots chan *cufftSlot
}

var (
	cufftMu    sync.Mutex
	cufftPools = map[[2]int]*CUFFT{}
)

// CUFFTFor returns the shared engine for w×h transforms, made on first use
// with one slot per CPU (at most 16).
func CUFFTFor(w, h int) (*CUFFT, error) {
	if _, _, err := CUFFTVersion(); err != nil {
		return nil, err
	}
	cufftMu.Lock()
	defer cufftMu.Unlock()
	if e := cufftPools[[2]int{w, h}]; e != nil {
		return e, nil
	}
	d, err := cu.GetDevice(0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCUFFT, err)
	}
	ctx, err := d.RetainPrimary()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCUFFT, err)
	}
	n := min(goruntime.NumCPU(), 16)
	e := &CUFFT{ctx: ctx, w: w, h: h, slots: make(chan *cufftSlot, n)}
	bytes := int64(w * h * 8)
	for i := 0; i < n; i++ {
		s := &cufftSlot{}
		err := ctx.Do(func() error {
			var err error
			if s.stream, err = ctx.StreamCreate(cu.StreamNonBlocking); err != nil {
				return err
			}
			if s.dev, err = ctx.MemAlloc(bytes); err != nil {
				return err
			}
			if s.host, err = ctx.MemAllocHost(bytes); err != nil {
				return err
			}
			// cufftPlan2d(plan, nx = rows, ny = columns, type)
			if err := cufftCall("cufftPlan2d", cufftSym.plan2d, uintptr(unsafe.Pointer(&s.plan)), uintptr(h), uintptr(w), cufftC2C); err != nil {
				return err
			}
			return cufftCall("cufftSetStream", cufftSym.setStream, uintptr(s.plan), uintptr(s.stream))
		})
		if err != nil {
			return nil, fmt.Errorf("stitch: cuFFT %d×%d slot %d: %w", w, h, i, err)
		}
		e.slots <- s
	}
	cufftPools[[2]int{w, h}] = e
	return e, nil
}

// Forward computes in place the unscaled forward 2-D DFT of z (w×h,
// row-major), as FFT2 does.
func (e *CUFFT) Forward(z []complex64) error {
	n := e.w * e.h
	if len(z) < n {
		return fmt.Errorf("stitch: cuFFT: %d values: expected %d×%d", len(z), e.w, e.h)
	}
	s := <-e.slots
	defer func() { e.slots <- s }()
	host := unsafe.Slice((*complex64)(s.host), n)
	copy(host, z[:n])
	bytes := int64(n * 8)
	err := e.ctx.Do(func() error {
		if err := s.stream.CopyHtoD(s.dev, s.host, bytes); err != nil {
			return err
		}
		if err := cufftCall("cufftExecC2C", cufftSym.exec, uintptr(s.plan), uintptr(s.dev), uintptr(s.dev), cufftForward); err != nil {
			return err
		}
		if err := s.stream.CopyDtoH(s.host, s.dev, bytes); err != nil {
			return err
		}
		return s.stream.Synchronize()
	})
	if err != nil {
		return fmt.Errorf("stitch: cuFFT %d×%d: %w", e.w, e.h, err)
	}
	copy(z[:n], host)
	return nil
}

// MemUsed returns the GPU's used memory in bytes (total − free).
func (e *CUFFT) MemUsed() (int64, error) {
	var used int64
	err := e.ctx.Do(func() error {
		free, total, err := e.ctx.MemInfo()
		used = total - free
		return err
	})
	return used, err
}
