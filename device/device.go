// Package device is sluice's view of the places where firings run and
// buffers live: the host CPU, OpenCL devices, CUDA devices. A Device
// allocates buffers (device memory and pinned host memory), builds programs
// from kernel source, and creates in-order queues on which copies and kernel
// launches are enqueued asynchronously, each returning an Event.
//
// Backends register themselves from an init function (device/cpu,
// device/opencl, device/cuda; import device/all for every one built into
// sluice). Discover asks each backend for its devices or for the reason it
// is unavailable (library not found, no platform, no device); Open returns a
// device by its ID ("cpu", "opencl:0:0", …) and, when none matches, an error
// listing those that exist.
package device

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Kind is the broad class of a device.
type Kind string

// Device kinds.
const (
	CPU         Kind = "cpu"
	GPU         Kind = "gpu"
	Accelerator Kind = "accelerator"
	Other       Kind = "other"
)

// Info describes a device. Sizes are in bytes.
type Info struct {
	// ID names the device for mappings: "cpu", "opencl:P:D" (platform P,
	// device D in discovery order), "cuda:N".
	ID string `json:"id"`
	// Backend is the registered backend's name ("cpu", "opencl", "cuda").
	Backend string `json:"backend"`
	// Name, Vendor and Version are what the driver reports.
	Name    string `json:"name"`
	Vendor  string `json:"vendor,omitempty"`
	Version string `json:"version,omitempty"`
	// Driver is the driver version, when the backend knows it.
	Driver string `json:"driver,omitempty"`
	// Platform names the OpenCL platform (or is empty).
	Platform string `json:"platform,omitempty"`
	// Kind says whether it is a CPU, a GPU, …
	Kind Kind `json:"kind"`
	// ComputeUnits is the number of cores, SMs or compute units.
	ComputeUnits int `json:"compute_units"`
	// ClockMHz is the maximum clock, when known.
	ClockMHz int `json:"clock_mhz,omitempty"`
	// GlobalMem is the device memory size; LocalMem the per-work-group
	// local (shared) memory; MaxAlloc the largest single buffer.
	GlobalMem int64 `json:"global_mem"`
	LocalMem  int64 `json:"local_mem,omitempty"`
	MaxAlloc  int64 `json:"max_alloc,omitempty"`
	// MaxWorkGroupSize is the largest number of work-items in a work-group.
	MaxWorkGroupSize int `json:"max_work_group_size,omitempty"`
	// MaxThreadsPerComputeUnit is the most work-items one compute unit
	// keeps resident at once (CUDA: max threads per SM), 0 when the
	// backend does not tell; ComputeUnits × it is what the device runs at
	// once.
	MaxThreadsPerComputeUnit int `json:"max_threads_per_compute_unit,omitempty"`
	// HostUnified is true when device memory is host memory (CPU devices,
	// integrated GPUs).
	HostUnified bool `json:"host_unified"`
	// PCIBus is the device's PCI address, "domain:bus:device" in hex
	// (0000:1b:00), when the driver tells it: one GPU seen through two
	// backends (CUDA and NVIDIA's OpenCL) has the same.
	PCIBus string `json:"pci_bus,omitempty"`
}

// String returns "ID (name)".
func (i Info) String() string { return i.ID + " (" + i.Name + ")" }

// Device is one place where firings run and buffers live. A Device is safe
// for concurrent use; Queues, Kernels and Events are not unless stated.
type Device interface {
	// Info describes the device.
	Info() Info
	// Alloc allocates size bytes of device memory.
	Alloc(size int64, access Access) (Buffer, error)
	// AllocHost allocates size bytes of pinned, host-visible memory that
	// copies to and from this device reach fastest (DMA). Its Bytes stay
	// valid until Release.
	AllocHost(size int64) (HostBuffer, error)
	// Build compiles kernel source for the device. A compile error is a
	// *BuildError whose diagnostics point at the user's file and line.
	Build(ctx context.Context, src Source, options string) (Program, error)
	// NewQueue creates an in-order queue.
	NewQueue() (Queue, error)
	// Close releases the device's resources; buffers, programs and queues
	// must be released first.
	Close() error
}

