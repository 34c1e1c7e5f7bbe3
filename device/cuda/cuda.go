// Package cuda is sluice's CUDA backend: every CUDA device as a
// device.Device, on top of the purego binding internal/cu (the driver API
// in libcuda.so.1 and NVRTC). No cgo: without an NVIDIA driver the backend
// reports itself unavailable with the reason, and `go build ./...` works
// anywhere.
//
// Devices are named "cuda:N" (N the driver's ordinal). Each Device uses the
// device's primary context, made current on the calling OS thread for each
// driver call (see internal/cu). Queues are non-blocking streams; every
// command returns an Event (a pooled CUDA event recorded after it). Kernels
// are CUDA C compiled at run time by NVRTC for the device's architecture
// (sm_XY → CUBIN, falling back to compute_XY → PTX when NVRTC does not know
// the architecture); build errors come back as *device.BuildError at the
// user's file and line.
//
// Device memory comes from a pool: one cuMemAlloc at Open (Options.PoolSize)
// sub-allocated first-fit with coalescing, so the steady state of a running
// graph never calls cuMemAlloc; requests the pool cannot serve go to
// cuMemAlloc directly. Capture records launches and copies on a queue once
// as a CUDA Graph that Graph.Launch replays with one driver call.
package cuda

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/cu"
)

// Name is the backend's name and device-ID prefix.
const Name = "cuda"

func init() { device.Register(backend{}) }

type backend struct{}

func (backend) Name() string { return Name }

// Reason returns why CUDA is unavailable on this machine (nil when it has
// at least one device): "libcuda.so.1 not found (no NVIDIA driver): …",
// "driver present but cuInit failed: …", "no CUDA device".
func Reason() error {
	_, err := scan()
	return err
}

// Probe is Reason, kept for callers of the earlier driver probe.
func Probe() error { return Reason() }

func reason(err error) error {
	switch {
	case errors.Is(err, cu.ErrLibraryNotFound):
		return err // "libcuda.so.1 not found (no NVIDIA driver): …"
	case errors.Is(err, cu.ErrNoDevice):
		return fmt.Errorf("driver present but it sees no CUDA device: %w", err)
	}
	var e *cu.Error
	if errors.As(err, &e) && e.Op == "cuInit" {
		return fmt.Errorf("driver present but cuInit failed (no usable GPU?): %w", err)
	}
	return err
}

type found struct {
	dev  cu.Device
	cu   cu.DeviceInfo
	info device.Info
}

var scanned struct {
	sync.Mutex
	fs  []found
	err error
	at  time.Time
}

// scan lists the devices (cached for a second: Open calls Discover).
func scan() ([]found, error) {
	scanned.Lock()
	defer scanned.Unlock()
	if !scanned.at.IsZero() && time.Since(scanned.at) < time.Second {
		return scanned.fs, scanned.err
	}
	scanned.fs, scanned.err = scanNow()
	scanned.at = time.Now()
	return scanned.fs, scanned.err
}

func scanNow() ([]found, error) {
	if err := cu.Load(); err != nil {
		return nil, reason(err)
	}
	n, err := cu.DeviceCount()
	if err != nil {
		return nil, reason(err)
	}
	if n == 0 {
		return nil, fmt.Errorf("driver present but it sees no CUDA device: %w", device.ErrNotFound)
	}
	var out []found
	for i := range n {
		d, err := cu.GetDevice(i)
		if err != nil {
			return nil, err
		}
		ci, err := d.Info()
		if err != nil {
			return nil, fmt.Errorf("cuda:%d: %w", i, err)
		}
		out = append(out, found{dev: d, cu: ci, info: infoOf(i, ci)})
	}
	return out, nil
}

func infoOf(i int, ci cu.DeviceInfo) device.Info {
	drv := ""
	if ci.DriverMajor > 0 {
		drv = fmt.Sprintf("CUDA %d.%d", ci.DriverMajor, ci.DriverMinor)
	}
	return device.Info{
		ID: fmt.Sprintf("%s:%d", Name, i), Backend: Name, Name: ci.Name, Vendor: "NVIDIA",
		Version: fmt.Sprintf("compute capability %d.%d (sm_%d%d)", ci.Major, ci.Minor, ci.Major, ci.Minor),
		Driver:  drv, Kind: device.GPU, ComputeUnits: ci.SMs, ClockMHz: ci.ClockMHz,
		GlobalMem: ci.TotalMem, LocalMem: ci.MaxSharedPerBlock, MaxAlloc: ci.TotalMem,
		MaxWorkGroupSize: ci.MaxThreadsPerBlock, MaxThreadsPerComputeUnit: ci.MaxThreadsPerSM, HostUnified: ci.Integrated,
		PCIBus: fmt.Sprintf("%04x:%02x:%02x", ci.PCIDomain, ci.PCIBus, ci.PCIDevice),
	}
}

func (backend) Discover(context.Context) ([]device.Info, error) {
	fs, err := scan()
	if err != nil {
		return nil, err
	}
	out := make([]device.Info, len(fs))
	for i, f := range fs {
		out[i] = f.info
	}
	return out, nil
}

func (backend) Open(ctx context.Context, id string) (device.Device, error) {
	return Open(ctx, id, Options{})
}

// Options configure a device opened with Open.
type Options struct {
	// PoolSize is the bytes of device memory allocated at Open and
	// sub-allocated by Alloc. 0 means DefaultPoolSize (or the environment
	// variable SLUICE_CUDA_POOL_MB); a negative value disables the pool.
	PoolSize int64
	// NoTiming creates events without timing (CU_EVENT_DISABLE_TIMING):
	// cheaper to record after every command, but Event.Times then says
	// device.ErrUnsupported.
	NoTiming bool
}

// DefaultPoolSize is the pool allocated at Open when Options.PoolSize is 0,
// capped at a quarter of the device's free memory.
const DefaultPoolSize int64 = 256 << 20

