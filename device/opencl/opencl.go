// Package opencl is sluice's OpenCL backend: every device of every OpenCL
// platform (one context per platform, since vendors cannot share one) as a
// device.Device, on top of the purego binding internal/cl. No cgo: without
// libOpenCL.so.1 or an installed platform the backend reports itself
// unavailable with the reason.
//
// Devices are named "opencl:P:D": platform P, device D, in the order the ICD
// loader lists them. Kernel build errors come back as *device.BuildError
// pointing at the user's file and line even when a generated prelude was
// prepended; allocations that do not fit come back wrapping
// device.ErrOutOfMemory with the size and the device.
package opencl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/cl"
)

// Name is the backend's name and device-ID prefix.
const Name = "opencl"

func init() { device.Register(backend) }

var backend = &Backend{plats: map[uintptr]*platformCtx{}}

// Backend is the OpenCL device.Backend.
type Backend struct {
	mu    sync.Mutex
	plats map[uintptr]*platformCtx
}

type platformCtx struct {
	p    cl.Platform
	ctx  *cl.Context
	refs int
}

// Name returns "opencl".
func (b *Backend) Name() string { return Name }

// Reason explains why OpenCL is unavailable, in words for `sluice devices`.
func reason(err error) error {
	switch {
	case errors.Is(err, cl.ErrLibraryNotFound):
		return fmt.Errorf("libOpenCL.so.1 not found: install an OpenCL ICD loader (ocl-icd-libopencl1) and a driver (pocl-opencl-icd, or the GPU vendor's): %w", err)
	case errors.Is(err, cl.ErrNoPlatform):
		return fmt.Errorf("no OpenCL platform: the ICD loader found no driver (install pocl-opencl-icd or a GPU driver's OpenCL ICD): %w", err)
	}
	return err
}

type found struct {
	p    cl.Platform
	pi   int
	d    cl.DeviceInfo
	di   int
	info device.Info
}

