package cl

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Parameter names and flags from the OpenCL headers (only those used).
const (
	platformProfile    = 0x0900
	platformVersion    = 0x0901
	platformName       = 0x0902
	platformVendor     = 0x0903
	platformExtensions = 0x0904

	deviceType                     = 0x1000
	deviceMaxComputeUnits          = 0x1002
	deviceMaxWorkItemDimensions    = 0x1003
	deviceMaxWorkGroupSize         = 0x1004
	deviceMaxWorkItemSizes         = 0x1005
	deviceMaxClockFrequency        = 0x100C
	deviceMaxMemAllocSize          = 0x1010
	deviceMemBaseAddrAlign         = 0x1019
	deviceGlobalMemSize            = 0x101F
	deviceLocalMemSize             = 0x1023
	deviceProfilingTimerResolution = 0x1025
	deviceAvailable                = 0x1027
	deviceCompilerAvailable        = 0x1028
	deviceName                     = 0x102B
	deviceVendor                   = 0x102C
	driverVersion                  = 0x102D
	deviceVersion                  = 0x102F
	deviceHostUnifiedMemory        = 0x1035
	deviceOpenCLCVersion           = 0x103D

	contextPlatform = 0x1084

	queueProperties        = 0x1093
	queueProfilingEnable   = 1 << 1
	bufferCreateTypeRegion = 0x1220
	memSize                = 0x1102

	programBuildStatus = 0x1181
	programBuildLog    = 0x1183
	programKernelNames = 0x1168

	kernelWorkGroupSize                  = 0x11B0
	kernelLocalMemSize                   = 0x11B2
	kernelPreferredWorkGroupSizeMultiple = 0x11B3

	eventCommandExecutionStatus = 0x11D3

	profilingCommandQueued = 0x1280
	profilingCommandSubmit = 0x1281
	profilingCommandStart  = 0x1282
	profilingCommandEnd    = 0x1283
)

// DeviceType is a bit set of CL_DEVICE_TYPE_* values.
type DeviceType uint64

// Device types.
const (
	DeviceTypeDefault     DeviceType = 1 << 0
	DeviceTypeCPU         DeviceType = 1 << 1
	DeviceTypeGPU         DeviceType = 1 << 2
	DeviceTypeAccelerator DeviceType = 1 << 3
	DeviceTypeCustom      DeviceType = 1 << 4
	DeviceTypeAll         DeviceType = 0xFFFFFFFF
)

// String names the most specific type bit: "CPU", "GPU", "accelerator", ….
func (t DeviceType) String() string {
	switch {
	case t&DeviceTypeGPU != 0:
		return "GPU"
	case t&DeviceTypeCPU != 0:
		return "CPU"
	case t&DeviceTypeAccelerator != 0:
		return "accelerator"
	case t&DeviceTypeCustom != 0:
		return "custom"
	}
	return "device"
}

// MemFlags are CL_MEM_* flags for CreateBuffer.
type MemFlags uint64

// Memory flags.
const (
	MemReadWrite    MemFlags = 1 << 0
	MemWriteOnly    MemFlags = 1 << 1
	MemReadOnly     MemFlags = 1 << 2
	MemUseHostPtr   MemFlags = 1 << 3
	MemAllocHostPtr MemFlags = 1 << 4 // pinned, host-visible memory
	MemCopyHostPtr  MemFlags = 1 << 5
)

// MapFlags are CL_MAP_* flags for EnqueueMapBuffer.
type MapFlags uint64

// Map flags.
const (
	MapRead                  MapFlags = 1 << 0
	MapWrite                 MapFlags = 1 << 1
	MapWriteInvalidateRegion MapFlags = 1 << 2
)

// Live counts the OpenCL objects this package has created and not yet
// released, by kind. Tests use it to prove that nothing leaks.
type Live struct {
	Contexts, Queues, Buffers, Programs, Kernels, Events int64
}

var live struct {
	contexts, queues, buffers, programs, kernels, events atomic.Int64
}

// LiveObjects returns the current counts of unreleased objects.
func LiveObjects() Live {
	return Live{
		Contexts: live.contexts.Load(), Queues: live.queues.Load(), Buffers: live.buffers.Load(),
		Programs: live.programs.Load(), Kernels: live.kernels.Load(), Events: live.events.Load(),
	}
}

// ---------------------------------------------------------------------------
// Platforms and devices

// Platform is an OpenCL platform (one vendor's driver, found through an ICD).
type Platform struct {
	ID                                         uintptr
	Name, Vendor, Version, Profile, Extensions string
}

