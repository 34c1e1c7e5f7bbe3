package cuda_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/internal/cu"
)

func emptyKernel(b *testing.B, d *cuda.Device) *cuda.Kernel {
	p := build(b, d, device.Source{Name: "saxpy.cu", Text: saxpyCU})
	return must(p.Kernel("empty")).(*cuda.Kernel)
}

// rawLaunches launches f n times with cuLaunchKernel on a locked thread and
// waits: the floor the device layer is compared with.
func rawLaunches(b *testing.B, d *cuda.Device, q *cuda.Queue, f cu.Function, n int) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.Context().SetCurrent(); err != nil {
		b.Fatal(err)
	}
	one := cu.Dim3{X: 1, Y: 1, Z: 1}
	t0 := time.Now()
	for range n {
		if r := f.LaunchResult(q.Stream(), one, one, 0, 0); r != 0 {
			b.Fatal(r)
		}
	}
	if err := q.Stream().Synchronize(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// deviceLaunches launches k n times through device.Queue (an event each,
// released at once) and waits for the last.
func deviceLaunches(b *testing.B, q device.Queue, k device.Kernel, n int) time.Duration {
	t0 := time.Now()
	for range n {
		ev, err := q.Launch(k, device.Groups(1, 1))
		if err != nil {
			b.Fatal(err)
		}
		ev.Release()
	}
	if err := q.Finish(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkLaunch: per-launch cost of an empty kernel enqueued back to back,
// through the Device interface and with raw cuLaunchKernel in the same
// process; reports both and the difference (goal: ≤ 2 µs more).
func BenchmarkLaunch(b *testing.B) {
	d, q := open(b)
	k := emptyKernel(b, d)
	deviceLaunches(b, q, k, 1000) // warm up
	rawLaunches(b, d, q, k.Function(), 1000)
	b.ReportAllocs()
	b.ResetTimer()
	dev := deviceLaunches(b, q, k, b.N)
	raw := rawLaunches(b, d, q, k.Function(), b.N)
	b.StopTimer()
	// The same with events that do not time (Options.NoTiming).
	d2, err := cuda.Open(context.Background(), d.Info().ID, cuda.Options{PoolSize: -1, NoTiming: true})
	if err != nil {
		b.Fatal(err)
	}
	defer d2.Close()
	q2 := must(d2.Queue())
	defer q2.Release()
	k2 := emptyKernel(b, d2)
	deviceLaunches(b, q2, k2, 1000)
	b.StartTimer()
	nt := deviceLaunches(b, q2, k2, b.N)
	b.StopTimer()
	dn, rn := float64(dev.Nanoseconds())/float64(b.N), float64(raw.Nanoseconds())/float64(b.N)
	b.ReportMetric(float64(nt.Nanoseconds())/float64(b.N), "notiming-ns/launch")
	b.ReportMetric(dn, "device-ns/launch")
	b.ReportMetric(rn, "raw-ns/launch")
	b.ReportMetric(dn-rn, "extra-ns/launch")
}

// BenchmarkLaunchWait: latency of one empty kernel, Launch + Wait.
func BenchmarkLaunchWait(b *testing.B) {
	d, q := open(b)
	k := emptyKernel(b, d)
	b.ReportAllocs()
	for b.Loop() {
		ev, err := q.Launch(k, device.Groups(1, 1))
		if err != nil {
			b.Fatal(err)
		}
		if err := ev.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		ev.Release()
	}
}

// BenchmarkChain10: a chain of 10 dependent small kernels per iteration,
// launched one by one through the queue vs replayed as one CUDA Graph
// (goal: the graph ≤ 1/3 of the time per iteration).
func BenchmarkChain10(b *testing.B) {
	d, q := open(b)
	p := build(b, d, device.Source{Name: "step.cu", Text: graphKernel})
	const n = 1024
	buf := must(d.Alloc(4*n, device.ReadWrite))
	defer buf.Release()
	ks := make([]device.Kernel, 10)
	for i := range ks {
		ks[i] = must(p.Kernel("step"))
		for j, v := range []any{buf, float32(i), int32(n)} {
			if err := ks[i].SetArg(j, v); err != nil {
				b.Fatal(err)
			}
		}
	}
	chain := func() error {
		for _, k := range ks {
			ev, err := q.Launch(k, device.Groups(n/256, 256))
			if err != nil {
				return err
			}
			ev.Release()
		}
		return nil
	}
	g, err := q.Capture(chain)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Release()
	seq := func(iters int) time.Duration {
		t0 := time.Now()
		for range iters {
			if err := chain(); err != nil {
				b.Fatal(err)
			}
		}
		if err := q.Finish(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	graph := func(iters int) time.Duration {
		t0 := time.Now()
		for range iters {
			ev, err := g.Launch(q)
			if err != nil {
				b.Fatal(err)
			}
			ev.Release()
		}
		if err := q.Finish(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	seq(100)
	graph(100)
	b.ResetTimer()
	ts := seq(b.N)
	tg := graph(b.N)
	b.StopTimer()
	sn, gn := float64(ts.Nanoseconds())/float64(b.N), float64(tg.Nanoseconds())/float64(b.N)
	b.ReportMetric(sn, "sequential-ns/chain")
	b.ReportMetric(gn, "graph-ns/chain")
	b.ReportMetric(gn/sn, "graph/sequential")
}

var sizes = []int64{1 << 20, 64 << 20}

func sizeName(n int64) string { return fmt.Sprintf("%dMiB", n>>20) }

// BenchmarkHostToDevice: pinned host → device through Queue.Write + Wait,
// and with raw cuMemcpyHtoDAsync + cuStreamSynchronize.
func BenchmarkHostToDevice(b *testing.B) {
	d, q := open(b)
	for _, n := range sizes {
		h := must(d.AllocHost(n))
		buf := must(d.Alloc(n, device.ReadWrite)).(*cuda.Buffer)
		b.Run(sizeName(n)+"/device", func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				wait(b, must(q.Write(buf, 0, h.Bytes())))
			}
		})
		b.Run(sizeName(n)+"/raw", func(b *testing.B) {
			b.SetBytes(n)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			_ = d.Context().SetCurrent()
			p := unsafe.Pointer(&h.Bytes()[0])
			for b.Loop() {
				if err := q.Stream().CopyHtoD(buf.Ptr(), p, n); err != nil {
					b.Fatal(err)
				}
				if err := q.Stream().Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sizeName(n)+"/pageable", func(b *testing.B) {
			src := make([]byte, n)
			b.SetBytes(n)
			for b.Loop() {
				wait(b, must(q.Write(buf, 0, src)))
			}
		})
		buf.Release()
		h.Release()
	}
}

// BenchmarkDeviceToHost: device → pinned host, Queue.Read vs raw.
func BenchmarkDeviceToHost(b *testing.B) {
	d, q := open(b)
	for _, n := range sizes {
		h := must(d.AllocHost(n))
		buf := must(d.Alloc(n, device.ReadWrite)).(*cuda.Buffer)
		b.Run(sizeName(n)+"/device", func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				wait(b, must(q.Read(h.Bytes(), buf, 0)))
			}
		})
		b.Run(sizeName(n)+"/raw", func(b *testing.B) {
			b.SetBytes(n)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			_ = d.Context().SetCurrent()
			p := unsafe.Pointer(&h.Bytes()[0])
			for b.Loop() {
				if err := q.Stream().CopyDtoH(p, buf.Ptr(), n); err != nil {
					b.Fatal(err)
				}
				if err := q.Stream().Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
		})
		buf.Release()
		h.Release()
	}
}

// BenchmarkDeviceCopy: device → device copy bandwidth (Queue.Copy + Wait;
// GB/s counts the bytes copied, each read once and written once).
func BenchmarkDeviceCopy(b *testing.B) {
	d, q := open(b)
	for _, n := range append(sizes, 256<<20) {
		src := must(d.Alloc(n, device.ReadWrite))
		dst := must(d.Alloc(n, device.ReadWrite))
		b.Run(sizeName(n), func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				wait(b, must(q.Copy(dst, 0, src, 0, n)))
			}
		})
		src.Release()
		dst.Release()
	}
}
