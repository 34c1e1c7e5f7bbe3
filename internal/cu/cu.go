package cu

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// syscallN is purego.SyscallN, for functions that do not return CUresult.
//
//go:uintptrescapes
func syscallN(f uintptr, args ...uintptr) (uintptr, uintptr, uintptr) {
	return purego.SyscallN(f, args...)
}

// Device attributes (CUdevice_attribute) used by sluice.
const (
	AttrMaxThreadsPerBlock      = 1
	AttrMaxBlockDimX            = 2
	AttrMaxGridDimX             = 5
	AttrMaxSharedMemPerBlock    = 8
	AttrWarpSize                = 10
	AttrClockRate               = 13 // kHz
	AttrMultiprocessorCount     = 16
	AttrIntegrated              = 18
	AttrCanMapHostMemory        = 19
	AttrPCIBusID                = 33
	AttrPCIDeviceID             = 34
	AttrMaxThreadsPerSM         = 39 // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
	AttrPCIDomainID             = 50
	AttrUnifiedAddressing       = 41
	AttrComputeCapabilityMajor  = 75
	AttrComputeCapabilityMinor  = 76
	AttrMaxSharedMemPerBlockOpt = 97
)

// Function attributes (CUfunction_attribute).
const (
	FuncAttrMaxThreadsPerBlock = 0
	FuncAttrSharedSizeBytes    = 1
	FuncAttrNumRegs            = 4
)

// Flags.
const (
	StreamNonBlocking     = 0x1 // CU_STREAM_NON_BLOCKING
	EventDefault          = 0x0
	EventBlockingSync     = 0x1
	EventDisableTiming    = 0x2
	HostAllocPortable     = 0x1 // CU_MEMHOSTALLOC_PORTABLE
	HostAllocDeviceMap    = 0x2
	HostAllocWriteCombine = 0x4
	HostRegisterPortable  = 0x1 // CU_MEMHOSTREGISTER_PORTABLE

	CaptureModeGlobal      = 0
	CaptureModeThreadLocal = 1
	CaptureModeRelaxed     = 2
)

// Live counts objects this package created and has not yet released, by
// kind. Tests use it to prove that nothing leaks.
type Live struct {
	Contexts, Allocs, HostAllocs, Streams, Events, Modules, Graphs, Programs int64
}

var live struct {
	contexts, allocs, hostAllocs, streams, events, modules, graphs, programs atomic.Int64
}

// LiveObjects returns the current counts of unreleased objects.
func LiveObjects() Live {
	return Live{
		Contexts: live.contexts.Load(), Allocs: live.allocs.Load(), HostAllocs: live.hostAllocs.Load(),
		Streams: live.streams.Load(), Events: live.events.Load(), Modules: live.modules.Load(),
		Graphs: live.graphs.Load(), Programs: live.programs.Load(),
	}
}