func (b *Backend) scan() ([]found, error) {
	ps, err := cl.Platforms()
	if err != nil {
		return nil, reason(err)
	}
	var out []found
	var names []string
	for pi, p := range ps {
		names = append(names, p.Name)
		ds, err := p.Devices()
		if err != nil {
			return nil, fmt.Errorf("platform %d (%s): listing devices: %w", pi, p.Name, err)
		}
		for di, d := range ds {
			out = append(out, found{p: p, pi: pi, d: d, di: di, info: infoOf(pi, di, p, d)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%d OpenCL platform(s) (%s) but no device: %w", len(ps), strings.Join(names, ", "), device.ErrNotFound)
	}
	return out, nil
}

func infoOf(pi, di int, p cl.Platform, d cl.DeviceInfo) device.Info {
	kind := device.Other
	switch {
	case d.Type&cl.DeviceTypeGPU != 0:
		kind = device.GPU
	case d.Type&cl.DeviceTypeCPU != 0:
		kind = device.CPU
	case d.Type&cl.DeviceTypeAccelerator != 0:
		kind = device.Accelerator
	}
	return device.Info{
		ID: fmt.Sprintf("%s:%d:%d", Name, pi, di), Backend: Name,
		Name: d.Name, Vendor: d.Vendor, Version: d.Version, Driver: d.DriverVersion, Platform: p.Name,
		Kind: kind, ComputeUnits: int(d.ComputeUnits), ClockMHz: int(d.ClockMHz),
		GlobalMem: int64(d.GlobalMemSize), LocalMem: int64(d.LocalMemSize), MaxAlloc: int64(d.MaxMemAllocSize),
		MaxWorkGroupSize: int(d.MaxWorkGroupSize), HostUnified: d.HostUnifiedMemory, PCIBus: d.PCIBus,
	}
}

// Discover lists every device of every platform, or says why there is none.
func (b *Backend) Discover(context.Context) ([]device.Info, error) {
	fs, err := b.scan()
	if err != nil {
		return nil, err
	}
	out := make([]device.Info, len(fs))
	for i, f := range fs {
		out[i] = f.info
	}
	return out, nil
}

// Open opens the device "opencl:P:D". An unknown ID gives a
// *device.NotFoundError listing the OpenCL devices that exist.
func (b *Backend) Open(ctx context.Context, id string) (device.Device, error) {
	fs, err := b.scan()
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
	pc, err := b.acquire(f.p, fs)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.info, err)
	}
	return &Device{pc: pc, cl: f.d, info: f.info}, nil
}

// acquire returns the platform's shared context, creating it over every
// available device of the platform on first use.
func (b *Backend) acquire(p cl.Platform, fs []found) (*platformCtx, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if pc := b.plats[p.ID]; pc != nil {
		pc.refs++
		return pc, nil
	}
	var ids []uintptr
	for _, f := range fs {
		if f.p.ID == p.ID && f.d.Available {
			ids = append(ids, f.d.ID)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("platform %s: %w: no available device", p.Name, device.ErrNotFound)
	}
	c, err := cl.CreateContext(p, ids)
	if err != nil {
		return nil, err
	}
	pc := &platformCtx{p: p, ctx: c, refs: 1}
	b.plats[p.ID] = pc
	return pc, nil
}

func (b *Backend) release(pc *platformCtx) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	pc.refs--
	if pc.refs > 0 {
		return nil
	}
	delete(b.plats, pc.p.ID)
	return pc.ctx.Release()
}

// Device is one OpenCL device.
type Device struct {
	pc     *platformCtx
	cl     cl.DeviceInfo
	info   device.Info
	mu     sync.Mutex
	mapQ   *cl.Queue // maps pinned host buffers
	closed atomic.Bool
}

// Info describes the device.
func (d *Device) Info() device.Info { return d.info }

// CL returns the raw device information (for tests and diagnostics).
func (d *Device) CL() cl.DeviceInfo { return d.cl }

// Align returns the alignment, in bytes, that Buffer.Slice offsets need.
func (d *Device) Align() int64 {
	if a := int64(d.cl.MemBaseAddrAlignBits / 8); a > 0 {
		return a
	}
	return 128
}

func (d *Device) oom(what string, size int64, err error) error {
	if errors.Is(err, cl.ErrMemObjectAllocationFailure) || errors.Is(err, cl.ErrOutOfResources) ||
		errors.Is(err, cl.ErrOutOfHostMemory) || errors.Is(err, cl.ErrInvalidBufferSize) {
		return device.OutOfMemory(d.info, what, size, err)
	}
	return fmt.Errorf("%s of %s on %s: %w", what, device.Size(size), d.info, err)
}

// Alloc allocates device memory. Sizes beyond the device's largest buffer
// (CL_DEVICE_MAX_MEM_ALLOC_SIZE) are refused before asking the driver. Many
// drivers allocate lazily: a buffer that does not fit may also fail at its
// first use, with the same kind of error.
func (d *Device) Alloc(size int64, access device.Access) (device.Buffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("buffer of %d bytes on %s: expected a size > 0", size, d.info)
	}
	if d.info.MaxAlloc > 0 && size > d.info.MaxAlloc {
		return nil, device.OutOfMemory(d.info, "buffer", size, errors.New("larger than the largest buffer the device allows"))
	}
	flags := cl.MemReadWrite
	switch access {
	case device.ReadOnly:
		flags = cl.MemReadOnly
	case device.WriteOnly:
		flags = cl.MemWriteOnly
	}
	m, err := d.pc.ctx.CreateBuffer(flags, uintptr(size), nil)
	if err != nil {
		return nil, d.oom("buffer", size, err)
	}
	return &Buffer{dev: d, mem: m, size: size}, nil
}

func (d *Device) mapQueue() (*cl.Queue, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mapQ == nil {
		q, err := d.pc.ctx.CreateQueue(d.cl.ID, false)
		if err != nil {
			return nil, err
		}
		d.mapQ = q
	}
	return d.mapQ, nil
}