// Major and Minor parse the platform's "OpenCL M.m ..." version string.
func (p Platform) Major() int { m, _ := parseVersion(p.Version); return m }

// Minor returns the minor version number of the platform.
func (p Platform) Minor() int { _, n := parseVersion(p.Version); return n }

func parseVersion(s string) (int, int) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, 0
	}
	a, b, _ := strings.Cut(f[1], ".")
	maj, _ := strconv.Atoi(a)
	min, _ := strconv.Atoi(b)
	return maj, min
}

// Platforms lists the installed platforms. With no ICD installed it returns
// an error wrapping ErrNoPlatform.
func Platforms() ([]Platform, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	var n uint32
	st := call(fn.GetPlatformIDs, 0, 0, uintptr(unsafe.Pointer(&n)))
	if st == int32(ErrPlatformNotFoundKHR) || (st == 0 && n == 0) {
		return nil, ErrNoPlatform
	}
	if err := check("clGetPlatformIDs", st); err != nil {
		return nil, err
	}
	ids := make([]uintptr, n)
	if err := check("clGetPlatformIDs", call(fn.GetPlatformIDs, uintptr(n), uintptr(unsafe.Pointer(&ids[0])), 0)); err != nil {
		return nil, err
	}
	out := make([]Platform, n)
	for i, id := range ids {
		p := Platform{ID: id}
		p.Name, _ = platformString(id, platformName)
		p.Vendor, _ = platformString(id, platformVendor)
		p.Version, _ = platformString(id, platformVersion)
		p.Profile, _ = platformString(id, platformProfile)
		p.Extensions, _ = platformString(id, platformExtensions)
		out[i] = p
	}
	return out, nil
}

func platformString(id uintptr, param uint32) (string, error) {
	var size uintptr
	if err := check("clGetPlatformInfo", call(fn.GetPlatformInfo, id, uintptr(param), 0, 0, uintptr(unsafe.Pointer(&size)))); err != nil {
		return "", err
	}
	if size == 0 {
		return "", nil
	}
	b := make([]byte, size)
	if err := check("clGetPlatformInfo", call(fn.GetPlatformInfo, id, uintptr(param), size, uintptr(unsafe.Pointer(&b[0])), 0)); err != nil {
		return "", err
	}
	return cstring(b), nil
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

// DeviceInfo describes one OpenCL device.
type DeviceInfo struct {
	ID                                                   uintptr
	Platform                                             uintptr
	Name, Vendor, Version, DriverVersion, OpenCLCVersion string
	Type                                                 DeviceType
	ComputeUnits, ClockMHz, MemBaseAddrAlignBits         uint32
	GlobalMemSize, LocalMemSize, MaxMemAllocSize         uint64
	MaxWorkGroupSize                                     uintptr
	MaxWorkItemSizes                                     []uintptr
	ProfilingTimerResolution                             uintptr
	Available, CompilerAvailable, HostUnifiedMemory      bool
	// PCIBus is "domain:bus:device" in hex when the device answers
	// cl_khr_pci_bus_info or NVIDIA's attribute query, else "".
	PCIBus string
}

// Devices lists every device of the platform (none is not an error).
func (p Platform) Devices() ([]DeviceInfo, error) {
	var n uint32
	st := call(fn.GetDeviceIDs, p.ID, uintptr(DeviceTypeAll), 0, 0, uintptr(unsafe.Pointer(&n)))
	if st == int32(ErrDeviceNotFound) || (st == 0 && n == 0) {
		return nil, nil
	}
	if err := check("clGetDeviceIDs", st); err != nil {
		return nil, err
	}
	ids := make([]uintptr, n)
	if err := check("clGetDeviceIDs", call(fn.GetDeviceIDs, p.ID, uintptr(DeviceTypeAll), uintptr(n), uintptr(unsafe.Pointer(&ids[0])), 0)); err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, n)
	for _, id := range ids {
		d, err := deviceInfo(id)
		if err != nil {
			return nil, err
		}
		d.Platform = p.ID
		out = append(out, d)
	}
	return out, nil
}

