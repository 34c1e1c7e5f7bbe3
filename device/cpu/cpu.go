// Package cpu makes the host CPU a device.Device, so the CPU always appears
// in discovery. Its buffers are Go memory (Buffer.Bytes), its queue runs
// commands synchronously (every Event is complete when returned), and it
// does not build kernels: CPU actors are Go functions run by the runtime
// (OpenCL kernels on a CPU go through an OpenCL CPU device such as PoCL).
package cpu

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/sluicehq/sluice/device"
)

// ID is the CPU device's ID.
const ID = "cpu"

func init() { device.Register(backend{}) }

type backend struct{}

func (backend) Name() string { return "cpu" }

func (backend) Discover(context.Context) ([]device.Info, error) {
	return []device.Info{HostInfo()}, nil
}

func (backend) Open(_ context.Context, id string) (device.Device, error) {
	if id != ID {
		return nil, fmt.Errorf("cpu backend: device %q: expected %q: %w", id, ID, device.ErrNotFound)
	}
	return New(), nil
}

// HostInfo describes the host CPU: its cores (runtime.NumCPU) and memory
// (MemTotal of /proc/meminfo; 0 where that file does not exist).
func HostInfo() device.Info {
	info := device.Info{
		ID: ID, Backend: "cpu", Kind: device.CPU, Name: runtime.GOARCH + " CPU",
		ComputeUnits: runtime.NumCPU(), HostUnified: true,
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			k, v, ok := strings.Cut(s.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch {
			case k == "model name" && info.Name == runtime.GOARCH+" CPU":
				info.Name = v
			case k == "vendor_id" && info.Vendor == "":
				info.Vendor = v
			case k == "cpu MHz" && info.ClockMHz == 0:
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					info.ClockMHz = int(f)
				}
			}
		}
		f.Close()
	}
	total, _ := meminfo()
	info.GlobalMem, info.MaxAlloc = total, total
	return info
}

// meminfo returns MemTotal and MemAvailable in bytes (0 when unknown).
func meminfo() (total, avail int64) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fs := strings.Fields(s.Text())
		if len(fs) < 2 {
			continue
		}
		n, err := strconv.ParseInt(fs[1], 10, 64)
		if err != nil {
			continue
		}
		if len(fs) > 2 && fs[2] == "kB" {
			n *= 1024
		}
		switch fs[0] {
		case "MemTotal:":
			total = n
		case "MemAvailable:":
			avail = n
		}
	}
	return total, avail
}

// Device is the host CPU.
type Device struct{ info device.Info }

// New returns the CPU device.
func New() *Device { return &Device{info: HostInfo()} }

// Info describes the CPU.
func (d *Device) Info() device.Info { return d.info }

// Alloc allocates size bytes of Go memory. It refuses sizes beyond the
// memory available now (MemAvailable) with device.ErrOutOfMemory rather
// than letting the Go runtime abort.
func (d *Device) Alloc(size int64, _ device.Access) (device.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("allocate %d bytes on %s: expected a size ≥ 0", size, d.info)
	}
	if _, avail := meminfo(); avail > 0 && size > avail {
		return nil, device.OutOfMemory(d.info, "buffer", size, fmt.Errorf("only %s available now", device.Size(avail)))
	}
	return &Buffer{dev: d, b: make([]byte, size)}, nil
}

// AllocHost allocates host memory (on the CPU all memory is host memory).
func (d *Device) AllocHost(size int64) (device.HostBuffer, error) {
	b, err := d.Alloc(size, device.ReadWrite)
	if err != nil {
		return nil, err
	}
	return b.(*Buffer), nil
}

// Build reports device.ErrUnsupported: the CPU runs Go actors.
func (d *Device) Build(context.Context, device.Source, string) (device.Program, error) {
	return nil, fmt.Errorf("build kernel on %s: %w: CPU actors are Go functions; map OpenCL kernels to an OpenCL device (e.g. a PoCL CPU device)", d.info, device.ErrUnsupported)
}

// NewQueue returns a synchronous queue.
func (d *Device) NewQueue() (device.Queue, error) { return &Queue{dev: d}, nil }

// Close does nothing.
func (d *Device) Close() error { return nil }

// Buffer is Go memory on the CPU device.
type Buffer struct {
	dev      *Device
	b        []byte
	released atomic.Bool
}

// Bytes returns the buffer's memory (CPU actors read and write it in place).
func (b *Buffer) Bytes() []byte { return b.b }

// Device returns the CPU device.
func (b *Buffer) Device() device.Device { return b.dev }

// Size returns the buffer's size.
func (b *Buffer) Size() int64 { return int64(len(b.b)) }