// AllocHost allocates pinned host memory (CL_MEM_ALLOC_HOST_PTR) and keeps
// it mapped: Bytes is host memory the device reaches by DMA.
func (d *Device) AllocHost(size int64) (device.HostBuffer, error) {
	if size <= 0 {
		return nil, fmt.Errorf("host buffer of %d bytes on %s: expected a size > 0", size, d.info)
	}
	if d.info.MaxAlloc > 0 && size > d.info.MaxAlloc {
		return nil, device.OutOfMemory(d.info, "pinned host buffer", size, errors.New("larger than the largest buffer the device allows"))
	}
	q, err := d.mapQueue()
	if err != nil {
		return nil, err
	}
	m, err := d.pc.ctx.CreateBuffer(cl.MemReadWrite|cl.MemAllocHostPtr, uintptr(size), nil)
	if err != nil {
		return nil, d.oom("pinned host buffer", size, err)
	}
	p, err := q.EnqueueMap(m, true, cl.MapRead|cl.MapWrite, 0, uintptr(size), nil, nil)
	if err != nil {
		m.Release()
		return nil, d.oom("pinned host buffer (map)", size, err)
	}
	return &HostBuffer{dev: d, mem: m, q: q, p: p, b: unsafe.Slice((*byte)(p), size)}, nil
}

// Build compiles src for this device with the given clBuildProgram options.
func (d *Device) Build(ctx context.Context, src device.Source, options string) (device.Program, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text, pre := device.Assemble(src)
	name := src.Name
	if name == "" {
		name = "kernel"
	}
	p, err := d.pc.ctx.CreateProgram(text)
	if err != nil {
		return nil, fmt.Errorf("building %s for %s: %w", name, d.info, err)
	}
	if err := p.Build([]uintptr{d.cl.ID}, options); err != nil {
		p.Release()
		var be *cl.BuildError
		if errors.As(err, &be) {
			log, diags := device.MapLog(be.Log, name, pre)
			return nil, &device.BuildError{Device: d.info, File: name, Diagnostics: diags, Log: log, Err: err}
		}
		return nil, fmt.Errorf("building %s for %s: %w", name, d.info, err)
	}
	raw, _ := p.BuildLog(d.cl.ID)
	log, _ := device.MapLog(raw, name, pre)
	names, err := p.KernelNames()
	if err != nil {
		p.Release()
		return nil, fmt.Errorf("building %s for %s: listing kernels: %w", name, d.info, err)
	}
	return &Program{dev: d, p: p, log: strings.TrimSpace(log), names: names, file: name}, nil
}

// NewQueue creates an in-order queue with profiling enabled.
func (d *Device) NewQueue() (device.Queue, error) {
	q, err := d.pc.ctx.CreateQueue(d.cl.ID, true)
	if err != nil {
		return nil, fmt.Errorf("queue on %s: %w", d.info, err)
	}
	return &Queue{dev: d, q: q}, nil
}

// Close releases the device's queue for mapping and its share of the
// platform context; later calls do nothing.
func (d *Device) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	d.mu.Lock()
	if d.mapQ != nil {
		errs = append(errs, d.mapQ.Release())
		d.mapQ = nil
	}
	d.mu.Unlock()
	errs = append(errs, backend.release(d.pc))
	return errors.Join(errs...)
}

// Buffer is an OpenCL buffer (or sub-buffer).
type Buffer struct {
	dev  *Device
	mem  *cl.Buffer
	size int64
}

// Device returns the buffer's device.
func (b *Buffer) Device() device.Device { return b.dev }

// Size returns the size in bytes.
func (b *Buffer) Size() int64 { return b.size }

// CL returns the underlying cl buffer.
func (b *Buffer) CL() *cl.Buffer { return b.mem }