// Access says how kernels use a buffer.
type Access uint8

// Buffer access modes.
const (
	ReadWrite Access = iota
	ReadOnly
	WriteOnly
)

// Buffer is device memory.
type Buffer interface {
	// Device returns the device owning the buffer.
	Device() Device
	// Size returns the buffer's size in bytes.
	Size() int64
	// Slice returns a view of n bytes at offset off, sharing memory with the
	// buffer (release it before the buffer). Devices may require off to be
	// aligned (OpenCL: CL_DEVICE_MEM_BASE_ADDR_ALIGN).
	Slice(off, n int64) (Buffer, error)
	// Release frees the buffer; later calls do nothing.
	Release() error
}

// HostBuffer is pinned host memory, mapped for the host's use. Pass Bytes
// (or a sub-slice) to Queue.Write and Queue.Read for the fastest transfers.
type HostBuffer interface {
	// Bytes returns the memory; valid until Release.
	Bytes() []byte
	// Release frees the memory; later calls do nothing.
	Release() error
}

// HostMapper is implemented by devices whose kernels address pinned host
// memory directly (zero-copy, e.g. CUDA's mapped host memory): for small
// transfers, the host writing or reading such memory around a kernel
// replaces a copy command and its event on every invocation.
type HostMapper interface {
	// AllocMapped allocates size bytes of pinned host memory that kernels of
	// this device use as a Buffer.
	AllocMapped(size int64) (MappedBuffer, error)
}

// MappedBuffer is pinned host memory that kernels of its device use
// directly: a Buffer for kernel arguments and Bytes for the host. The host
// must not touch bytes that a kernel in flight reads or writes: a kernel's
// writes are visible to the host once its event completes, and the host's
// writes to a kernel enqueued after them.
type MappedBuffer interface {
	Buffer
	// Bytes returns the memory; valid until Release.
	Bytes() []byte
}

// PeerCopier is implemented by queues that copy between buffers of their
// device and of another device of the same backend without the host
// (CUDA: cuMemcpyPeerAsync).
type PeerCopier interface {
	// CopyPeer copies n bytes from src at srcOff to dst at dstOff, where one
	// of the buffers is of the queue's device and the other of a device of
	// the same backend (or the same device).
	CopyPeer(dst Buffer, dstOff int64, src Buffer, srcOff, n int64, wait ...Event) (Event, error)
}

// PeerEnabler is implemented by devices that can reach the memory of
// another device of their backend directly.
type PeerEnabler interface {
	// EnablePeer makes copies between this device and other go directly
	// (over NVLink or PCIe) when the hardware allows it, both ways, and
	// reports whether they do; otherwise PeerCopier copies are staged by
	// the driver through host memory.
	EnablePeer(other Device) (direct bool, err error)
}

// MapMode says what the host will do with a mapped region.
type MapMode uint8

// Map modes.
const (
	MapRead MapMode = 1 << iota
	MapWrite
)

// Range is the shape of a kernel launch: Global work-items in total, split
// into work-groups of Local work-items (nil lets the driver choose).
type Range struct {
	Global, Local, Offset []int
}

// Groups returns the 1-D range of g work-groups of i work-items each (the
// ETH mapping's G and I: one firing per work-group).
func Groups(g, i int) Range { return Range{Global: []int{g * i}, Local: []int{i}} }