// Open opens the device "cuda:N". An unknown ID gives a
// *device.NotFoundError listing the CUDA devices that exist.
func Open(ctx context.Context, id string, opt Options) (*Device, error) {
	fs, err := scan()
	if err != nil {
		return nil, err
	}
	infos := make([]device.Info, len(fs))
	for i := range fs {
		infos[i] = fs[i].info
	}
	i, err := device.Lookup(infos, id)
	if err != nil {
		return nil, err
	}
	f := &fs[i]
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := f.dev.RetainPrimary()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.info, err)
	}
	d := &Device{dev: f.dev, ctx: c, cu: f.cu, info: f.info, noTiming: opt.NoTiming}
	size := opt.PoolSize
	if size == 0 {
		size = DefaultPoolSize
		if v, err := strconv.ParseInt(os.Getenv("SLUICE_CUDA_POOL_MB"), 10, 64); err == nil {
			size = v << 20
		}
		if free, _, err := c.MemInfo(); err == nil && size > free/4 {
			size = free / 4
		}
	}
	if size > 0 {
		base, err := c.MemAlloc(size)
		if err != nil {
			_ = f.dev.ReleasePrimary()
			return nil, device.OutOfMemory(d.info, "memory pool", size, err)
		}
		d.pool = newPool(base, size)
	}
	return d, nil
}

// Device is one CUDA device (its primary context).
type Device struct {
	dev      cu.Device
	ctx      cu.Context
	cu       cu.DeviceInfo
	info     device.Info
	pool     *pool
	direct   atomic.Int64 // live cuMemAlloc'd buffers outside the pool
	noTiming bool

	noGraphs atomic.Bool // stream capture failed once: batches launch directly

	evMu   sync.Mutex
	evFree []*evt
	closed atomic.Bool
}

var _ device.Device = (*Device)(nil)

// Info describes the device: Version is "compute capability M.m (sm_Mm)",
// ComputeUnits the SM count.
func (d *Device) Info() device.Info { return d.info }

// CU returns the raw device information.
func (d *Device) CU() cu.DeviceInfo { return d.cu }

// Context returns the primary context the device uses.
func (d *Device) Context() cu.Context { return d.ctx }

// Arch returns the compute capability as "sm_XY".
func (d *Device) Arch() string { return fmt.Sprintf("sm_%d%d", d.cu.Major, d.cu.Minor) }

// PoolStats describes the device memory pool.
type PoolStats struct {
	// Size is the pool's bytes; Used those handed out; Largest the largest
	// free run.
	Size, Used, Largest int64
	// Buffers is the live pool allocations; Direct the live allocations
	// made with cuMemAlloc because the pool could not serve them.
	Buffers, Direct int
}

// Pool returns the pool's state.
func (d *Device) Pool() PoolStats {
	s := PoolStats{Direct: int(d.direct.Load())}
	if d.pool != nil {
		s.Size, s.Used, s.Largest, s.Buffers = d.pool.stats()
	}
	return s
}

// Alloc allocates device memory, from the pool when it has room (no driver
// call), else with cuMemAlloc. Sizes beyond the device's memory are refused
// before asking the driver. access is advisory on CUDA.
func (d *Device) Alloc(size int64, access device.Access) (device.Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("buffer of %d bytes on %s: expected a size > 0", size, d.info)
	}
	if size > d.info.GlobalMem {
		return nil, device.OutOfMemory(d.info, "buffer", size, errors.New("larger than the device's memory"))
	}
	if d.pool != nil {
		if p, ok := d.pool.alloc(size); ok {
			return &Buffer{dev: d, ptr: p, size: size, pooled: true}, nil
		}
	}
	p, err := d.ctx.MemAlloc(size)
	if err != nil {
		if cu.IsOutOfMemory(err) {
			return nil, device.OutOfMemory(d.info, "buffer", size, err)
		}
		return nil, fmt.Errorf("buffer of %s on %s: %w", device.Size(size), d.info, err)
	}
	d.direct.Add(1)
	return &Buffer{dev: d, ptr: p, size: size}, nil
}

// AllocHost allocates pinned (page-locked, portable) host memory with
// cuMemHostAlloc.
func (d *Device) AllocHost(size int64) (device.HostBuffer, error) {
	return d.hostAlloc("pinned host buffer", size, cu.HostAllocPortable)
}

// hostAlloc allocates what (for messages) with cuMemHostAlloc and flags.
func (d *Device) hostAlloc(what string, size int64, flags uint32) (*HostBuffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("%s of %d bytes on %s: expected a size > 0", what, size, d.info)
	}
	p, err := d.ctx.MemHostAlloc(size, flags)
	if err != nil {
		if cu.IsOutOfMemory(err) {
			return nil, device.OutOfMemory(d.info, what, size, err)
		}
		return nil, fmt.Errorf("%s of %s on %s: %w", what, device.Size(size), d.info, err)
	}
	return &HostBuffer{dev: d, p: p, b: unsafe.Slice((*byte)(p), size)}, nil
}

var _ device.HostPinner = (*Device)(nil)

// PinHost page-locks b for DMA (cuMemHostRegister, portable), widened to
// whole 4 KiB pages. b must stay alive until the returned unpin is called.
func (d *Device) PinHost(b []byte) (unpin func() error, err error) {
	if len(b) == 0 {
		return func() error { return nil }, nil
	}
	const page = 4096
	start := uintptr(unsafe.Pointer(&b[0]))
	lo := start &^ (page - 1)
	hi := (start + uintptr(len(b)) + page - 1) &^ (page - 1)
	if err := d.ctx.MemHostRegister(lo, int64(hi-lo), cu.HostRegisterPortable); err != nil {
		return nil, fmt.Errorf("pinning %s of host memory for %s: %w", device.Size(int64(len(b))), d.info, err)
	}
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() { err = d.ctx.MemHostUnregister(lo) })
		return err
	}, nil
}

// nvrtcDiag is NVRTC's (EDG's) diagnostic form: "file(line): error: msg",
// "file(line): warning #177-D: msg".
var nvrtcDiag = regexp.MustCompile(`(?m)^(.*?)\((\d+)\): (catastrophic error|error|warning|remark|note)( #[\w-]+)?: (.*)$`)

// clangStyle rewrites NVRTC diagnostics into "file:line: severity: msg"
// so device.MapLog reads them.
func clangStyle(log string) string {
	return nvrtcDiag.ReplaceAllStringFunc(log, func(l string) string {
		m := nvrtcDiag.FindStringSubmatch(l)
		sev := m[3]
		if sev == "catastrophic error" {
			sev = "fatal error"
		}
		msg := m[5]
		if m[4] != "" {
			msg += " [" + strings.TrimSpace(m[4]) + "]"
		}
		return fmt.Sprintf("%s:%s: %s: %s", m[1], m[2], sev, msg)
	})
}