// DriverVersion returns the driver's CUDA version as major, minor
// (cuDriverGetVersion: 13000 → 13, 0).
func DriverVersion() (major, minor int, err error) {
	if err := Load(); err != nil {
		return 0, 0, err
	}
	var v int32
	if err := check("cuDriverGetVersion", call(fn.DriverGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
		return 0, 0, err
	}
	return int(v / 1000), int(v%1000) / 10, nil
}

// Device is a CUDA device ordinal (CUdevice).
type Device int32

// DeviceCount returns the number of CUDA devices.
func DeviceCount() (int, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var n int32
	if err := check("cuDeviceGetCount", call(fn.DeviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// GetDevice returns the device with the given ordinal.
func GetDevice(ordinal int) (Device, error) {
	if err := Load(); err != nil {
		return 0, err
	}
	var d int32
	if err := checkf("cuDeviceGet", call(fn.DeviceGet, uintptr(unsafe.Pointer(&d)), uintptr(ordinal)), "ordinal %d", ordinal); err != nil {
		return 0, err
	}
	return Device(d), nil
}

// Attribute returns a device attribute (Attr*).
func (d Device) Attribute(attr int) (int, error) {
	var v int32
	if err := checkf("cuDeviceGetAttribute", call(fn.DeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(d)), "attribute %d", attr); err != nil {
		return 0, err
	}
	return int(v), nil
}

// DeviceInfo is what sluice reads about a device.
type DeviceInfo struct {
	Ordinal                      int
	Name                         string
	Major, Minor                 int // compute capability
	SMs                          int
	MaxThreadsPerSM              int // resident threads per SM (occupancy limit)
	TotalMem                     int64
	ClockMHz                     int
	MaxThreadsPerBlock           int
	MaxSharedPerBlock            int64
	WarpSize                     int
	Integrated                   bool
	UnifiedAddressing            bool
	PCIDomain, PCIBus, PCIDevice int
	DriverMajor, DriverMinor     int
}

// Info reads the device's name, compute capability, SM count, memory and
// limits.
func (d Device) Info() (DeviceInfo, error) {
	var buf [256]byte
	if err := check("cuDeviceGetName", call(fn.DeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(d))); err != nil {
		return DeviceInfo{}, err
	}
	n := 0
	for n < len(buf) && buf[n] != 0 {
		n++
	}
	var mem uint64
	if err := check("cuDeviceTotalMem", call(fn.DeviceTotalMem, uintptr(unsafe.Pointer(&mem)), uintptr(d))); err != nil {
		return DeviceInfo{}, err
	}
	a := func(attr int) int { v, _ := d.Attribute(attr); return v }
	in := DeviceInfo{
		Ordinal: int(d), Name: string(buf[:n]), TotalMem: int64(mem),
		Major: a(AttrComputeCapabilityMajor), Minor: a(AttrComputeCapabilityMinor),
		SMs: a(AttrMultiprocessorCount), ClockMHz: a(AttrClockRate) / 1000,
		MaxThreadsPerBlock: a(AttrMaxThreadsPerBlock), MaxThreadsPerSM: a(AttrMaxThreadsPerSM), MaxSharedPerBlock: int64(a(AttrMaxSharedMemPerBlock)),
		WarpSize: a(AttrWarpSize), Integrated: a(AttrIntegrated) != 0, UnifiedAddressing: a(AttrUnifiedAddressing) != 0,
		PCIDomain: a(AttrPCIDomainID), PCIBus: a(AttrPCIBusID), PCIDevice: a(AttrPCIDeviceID),
	}
	in.DriverMajor, in.DriverMinor, _ = DriverVersion()
	return in, nil
}

// Context is a CUDA context (CUcontext); sluice uses each device's primary
// context, shared with any other user of the driver in the process.
type Context uintptr

// RetainPrimary retains the device's primary context (creating it on first
// use). Release it with ReleasePrimary.
func (d Device) RetainPrimary() (Context, error) {
	var c uintptr
	if err := check("cuDevicePrimaryCtxRetain", call(fn.PrimaryCtxRetain, uintptr(unsafe.Pointer(&c)), uintptr(d))); err != nil {
		return 0, err
	}
	live.contexts.Add(1)
	return Context(c), nil
}

// ReleasePrimary releases one retain of the device's primary context.
func (d Device) ReleasePrimary() error {
	err := check("cuDevicePrimaryCtxRelease", call(fn.PrimaryCtxRelease, uintptr(d)))
	if err == nil {
		live.contexts.Add(-1)
	}
	return err
}

// CanAccessPeer reports whether contexts on d can access memory of peer
// directly (cuDeviceCanAccessPeer).
func (d Device) CanAccessPeer(peer Device) (bool, error) {
	var v int32
	if err := check("cuDeviceCanAccessPeer", call(fn.DeviceCanAccessPeer, uintptr(unsafe.Pointer(&v)), uintptr(d), uintptr(peer))); err != nil {
		return false, err
	}
	return v != 0, nil
}

// EnablePeerAccess lets c access the memory of peer's context directly
// (cuCtxEnablePeerAccess); enabling it twice is not an error.
func (c Context) EnablePeerAccess(peer Context) error {
	err := c.inCtx("cuCtxEnablePeerAccess", fn.CtxEnablePeerAccess, uintptr(peer), 0)
	if e, ok := err.(*Error); ok && e.Result == ErrPeerAccessEnabled {
		return nil
	}
	return err
}

// SetCurrent makes c current on the calling OS thread. The caller must keep
// the goroutine on that thread (runtime.LockOSThread) for as long as it
// relies on it; see Do.
func (c Context) SetCurrent() error {
	return check("cuCtxSetCurrent", call(fn.CtxSetCurrent, uintptr(c)))
}

// Current returns the context current on the calling OS thread (0 if none).
func Current() (Context, error) {
	var c uintptr
	err := check("cuCtxGetCurrent", call(fn.CtxGetCurrent, uintptr(unsafe.Pointer(&c))))
	return Context(c), err
}

// Do locks the goroutine to its OS thread, makes c current, runs f and
// unlocks. Every call of this package that needs a current context is made
// this way by the device layer.
func (c Context) Do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := call(fn.CtxSetCurrent, uintptr(c)); r != 0 {
		return &Error{Op: "cuCtxSetCurrent", Result: r}
	}
	return f()
}

// bind makes c current on this thread; the caller has locked the thread.
func (c Context) bind() Result {
	r, _, _ := purego.SyscallN(fn.CtxSetCurrent, uintptr(c))
	return Result(int32(r))
}

// Synchronize waits for all work in the context.
func (c Context) Synchronize() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := c.bind(); r != 0 {
		return &Error{Op: "cuCtxSetCurrent", Result: r}
	}
	return check("cuCtxSynchronize", call(fn.CtxSynchronize))
}

// MemInfo returns the free and total device memory of the context's device.
func (c Context) MemInfo() (free, total int64, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := c.bind(); r != 0 {
		return 0, 0, &Error{Op: "cuCtxSetCurrent", Result: r}
	}
	var f, t uint64
	err = check("cuMemGetInfo", call(fn.MemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t))))
	return int64(f), int64(t), err
}