// Slice returns a sub-buffer; off must be a multiple of Device.Align.
func (b *Buffer) Slice(off, n int64) (device.Buffer, error) {
	if off < 0 || n <= 0 || off+n > b.size {
		return nil, fmt.Errorf("slice [%d, %d) of a %d-byte buffer on %s: out of range", off, off+n, b.size, b.dev.info)
	}
	if a := b.dev.Align(); off%a != 0 {
		return nil, fmt.Errorf("slice at offset %d on %s: expected a multiple of the device's base-address alignment %d bytes", off, b.dev.info, a)
	}
	m, err := b.mem.SubBuffer(b.mem.Flags()&(cl.MemReadWrite|cl.MemReadOnly|cl.MemWriteOnly), uintptr(off), uintptr(n))
	if err != nil {
		return nil, fmt.Errorf("slice [%d, %d) on %s: %w", off, off+n, b.dev.info, err)
	}
	return &Buffer{dev: b.dev, mem: m, size: n}, nil
}

// Release frees the buffer; later calls do nothing.
func (b *Buffer) Release() error { return b.mem.Release() }

// HostBuffer is pinned host memory kept mapped.
type HostBuffer struct {
	dev      *Device
	mem      *cl.Buffer
	q        *cl.Queue
	p        unsafe.Pointer
	b        []byte
	released atomic.Bool
}

// Bytes returns the mapped memory.
func (h *HostBuffer) Bytes() []byte { return h.b }

// Release unmaps and frees the memory; later calls do nothing.
func (h *HostBuffer) Release() error {
	if !h.released.CompareAndSwap(false, true) {
		return nil
	}
	h.b = nil
	var ev cl.Event
	err := h.q.EnqueueUnmap(h.mem, h.p, nil, &ev)
	if err == nil {
		err = ev.Wait()
		ev.Release()
	}
	return errors.Join(err, h.mem.Release())
}

// Program is a built OpenCL program.
type Program struct {
	dev   *Device
	p     *cl.Program
	log   string
	names []string
	file  string
}

// Kernel creates the kernel called name.
func (p *Program) Kernel(name string) (device.Kernel, error) {
	k, err := p.p.CreateKernel(name)
	if err != nil {
		return nil, fmt.Errorf("kernel %q in %s on %s: %w (the program has %s)", name, p.file, p.dev.info, err, strings.Join(p.names, ", "))
	}
	return &Kernel{dev: p.dev, k: k}, nil
}

// Kernels lists the kernel names.
func (p *Program) Kernels() []string { return append([]string(nil), p.names...) }

// Log returns the build log (warnings), mapped to the user's lines.
func (p *Program) Log() string { return p.log }

// Release frees the program; later calls do nothing.
func (p *Program) Release() error { return p.p.Release() }

// Kernel is an OpenCL kernel with its arguments.
type Kernel struct {
	dev *Device
	k   *cl.Kernel
}

// Name returns the kernel's name.
func (k *Kernel) Name() string { return k.k.Name() }

// WorkGroupInfo returns the kernel's limits on its device.
func (k *Kernel) WorkGroupInfo() (cl.WorkGroupInfo, error) { return k.k.WorkGroupInfo(k.dev.cl.ID) }

