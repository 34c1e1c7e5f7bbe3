package opencl_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/device"
)

var benchSizes = []int64{1 << 20, 64 << 20}

func sizeName(n int64) string { return fmt.Sprintf("%dMiB", n>>20) }

// hostMem returns n bytes of plain Go memory or of pinned memory.
func hostMem(b *testing.B, d device.Device, pinned bool, n int64) []byte {
	if !pinned {
		return make([]byte, n)
	}
	h, err := d.AllocHost(n)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Release() })
	return h.Bytes()
}

// BenchmarkHostToDevice measures Write+Wait bandwidth from plain Go memory
// and from pinned (CL_MEM_ALLOC_HOST_PTR, mapped) memory.
func BenchmarkHostToDevice(b *testing.B) {
	d, q := openCL(b)
	for _, pinned := range []bool{false, true} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("pinned=%v/%s", pinned, sizeName(n)), func(b *testing.B) {
				src := hostMem(b, d, pinned, n)
				buf := must(d.Alloc(n, device.ReadWrite))
				defer buf.Release()
				b.SetBytes(n)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					ev := must(q.Write(buf, 0, src))
					if err := ev.Wait(context.Background()); err != nil {
						b.Fatal(err)
					}
					ev.Release()
				}
			})
		}
	}
}

// BenchmarkDeviceToHost measures Read+Wait bandwidth into plain and pinned memory.
func BenchmarkDeviceToHost(b *testing.B) {
	d, q := openCL(b)
	for _, pinned := range []bool{false, true} {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("pinned=%v/%s", pinned, sizeName(n)), func(b *testing.B) {
				dst := hostMem(b, d, pinned, n)
				buf := must(d.Alloc(n, device.ReadWrite))
				defer buf.Release()
				wait(b, must(q.Write(buf, 0, make([]byte, n))))
				b.SetBytes(n)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					ev := must(q.Read(dst, buf, 0))
					if err := ev.Wait(context.Background()); err != nil {
						b.Fatal(err)
					}
					ev.Release()
				}
			})
		}
	}
}

// BenchmarkDeviceCopy measures buffer-to-buffer copy bandwidth on the device.
func BenchmarkDeviceCopy(b *testing.B) {
	d, q := openCL(b)
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			src := must(d.Alloc(n, device.ReadWrite))
			dst := must(d.Alloc(n, device.ReadWrite))
			defer src.Release()
			defer dst.Release()
			wait(b, must(q.Write(src, 0, make([]byte, n))))
			b.SetBytes(n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ev := must(q.Copy(dst, 0, src, 0, n))
				if err := ev.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				ev.Release()
			}
		})
	}
}

// BenchmarkEmptyKernel measures the latency of enqueueing an empty kernel
// (one work-group of one work-item) and waiting for it, and the cost per
// launch when 64 launches are enqueued ahead and only the last is waited for.
func BenchmarkEmptyKernel(b *testing.B) {
	d, q := openCL(b)
	p := build(b, d, saxpy)
	k := must(p.Kernel("empty"))
	defer k.Release()
	b.Run("launch+wait", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ev := must(q.Launch(k, device.Groups(1, 1)))
			if err := ev.Wait(context.Background()); err != nil {
				b.Fatal(err)
			}
			ev.Release()
		}
	})
	b.Run("enqueue-ahead-64", func(b *testing.B) {
		b.ReportAllocs()
		evs := make([]device.Event, 64)
		for b.Loop() {
			for i := range evs {
				evs[i] = must(q.Launch(k, device.Groups(1, 1)))
			}
			if err := evs[len(evs)-1].Wait(context.Background()); err != nil {
				b.Fatal(err)
			}
			for _, e := range evs {
				e.Release()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/launch")
	})
}