// inCtx runs one driver call with c current on a locked thread. Like
// call it is uintptrescapes: without it an out-parameter allocated on the
// stack (MemAlloc's) could move when the stack grows inside the call,
// leaving the driver's result behind; that gave a device pointer of 0 and
// CUDA_ERROR_INVALID_VALUE in the first copy to it.
//
//go:uintptrescapes
func (c Context) inCtx(op string, f uintptr, args ...uintptr) error {
	runtime.LockOSThread()
	r := c.bind()
	if r == 0 {
		rr, _, _ := purego.SyscallN(f, args...)
		r = Result(int32(rr))
	}
	runtime.UnlockOSThread()
	if r != 0 {
		if op == "" {
			op = "cuCtxSetCurrent"
		}
		return &Error{Op: op, Result: r}
	}
	return nil
}

// DevicePtr is a device address (CUdeviceptr).
type DevicePtr uint64

// MemAlloc allocates size bytes of device memory in c.
func (c Context) MemAlloc(size int64) (DevicePtr, error) {
	p := new(uint64)
	if err := c.inCtx("cuMemAlloc", fn.MemAlloc, uintptr(unsafe.Pointer(p)), uintptr(size)); err != nil {
		if e, ok := err.(*Error); ok {
			e.Detail = fmt.Sprintf("%d bytes", size)
		}
		return 0, err
	}
	live.allocs.Add(1)
	return DevicePtr(*p), nil
}

// MemFree frees memory from MemAlloc.
func (c Context) MemFree(p DevicePtr) error {
	if err := c.inCtx("cuMemFree", fn.MemFree, uintptr(p)); err != nil {
		return err
	}
	live.allocs.Add(-1)
	return nil
}

// MemHostAlloc allocates size bytes of page-locked host memory the device
// reaches by DMA (cuMemHostAlloc with flags HostAlloc*; 0 is the same as
// cuMemAllocHost). The memory is not Go's: free it with MemFreeHost.
func (c Context) MemHostAlloc(size int64, flags uint32) (unsafe.Pointer, error) {
	p := new(uintptr)
	if err := c.inCtx("cuMemHostAlloc", fn.MemHostAlloc, uintptr(unsafe.Pointer(p)), uintptr(size), uintptr(flags)); err != nil {
		if e, ok := err.(*Error); ok {
			e.Detail = fmt.Sprintf("%d bytes", size)
		}
		return nil, err
	}
	live.hostAllocs.Add(1)
	return ptrFromC(*p), nil
}

// MemHostGetDevicePointer returns the device address of page-locked host
// memory allocated with HostAllocDeviceMap (cuMemHostGetDevicePointer).
func (c Context) MemHostGetDevicePointer(p unsafe.Pointer) (DevicePtr, error) {
	d := new(uintptr)
	if err := c.inCtx("cuMemHostGetDevicePointer", fn.MemHostGetDevicePointer, uintptr(unsafe.Pointer(d)), uintptr(p), 0); err != nil {
		return 0, err
	}
	return DevicePtr(*d), nil
}