// Build compiles CUDA C with NVRTC for the device's architecture. options
// are NVRTC options separated by spaces ("-default-device -DN=4"); the
// architecture is added unless options name one. Kernels declared
// extern "C" keep their names; others are found by their plain name too.
func (d *Device) Build(ctx context.Context, src device.Source, options string) (device.Program, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := src.Name
	if name == "" {
		name = "kernel.cu"
		src.Name = name
	}
	text, pre := device.Assemble(src)
	opts := strings.Fields(options)
	hasArch := false
	for _, o := range opts {
		if strings.HasPrefix(o, "--gpu-architecture") || strings.HasPrefix(o, "-arch") {
			hasArch = true
		}
	}
	var c *cu.Compiled
	var err error
	if hasArch {
		c, err = cu.Compile(text, device.PreludeName, opts)
	} else {
		c, err = cu.Compile(text, device.PreludeName, append([]string{"--gpu-architecture=" + d.Arch()}, opts...))
		if errors.Is(err, cu.NVRTCErrInvalidOption) {
			// NVRTC older than the GPU: PTX for the newest it knows, JIT-compiled by the driver.
			arch := fmt.Sprintf("compute_%d%d", d.cu.Major, d.cu.Minor)
			if as := cu.SupportedArchs(); len(as) > 0 && as[len(as)-1] < d.cu.Major*10+d.cu.Minor {
				arch = fmt.Sprintf("compute_%d", as[len(as)-1])
			}
			c, err = cu.Compile(text, device.PreludeName, append([]string{"--gpu-architecture=" + arch}, opts...))
		}
	}
	if err != nil {
		var ce *cu.CompileError
		if errors.As(err, &ce) {
			log, diags := device.MapLog(clangStyle(ce.Log), name, pre)
			return nil, &device.BuildError{Device: d.info, File: name, Diagnostics: diags, Log: log, Err: err}
		}
		if errors.Is(err, cu.ErrNVRTCNotFound) {
			return nil, fmt.Errorf("building %s for %s: %w: %w", name, d.info, device.ErrUnsupported, err)
		}
		return nil, fmt.Errorf("building %s for %s: %w", name, d.info, err)
	}
	m, err := d.ctx.ModuleLoadData(c.Image)
	if err != nil {
		return nil, fmt.Errorf("building %s for %s: loading the module: %w", name, d.info, err)
	}
	log, _ := device.MapLog(clangStyle(c.Log), name, pre)
	return &Program{dev: d, mod: m, log: strings.TrimSpace(log), names: kernelNames(c), file: name}, nil
}

var ptxEntry = regexp.MustCompile(`\.entry\s+([A-Za-z_$][\w$]*)`)

// kernelNames lists a module's kernels: the .text.NAME function symbols of
// a CUBIN, or the .entry directives of PTX.
func kernelNames(c *cu.Compiled) []string {
	var names []string
	if c.PTX {
		for _, m := range ptxEntry.FindAllStringSubmatch(string(c.Image), -1) {
			names = append(names, m[1])
		}
		return names
	}
	f, err := elf.NewFile(strings.NewReader(string(c.Image)))
	if err != nil {
		return nil
	}
	syms, _ := f.Symbols()
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || int(s.Section) >= len(f.Sections) || s.Section == elf.SHN_UNDEF {
			continue
		}
		if f.Sections[s.Section].Name == ".text."+s.Name {
			names = append(names, s.Name)
		}
	}
	return names
}

// NewQueue creates an in-order queue: a non-blocking CUDA stream.
func (d *Device) NewQueue() (device.Queue, error) { return d.Queue() }

// Queue is NewQueue with the concrete type (for Capture).
func (d *Device) Queue() (*Queue, error) {
	s, err := d.ctx.StreamCreate(cu.StreamNonBlocking)
	if err != nil {
		return nil, fmt.Errorf("queue on %s: %w", d.info, err)
	}
	q := &Queue{dev: d, s: s, maps: map[*byte]mapping{}}
	q.ref, err = d.getEvent()
	if err == nil {
		err = d.run(func() error { return q.ref.h.Record(s) })
	}
	if err != nil {
		_ = d.ctx.StreamDestroy(s)
		return nil, fmt.Errorf("queue on %s: %w", d.info, err)
	}
	return q, nil
}

// run runs f with the device's context current on a locked OS thread.
func (d *Device) run(f func() error) error { return d.ctx.Do(f) }

// Close frees the pool and the pooled events and releases the primary
// context; buffers, programs and queues must be released first. Later
// calls do nothing.
func (d *Device) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	d.evMu.Lock()
	for _, e := range d.evFree {
		errs = append(errs, d.ctx.EventDestroy(e.h))
	}
	d.evFree = nil
	d.evMu.Unlock()
	if d.pool != nil {
		if _, used, _, n := d.pool.stats(); n > 0 {
			errs = append(errs, fmt.Errorf("closing %s: %d buffers (%s) of the pool not released", d.info, n, device.Size(used)))
		}
		errs = append(errs, d.ctx.MemFree(d.pool.base))
	}
	errs = append(errs, d.dev.ReleasePrimary())
	return errors.Join(errs...)
}

// Buffer is device memory (a pool block, a cuMemAlloc, or a slice of one).
type Buffer struct {
	dev      *Device
	ptr      cu.DevicePtr
	size     int64
	pooled   bool
	slice    bool
	released atomic.Bool
}

// Device returns the buffer's device.
func (b *Buffer) Device() device.Device { return b.dev }

// Size returns the size in bytes.
func (b *Buffer) Size() int64 { return b.size }

// Ptr returns the device address.
func (b *Buffer) Ptr() cu.DevicePtr { return b.ptr }

// Slice returns a view of n bytes at off (any offset; kernels may need
// their token type's alignment). Releasing it frees nothing.
func (b *Buffer) Slice(off, n int64) (device.Buffer, error) {
	if off < 0 || n <= 0 || off+n > b.size {
		return nil, fmt.Errorf("slice [%d, %d) of a %d-byte buffer on %s: out of range", off, off+n, b.size, b.dev.info)
	}
	return &Buffer{dev: b.dev, ptr: b.ptr + cu.DevicePtr(off), size: n, slice: true}, nil
}

