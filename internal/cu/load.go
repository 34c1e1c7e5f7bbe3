// Package cu is a minimal binding to the CUDA driver API (libcuda.so.1) and
// to NVRTC (libnvrtc.so.*), loaded at run time with purego: no cgo, and a
// machine without an NVIDIA driver still builds and runs sluice (Load says
// why CUDA is unavailable, never panics).
//
// It covers what sluice's device layer needs: driver version and devices
// (name, compute capability, SM count, memory and limits), primary contexts
// (retain, release, set current), device memory (cuMemAlloc/cuMemFree),
// pinned host memory (cuMemAllocHost, cuMemHostAlloc), asynchronous copies
// (host→device, device→host, device→device) and memset, streams, events
// (record, query, synchronize, elapsed time), modules (cuModuleLoadData,
// functions, attributes, parameter layout), cuLaunchKernel, and CUDA Graph
// stream capture (begin/end capture, instantiate, launch, destroy). NVRTC
// compiles CUDA C to CUBIN (sm_XY) or PTX (compute_XY).
//
// # Contexts and OS threads
//
// The driver keeps the "current context" per OS thread, and Go moves
// goroutines between OS threads at will. Functions that need a current
// context (allocation, modules, stream and event creation, copies, launches)
// therefore take the Context and make it current on the calling thread for
// the duration of the call: Context.Do locks the goroutine to its OS thread,
// calls cuCtxSetCurrent, runs the function and unlocks. Code that makes many
// calls in a row (a benchmark loop) may instead lock its OS thread itself
// (runtime.LockOSThread) and call Context.SetCurrent once; the binding's
// functions never unlock a thread they did not lock.
//
// No purego callbacks are used: events are waited on (cuEventSynchronize)
// or polled (cuEventQuery). Each call costs about 0.1–0.5 µs, so call per
// launch or copy, never per token.
package cu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// ErrLibraryNotFound is returned (wrapped) when libcuda.so.1 cannot be
// loaded: there is no NVIDIA driver on this machine.
var ErrLibraryNotFound = errors.New("libcuda.so.1 not found")

// ErrNVRTCNotFound is returned (wrapped) when no libnvrtc.so* can be loaded.
var ErrNVRTCNotFound = errors.New("libnvrtc not found")

type driverSymbols struct {
	Init, DriverGetVersion, DeviceGet, DeviceGetCount, DeviceGetName     uintptr
	DeviceGetAttribute, DeviceTotalMem                                   uintptr
	PrimaryCtxRetain, PrimaryCtxRelease, CtxSetCurrent, CtxGetCurrent    uintptr
	CtxSynchronize, MemGetInfo                                           uintptr
	MemAlloc, MemFree, MemAllocHost, MemHostAlloc, MemFreeHost           uintptr
	MemHostRegister, MemHostUnregister, MemHostGetDevicePointer          uintptr
	MemcpyHtoDAsync, MemcpyDtoHAsync, MemcpyDtoDAsync, MemsetD8Async     uintptr
	MemcpyHtoD, MemcpyDtoH                                               uintptr
	StreamCreate, StreamDestroy, StreamSynchronize, StreamQuery          uintptr
	StreamWaitEvent                                                      uintptr
	EventCreate, EventDestroy, EventRecord, EventQuery, EventSynchronize uintptr
	EventElapsedTime                                                     uintptr
	ModuleLoadData, ModuleUnload, ModuleGetFunction, FuncGetAttribute    uintptr
	FuncGetParamInfo, LaunchKernel                                       uintptr
	StreamBeginCapture, StreamEndCapture, GraphInstantiate, GraphLaunch  uintptr
	GraphExecDestroy, GraphDestroy, GraphGetNodes                        uintptr
	StreamGetCaptureInfoV2, StreamGetCaptureInfoV3                       uintptr
	GraphExecKernelNodeSetParams                                         uintptr
	GetErrorName, GetErrorString                                         uintptr
	DeviceCanAccessPeer, CtxEnablePeerAccess, MemcpyPeerAsync            uintptr
}

type nvrtcSymbols struct {
	Version, CreateProgram, DestroyProgram, CompileProgram   uintptr
	GetProgramLogSize, GetProgramLog, GetCUBINSize, GetCUBIN uintptr
	GetPTXSize, GetPTX, GetErrorString, GetNumSupportedArchs uintptr
	GetSupportedArchs                                        uintptr
}

var (
	loadOnce sync.Once
	loadErr  error
	fn       driverSymbols

	nvrtcOnce sync.Once
	nvrtcErr  error
	nvrtcLib  string
	nv        nvrtcSymbols
)

type sym struct {
	names    []string // tried in order (versioned first)
	p        *uintptr
	optional bool
}