// MemAllocHost allocates page-locked host memory (cuMemAllocHost).
func (c Context) MemAllocHost(size int64) (unsafe.Pointer, error) {
	p := new(uintptr)
	if err := c.inCtx("cuMemAllocHost", fn.MemAllocHost, uintptr(unsafe.Pointer(p)), uintptr(size)); err != nil {
		if e, ok := err.(*Error); ok {
			e.Detail = fmt.Sprintf("%d bytes", size)
		}
		return nil, err
	}
	live.hostAllocs.Add(1)
	return ptrFromC(*p), nil
}

// MemFreeHost frees page-locked host memory.
func (c Context) MemFreeHost(p unsafe.Pointer) error {
	if err := c.inCtx("cuMemFreeHost", fn.MemFreeHost, uintptr(p)); err != nil {
		return err
	}
	live.hostAllocs.Add(-1)
	return nil
}

// MemHostRegister page-locks n bytes of existing host memory at address p
// (e.g. a Go slice kept alive by the caller; an address, not a pointer, as
// the range may be widened to whole pages) so copies to and from it run by DMA at
// pinned speed (cuMemHostRegister, flags HostRegister*). Unregister it with
// MemHostUnregister before the memory is freed.
func (c Context) MemHostRegister(p uintptr, n int64, flags uint32) error {
	if fn.MemHostRegister == 0 || fn.MemHostUnregister == 0 {
		return &Error{Op: "cuMemHostRegister", Result: ErrNotSupported, Detail: "not in this driver"}
	}
	if err := c.inCtx("cuMemHostRegister", fn.MemHostRegister, p, uintptr(n), uintptr(flags)); err != nil {
		if e, ok := err.(*Error); ok {
			e.Detail = fmt.Sprintf("%d bytes", n)
		}
		return err
	}
	live.hostAllocs.Add(1)
	return nil
}

// MemHostUnregister ends a MemHostRegister.
func (c Context) MemHostUnregister(p uintptr) error {
	if err := c.inCtx("cuMemHostUnregister", fn.MemHostUnregister, p); err != nil {
		return err
	}
	live.hostAllocs.Add(-1)
	return nil
}

// Stream is a CUDA stream (CUstream): an in-order queue.
type Stream uintptr

// StreamCreate creates a stream in c (flags: StreamNonBlocking).
func (c Context) StreamCreate(flags uint32) (Stream, error) {
	p := new(uintptr)
	if err := c.inCtx("cuStreamCreate", fn.StreamCreate, uintptr(unsafe.Pointer(p)), uintptr(flags)); err != nil {
		return 0, err
	}
	live.streams.Add(1)
	return Stream(*p), nil
}

// StreamDestroy destroys s (pending work still completes).
func (c Context) StreamDestroy(s Stream) error {
	if err := c.inCtx("cuStreamDestroy", fn.StreamDestroy, uintptr(s)); err != nil {
		return err
	}
	live.streams.Add(-1)
	return nil
}

// Synchronize waits for every command on s. It needs no current context.
func (s Stream) Synchronize() error {
	return check("cuStreamSynchronize", call(fn.StreamSynchronize, uintptr(s)))
}

// Query returns nil when s is idle, ErrNotReady while work is pending.
func (s Stream) Query() error { return check("cuStreamQuery", call(fn.StreamQuery, uintptr(s))) }

// Event is a CUDA event (CUevent).
type Event uintptr

// EventCreate creates an event (flags: EventDisableTiming, EventBlockingSync).
func (c Context) EventCreate(flags uint32) (Event, error) {
	p := new(uintptr)
	if err := c.inCtx("cuEventCreate", fn.EventCreate, uintptr(unsafe.Pointer(p)), uintptr(flags)); err != nil {
		return 0, err
	}
	live.events.Add(1)
	return Event(*p), nil
}

// EventDestroy destroys e.
func (c Context) EventDestroy(e Event) error {
	if err := c.inCtx("cuEventDestroy", fn.EventDestroy, uintptr(e)); err != nil {
		return err
	}
	live.events.Add(-1)
	return nil
}

// Query returns nil when the work before e's record has completed,
// ErrNotReady while it is pending, or the error of failed work.
func (e Event) Query() error { return check("cuEventQuery", call(fn.EventQuery, uintptr(e))) }

// QueryResult is Query without building an error (for polling loops).
func (e Event) QueryResult() Result {
	r, _, _ := purego.SyscallN(fn.EventQuery, uintptr(e))
	return Result(int32(r))
}