// Release frees the buffer (back to the pool, or cuMemFree); later calls
// do nothing. Commands using it must have completed.
func (b *Buffer) Release() error {
	if !b.released.CompareAndSwap(false, true) || b.slice {
		return nil
	}
	if b.pooled {
		b.dev.pool.release(b.ptr)
		return nil
	}
	b.dev.direct.Add(-1)
	return b.dev.ctx.MemFree(b.ptr)
}

// AllocMapped allocates size bytes of pinned host memory mapped into the
// device's address space (cuMemHostAlloc with CU_MEMHOSTALLOC_DEVICEMAP):
// kernels read and write it directly, over the bus, with no copy command
// (device.HostMapper).
func (d *Device) AllocMapped(size int64) (device.MappedBuffer, error) {
	h, err := d.hostAlloc("mapped host buffer", size, cu.HostAllocPortable|cu.HostAllocDeviceMap)
	if err != nil {
		return nil, err
	}
	ptr, err := d.ctx.MemHostGetDevicePointer(h.p)
	if err != nil {
		_ = h.Release()
		return nil, fmt.Errorf("mapped host buffer of %s on %s: %w", device.Size(size), d.info, err)
	}
	return &MappedBuffer{Buffer: Buffer{dev: d, ptr: ptr, size: size}, host: h}, nil
}

// MappedBuffer is pinned host memory that the device's kernels address
// directly (AllocMapped).
type MappedBuffer struct {
	Buffer
	host *HostBuffer
}

// Bytes returns the memory, for the host.
func (m *MappedBuffer) Bytes() []byte { return m.host.Bytes() }

// Release frees the memory; later calls do nothing. Commands using it must
// have completed.
func (m *MappedBuffer) Release() error {
	m.released.Store(true)
	return m.host.Release()
}

// asBuffer returns the device memory behind b: a *Buffer, or a mapped
// host buffer's.
func asBuffer(b device.Buffer) (*Buffer, bool) {
	switch x := b.(type) {
	case *Buffer:
		return x, true
	case *MappedBuffer:
		return &x.Buffer, true
	}
	return nil, false
}

// HostBuffer is pinned host memory (cuMemHostAlloc).
type HostBuffer struct {
	dev      *Device
	p        unsafe.Pointer
	b        []byte
	released atomic.Bool
}

// Bytes returns the memory.
func (h *HostBuffer) Bytes() []byte { return h.b }

// Release frees the memory; later calls do nothing.
func (h *HostBuffer) Release() error {
	if !h.released.CompareAndSwap(false, true) {
		return nil
	}
	h.b = nil
	return h.dev.ctx.MemFreeHost(h.p)
}

// Program is a loaded CUDA module.
type Program struct {
	dev      *Device
	mod      cu.Module
	log      string
	names    []string
	file     string
	released atomic.Bool
}

// Kernel returns the kernel called name: an extern "C" name, a mangled
// name, or the plain name of a C++ kernel when exactly one mangled name
// has it.
func (p *Program) Kernel(name string) (device.Kernel, error) {
	sym := name
	found := false
	for _, n := range p.names {
		if n == name {
			found = true
		}
	}
	if !found {
		enc := "_Z" + strconv.Itoa(len(name)) + name
		for _, n := range p.names {
			if strings.HasPrefix(n, enc) {
				sym = n
			}
		}
	}
	f, err := p.dev.ctx.Function(p.mod, sym)
	if err != nil {
		return nil, fmt.Errorf("kernel %q in %s on %s: %w (the program has %s)", name, p.file, p.dev.info, err, strings.Join(p.names, ", "))
	}
	k := &Kernel{dev: p.dev, f: f, name: name}
	if _, sizes, ok := f.Params(); ok {
		k.sizes = sizes
		k.known = true
		k.vals = make([][]byte, len(sizes))
		k.set = make([]bool, len(sizes))
		k.ptrs = make([]uintptr, len(sizes)+1)
	}
	return k, nil
}

// Kernels lists the module's kernel names (as the compiler emitted them).
func (p *Program) Kernels() []string { return append([]string(nil), p.names...) }

// Log returns the build log (warnings), mapped to the user's lines.
func (p *Program) Log() string { return p.log }

// Release unloads the module; later calls do nothing.
func (p *Program) Release() error {
	if !p.released.CompareAndSwap(false, true) {
		return nil
	}
	return p.dev.ctx.ModuleUnload(p.mod)
}

// Kernel is a CUDA function with its arguments. The argument values live in
// the Kernel (one allocation each, at first SetArg); a launch passes their
// addresses to cuLaunchKernel, which copies them.
type Kernel struct {
	dev    *Device
	f      cu.Function
	name   string
	known  bool  // sizes come from cuFuncGetParamInfo
	sizes  []int // parameter sizes
	vals   [][]byte
	set    []bool
	ptrs   []uintptr // addresses of vals[i][0], for kernelParams
	shared uint32
}

// Name returns the kernel's name.
func (k *Kernel) Name() string { return k.name }

// Function returns the CUDA function.
func (k *Kernel) Function() cu.Function { return k.f }

// SetShared sets the dynamic shared memory (extern __shared__) of each
// launch, in bytes.
func (k *Kernel) SetShared(n int) { k.shared = uint32(n) }

