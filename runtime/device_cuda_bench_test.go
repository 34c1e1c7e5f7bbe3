package runtime

import (
	goruntime "runtime"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/internal/cu"
)

// The per-firing cost of trivial CUDA kernel actors (a chain of 10, one
// firing per invocation) vs a raw cuLaunchKernel loop of an empty kernel
// in the same process (enqueued back to back, one wait at the end).
func BenchmarkKernelFiringVsRawLaunch(b *testing.B) {
	ids := cudaDevices(b)
	d, err := cuda.Open(b.Context(), ids[0], cuda.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	p, err := d.Build(b.Context(), device.Source{Name: "empty.cu", Text: `extern "C" __global__ void empty() {}`}, "")
	if err != nil {
		b.Fatal(err)
	}
	defer p.Release()
	k, err := p.Kernel("empty")
	if err != nil {
		b.Fatal(err)
	}
	q, err := d.Queue()
	if err != nil {
		b.Fatal(err)
	}
	defer q.Release()
	const fires = 2000
	raw := func(n int) time.Duration {
		goruntime.LockOSThread()
		defer goruntime.UnlockOSThread()
		if err := d.Context().SetCurrent(); err != nil {
			b.Fatal(err)
		}
		one := cu.Dim3{X: 1, Y: 1, Z: 1}
		blk := cu.Dim3{X: 32, Y: 1, Z: 1}
		t0 := time.Now()
		for range n {
			if r := k.(*cuda.Kernel).Function().LaunchResult(q.Stream(), one, blk, 0, 0); r != 0 {
				b.Fatal(r)
			}
		}
		if err := q.Stream().Synchronize(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	raw(100)
	g, m := chainGraph(ids[0], 10, 256)
	runFor(b, g, Options{Iterations: 10, Mapping: m})
	var el, ng, rl time.Duration
	for b.Loop() {
		g, m := chainGraph(ids[0], 10, 256)
		el = runFor(b, g, Options{Iterations: fires, Mapping: m})
		g, m = chainGraph(ids[0], 10, 256)
		ng = runFor(b, g, Options{Iterations: fires, Mapping: m, NoGraphs: true})
		rl = raw(10 * fires)
	}
	per := float64(el.Nanoseconds()) / (10 * fires) / 1e3
	nper := float64(ng.Nanoseconds()) / (10 * fires) / 1e3
	rper := float64(rl.Nanoseconds()) / (10 * fires) / 1e3
	b.ReportMetric(per, "actor-µs/firing")
	b.ReportMetric(nper, "no-graphs-µs/firing")
	b.ReportMetric(rper, "raw-µs/launch")
	b.ReportMetric(per-rper, "extra-µs/firing")
	b.ReportMetric(nper-rper, "no-graphs-extra-µs/firing")
}
