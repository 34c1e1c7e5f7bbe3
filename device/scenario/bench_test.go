package scenario

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
)

// BenchmarkChain10Scenario runs the runtime's Chain10 shape (ten stages
// over 256 elements) for 100 iterations, 1000 stage executions, as:
//
//   - scenario: ONE launch walking the 1000-step scenario;
//   - scenario-per-iteration: one launch per iteration (10 steps each);
//   - per-kernel: one launch per stage execution (1000 launches);
//   - cuda-graph (CUDA only): each iteration's 10 launches captured once
//     as a CUDA Graph and replayed 100 times.
//
// Each reports µs/stage: wall time per stage execution, the queue drained
// at the end of every round.
func BenchmarkChain10Scenario(b *testing.B) {
	for _, be := range []string{"opencl", "cuda"} {
		b.Run(be, func(b *testing.B) { benchChain10(b, be) })
	}
}

const (
	benchN     = 256
	benchIters = 100
)

func benchChain10(b *testing.B, backend string) {
	ids := devices(b, backend)
	d, q := open(b, ids[0])
	b.Logf("device %s", d.Info())
	stages, _ := chain10()
	c, err := Compile(context.Background(), d, stages)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Release()
	scen := make([]int32, 0, 10*benchIters)
	for range benchIters {
		for k := range int32(10) {
			scen = append(scen, k)
		}
	}
	in := make([]float32, benchN)
	x := alloc(b, d, q, floatsToBytes(in))
	y := alloc(b, d, q, floatsToBytes(in))
	bs := alloc(b, d, q, int32sToBytes(scen))
	steps := len(scen)
	round := func(b *testing.B, f func() (device.Event, error)) {
		for b.Loop() {
			ev, err := f()
			wait(b, ev, err)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps)/1e3, "µs/stage")
	}
	b.Run("scenario", func(b *testing.B) {
		round(b, func() (device.Event, error) { return c.Run(q, x, y, bs, 0, steps, benchN) })
	})
	b.Run("scenario-per-iteration", func(b *testing.B) {
		round(b, func() (device.Event, error) {
			var ev device.Event
			for it := 0; it < benchIters; it++ {
				e, err := c.Run(q, x, x, bs, 10*it, 10, benchN)
				if err != nil {
					return nil, err
				}
				if ev != nil {
					ev.Release()
				}
				ev = e
			}
			return ev, nil
		})
	})
	b.Run("per-kernel", func(b *testing.B) {
		round(b, func() (device.Event, error) {
			ev, _, err := c.RunPerKernel(q, x, y, scen, benchN)
			return ev, err
		})
	})
	cq, ok := q.(*cuda.Queue)
	if !ok {
		return
	}
	b.Run("cuda-graph", func(b *testing.B) {
		g, err := cq.Capture(func() error {
			_, _, err := c.RunPerKernel(q, x, y, scen[:10], benchN)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Release()
		round(b, func() (device.Event, error) {
			var ev device.Event
			for it := 0; it < benchIters; it++ {
				e, err := g.Launch(cq)
				if err != nil {
					return nil, err
				}
				if ev != nil {
					ev.Release()
				}
				ev = e
			}
			return ev, nil
		})
	})
}