// Synchronize blocks until e completes.
func (e Event) Synchronize() error {
	return check("cuEventSynchronize", call(fn.EventSynchronize, uintptr(e)))
}

// Elapsed returns the time between two completed timing events, in
// milliseconds (resolution about 0.5 µs).
func Elapsed(start, end Event) (float32, error) {
	ms := new(float32)
	err := check("cuEventElapsedTime", call(fn.EventElapsedTime, uintptr(unsafe.Pointer(ms)), uintptr(start), uintptr(end)))
	return *ms, err
}

// The calls below enqueue work on a stream. They expect the stream's
// context to be current on the calling thread: call them inside
// Context.Do, or after Context.SetCurrent on a locked thread.

// Record records e on s.
func (e Event) Record(s Stream) error {
	return check("cuEventRecord", call(fn.EventRecord, uintptr(e), uintptr(s)))
}

// RecordResult is Record without building an error.
func (e Event) RecordResult(s Stream) Result {
	r, _, _ := purego.SyscallN(fn.EventRecord, uintptr(e), uintptr(s))
	return Result(int32(r))
}

// WaitEvent makes later work on s wait for e (which may be of another
// stream of the same context, or another context).
func (s Stream) WaitEvent(e Event) error {
	return check("cuStreamWaitEvent", call(fn.StreamWaitEvent, uintptr(s), uintptr(e), 0))
}

// CopyHtoD copies n bytes from host memory src to device memory dst. src
// must stay valid until the copy completes; for pageable (Go) memory the
// driver stages the bytes before it returns.
func (s Stream) CopyHtoD(dst DevicePtr, src unsafe.Pointer, n int64) error {
	return checkf("cuMemcpyHtoDAsync", call(fn.MemcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(n), uintptr(s)), "%d bytes", n)
}

// CopyDtoH copies n bytes from device memory src to host memory dst.
func (s Stream) CopyDtoH(dst unsafe.Pointer, src DevicePtr, n int64) error {
	return checkf("cuMemcpyDtoHAsync", call(fn.MemcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(n), uintptr(s)), "%d bytes", n)
}

// CopyDtoD copies n bytes between device buffers.
func (s Stream) CopyDtoD(dst, src DevicePtr, n int64) error {
	return checkf("cuMemcpyDtoDAsync", call(fn.MemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), uintptr(s)), "%d bytes from %#x to %#x", n, uint64(src), uint64(dst))
}

// CopyPeer copies n bytes from src in context srcCtx to dst in context
// dstCtx (cuMemcpyPeerAsync): directly between the devices when peer
// access is enabled, staged by the driver otherwise.
func (s Stream) CopyPeer(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, n int64) error {
	return checkf("cuMemcpyPeerAsync", call(fn.MemcpyPeerAsync, uintptr(dst), uintptr(dstCtx), uintptr(src), uintptr(srcCtx), uintptr(n), uintptr(s)), "%d bytes from %#x to %#x", n, uint64(src), uint64(dst))
}

// MemsetD8 sets n bytes at dst to v.
func (s Stream) MemsetD8(dst DevicePtr, v byte, n int64) error {
	return checkf("cuMemsetD8Async", call(fn.MemsetD8Async, uintptr(dst), uintptr(v), uintptr(n), uintptr(s)), "%d bytes", n)
}

// Module is a loaded CUBIN or PTX image (CUmodule).
type Module uintptr

// ModuleLoadData loads a CUBIN, fatbin or NUL-terminated PTX image in c.
func (c Context) ModuleLoadData(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, &Error{Op: "cuModuleLoadData", Result: ErrInvalidImage, Detail: "empty image"}
	}
	p := new(uintptr)
	err := c.inCtx("cuModuleLoadData", fn.ModuleLoadData, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&image[0])))
	runtime.KeepAlive(image)
	if err != nil {
		return 0, err
	}
	live.modules.Add(1)
	return Module(*p), nil
}

// ModuleUnload unloads m.
func (c Context) ModuleUnload(m Module) error {
	if err := c.inCtx("cuModuleUnload", fn.ModuleUnload, uintptr(m)); err != nil {
		return err
	}
	live.modules.Add(-1)
	return nil
}

// Function is a kernel of a module (CUfunction).
type Function uintptr