// SetArg sets argument i: a *Buffer of this device (its address), a sized
// scalar, or device.Bytes (a struct by value). device.Local is not a
// parameter in CUDA: use SetShared and extern __shared__. When the driver
// reports parameter sizes (CUDA 12.4+), a value of the wrong size is
// refused.
func (k *Kernel) SetArg(i int, v any) error {
	var raw [8]byte
	var b []byte
	put := func(p unsafe.Pointer, n int) { copy(raw[:], unsafe.Slice((*byte)(p), n)); b = raw[:n] }
	if b, ok := v.(device.Buffer); ok {
		if x, ok := asBuffer(b); ok {
			v = x
		}
	}
	switch x := v.(type) {
	case *Buffer:
		if x.dev.ctx != k.dev.ctx {
			return fmt.Errorf("kernel %s argument %d: buffer of %s on a kernel of %s: expected a buffer of the kernel's device", k.name, i, x.dev.info, k.dev.info)
		}
		p := uint64(x.ptr)
		put(unsafe.Pointer(&p), 8)
	case device.Buffer:
		return fmt.Errorf("kernel %s argument %d: buffer of %s: expected a buffer of %s", k.name, i, x.Device().Info(), k.dev.info)
	case device.Local:
		return fmt.Errorf("kernel %s argument %d: device.Local: %w on CUDA (shared memory is not a parameter: declare extern __shared__ and call (*cuda.Kernel).SetShared)", k.name, i, device.ErrUnsupported)
	case device.Bytes:
		if len(x) == 0 {
			return fmt.Errorf("kernel %s argument %d: empty Bytes", k.name, i)
		}
		b = x
	case int8:
		put(unsafe.Pointer(&x), 1)
	case uint8:
		put(unsafe.Pointer(&x), 1)
	case int16:
		put(unsafe.Pointer(&x), 2)
	case uint16:
		put(unsafe.Pointer(&x), 2)
	case int32:
		put(unsafe.Pointer(&x), 4)
	case uint32:
		put(unsafe.Pointer(&x), 4)
	case int64:
		put(unsafe.Pointer(&x), 8)
	case uint64:
		put(unsafe.Pointer(&x), 8)
	case float32:
		put(unsafe.Pointer(&x), 4)
	case float64:
		put(unsafe.Pointer(&x), 8)
	case uintptr:
		put(unsafe.Pointer(&x), 8)
	default:
		return fmt.Errorf("kernel %s argument %d: a %T: expected a device buffer, device.Bytes or a sized scalar (int32, float32, …; not int)", k.name, i, v)
	}
	if i < 0 || (k.known && i >= len(k.sizes)) {
		return fmt.Errorf("kernel %s argument %d: out of range (the kernel has %d parameters)", k.name, i, len(k.sizes))
	}
	if k.known && len(b) != k.sizes[i] {
		return fmt.Errorf("kernel %s argument %d: a %T of %d bytes: expected %d bytes", k.name, i, v, len(b), k.sizes[i])
	}
	for i >= len(k.vals) {
		k.vals = append(k.vals, nil)
		k.set = append(k.set, false)
		k.ptrs = append(k.ptrs[:len(k.vals)-1], 0, 0)
	}
	if cap(k.vals[i]) < len(b) {
		k.vals[i] = make([]byte, len(b), max(len(b), 8))
		k.ptrs[i] = uintptr(unsafe.Pointer(&k.vals[i][0]))
	}
	k.vals[i] = k.vals[i][:len(b)]
	copy(k.vals[i], b)
	k.set[i] = true
	return nil
}

// params returns kernelParams for a launch, or an error naming unset arguments.
func (k *Kernel) params() (unsafe.Pointer, error) {
	for i, s := range k.set {
		if !s {
			return nil, fmt.Errorf("launch of kernel %s on %s: argument %d not set", k.name, k.dev.info, i)
		}
	}
	if len(k.vals) == 0 {
		return nil, nil
	}
	return unsafe.Pointer(&k.ptrs[0]), nil
}

// Release drops the kernel (the module owns the function); later calls do nothing.
func (k *Kernel) Release() error { return nil }

// evt is a pooled CUDA event, reference-counted: an Event holds its own and
// its predecessor's (for Times).
type evt struct {
	h    cu.Event
	refs atomic.Int32
	dev  *Device
}

func (d *Device) getEvent() (*evt, error) {
	d.evMu.Lock()
	if n := len(d.evFree); n > 0 {
		e := d.evFree[n-1]
		d.evFree = d.evFree[:n-1]
		d.evMu.Unlock()
		e.refs.Store(1)
		return e, nil
	}
	d.evMu.Unlock()
	flags := uint32(cu.EventDefault)
	if d.noTiming {
		flags = cu.EventDisableTiming
	}
	h, err := d.ctx.EventCreate(flags)
	if err != nil {
		return nil, err
	}
	e := &evt{h: h, dev: d}
	e.refs.Store(1)
	return e, nil
}

func (e *evt) unref() {
	if e == nil || e.refs.Add(-1) != 0 {
		return
	}
	d := e.dev
	d.evMu.Lock()
	if d.closed.Load() {
		d.evMu.Unlock()
		_ = d.ctx.EventDestroy(e.h)
		return
	}
	d.evFree = append(d.evFree, e)
	d.evMu.Unlock()
}

// mapping is a region handed out by Map.
type mapping struct {
	b      *Buffer
	off, n int64
	mode   device.MapMode
	host   []byte
}

// Queue is an in-order queue: a non-blocking CUDA stream.
type Queue struct {
	dev       *Device
	s         cu.Stream
	ref       *evt // recorded at creation: Times count from it
	last      *evt // the latest command's event
	capturing *capture
	maps      map[*byte]mapping
	released  bool

	// batches (batch.go)
	bt      *batch
	inBatch bool
	graphs  map[string]*batchGraph
	seen    map[string]bool
	counts  device.BatchStats
	// noUpdates: a graph's kernel arguments could not be set or named, so
	// graphs are keyed by argument values
	noUpdates bool
	// Fork's second stream and its fork and join events (made on first use)
	s2             cu.Stream
	evFork, evJoin cu.Event
	// Lane's side streams (lanes 1…) and their join events, made on first use
	lanes  []cu.Stream
	evLane []cu.Event
	// After's events, one per launch index waited for, made on first use
	evDep []cu.Event
}

var _ device.Queue = (*Queue)(nil)
var _ device.Retainer = (*Event)(nil)

// Device returns the queue's device.
func (q *Queue) Device() device.Device { return q.dev }

// Stream returns the CUDA stream.
func (q *Queue) Stream() cu.Stream { return q.s }

func (q *Queue) buf(b device.Buffer) (*Buffer, error) {
	x, ok := asBuffer(b)
	if !ok || x.dev.ctx != q.dev.ctx {
		return nil, fmt.Errorf("buffer of %s used on a queue of %s: expected a buffer of this device (use device.Transfer across devices)", b.Device().Info(), q.dev.info)
	}
	if x.released.Load() {
		return nil, fmt.Errorf("buffer on %s: %w", q.dev.info, device.ErrReleased)
	}
	return x, nil
}