func deviceBytes(id uintptr, param uint32) ([]byte, error) {
	var size uintptr
	if err := check("clGetDeviceInfo", call(fn.GetDeviceInfo, id, uintptr(param), 0, 0, uintptr(unsafe.Pointer(&size)))); err != nil {
		return nil, fmt.Errorf("device info 0x%x: %w", param, err)
	}
	if size == 0 {
		return nil, nil
	}
	b := make([]byte, size)
	if err := check("clGetDeviceInfo", call(fn.GetDeviceInfo, id, uintptr(param), size, uintptr(unsafe.Pointer(&b[0])), 0)); err != nil {
		return nil, fmt.Errorf("device info 0x%x: %w", param, err)
	}
	return b, nil
}

func le(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func deviceInfo(id uintptr) (DeviceInfo, error) {
	d := DeviceInfo{ID: id}
	var firstErr error
	get := func(param uint32) []byte {
		b, err := deviceBytes(id, param)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return b
	}
	d.Name = cstring(get(deviceName))
	d.Vendor = cstring(get(deviceVendor))
	d.Version = cstring(get(deviceVersion))
	d.DriverVersion = cstring(get(driverVersion))
	d.OpenCLCVersion = cstring(get(deviceOpenCLCVersion))
	d.Type = DeviceType(le(get(deviceType)))
	d.ComputeUnits = uint32(le(get(deviceMaxComputeUnits)))
	d.ClockMHz = uint32(le(get(deviceMaxClockFrequency)))
	d.MemBaseAddrAlignBits = uint32(le(get(deviceMemBaseAddrAlign)))
	d.GlobalMemSize = le(get(deviceGlobalMemSize))
	d.LocalMemSize = le(get(deviceLocalMemSize))
	d.MaxMemAllocSize = le(get(deviceMaxMemAllocSize))
	d.MaxWorkGroupSize = uintptr(le(get(deviceMaxWorkGroupSize)))
	dims := int(le(get(deviceMaxWorkItemDimensions)))
	if b := get(deviceMaxWorkItemSizes); len(b) >= dims*8 {
		for i := range dims {
			d.MaxWorkItemSizes = append(d.MaxWorkItemSizes, uintptr(le(b[i*8:i*8+8])))
		}
	}
	d.ProfilingTimerResolution = uintptr(le(get(deviceProfilingTimerResolution)))
	d.Available = le(get(deviceAvailable)) != 0
	d.CompilerAvailable = le(get(deviceCompilerAvailable)) != 0
	d.HostUnifiedMemory = le(get(deviceHostUnifiedMemory)) != 0 // deprecated in 2.0 but still answered
	d.PCIBus = pciBus(id)
	if firstErr != nil && d.Name == "" {
		return d, firstErr
	}
	return d, nil
}

// Device info of extensions: cl_khr_pci_bus_info, and NVIDIA's
// cl_nv_device_attribute_query.
const (
	devicePCIBusInfoKHR = 0x410F // {domain, bus, device, function} cl_uint
	devicePCIBusIDNV    = 0x4008
	devicePCISlotIDNV   = 0x4009
	devicePCIDomainIDNV = 0x400A
)

// pciBus returns the device's PCI address as "domain:bus:device" in hex,
// or "" when the driver answers neither query.
func pciBus(id uintptr) string {
	if b, err := deviceBytes(id, devicePCIBusInfoKHR); err == nil && len(b) >= 12 {
		return fmt.Sprintf("%04x:%02x:%02x", le(b[0:4]), le(b[4:8]), le(b[8:12]))
	}
	bus, err := deviceBytes(id, devicePCIBusIDNV)
	if err != nil || len(bus) < 4 {
		return ""
	}
	var dom, slot uint64
	if b, err := deviceBytes(id, devicePCIDomainIDNV); err == nil && len(b) >= 4 {
		dom = le(b[:4])
	}
	if b, err := deviceBytes(id, devicePCISlotIDNV); err == nil && len(b) >= 4 {
		slot = le(b[:4])
	}
	return fmt.Sprintf("%04x:%02x:%02x", dom, le(bus[:4]), slot)
}

// ---------------------------------------------------------------------------
// Context

// Context is an OpenCL context over devices of one platform (contexts cannot
// span vendors: open one per platform).
type Context struct {
	h        uintptr
	platform Platform
	devices  []uintptr
	released atomic.Bool
}

// CreateContext creates a context for the given devices of platform p.
func CreateContext(p Platform, devices []uintptr) (*Context, error) {
	if err := Load(); err != nil {
		return nil, err
	}
	if len(devices) == 0 {
		return nil, &Error{Op: "clCreateContext", Status: ErrInvalidValue, Detail: "no devices"}
	}
	props := []uintptr{contextPlatform, p.ID, 0}
	devs := append([]uintptr(nil), devices...)
	var st int32
	h := callp(fn.CreateContext, uintptr(unsafe.Pointer(&props[0])), uintptr(len(devs)), uintptr(unsafe.Pointer(&devs[0])), 0, 0, uintptr(unsafe.Pointer(&st)))
	if err := check("clCreateContext", st); err != nil {
		return nil, err
	}
	live.contexts.Add(1)
	return &Context{h: h, platform: p, devices: devs}, nil
}

// Handle returns the raw cl_context.
func (c *Context) Handle() uintptr { return c.h }

// Platform returns the context's platform.
func (c *Context) Platform() Platform { return c.platform }

// Release releases the context; later calls do nothing.
func (c *Context) Release() error {
	if c == nil || !c.released.CompareAndSwap(false, true) {
		return nil
	}
	live.contexts.Add(-1)
	return check("clReleaseContext", call(fn.ReleaseContext, c.h))
}

// ---------------------------------------------------------------------------
// Queues

// Queue is an in-order command queue on one device.
type Queue struct {
	h         uintptr
	device    uintptr
	profiling bool
	released  atomic.Bool
}

// CreateQueue creates an in-order queue on device d, with profiling enabled
// when asked. It uses clCreateCommandQueueWithProperties on OpenCL 2.0+
// platforms and clCreateCommandQueue on 1.x.
func (c *Context) CreateQueue(d uintptr, profiling bool) (*Queue, error) {
	var st int32
	var h uintptr
	var bits uintptr
	if profiling {
		bits = queueProfilingEnable
	}
	if fn.CreateCommandQueueWithProperties != 0 && c.platform.Major() >= 2 || fn.CreateCommandQueue == 0 {
		props := []uintptr{queueProperties, bits, 0}
		h = callp(fn.CreateCommandQueueWithProperties, c.h, d, uintptr(unsafe.Pointer(&props[0])), uintptr(unsafe.Pointer(&st)))
		if err := check("clCreateCommandQueueWithProperties", st); err != nil {
			return nil, err
		}
	} else {
		h = callp(fn.CreateCommandQueue, c.h, d, bits, uintptr(unsafe.Pointer(&st)))
		if err := check("clCreateCommandQueue", st); err != nil {
			return nil, err
		}
	}
	live.queues.Add(1)
	return &Queue{h: h, device: d, profiling: profiling}, nil
}

// Profiling reports whether the queue records profiling times.
func (q *Queue) Profiling() bool { return q.profiling }

// Flush submits the queued commands to the device.
func (q *Queue) Flush() error { return check("clFlush", call(fn.Flush, q.h)) }

// Finish blocks until every queued command has completed.
func (q *Queue) Finish() error { return check("clFinish", call(fn.Finish, q.h)) }

// Release finishes and releases the queue; later calls do nothing.
func (q *Queue) Release() error {
	if q == nil || !q.released.CompareAndSwap(false, true) {
		return nil
	}
	live.queues.Add(-1)
	err := q.Finish()
	return errors.Join(err, check("clReleaseCommandQueue", call(fn.ReleaseCommandQueue, q.h)))
}

// ---------------------------------------------------------------------------
// Buffers

// Buffer is a cl_mem buffer object (or a sub-buffer of one).
type Buffer struct {
	h        uintptr
	size     uintptr
	flags    MemFlags
	parent   *Buffer
	released atomic.Bool
}

// CreateBuffer allocates size bytes with the given flags. host may be nil,
// or the pointer MemUseHostPtr/MemCopyHostPtr refer to.
func (c *Context) CreateBuffer(flags MemFlags, size uintptr, host unsafe.Pointer) (*Buffer, error) {
	var st int32
	h := callp(fn.CreateBuffer, c.h, uintptr(flags), size, uintptr(host), uintptr(unsafe.Pointer(&st)))
	if st != 0 {
		return nil, &Error{Op: "clCreateBuffer", Status: Status(st), Detail: strconv.FormatUint(uint64(size), 10) + " bytes"}
	}
	live.buffers.Add(1)
	return &Buffer{h: h, size: size, flags: flags}, nil
}

// SubBuffer creates a view of size bytes at offset within b. The offset must
// be a multiple of the device's MemBaseAddrAlignBits/8 (else
// ErrMisalignedSubBufferOffset). Release the sub-buffer before its parent.
func (b *Buffer) SubBuffer(flags MemFlags, offset, size uintptr) (*Buffer, error) {
	region := [2]uintptr{offset, size}
	var st int32
	h := callp(fn.CreateSubBuffer, b.h, uintptr(flags), bufferCreateTypeRegion, uintptr(unsafe.Pointer(&region[0])), uintptr(unsafe.Pointer(&st)))
	if st != 0 {
		return nil, &Error{Op: "clCreateSubBuffer", Status: Status(st), Detail: fmt.Sprintf("offset %d size %d of %d", offset, size, b.size)}
	}
	live.buffers.Add(1)
	return &Buffer{h: h, size: size, flags: flags, parent: b}, nil
}

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() uintptr { return b.size }

// Flags returns the flags the buffer was created with.
func (b *Buffer) Flags() MemFlags { return b.flags }

// Handle returns the raw cl_mem.
func (b *Buffer) Handle() uintptr { return b.h }

// QuerySize asks the runtime for the buffer's size (CL_MEM_SIZE).
func (b *Buffer) QuerySize() (uintptr, error) {
	var v uintptr
	err := check("clGetMemObjectInfo", call(fn.GetMemObjectInfo, b.h, memSize, unsafe.Sizeof(v), uintptr(unsafe.Pointer(&v)), 0))
	return v, err
}

// Release releases the buffer; later calls do nothing.
func (b *Buffer) Release() error {
	if b == nil || !b.released.CompareAndSwap(false, true) {
		return nil
	}
	live.buffers.Add(-1)
	return check("clReleaseMemObject", call(fn.ReleaseMemObject, b.h))
}

// ---------------------------------------------------------------------------
// Programs and kernels

// Program is a program object built from OpenCL C source.
type Program struct {
	h        uintptr
	ctx      *Context
	released atomic.Bool
}

// BuildError is a failed clBuildProgram with the compiler's log.
type BuildError struct {
	Status  Status
	Options string
	Log     string
}

// Error renders the status and the build log.
func (e *BuildError) Error() string {
	return fmt.Sprintf("clBuildProgram: %v\n%s", e.Status, strings.TrimRight(e.Log, "\n"))
}

// Unwrap returns the Status (usually ErrBuildProgramFailure).
func (e *BuildError) Unwrap() error { return e.Status }

// CreateProgram creates a program from source (not yet built).
func (c *Context) CreateProgram(source string) (*Program, error) {
	if source == "" {
		return nil, &Error{Op: "clCreateProgramWithSource", Status: ErrInvalidValue, Detail: "empty source"}
	}
	src := []byte(source)
	ptrs := [1]uintptr{uintptr(unsafe.Pointer(&src[0]))}
	lens := [1]uintptr{uintptr(len(src))}
	var st int32
	h := callp(fn.CreateProgramWithSource, c.h, 1, uintptr(unsafe.Pointer(&ptrs[0])), uintptr(unsafe.Pointer(&lens[0])), uintptr(unsafe.Pointer(&st)))
	runtime.KeepAlive(src)
	if err := check("clCreateProgramWithSource", st); err != nil {
		return nil, err
	}
	live.programs.Add(1)
	return &Program{h: h, ctx: c}, nil
}

// Build compiles and links the program for the given devices (all of the
// context's when nil) with options (e.g. "-cl-std=CL1.2 -DN=4"). On failure
// it returns a *BuildError carrying the build log of the first failing device.
func (p *Program) Build(devices []uintptr, options string) error {
	if devices == nil {
		devices = p.ctx.devices
	}
	opts := append([]byte(options), 0)
	devs := append([]uintptr(nil), devices...)
	st := call(fn.BuildProgram, p.h, uintptr(len(devs)), uintptr(unsafe.Pointer(&devs[0])), uintptr(unsafe.Pointer(&opts[0])), 0, 0)
	if st == 0 {
		return nil
	}
	e := &BuildError{Status: Status(st), Options: options}
	for _, d := range devs {
		if log, _ := p.BuildLog(d); strings.TrimSpace(log) != "" {
			e.Log = log
			break
		}
	}
	return e
}

// BuildLog returns the build log for device d.
func (p *Program) BuildLog(d uintptr) (string, error) {
	var size uintptr
	if err := check("clGetProgramBuildInfo", call(fn.GetProgramBuildInfo, p.h, d, programBuildLog, 0, 0, uintptr(unsafe.Pointer(&size)))); err != nil {
		return "", err
	}
	if size == 0 {
		return "", nil
	}
	b := make([]byte, size)
	if err := check("clGetProgramBuildInfo", call(fn.GetProgramBuildInfo, p.h, d, programBuildLog, size, uintptr(unsafe.Pointer(&b[0])), 0)); err != nil {
		return "", err
	}
	return string(bytes.TrimRight(b, "\x00")), nil
}

// KernelNames lists the program's kernels (after a successful build).
func (p *Program) KernelNames() ([]string, error) {
	var size uintptr
	if err := check("clGetProgramInfo", call(fn.GetProgramInfo, p.h, programKernelNames, 0, 0, uintptr(unsafe.Pointer(&size)))); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, nil
	}
	b := make([]byte, size)
	if err := check("clGetProgramInfo", call(fn.GetProgramInfo, p.h, programKernelNames, size, uintptr(unsafe.Pointer(&b[0])), 0)); err != nil {
		return nil, err
	}
	s := cstring(b)
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, ";"), nil
}