// Function returns the kernel called name (its mangled name for kernels
// not declared extern "C"). ErrNotFound when there is none.
func (c Context) Function(m Module, name string) (Function, error) {
	p := new(uintptr)
	n := cBytes(name)
	err := c.inCtx("cuModuleGetFunction", fn.ModuleGetFunction, uintptr(unsafe.Pointer(p)), uintptr(m), uintptr(unsafe.Pointer(&n[0])))
	runtime.KeepAlive(n)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Detail = name
		}
		return 0, err
	}
	return Function(*p), nil
}

// Attribute returns a function attribute (FuncAttr*).
func (f Function) Attribute(attr int) (int, error) {
	v := new(int32)
	err := check("cuFuncGetAttribute", call(fn.FuncGetAttribute, uintptr(unsafe.Pointer(v)), uintptr(attr), uintptr(f)))
	return int(*v), err
}

// HasParamInfo reports whether the driver has cuFuncGetParamInfo (12.4+).
func HasParamInfo() bool { return fn.FuncGetParamInfo != 0 }

// Params returns the byte offset and size of each kernel parameter, from
// cuFuncGetParamInfo (CUDA 12.4+); ok is false when the driver lacks it.
func (f Function) Params() (offsets, sizes []int, ok bool) {
	if fn.FuncGetParamInfo == 0 {
		return nil, nil, false
	}
	off, size := new(uint64), new(uint64)
	for i := 0; i < 4096; i++ {
		r := call(fn.FuncGetParamInfo, uintptr(f), uintptr(i), uintptr(unsafe.Pointer(off)), uintptr(unsafe.Pointer(size)))
		if r != 0 {
			break
		}
		offsets = append(offsets, int(*off))
		sizes = append(sizes, int(*size))
	}
	return offsets, sizes, true
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Launch launches f on s with grid × block threads, shared bytes of dynamic
// shared memory and params, the address of an array holding the address of
// each argument's value (cuLaunchKernel's kernelParams). The argument
// memory must stay put until the call returns (the driver copies it).
func (f Function) Launch(s Stream, grid, block Dim3, shared uint32, params unsafe.Pointer) error {
	r := call(fn.LaunchKernel, uintptr(f), uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z),
		uintptr(block.X), uintptr(block.Y), uintptr(block.Z), uintptr(shared), uintptr(s), uintptr(params), 0)
	return check("cuLaunchKernel", r)
}

// LaunchResult is Launch without building an error (for benchmarks).
func (f Function) LaunchResult(s Stream, grid, block Dim3, shared uint32, params uintptr) Result {
	r, _, _ := purego.SyscallN(fn.LaunchKernel, uintptr(f), uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z),
		uintptr(block.X), uintptr(block.Y), uintptr(block.Z), uintptr(shared), uintptr(s), params, 0)
	return Result(int32(r))
}

// Graph is a captured CUDA graph (CUgraph); GraphExec its executable
// instance (CUgraphExec).
type (
	Graph     uintptr
	GraphExec uintptr
)

// GraphNode is a node of a CUDA graph (CUgraphNode).
type GraphNode uintptr

// CanUpdateKernels reports whether the driver can name the node of a
// captured launch (LastCaptured) and set a kernel node's parameters in an
// executable graph (SetKernelParams).
func CanUpdateKernels() bool {
	return (fn.StreamGetCaptureInfoV3 != 0 || fn.StreamGetCaptureInfoV2 != 0) && fn.GraphExecKernelNodeSetParams != 0
}

// LastCaptured returns the node the last command captured on s became:
// the one node the stream's next captured command would depend on
// (cuStreamGetCaptureInfo). It fails when s is not capturing or its next
// command would depend on several nodes or none.
func (s Stream) LastCaptured() (GraphNode, error) {
	var (
		status uint32
		id     uint64
		graph  uintptr
		deps   *GraphNode // the driver's array (const CUgraphNode*)
		n      uintptr
		r      Result
	)
	switch {
	case fn.StreamGetCaptureInfoV3 != 0:
		r = call(fn.StreamGetCaptureInfoV3, uintptr(s), uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&id)),
			uintptr(unsafe.Pointer(&graph)), uintptr(unsafe.Pointer(&deps)), 0, uintptr(unsafe.Pointer(&n)))
	case fn.StreamGetCaptureInfoV2 != 0:
		r = call(fn.StreamGetCaptureInfoV2, uintptr(s), uintptr(unsafe.Pointer(&status)), uintptr(unsafe.Pointer(&id)),
			uintptr(unsafe.Pointer(&graph)), uintptr(unsafe.Pointer(&deps)), uintptr(unsafe.Pointer(&n)))
	default:
		return 0, fmt.Errorf("cuStreamGetCaptureInfo: not in this driver")
	}
	if err := check("cuStreamGetCaptureInfo", r); err != nil {
		return 0, err
	}
	if status != captureStatusActive || n != 1 || deps == nil {
		return 0, fmt.Errorf("cuStreamGetCaptureInfo: expected an active capture ending in one node, found status %d and %d nodes", status, n)
	}
	return *deps, nil
}