// waits makes the stream wait for evs: events of this device on the GPU
// (cuStreamWaitEvent), others on the host. The context is current.
func (q *Queue) waits(evs []device.Event) error {
	for _, e := range evs {
		switch x := e.(type) {
		case nil:
		case *Event:
			if x.captured {
				if x.q == q {
					continue // in order within the capture
				}
				return fmt.Errorf("waiting on a command captured on another queue: %w", device.ErrUnsupported)
			}
			if x.released.Load() {
				return fmt.Errorf("wait list: %w", device.ErrReleased)
			}
			if x.e.dev.ctx == q.dev.ctx || q.capturing == nil {
				if q.capturing != nil {
					return fmt.Errorf("waiting, inside a capture, on a command outside it: %w (wait before Capture)", device.ErrUnsupported)
				}
				if err := q.s.WaitEvent(x.e.h); err != nil {
					return err
				}
				continue
			}
			if err := x.Wait(context.Background()); err != nil {
				return err
			}
		default:
			if q.capturing != nil {
				return fmt.Errorf("waiting, inside a capture, on another device's event: %w", device.ErrUnsupported)
			}
			if err := x.Wait(context.Background()); err != nil {
				return err
			}
		}
	}
	return nil
}

// enqueue runs op with the context current, after the wait list, and
// returns the event recorded after it (or a captured event while capturing).
func (q *Queue) enqueue(what string, wait []device.Event, keep []byte, op func() error) (device.Event, error) {
	if q.released {
		return nil, fmt.Errorf("%s on %s: queue %w", what, q.dev.info, device.ErrReleased)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := q.dev.ctx.SetCurrent(); err != nil {
		return nil, err
	}
	if err := q.waits(wait); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", what, q.dev.info, err)
	}
	if err := op(); err != nil {
		return nil, q.fail(what, err)
	}
	if q.capturing != nil {
		if keep != nil {
			q.capturing.keep = append(q.capturing.keep, keep)
		}
		q.capturing.n++
		return &Event{q: q, captured: true}, nil
	}
	return q.record(keep)
}

// record records a pooled event after the stream's latest command. The
// context is current.
func (q *Queue) record(keep []byte) (*Event, error) {
	e, err := q.dev.getEvent()
	if err != nil {
		return nil, err
	}
	if r := e.h.RecordResult(q.s); r != 0 {
		e.unref()
		return nil, &cu.Error{Op: "cuEventRecord", Result: r}
	}
	prev := q.last
	if prev == nil {
		prev = q.ref
	}
	prev.refs.Add(1)
	ev := &Event{q: q, e: e, prev: prev, keep: keep}
	e.refs.Add(1)
	q.last.unref()
	q.last = e
	return ev, nil
}

func (q *Queue) fail(what string, err error) error {
	if cu.IsOutOfMemory(err) {
		return fmt.Errorf("%s on %s: %w: %w", what, q.dev.info, device.ErrOutOfMemory, err)
	}
	return fmt.Errorf("%s on %s: %w", what, q.dev.info, err)
}

func rangeErr(what string, off, n, size int64) error {
	return fmt.Errorf("%s of [%d, %d) of a %d-byte buffer: out of range", what, off, off+n, size)
}

// Write copies src into dst at off. src must stay untouched until the event
// completes (the event keeps it referenced); pinned memory (AllocHost)
// copies asynchronously at full speed, Go memory is staged by the driver.
func (q *Queue) Write(dst device.Buffer, off int64, src []byte, wait ...device.Event) (device.Event, error) {
	b, err := q.buf(dst)
	if err != nil {
		return nil, err
	}
	n := int64(len(src))
	if off < 0 || off+n > b.size {
		return nil, rangeErr("write", off, n, b.size)
	}
	if n == 0 {
		return q.Marker(wait...)
	}
	return q.enqueue("write", wait, src, func() error {
		return q.s.CopyHtoD(b.ptr+cu.DevicePtr(off), unsafe.Pointer(&src[0]), n)
	})
}

// Read copies len(dst) bytes of src at off into dst.
func (q *Queue) Read(dst []byte, src device.Buffer, off int64, wait ...device.Event) (device.Event, error) {
	b, err := q.buf(src)
	if err != nil {
		return nil, err
	}
	n := int64(len(dst))
	if off < 0 || off+n > b.size {
		return nil, rangeErr("read", off, n, b.size)
	}
	if n == 0 {
		return q.Marker(wait...)
	}
	return q.enqueue("read", wait, dst, func() error {
		return q.s.CopyDtoH(unsafe.Pointer(&dst[0]), b.ptr+cu.DevicePtr(off), n)
	})
}

// CopyPeer copies n bytes from src at srcOff to dst at dstOff, buffers of
// this device or of another CUDA device (device.PeerCopier): directly
// when EnablePeer allowed it, staged by the driver otherwise. It is
// ordered on this queue's stream.
func (q *Queue) CopyPeer(dst device.Buffer, dstOff int64, src device.Buffer, srcOff, n int64, wait ...device.Event) (device.Event, error) {
	d, dok := asBuffer(dst)
	s, sok := asBuffer(src)
	if !dok || !sok {
		return nil, fmt.Errorf("peer copy on %s: buffers of %s and %s: expected CUDA buffers", q.dev.info, dst.Device().Info(), src.Device().Info())
	}
	if d.dev.ctx != q.dev.ctx && s.dev.ctx != q.dev.ctx {
		return nil, fmt.Errorf("peer copy on %s: from %s to %s: expected one buffer of the queue's device", q.dev.info, s.dev.info, d.dev.info)
	}
	if d.released.Load() || s.released.Load() {
		return nil, fmt.Errorf("peer copy on %s: %w", q.dev.info, device.ErrReleased)
	}
	if n < 0 || srcOff < 0 || dstOff < 0 || srcOff+n > s.size || dstOff+n > d.size {
		return nil, fmt.Errorf("peer copy of %d bytes from %d of a %d-byte buffer to %d of a %d-byte buffer: out of range", n, srcOff, s.size, dstOff, d.size)
	}
	if n == 0 {
		return q.Marker(wait...)
	}
	return q.enqueue("peer copy", wait, nil, func() error {
		return q.s.CopyPeer(d.ptr+cu.DevicePtr(dstOff), d.dev.ctx, s.ptr+cu.DevicePtr(srcOff), s.dev.ctx, n)
	})
}

