package cu

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// NVRTCVersion returns NVRTC's version (e.g. 13, 0).
func NVRTCVersion() (major, minor int, err error) {
	if err := LoadNVRTC(); err != nil {
		return 0, 0, err
	}
	a, b := new(int32), new(int32)
	if r := nvcall(nv.Version, uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b))); r != 0 {
		return 0, 0, fmt.Errorf("nvrtcVersion: %w", r)
	}
	return int(*a), int(*b), nil
}

// SupportedArchs lists the sm_XY architectures NVRTC can compile for
// (as 75, 80, 90, …); nil when NVRTC cannot say.
func SupportedArchs() []int {
	if LoadNVRTC() != nil || nv.GetNumSupportedArchs == 0 || nv.GetSupportedArchs == 0 {
		return nil
	}
	n := new(int32)
	if nvcall(nv.GetNumSupportedArchs, uintptr(unsafe.Pointer(n))) != 0 || *n <= 0 {
		return nil
	}
	a := make([]int32, *n)
	if nvcall(nv.GetSupportedArchs, uintptr(unsafe.Pointer(&a[0]))) != 0 {
		return nil
	}
	out := make([]int, len(a))
	for i, v := range a {
		out[i] = int(v)
	}
	return out
}

//go:uintptrescapes
func nvcall(f uintptr, args ...uintptr) NVRTCResult {
	r, _, _ := syscallN(f, args...)
	return NVRTCResult(int32(r))
}

// CompileError is a failed NVRTC compilation: the result and the log.
type CompileError struct {
	Result NVRTCResult
	Log    string
}

// Error renders the NVRTC result and the compile log.
func (e *CompileError) Error() string {
	if strings.TrimSpace(e.Log) == "" {
		return "nvrtcCompileProgram: " + e.Result.Error()
	}
	return "nvrtcCompileProgram: " + e.Result.Error() + "\n" + strings.TrimSpace(e.Log)
}

// Unwrap returns the NVRTC result.
func (e *CompileError) Unwrap() error { return e.Result }

// Compiled is NVRTC's output: a CUBIN (when compiled for sm_XY) or PTX
// (compute_XY, NUL-terminated), and the log (warnings).
type Compiled struct {
	Image []byte
	PTX   bool
	Log   string
}

// Compile compiles CUDA C source with NVRTC. name is the program's name
// (what diagnostics outside any #line say); options are nvrtcCompileProgram
// options, e.g. "--gpu-architecture=sm_90" (CUBIN) or
// "--gpu-architecture=compute_90" (PTX). A failed compilation is a
// *CompileError with the log.
func Compile(src, name string, options []string) (*Compiled, error) {
	if err := LoadNVRTC(); err != nil {
		return nil, err
	}
	prog := new(uintptr)
	s, n := cBytes(src), cBytes(name)
	r := nvcall(nv.CreateProgram, uintptr(unsafe.Pointer(prog)), uintptr(unsafe.Pointer(&s[0])), uintptr(unsafe.Pointer(&n[0])), 0, 0, 0)
	runtime.KeepAlive(s)
	runtime.KeepAlive(n)
	if r != 0 {
		return nil, fmt.Errorf("nvrtcCreateProgram: %w", r)
	}
	live.programs.Add(1)
	defer func() {
		nvcall(nv.DestroyProgram, uintptr(unsafe.Pointer(prog)))
		live.programs.Add(-1)
	}()
	opts := make([][]byte, len(options))
	ptrs := make([]uintptr, len(options)+1)
	ptx := false
	for i, o := range options {
		opts[i] = cBytes(o)
		ptrs[i] = uintptr(unsafe.Pointer(&opts[i][0]))
		if strings.Contains(o, "compute_") && (strings.HasPrefix(o, "--gpu-architecture") || strings.HasPrefix(o, "-arch")) {
			ptx = true
		}
	}
	r = nvcall(nv.CompileProgram, *prog, uintptr(len(options)), uintptr(unsafe.Pointer(&ptrs[0])))
	runtime.KeepAlive(opts)
	log := programLog(*prog)
	if r != 0 {
		return nil, &CompileError{Result: r, Log: log}
	}
	out := &Compiled{Log: log, PTX: ptx}
	sizeFn, getFn, what := nv.GetCUBINSize, nv.GetCUBIN, "nvrtcGetCUBIN"
	if ptx || sizeFn == 0 {
		sizeFn, getFn, what, out.PTX = nv.GetPTXSize, nv.GetPTX, "nvrtcGetPTX", true
	}
	size := new(uintptr)
	if r := nvcall(sizeFn, *prog, uintptr(unsafe.Pointer(size))); r != 0 {
		return nil, fmt.Errorf("%sSize: %w", what, r)
	}
	if *size == 0 {
		return nil, fmt.Errorf("%s: empty image (compile for sm_XY to get a CUBIN, compute_XY for PTX)", what)
	}
	img := make([]byte, *size)
	if r := nvcall(getFn, *prog, uintptr(unsafe.Pointer(&img[0]))); r != 0 {
		return nil, fmt.Errorf("%s: %w", what, r)
	}
	out.Image = img
	return out, nil
}

func programLog(prog uintptr) string {
	size := new(uintptr)
	if nvcall(nv.GetProgramLogSize, prog, uintptr(unsafe.Pointer(size))) != 0 || *size <= 1 {
		return ""
	}
	b := make([]byte, *size)
	if nvcall(nv.GetProgramLog, prog, uintptr(unsafe.Pointer(&b[0]))) != 0 {
		return ""
	}
	return strings.TrimRight(string(b), "\x00")
}