// Slice returns a view sharing memory (no alignment needed).
func (b *Buffer) Slice(off, n int64) (device.Buffer, error) {
	if off < 0 || n < 0 || off+n > int64(len(b.b)) {
		return nil, fmt.Errorf("slice [%d, %d) of a %d-byte buffer: out of range", off, off+n, len(b.b))
	}
	return &Buffer{dev: b.dev, b: b.b[off : off+n : off+n]}, nil
}

// Release drops the memory.
func (b *Buffer) Release() error {
	if b.released.CompareAndSwap(false, true) {
		b.b = nil
	}
	return nil
}

// Queue runs each command at once on the calling goroutine.
type Queue struct{ dev *Device }

type done struct{}

func (done) Wait(context.Context) error     { return nil }
func (done) Status() (device.Status, error) { return device.Complete, nil }
func (done) Times() (device.Times, error)   { return device.Times{}, device.ErrUnsupported }
func (done) Release()                       {}
func waitAll(evs []device.Event) error {
	for _, e := range evs {
		if e != nil {
			if err := e.Wait(context.Background()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (q *Queue) buf(b device.Buffer) (*Buffer, error) {
	cb, ok := b.(*Buffer)
	if !ok || cb.dev != q.dev {
		return nil, fmt.Errorf("buffer of %s used on a queue of %s: expected a buffer of this device (use device.Transfer across devices)", b.Device().Info(), q.dev.info)
	}
	if cb.released.Load() {
		return nil, device.ErrReleased
	}
	return cb, nil
}

func rangeErr(op string, off, n int64, size int) error {
	return fmt.Errorf("%s of %d bytes at %d of a %d-byte buffer: out of range", op, n, off, size)
}

// Device returns the CPU device.
func (q *Queue) Device() device.Device { return q.dev }

// Write copies src into dst.
func (q *Queue) Write(dst device.Buffer, off int64, src []byte, wait ...device.Event) (device.Event, error) {
	b, err := q.buf(dst)
	if err != nil {
		return nil, err
	}
	if off < 0 || off+int64(len(src)) > int64(len(b.b)) {
		return nil, rangeErr("write", off, int64(len(src)), len(b.b))
	}
	if err := waitAll(wait); err != nil {
		return nil, err
	}
	copy(b.b[off:], src)
	return done{}, nil
}

// Read copies from src into dst.
func (q *Queue) Read(dst []byte, src device.Buffer, off int64, wait ...device.Event) (device.Event, error) {
	b, err := q.buf(src)
	if err != nil {
		return nil, err
	}
	if off < 0 || off+int64(len(dst)) > int64(len(b.b)) {
		return nil, rangeErr("read", off, int64(len(dst)), len(b.b))
	}
	if err := waitAll(wait); err != nil {
		return nil, err
	}
	copy(dst, b.b[off:])
	return done{}, nil
}

// Copy copies between two CPU buffers.
func (q *Queue) Copy(dst device.Buffer, dstOff int64, src device.Buffer, srcOff, n int64, wait ...device.Event) (device.Event, error) {
	d, err := q.buf(dst)
	if err != nil {
		return nil, err
	}
	s, err := q.buf(src)
	if err != nil {
		return nil, err
	}
	if n < 0 || srcOff < 0 || dstOff < 0 || srcOff+n > int64(len(s.b)) || dstOff+n > int64(len(d.b)) {
		return nil, rangeErr("copy", srcOff, n, len(s.b))
	}
	if err := waitAll(wait); err != nil {
		return nil, err
	}
	copy(d.b[dstOff:dstOff+n], s.b[srcOff:srcOff+n])
	return done{}, nil
}

// Launch reports device.ErrUnsupported.
func (q *Queue) Launch(device.Kernel, device.Range, ...device.Event) (device.Event, error) {
	return nil, fmt.Errorf("launch on %s: %w", q.dev.info, device.ErrUnsupported)
}

// Map returns the buffer's memory itself.
func (q *Queue) Map(b device.Buffer, off, n int64, _ device.MapMode, wait ...device.Event) ([]byte, error) {
	cb, err := q.buf(b)
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || off+n > int64(len(cb.b)) {
		return nil, rangeErr("map", off, n, len(cb.b))
	}
	if err := waitAll(wait); err != nil {
		return nil, err
	}
	return cb.b[off : off+n : off+n], nil
}

// Unmap does nothing.
func (q *Queue) Unmap(device.Buffer, []byte, ...device.Event) (device.Event, error) {
	return done{}, nil
}

// Flush does nothing.
func (q *Queue) Flush() error { return nil }

// Finish does nothing: every command has completed.
func (q *Queue) Finish() error { return nil }

// Release does nothing.
func (q *Queue) Release() error { return nil }