// Release releases the program; later calls do nothing.
func (p *Program) Release() error {
	if p == nil || !p.released.CompareAndSwap(false, true) {
		return nil
	}
	live.programs.Add(-1)
	return check("clReleaseProgram", call(fn.ReleaseProgram, p.h))
}

// Kernel is one __kernel function of a built program. Setting arguments is
// not safe for concurrent use on the same Kernel.
type Kernel struct {
	h        uintptr
	name     string
	released atomic.Bool
}

// CreateKernel creates the kernel called name.
func (p *Program) CreateKernel(name string) (*Kernel, error) {
	cname := append([]byte(name), 0)
	var st int32
	h := callp(fn.CreateKernel, p.h, uintptr(unsafe.Pointer(&cname[0])), uintptr(unsafe.Pointer(&st)))
	if st != 0 {
		return nil, &Error{Op: "clCreateKernel", Status: Status(st), Detail: strconv.Quote(name)}
	}
	live.kernels.Add(1)
	return &Kernel{h: h, name: name}, nil
}

// Name returns the kernel's function name.
func (k *Kernel) Name() string { return k.name }

// SetArg sets argument i to the size bytes at value (copied by OpenCL).
// A nil value with size > 0 declares __local memory of that size.
func (k *Kernel) SetArg(i int, size uintptr, value unsafe.Pointer) error {
	st := call(fn.SetKernelArg, k.h, uintptr(i), size, uintptr(value))
	if st != 0 {
		return &Error{Op: "clSetKernelArg", Status: Status(st), Detail: fmt.Sprintf("kernel %s argument %d (%d bytes)", k.name, i, size)}
	}
	return nil
}