// captureStatusActive is CU_STREAM_CAPTURE_STATUS_ACTIVE.
const captureStatusActive = 1

// kernelNodeParams is CUDA_KERNEL_NODE_PARAMS_v2 (whose prefix is v1's).
type kernelNodeParams struct {
	f                      uintptr
	gridX, gridY, gridZ    uint32
	blockX, blockY, blockZ uint32
	shared                 uint32
	params, extra          uintptr
	kern, ctx              uintptr
}

// SetKernelParams sets the parameters of kernel node n of the graph g was
// instantiated from, in g only (cuGraphExecKernelNodeSetParams): launches
// of g from now on run f over grid × block with these arguments (an array
// of pointers to each value, copied by the driver); launches already
// enqueued are not affected. The context must be current.
func (g GraphExec) SetKernelParams(n GraphNode, f Function, grid, block Dim3, shared uint32, params unsafe.Pointer) error {
	if fn.GraphExecKernelNodeSetParams == 0 {
		return fmt.Errorf("cuGraphExecKernelNodeSetParams: not in this driver")
	}
	p := kernelNodeParams{f: uintptr(f), gridX: grid.X, gridY: grid.Y, gridZ: grid.Z,
		blockX: block.X, blockY: block.Y, blockZ: block.Z, shared: shared, params: uintptr(params)}
	return check("cuGraphExecKernelNodeSetParams", call(fn.GraphExecKernelNodeSetParams, uintptr(g), uintptr(n), uintptr(unsafe.Pointer(&p))))
}

// BeginCapture starts capturing the work enqueued on s into a graph
// instead of running it (mode: CaptureMode*).
func (s Stream) BeginCapture(mode int) error {
	return check("cuStreamBeginCapture", call(fn.StreamBeginCapture, uintptr(s), uintptr(mode)))
}

// EndCapture ends the capture on s and returns the graph.
func (s Stream) EndCapture() (Graph, error) {
	p := new(uintptr)
	if err := check("cuStreamEndCapture", call(fn.StreamEndCapture, uintptr(s), uintptr(unsafe.Pointer(p)))); err != nil {
		return 0, err
	}
	live.graphs.Add(1)
	return Graph(*p), nil
}

// Nodes returns the number of nodes of g (0 when the driver lacks cuGraphGetNodes).
func (g Graph) Nodes() int {
	if fn.GraphGetNodes == 0 {
		return 0
	}
	n := new(uintptr)
	if call(fn.GraphGetNodes, uintptr(g), 0, uintptr(unsafe.Pointer(n))) != 0 {
		return 0
	}
	return int(*n)
}

// Instantiate makes an executable graph of g (cuGraphInstantiateWithFlags).
func (c Context) Instantiate(g Graph) (GraphExec, error) {
	p := new(uintptr)
	if err := c.inCtx("cuGraphInstantiate", fn.GraphInstantiate, uintptr(unsafe.Pointer(p)), uintptr(g), 0); err != nil {
		return 0, err
	}
	live.graphs.Add(1)
	return GraphExec(*p), nil
}

// Destroy destroys the graph (its executable instances stay valid).
func (c Context) GraphDestroy(g Graph) error {
	if err := c.inCtx("cuGraphDestroy", fn.GraphDestroy, uintptr(g)); err != nil {
		return err
	}
	live.graphs.Add(-1)
	return nil
}

// GraphExecDestroy destroys an executable graph.
func (c Context) GraphExecDestroy(g GraphExec) error {
	if err := c.inCtx("cuGraphExecDestroy", fn.GraphExecDestroy, uintptr(g)); err != nil {
		return err
	}
	live.graphs.Add(-1)
	return nil
}

// Launch enqueues the executable graph on s.
func (g GraphExec) Launch(s Stream) error {
	return check("cuGraphLaunch", call(fn.GraphLaunch, uintptr(g), uintptr(s)))
}