// SetArg sets argument i (see device.Kernel).
func (k *Kernel) SetArg(i int, v any) error {
	var err error
	switch x := v.(type) {
	case *Buffer:
		if x.dev.pc != k.dev.pc {
			return fmt.Errorf("kernel %s argument %d: buffer of %s on a kernel of %s: expected a buffer of the kernel's platform", k.Name(), i, x.dev.info, k.dev.info)
		}
		err = k.k.SetArgBuffer(i, x.mem)
	case device.Buffer:
		return fmt.Errorf("kernel %s argument %d: buffer of %s: expected a buffer of %s", k.Name(), i, x.Device().Info(), k.dev.info)
	case device.Local:
		err = k.k.SetArgLocal(i, uintptr(x))
	case device.Bytes:
		if len(x) == 0 {
			return fmt.Errorf("kernel %s argument %d: empty Bytes", k.Name(), i)
		}
		err = k.k.SetArg(i, uintptr(len(x)), unsafe.Pointer(&x[0]))
	case int8:
		err = k.k.SetArg(i, 1, unsafe.Pointer(&x))
	case uint8:
		err = k.k.SetArg(i, 1, unsafe.Pointer(&x))
	case int16:
		err = k.k.SetArg(i, 2, unsafe.Pointer(&x))
	case uint16:
		err = k.k.SetArg(i, 2, unsafe.Pointer(&x))
	case int32:
		err = k.k.SetArg(i, 4, unsafe.Pointer(&x))
	case uint32:
		err = k.k.SetArg(i, 4, unsafe.Pointer(&x))
	case int64:
		err = k.k.SetArg(i, 8, unsafe.Pointer(&x))
	case uint64:
		err = k.k.SetArg(i, 8, unsafe.Pointer(&x))
	case float32:
		err = k.k.SetArg(i, 4, unsafe.Pointer(&x))
	case float64:
		err = k.k.SetArg(i, 8, unsafe.Pointer(&x))
	default:
		return fmt.Errorf("kernel %s argument %d: a %T: expected a device buffer, device.Local, device.Bytes or a sized scalar (int32, float32, …; not int)", k.Name(), i, v)
	}
	return err
}

// Release frees the kernel; later calls do nothing.
func (k *Kernel) Release() error { return k.k.Release() }

// Queue is an in-order OpenCL command queue with profiling.
type Queue struct {
	dev     *Device
	q       *cl.Queue
	wait    []cl.Event
	batched int // launches since BeginBatch
}

// Device returns the queue's device.
func (q *Queue) Device() device.Device { return q.dev }

// waits turns a wait list into cl events of this context; events of other
// devices are waited for on the host first.
func (q *Queue) waits(evs []device.Event) ([]cl.Event, error) {
	q.wait = q.wait[:0]
	for _, e := range evs {
		switch x := e.(type) {
		case nil:
		case *Event:
			if x.pc == q.dev.pc {
				q.wait = append(q.wait, x.ev)
				continue
			}
			if err := x.Wait(context.Background()); err != nil {
				return nil, err
			}
		default:
			if err := x.Wait(context.Background()); err != nil {
				return nil, err
			}
		}
	}
	return q.wait, nil
}

func (q *Queue) buf(b device.Buffer) (*Buffer, error) {
	x, ok := b.(*Buffer)
	if !ok || x.dev.pc != q.dev.pc {
		return nil, fmt.Errorf("buffer of %s used on a queue of %s: expected a buffer of this device's platform (use device.Transfer across devices)", b.Device().Info(), q.dev.info)
	}
	return x, nil
}

func (q *Queue) event(ev cl.Event, keep []byte) *Event {
	return &Event{ev: ev, pc: q.dev.pc, q: q.q, keep: keep}
}

func (q *Queue) fail(op string, b *Buffer, err error) error {
	if errors.Is(err, cl.ErrMemObjectAllocationFailure) || errors.Is(err, cl.ErrOutOfResources) {
		return device.OutOfMemory(q.dev.info, op+" on a buffer", b.size, err)
	}
	return fmt.Errorf("%s on %s: %w", op, q.dev.info, err)
}

// Write copies src into dst at off; src must stay untouched until the event
// completes (the event keeps it referenced until then).
func (q *Queue) Write(dst device.Buffer, off int64, src []byte, wait ...device.Event) (device.Event, error) {
	b, err := q.buf(dst)
	if err != nil {
		return nil, err
	}
	if len(src) == 0 {
		return q.Marker(wait...)
	}
	w, err := q.waits(wait)
	if err != nil {
		return nil, err
	}
	var ev cl.Event
	if err := q.q.EnqueueWrite(b.mem, false, uintptr(off), uintptr(len(src)), unsafe.Pointer(&src[0]), w, &ev); err != nil {
		return nil, q.fail("write", b, err)
	}
	return q.event(ev, src), nil
}