// EnablePeer lets this device and other (a CUDA device) access each
// other's memory directly when the hardware allows it (cuCtxEnablePeerAccess
// both ways), and reports whether it does (device.PeerEnabler). Peer
// copies work either way; without access the driver stages them.
func (d *Device) EnablePeer(other device.Device) (bool, error) {
	o, ok := other.(*Device)
	if !ok {
		return false, fmt.Errorf("peer access from %s to %s: expected a CUDA device", d.info, other.Info())
	}
	if o.ctx == d.ctx {
		return true, nil
	}
	for _, p := range [][2]*Device{{d, o}, {o, d}} {
		can, err := p[0].dev.CanAccessPeer(p[1].dev)
		if err != nil {
			return false, fmt.Errorf("peer access from %s to %s: %w", p[0].info, p[1].info, err)
		}
		if !can {
			return false, nil
		}
	}
	for _, p := range [][2]*Device{{d, o}, {o, d}} {
		if err := p[0].ctx.EnablePeerAccess(p[1].ctx); err != nil {
			return false, fmt.Errorf("peer access from %s to %s: %w", p[0].info, p[1].info, err)
		}
	}
	return true, nil
}

// Copy copies n bytes between buffers of this device.
func (q *Queue) Copy(dst device.Buffer, dstOff int64, src device.Buffer, srcOff, n int64, wait ...device.Event) (device.Event, error) {
	d, err := q.buf(dst)
	if err != nil {
		return nil, err
	}
	s, err := q.buf(src)
	if err != nil {
		return nil, err
	}
	if n < 0 || srcOff < 0 || srcOff+n > s.size {
		return nil, rangeErr("copy", srcOff, n, s.size)
	}
	if dstOff < 0 || dstOff+n > d.size {
		return nil, rangeErr("copy", dstOff, n, d.size)
	}
	if n == 0 {
		return q.Marker(wait...)
	}
	return q.enqueue("copy", wait, nil, func() error {
		return q.s.CopyDtoD(d.ptr+cu.DevicePtr(dstOff), s.ptr+cu.DevicePtr(srcOff), n)
	})
}

// Fill sets n bytes of b at off to v (cuMemsetD8Async).
func (q *Queue) Fill(b device.Buffer, off, n int64, v byte, wait ...device.Event) (device.Event, error) {
	x, err := q.buf(b)
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || off+n > x.size {
		return nil, rangeErr("fill", off, n, x.size)
	}
	return q.enqueue("fill", wait, nil, func() error { return q.s.MemsetD8(x.ptr+cu.DevicePtr(off), v, n) })
}

// Launch runs kernel k over r: Global/Local work-items per dimension become
// a grid of Global/Local blocks of Local threads (device.Groups(G, I) is G
// blocks of I threads). With Local nil the block is the largest of 256,
// 128, …, 1 that divides Global. Offsets are not supported.
func (q *Queue) Launch(k device.Kernel, r device.Range, wait ...device.Event) (device.Event, error) {
	kk, ok := k.(*Kernel)
	if !ok || kk.dev.ctx != q.dev.ctx {
		return nil, fmt.Errorf("launch of kernel %s on %s: expected a kernel built for this device", k.Name(), q.dev.info)
	}
	grid, block, err := shape(r)
	if err != nil {
		return nil, fmt.Errorf("launch of kernel %s on %s: %w", kk.name, q.dev.info, err)
	}
	params, err := kk.params()
	if err != nil {
		return nil, err
	}
	ev, err := q.enqueue("launch", wait, nil, func() error {
		return kk.f.Launch(q.s, grid, block, kk.shared, params)
	})
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", kk.name, err)
	}
	return ev, nil
}

func shape(r device.Range) (grid, block cu.Dim3, err error) {
	if len(r.Global) == 0 || len(r.Global) > 3 {
		return grid, block, fmt.Errorf("range with %d dimensions: expected 1 to 3", len(r.Global))
	}
	for _, o := range r.Offset {
		if o != 0 {
			return grid, block, fmt.Errorf("global offset %v: %w on CUDA", r.Offset, device.ErrUnsupported)
		}
	}
	if r.Local != nil && len(r.Local) != len(r.Global) {
		return grid, block, fmt.Errorf("local size %v for global size %v: expected as many dimensions", r.Local, r.Global)
	}
	g := [3]int{1, 1, 1}
	l := [3]int{1, 1, 1}
	for i, n := range r.Global {
		if n <= 0 {
			return grid, block, fmt.Errorf("global size %v: expected sizes > 0", r.Global)
		}
		loc := 1
		if r.Local != nil {
			loc = r.Local[i]
		} else if i == 0 {
			for _, c := range []int{256, 128, 64, 32, 16, 8, 4, 2, 1} {
				if n%c == 0 {
					loc = c
					break
				}
			}
		}
		if loc <= 0 || n%loc != 0 {
			return grid, block, fmt.Errorf("global size %v, local size %v: expected each global size to be a multiple of the local size", r.Global, r.Local)
		}
		g[i], l[i] = n/loc, loc
	}
	return cu.Dim3{X: uint32(g[0]), Y: uint32(g[1]), Z: uint32(g[2])}, cu.Dim3{X: uint32(l[0]), Y: uint32(l[1]), Z: uint32(l[2])}, nil
}

// Marker returns an event that completes when the listed events (or, with
// none, every earlier command) have.
func (q *Queue) Marker(wait ...device.Event) (device.Event, error) {
	return q.enqueue("marker", wait, nil, func() error { return nil })
}

// Map copies n bytes of b at off into host memory and returns it (it
// blocks). Write to it with MapWrite, then Unmap copies it back. CUDA has
// no mapping of device memory: this is a read and a write.
func (q *Queue) Map(b device.Buffer, off, n int64, mode device.MapMode, wait ...device.Event) ([]byte, error) {
	x, err := q.buf(b)
	if err != nil {
		return nil, err
	}
	if n <= 0 || off < 0 || off+n > x.size {
		return nil, fmt.Errorf("map [%d, %d) of a %d-byte buffer on %s: out of range", off, off+n, x.size, q.dev.info)
	}
	host := make([]byte, n)
	if mode&device.MapRead != 0 || mode == 0 {
		ev, err := q.Read(host, b, off, wait...)
		if err != nil {
			return nil, err
		}
		err = ev.Wait(context.Background())
		ev.Release()
		if err != nil {
			return nil, err
		}
	} else if len(wait) > 0 {
		for _, e := range wait {
			if e != nil {
				if err := e.Wait(context.Background()); err != nil {
					return nil, err
				}
			}
		}
	}
	q.maps[&host[0]] = mapping{b: x, off: off, n: n, mode: mode, host: host}
	return host, nil
}