// SetArgBuffer sets argument i to buffer b.
func (k *Kernel) SetArgBuffer(i int, b *Buffer) error {
	h := b.h
	return k.SetArg(i, unsafe.Sizeof(h), unsafe.Pointer(&h))
}

// SetArgLocal declares argument i as __local memory of size bytes.
func (k *Kernel) SetArgLocal(i int, size uintptr) error { return k.SetArg(i, size, nil) }

// WorkGroupInfo is what clGetKernelWorkGroupInfo says about a kernel on a device.
type WorkGroupInfo struct {
	WorkGroupSize, PreferredMultiple uintptr
	LocalMemSize                     uint64
}

// WorkGroupInfo queries the kernel's limits on device d.
func (k *Kernel) WorkGroupInfo(d uintptr) (WorkGroupInfo, error) {
	var w WorkGroupInfo
	err := check("clGetKernelWorkGroupInfo", call(fn.GetKernelWorkGroupInfo, k.h, d, kernelWorkGroupSize, unsafe.Sizeof(w.WorkGroupSize), uintptr(unsafe.Pointer(&w.WorkGroupSize)), 0))
	if err == nil {
		err = check("clGetKernelWorkGroupInfo", call(fn.GetKernelWorkGroupInfo, k.h, d, kernelPreferredWorkGroupSizeMultiple, unsafe.Sizeof(w.PreferredMultiple), uintptr(unsafe.Pointer(&w.PreferredMultiple)), 0))
	}
	if err == nil {
		err = check("clGetKernelWorkGroupInfo", call(fn.GetKernelWorkGroupInfo, k.h, d, kernelLocalMemSize, unsafe.Sizeof(w.LocalMemSize), uintptr(unsafe.Pointer(&w.LocalMemSize)), 0))
	}
	return w, err
}

// Release releases the kernel; later calls do nothing.
func (k *Kernel) Release() error {
	if k == nil || !k.released.CompareAndSwap(false, true) {
		return nil
	}
	live.kernels.Add(-1)
	return check("clReleaseKernel", call(fn.ReleaseKernel, k.h))
}