// Queue is an in-order queue of commands on one device: each command starts
// after the previous one has completed. Enqueueing returns at once with an
// Event; release every Event you get. Host memory handed to Write or Read
// must stay untouched until the command's event completes. A Queue is not
// safe for concurrent use.
type Queue interface {
	// Device returns the queue's device.
	Device() Device
	// Write copies src into dst at off.
	Write(dst Buffer, off int64, src []byte, wait ...Event) (Event, error)
	// Read copies len(dst) bytes of src at off into dst.
	Read(dst []byte, src Buffer, off int64, wait ...Event) (Event, error)
	// Copy copies n bytes between two buffers of this device (see Transfer
	// for buffers of different devices).
	Copy(dst Buffer, dstOff int64, src Buffer, srcOff, n int64, wait ...Event) (Event, error)
	// Launch runs kernel k over r with the arguments set on k.
	Launch(k Kernel, r Range, wait ...Event) (Event, error)
	// Map maps n bytes of b at off for the host and returns them once
	// mapped (it blocks). Unmap before the device uses b again.
	Map(b Buffer, off, n int64, mode MapMode, wait ...Event) ([]byte, error)
	// Unmap ends a mapping returned by Map.
	Unmap(b Buffer, mapped []byte, wait ...Event) (Event, error)
	// Flush submits queued commands without waiting.
	Flush() error
	// Finish waits for every queued command.
	Finish() error
	// Release finishes and releases the queue.
	Release() error
}

// Status is the state of an enqueued command.
type Status int

// Command states; Failed carries the error in Event.Wait.
const (
	Queued Status = iota
	Submitted
	Running
	Complete
	Failed
)

// String returns the status in lower case ("complete", ...).
func (s Status) String() string {
	return [...]string{"queued", "submitted", "running", "complete", "failed"}[s]
}

// Times are a command's profiling timestamps in device nanoseconds (zero
// when the device does not profile).
type Times struct {
	Queued, Submit, Start, End uint64
}

// Event is the completion of one enqueued command.
type Event interface {
	// Wait blocks until the command completes or ctx is done; it returns the
	// command's error if it failed.
	Wait(ctx context.Context) error
	// Status polls the command's state without blocking.
	Status() (Status, error)
	// Times returns profiling timestamps (ErrUnsupported when none).
	Times() (Times, error)
	// Release drops the event; later calls do nothing.
	Release()
}

// Retainer is an Event that can be held twice: Retain returns a second
// reference to the same command's completion, released on its own. A
// run's trace keeps the events of its copies this way, to read their
// times once they complete, after the runtime has let go of them.
type Retainer interface {
	Retain() (Event, error)
}

// Source is kernel source to build.
type Source struct {
	// Name is the user's file name ("blur.cl"); diagnostics point there.
	Name string
	// Text is the user's source.
	Text string
	// Prelude is generated code placed before Text (macros, helpers); a
	// diagnostic inside it is reported as "<prelude>:line".
	Prelude string
}

// Program is built kernel code.
type Program interface {
	// Kernel returns the kernel named name.
	Kernel(name string) (Kernel, error)
	// Kernels lists the program's kernel names.
	Kernels() []string
	// Log returns the build log (warnings), mapped to the user's lines.
	Log() string
	// Release frees the program; later calls do nothing.
	Release() error
}

// Kernel is one entry point of a Program, with its arguments.
type Kernel interface {
	// Name returns the kernel's name.
	Name() string
	// SetArg sets argument i: a Buffer of the kernel's device, Local(n)
	// for __local memory, a fixed-size scalar (int8 … uint64, float32,
	// float64) or Bytes for any other by-value argument.
	SetArg(i int, v any) error
	// Release frees the kernel; later calls do nothing.
	Release() error
}

// Local declares a __local (shared) memory kernel argument of n bytes.
type Local int

// Bytes is a by-value kernel argument given as raw bytes (a struct or vector).
type Bytes []byte

// Sentinel errors, matched with errors.Is.
var (
	// ErrOutOfMemory: the device cannot hold the buffer (or the size is
	// beyond the device's largest allocation).
	ErrOutOfMemory = errors.New("out of device memory")
	// ErrNotFound: no device has the requested ID.
	ErrNotFound = errors.New("no such device")
	// ErrUnsupported: the device cannot do this (e.g. build OpenCL on "cpu").
	ErrUnsupported = errors.New("not supported by this device")
	// ErrBuild: a kernel did not compile (see *BuildError).
	ErrBuild = errors.New("kernel build failed")
	// ErrReleased: the object was already released.
	ErrReleased = errors.New("already released")
)