// Read copies len(dst) bytes of src at off into dst.
func (q *Queue) Read(dst []byte, src device.Buffer, off int64, wait ...device.Event) (device.Event, error) {
	b, err := q.buf(src)
	if err != nil {
		return nil, err
	}
	if len(dst) == 0 {
		return q.Marker(wait...)
	}
	w, err := q.waits(wait)
	if err != nil {
		return nil, err
	}
	var ev cl.Event
	if err := q.q.EnqueueRead(b.mem, false, uintptr(off), uintptr(len(dst)), unsafe.Pointer(&dst[0]), w, &ev); err != nil {
		return nil, q.fail("read", b, err)
	}
	return q.event(ev, dst), nil
}

// Copy copies n bytes between buffers of this device's platform.
func (q *Queue) Copy(dst device.Buffer, dstOff int64, src device.Buffer, srcOff, n int64, wait ...device.Event) (device.Event, error) {
	d, err := q.buf(dst)
	if err != nil {
		return nil, err
	}
	s, err := q.buf(src)
	if err != nil {
		return nil, err
	}
	w, err := q.waits(wait)
	if err != nil {
		return nil, err
	}
	var ev cl.Event
	if err := q.q.EnqueueCopy(s.mem, d.mem, uintptr(srcOff), uintptr(dstOff), uintptr(n), w, &ev); err != nil {
		return nil, q.fail("copy", d, err)
	}
	return q.event(ev, nil), nil
}

func sizes(v []int) []uintptr {
	if v == nil {
		return nil
	}
	out := make([]uintptr, len(v))
	for i, x := range v {
		out[i] = uintptr(x)
	}
	return out
}

// Launch runs kernel k over r.
func (q *Queue) Launch(k device.Kernel, r device.Range, wait ...device.Event) (device.Event, error) {
	kk, ok := k.(*Kernel)
	if !ok || kk.dev.pc != q.dev.pc {
		return nil, fmt.Errorf("launch of kernel %s on %s: expected a kernel built for this device", k.Name(), q.dev.info)
	}
	w, err := q.waits(wait)
	if err != nil {
		return nil, err
	}
	var ev cl.Event
	if err := q.q.EnqueueKernel(kk.k, sizes(r.Offset), sizes(r.Global), sizes(r.Local), w, &ev); err != nil {
		return nil, fmt.Errorf("launch of kernel %s on %s: %w", k.Name(), q.dev.info, err)
	}
	return q.event(ev, nil), nil
}

// Marker returns an event that completes when the listed events (or, with
// none, every earlier command) have.
func (q *Queue) Marker(wait ...device.Event) (device.Event, error) {
	w, err := q.waits(wait)
	if err != nil {
		return nil, err
	}
	var ev cl.Event
	if err := q.q.EnqueueMarker(w, &ev); err != nil {
		return nil, fmt.Errorf("marker on %s: %w", q.dev.info, err)
	}
	return q.event(ev, nil), nil
}