func resolve(h uintptr, lib string, syms []sym) error {
	var missing []string
	for _, s := range syms {
		for _, n := range s.names {
			if p, err := purego.Dlsym(h, n); err == nil && p != 0 {
				*s.p = p
				break
			}
		}
		if *s.p == 0 && !s.optional {
			missing = append(missing, s.names[0])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s: expected a newer driver", lib, strings.Join(missing, ", "))
	}
	return nil
}

// Load opens libcuda.so.1 once, resolves its functions and calls cuInit(0).
// It returns an error wrapping ErrLibraryNotFound when the library is
// missing, and a *Error (e.g. CUDA_ERROR_NO_DEVICE) when cuInit fails. It is
// safe to call many times.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

func load() error {
	h, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		h2, err2 := purego.Dlopen("libcuda.so", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err2 != nil {
			return fmt.Errorf("%w (no NVIDIA driver): %v", ErrLibraryNotFound, err)
		}
		h = h2
	}
	s := func(p *uintptr, names ...string) sym { return sym{names: names, p: p} }
	opt := func(p *uintptr, names ...string) sym { return sym{names: names, p: p, optional: true} }
	if err := resolve(h, "libcuda.so.1", []sym{
		s(&fn.Init, "cuInit"),
		s(&fn.DriverGetVersion, "cuDriverGetVersion"),
		s(&fn.DeviceGet, "cuDeviceGet"),
		s(&fn.DeviceGetCount, "cuDeviceGetCount"),
		s(&fn.DeviceGetName, "cuDeviceGetName"),
		s(&fn.DeviceGetAttribute, "cuDeviceGetAttribute"),
		s(&fn.DeviceTotalMem, "cuDeviceTotalMem_v2"),
		s(&fn.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		s(&fn.PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
		s(&fn.CtxSetCurrent, "cuCtxSetCurrent"),
		s(&fn.CtxGetCurrent, "cuCtxGetCurrent"),
		s(&fn.CtxSynchronize, "cuCtxSynchronize"),
		s(&fn.MemGetInfo, "cuMemGetInfo_v2"),
		s(&fn.MemAlloc, "cuMemAlloc_v2"),
		s(&fn.MemFree, "cuMemFree_v2"),
		s(&fn.MemAllocHost, "cuMemAllocHost_v2"),
		s(&fn.MemHostAlloc, "cuMemHostAlloc"),
		s(&fn.MemFreeHost, "cuMemFreeHost"),
		s(&fn.MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
		s(&fn.DeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
		s(&fn.CtxEnablePeerAccess, "cuCtxEnablePeerAccess"),
		s(&fn.MemcpyPeerAsync, "cuMemcpyPeerAsync"),
		opt(&fn.MemHostRegister, "cuMemHostRegister_v2", "cuMemHostRegister"),
		opt(&fn.MemHostUnregister, "cuMemHostUnregister"),
		s(&fn.MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
		s(&fn.MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
		s(&fn.MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
		s(&fn.MemcpyHtoD, "cuMemcpyHtoD_v2"),
		s(&fn.MemcpyDtoH, "cuMemcpyDtoH_v2"),
		s(&fn.MemsetD8Async, "cuMemsetD8Async"),
		s(&fn.StreamCreate, "cuStreamCreate"),
		s(&fn.StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
		s(&fn.StreamSynchronize, "cuStreamSynchronize"),
		s(&fn.StreamQuery, "cuStreamQuery"),
		s(&fn.StreamWaitEvent, "cuStreamWaitEvent"),
		s(&fn.EventCreate, "cuEventCreate"),
		s(&fn.EventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
		s(&fn.EventRecord, "cuEventRecord"),
		s(&fn.EventQuery, "cuEventQuery"),
		s(&fn.EventSynchronize, "cuEventSynchronize"),
		s(&fn.EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		s(&fn.ModuleLoadData, "cuModuleLoadData"),
		s(&fn.ModuleUnload, "cuModuleUnload"),
		s(&fn.ModuleGetFunction, "cuModuleGetFunction"),
		s(&fn.FuncGetAttribute, "cuFuncGetAttribute"),
		opt(&fn.FuncGetParamInfo, "cuFuncGetParamInfo"),
		s(&fn.LaunchKernel, "cuLaunchKernel"),
		s(&fn.StreamBeginCapture, "cuStreamBeginCapture_v2", "cuStreamBeginCapture"),
		s(&fn.StreamEndCapture, "cuStreamEndCapture"),
		s(&fn.GraphInstantiate, "cuGraphInstantiateWithFlags"),
		s(&fn.GraphLaunch, "cuGraphLaunch"),
		s(&fn.GraphExecDestroy, "cuGraphExecDestroy"),
		s(&fn.GraphDestroy, "cuGraphDestroy"),
		opt(&fn.GraphGetNodes, "cuGraphGetNodes"),
		opt(&fn.StreamGetCaptureInfoV3, "cuStreamGetCaptureInfo_v3"),
		opt(&fn.StreamGetCaptureInfoV2, "cuStreamGetCaptureInfo_v2"),
		opt(&fn.GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2", "cuGraphExecKernelNodeSetParams"),
		s(&fn.GetErrorName, "cuGetErrorName"),
		s(&fn.GetErrorString, "cuGetErrorString"),
	}); err != nil {
		return err
	}
	return check("cuInit", call(fn.Init, 0))
}

// nvrtcDirs are the directories searched for libnvrtc.so* when the dynamic
// loader's own search (LD_LIBRARY_PATH, ld.so.cache) finds none.
var nvrtcDirs = []string{
	"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
	"/usr/local/cuda-*/lib64", "/usr/local/cuda-*/targets/x86_64-linux/lib",
	"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/opt/cuda/lib64",
	"/usr/local/lib/python3*/dist-packages/nvidia/cuda_nvrtc/lib",
	"/usr/local/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib",
	"/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib",
}

// nvrtcCandidates lists the library names and paths LoadNVRTC tries: the
// sonames of CUDA 13, 12 and 11.2+ through the loader's search, then every
// libnvrtc.so* under $CUDA_HOME, $CUDA_PATH and the usual directories,
// newest version first.
func nvrtcCandidates() []string {
	names := []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "libnvrtc.so.11.2"}
	dirs := append([]string(nil), nvrtcDirs...)
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(env); v != "" {
			dirs = append([]string{filepath.Join(v, "lib64"), filepath.Join(v, "lib")}, dirs...)
		}
	}
	var found []string
	for _, d := range dirs {
		ms, _ := filepath.Glob(filepath.Join(d, "libnvrtc.so*"))
		for _, m := range ms {
			if !strings.Contains(filepath.Base(m), "builtins") && !strings.HasSuffix(m, ".alt.so") {
				found = append(found, m)
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i] > found[j] }) // .so.13 before .so.12
	return append(names, found...)
}

// LoadNVRTC opens libnvrtc once and resolves its functions. It returns an
// error wrapping ErrNVRTCNotFound, naming what it tried, when none loads.
func LoadNVRTC() error {
	nvrtcOnce.Do(func() { nvrtcErr = loadNVRTC() })
	return nvrtcErr
}

// NVRTCLibrary returns the name or path of the loaded NVRTC library.
func NVRTCLibrary() string {
	if LoadNVRTC() != nil {
		return ""
	}
	return nvrtcLib
}

func loadNVRTC() error {
	var h uintptr
	var errs []string
	tried := map[string]bool{}
	for _, name := range nvrtcCandidates() {
		if tried[name] {
			continue
		}
		tried[name] = true
		x, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			h, nvrtcLib = x, name
			break
		}
		errs = append(errs, err.Error())
	}
	if h == 0 {
		return fmt.Errorf("%w (install the CUDA toolkit's NVRTC, e.g. cuda-nvrtc-12-x, or set LD_LIBRARY_PATH): tried %s", ErrNVRTCNotFound, strings.Join(errs, "; "))
	}
	s := func(p *uintptr, names ...string) sym { return sym{names: names, p: p} }
	return resolve(h, nvrtcLib, []sym{
		s(&nv.Version, "nvrtcVersion"),
		s(&nv.CreateProgram, "nvrtcCreateProgram"),
		s(&nv.DestroyProgram, "nvrtcDestroyProgram"),
		s(&nv.CompileProgram, "nvrtcCompileProgram"),
		s(&nv.GetProgramLogSize, "nvrtcGetProgramLogSize"),
		s(&nv.GetProgramLog, "nvrtcGetProgramLog"),
		{names: []string{"nvrtcGetCUBINSize"}, p: &nv.GetCUBINSize, optional: true},
		{names: []string{"nvrtcGetCUBIN"}, p: &nv.GetCUBIN, optional: true},
		s(&nv.GetPTXSize, "nvrtcGetPTXSize"),
		s(&nv.GetPTX, "nvrtcGetPTX"),
		s(&nv.GetErrorString, "nvrtcGetErrorString"),
		{names: []string{"nvrtcGetNumSupportedArchs"}, p: &nv.GetNumSupportedArchs, optional: true},
		{names: []string{"nvrtcGetSupportedArchs"}, p: &nv.GetSupportedArchs, optional: true},
	})
}

// call invokes a driver function returning CUresult. Arguments converted
// from pointers in the call expression are kept alive for the call.
//
// call calls a driver function. Out-parameters are passed as
// uintptr(unsafe.Pointer(&x)): uintptrescapes moves x to the heap and keeps
// it alive for the call (a stack variable could move when the goroutine's
// stack grows during the call, and the driver would write to its old place).
//
//go:uintptrescapes
//go:uintptrescapes
func call(f uintptr, args ...uintptr) Result {
	r, _, _ := purego.SyscallN(f, args...)
	return Result(int32(r))
}