// Size formats a byte count for messages: "512 B", "1.5 KiB", "1 TiB".
func Size(n int64) string {
	const units = "KMGTPE"
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	i := -1
	for (f >= 1024 || f <= -1024) && i < len(units)-1 {
		f /= 1024
		i++
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + " " + string(units[i]) + "iB"
}

// OutOfMemory builds the error a backend returns when size bytes do not fit
// on device d: it names the size, the device and its limits, and wraps
// ErrOutOfMemory and the backend's cause.
func OutOfMemory(d Info, what string, size int64, cause error) error {
	lim := fmt.Sprintf("device memory %s", Size(d.GlobalMem))
	if d.MaxAlloc > 0 {
		lim += fmt.Sprintf(", largest buffer %s", Size(d.MaxAlloc))
	}
	if cause == nil {
		return fmt.Errorf("%s of %s on %s: %w (%s)", what, Size(size), d, ErrOutOfMemory, lim)
	}
	return fmt.Errorf("%s of %s on %s: %w (%s): %w", what, Size(size), d, ErrOutOfMemory, lim, cause)
}

// HostPinner is implemented by devices that can page-lock ordinary host
// memory (CUDA: cuMemHostRegister), so that copies between it and the
// device run by DMA at the speed of AllocHost memory. The runtime pins the
// host FIFOs that feed or drain kernel actors this way. b must stay alive
// (and unmoved: Go's heap does not move objects) until unpin is called.
type HostPinner interface {
	// PinHost page-locks b and returns the function that unlocks it.
	PinHost(b []byte) (unpin func() error, err error)
}

// Batcher is implemented by queues that can enqueue kernel launches
// without an event each and replay recurring sequences of them cheaply
// (device/cuda: CUDA Graphs; device/opencl: launches without cl_event).
// A runtime that needs to know only when the last of several launches
// completed brackets them with BeginBatch and EndBatch.
//
// Between BeginBatch and EndBatch, LaunchQuiet takes the kernel's
// arguments as they are now and its wait list takes effect at once (later
// work on the queue waits for it); the launch itself may be deferred to
// EndBatch. Other commands must not be enqueued on the queue inside a
// batch. EndBatch enqueues what is pending — with replay, as one CUDA Graph
// launch when the same sequence of launches (kernels, shapes and argument
// values) was batched before — and returns an event that completes after
// every launch of the batch (nil when the batch was empty).
type Batcher interface {
	BeginBatch(replay bool)
	LaunchQuiet(k Kernel, r Range, wait ...Event) error
	EndBatch() (Event, error)
}

// BatchStats count what a Batcher did with its batches.
type BatchStats struct {
	// Batches is the number of batches with launches; Launches the
	// launches in them.
	Batches  int64 `json:"batches"`
	Launches int64 `json:"launches"`
	// Replayed counts the batches launched as a cached graph (one driver
	// call); Updated those of them whose kernel arguments were set anew in
	// the cached graph first (the same launches over other buffers or
	// offsets).
	Replayed int64 `json:"replayed"`
	Updated  int64 `json:"updated"`
	// Captured counts the graphs captured (each once, when its sequence of
	// launches was seen a second time).
	Captured int64 `json:"captured"`
}

// BatchCounter is a Batcher that counts its batches (device/cuda).
type BatchCounter interface {
	BatchStats() BatchStats
}

// LaneBatcher is a Batcher whose batches may spread their launches over
// lanes: streams of the device that run concurrently (device/cuda). Every
// lane starts after everything enqueued before the batch, launches of one
// lane run in order, and the batch's event completes after every lane's
// last launch. Launches of different lanes are ordered only by After, so
// a caller gives a launch the earlier launches of other lanes whose
// memory it reads or overwrites.
type LaneBatcher interface {
	Batcher
	// Lanes is the number of lanes a batch may use (at least 1).
	Lanes() int
	// Lane puts the batch's next launch on lane l, 0 ≤ l < Lanes().
	Lane(l int)
	// After makes the batch's next launch wait for its earlier launch
	// number i (counted from 0 at BeginBatch), on whatever lane that ran.
	After(i int)
}