// Map maps n bytes of b at off for the host (blocking).
func (q *Queue) Map(b device.Buffer, off, n int64, mode device.MapMode, wait ...device.Event) ([]byte, error) {
	x, err := q.buf(b)
	if err != nil {
		return nil, err
	}
	if n <= 0 || off < 0 || off+n > x.size {
		return nil, fmt.Errorf("map [%d, %d) of a %d-byte buffer on %s: out of range", off, off+n, x.size, q.dev.info)
	}
	var flags cl.MapFlags
	if mode&device.MapRead != 0 {
		flags |= cl.MapRead
	}
	if mode&device.MapWrite != 0 {
		flags |= cl.MapWrite
	}
	w, err := q.waits(wait)
	if err != nil {
		return nil, err
	}
	p, err := q.q.EnqueueMap(x.mem, true, flags, uintptr(off), uintptr(n), w, nil)
	if err != nil {
		return nil, q.fail("map", x, err)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// Unmap ends a mapping returned by Map.
func (q *Queue) Unmap(b device.Buffer, mapped []byte, wait ...device.Event) (device.Event, error) {
	x, err := q.buf(b)
	if err != nil {
		return nil, err
	}
	w, err := q.waits(wait)
	if err != nil {
		return nil, err
	}
	var ev cl.Event
	if err := q.q.EnqueueUnmap(x.mem, unsafe.Pointer(unsafe.SliceData(mapped)), w, &ev); err != nil {
		return nil, fmt.Errorf("unmap on %s: %w", q.dev.info, err)
	}
	return q.event(ev, nil), nil
}

// Flush submits the queued commands.
func (q *Queue) Flush() error { return q.q.Flush() }

// Finish waits for every queued command.
func (q *Queue) Finish() error { return q.q.Finish() }

// Release finishes and releases the queue.
func (q *Queue) Release() error { return q.q.Release() }

// Event is an OpenCL event.
type Event struct {
	ev       cl.Event
	pc       *platformCtx
	q        *cl.Queue
	keep     []byte // host memory the command uses, kept referenced
	released atomic.Bool
}

// Wait blocks until the command completes. With a cancellable ctx it polls
// the event's status (backing off up to 1 ms) so cancellation is prompt;
// otherwise it blocks in clWaitForEvents.
func (e *Event) Wait(ctx context.Context) error {
	if e.released.Load() {
		return device.ErrReleased
	}
	if ctx.Done() == nil {
		return e.ev.Wait()
	}
	return poll(ctx, e)
}

// Status polls the command's state.
func (e *Event) Status() (device.Status, error) {
	if e.released.Load() {
		return device.Failed, device.ErrReleased
	}
	s, err := e.ev.Status()
	if err != nil {
		return device.Failed, err
	}
	switch s {
	case cl.Complete:
		return device.Complete, nil
	case cl.Running:
		return device.Running, nil
	case cl.Submitted:
		return device.Submitted, nil
	case cl.Queued:
		return device.Queued, nil
	}
	return device.Failed, &cl.Error{Op: "command", Status: cl.Status(s)}
}

// Times returns the profiling timestamps of a completed command.
func (e *Event) Times() (device.Times, error) {
	t, err := e.ev.Profile()
	if err != nil {
		if errors.Is(err, cl.ErrProfilingInfoNotAvailable) {
			return device.Times{}, fmt.Errorf("%w: %w", device.ErrUnsupported, err)
		}
		return device.Times{}, err
	}
	return device.Times(t), nil
}

// Retain returns a second reference to the command's completion
// (clRetainEvent), released on its own (device.Retainer).
func (e *Event) Retain() (device.Event, error) {
	if e.released.Load() {
		return nil, device.ErrReleased
	}
	if err := e.ev.Retain(); err != nil {
		return nil, err
	}
	return &Event{ev: e.ev, pc: e.pc, q: e.q, keep: e.keep}, nil
}

// Release drops the event; later calls do nothing.
func (e *Event) Release() {
	if e.released.CompareAndSwap(false, true) {
		e.ev.Release()
		e.keep = nil
	}
}

// ParseID splits "opencl:P:D" into platform and device indices.
func ParseID(id string) (platform, dev int, err error) {
	f := strings.Split(id, ":")
	if len(f) != 3 || f[0] != Name {
		return 0, 0, fmt.Errorf("device ID %q: expected opencl:PLATFORM:DEVICE", id)
	}
	if platform, err = strconv.Atoi(f[1]); err == nil {
		dev, err = strconv.Atoi(f[2])
	}
	if err != nil || platform < 0 || dev < 0 {
		return 0, 0, fmt.Errorf("device ID %q: expected opencl:PLATFORM:DEVICE with non-negative integers", id)
	}
	return platform, dev, nil
}