// Unmap ends a mapping from Map, writing it back when mapped for writing.
func (q *Queue) Unmap(b device.Buffer, mapped []byte, wait ...device.Event) (device.Event, error) {
	if len(mapped) == 0 {
		return nil, fmt.Errorf("unmap on %s: empty mapping", q.dev.info)
	}
	m, ok := q.maps[&mapped[0]]
	if !ok {
		return nil, fmt.Errorf("unmap on %s: not a mapping of this queue", q.dev.info)
	}
	delete(q.maps, &mapped[0])
	if m.mode&device.MapWrite != 0 {
		return q.Write(m.b, m.off, m.host, wait...)
	}
	return q.Marker(wait...)
}

// Flush does nothing: CUDA submits commands as they are enqueued.
func (q *Queue) Flush() error { return nil }

// Finish waits for every queued command (cuStreamSynchronize).
func (q *Queue) Finish() error {
	if q.released {
		return nil
	}
	return q.dev.run(q.s.Synchronize)
}

// Release finishes and destroys the stream; later calls do nothing.
func (q *Queue) Release() error {
	if q.released {
		return nil
	}
	err := errors.Join(q.Finish(), q.releaseGraphs())
	q.released = true
	q.last.unref()
	q.ref.unref()
	q.last, q.ref = nil, nil
	if q.s2 != 0 {
		err = errors.Join(err, q.dev.ctx.EventDestroy(q.evFork), q.dev.ctx.EventDestroy(q.evJoin), q.dev.ctx.StreamDestroy(q.s2))
	}
	for i := range q.lanes {
		err = errors.Join(err, q.dev.ctx.EventDestroy(q.evLane[i]), q.dev.ctx.StreamDestroy(q.lanes[i]))
	}
	for _, e := range q.evDep {
		err = errors.Join(err, q.dev.ctx.EventDestroy(e))
	}
	q.evDep = nil
	return errors.Join(err, q.dev.ctx.StreamDestroy(q.s))
}

// Event is the completion of one command: a CUDA event recorded after it.
type Event struct {
	q        *Queue
	e, prev  *evt
	keep     []byte // host memory the command uses, kept referenced
	captured bool
	released atomic.Bool
}

var errCaptured = fmt.Errorf("the command was captured into a CUDA graph, not run: wait on the event of Graph.Launch: %w", device.ErrUnsupported)

// Wait blocks until the command completes. With a cancellable ctx it polls
// cuEventQuery (backing off up to 1 ms) so cancellation is prompt;
// otherwise it blocks in cuEventSynchronize.
func (e *Event) Wait(ctx context.Context) error {
	if e.captured {
		return errCaptured
	}
	if e.released.Load() {
		return device.ErrReleased
	}
	if ctx.Done() == nil {
		return e.e.dev.run(e.e.h.Synchronize)
	}
	d := time.Microsecond
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		s, err := e.Status()
		if err != nil || s == device.Complete {
			return err
		}
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if d < time.Millisecond {
			d *= 2
		}
	}
}

// Status polls the command's state: Complete, Running (CUDA cannot tell
// queued from running) or Failed with the error.
func (e *Event) Status() (device.Status, error) {
	if e.captured {
		return device.Failed, errCaptured
	}
	if e.released.Load() {
		return device.Failed, device.ErrReleased
	}
	var r cu.Result
	_ = e.e.dev.run(func() error { r = e.e.h.QueryResult(); return nil })
	switch r {
	case cu.Success:
		return device.Complete, nil
	case cu.ErrNotReady:
		return device.Running, nil
	}
	return device.Failed, &cu.Error{Op: "cuEventQuery", Result: r}
}

// Times returns the command's timestamps in nanoseconds since its queue was
// created. CUDA events mark points between commands, so Start is the end of
// the previous command on the queue: exact while the queue is busy, earlier
// than the true start when it was idle. End−Start is precise to about
// 0.5 µs; the offsets lose precision as the queue ages (float ms).
func (e *Event) Times() (device.Times, error) {
	if e.captured {
		return device.Times{}, errCaptured
	}
	if e.released.Load() {
		return device.Times{}, device.ErrReleased
	}
	if e.e.dev.noTiming {
		return device.Times{}, fmt.Errorf("event times: %w (the device was opened with NoTiming)", device.ErrUnsupported)
	}
	var start, dur float32
	err := e.e.dev.run(func() error {
		var err error
		if e.prev != e.q.ref && e.q.ref != nil {
			if start, err = cu.Elapsed(e.q.ref.h, e.prev.h); err != nil {
				return err
			}
		}
		dur, err = cu.Elapsed(e.prev.h, e.e.h)
		return err
	})
	if err != nil {
		return device.Times{}, err
	}
	s := uint64(float64(start) * 1e6)
	return device.Times{Queued: s, Submit: s, Start: s, End: s + uint64(float64(dur)*1e6)}, nil
}

// Release drops the event; later calls do nothing.
func (e *Event) Release() {
	if e.released.CompareAndSwap(false, true) && !e.captured {
		e.e.unref()
		e.prev.unref()
		e.keep = nil
	}
}

// Retain returns a second reference to the command's completion, released
// on its own (device.Retainer).
func (e *Event) Retain() (device.Event, error) {
	if e.released.Load() {
		return nil, device.ErrReleased
	}
	if e.captured {
		return &Event{q: e.q, captured: true}, nil
	}
	e.e.refs.Add(1)
	e.prev.refs.Add(1)
	return &Event{q: e.q, e: e.e, prev: e.prev, keep: e.keep}, nil
}

// CUEvent returns the underlying CUDA event (0 for a captured command).
func (e *Event) CUEvent() cu.Event {
	if e.e == nil {
		return 0
	}
	return e.e.h
}

// ParseID returns the ordinal of "cuda:N".
func ParseID(id string) (int, error) {
	s, ok := strings.CutPrefix(id, Name+":")
	n, err := strconv.Atoi(s)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("device ID %q: expected cuda:N with N ≥ 0", id)
	}
	return n, nil
}
