package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/device/scenario"
)

// The Chain10 shape: 10 dependent small stages over 1024 floats in place,
// launched as 4 work-groups of 256.
const (
	chainN      = 1024
	chainStages = 10
	chainRuns   = 200 // chains per measurement
)

var chainStage = []scenario.Stage{{Name: "step", Body: "out[i] = 0.5f * in[i] + p;"}}

// BenchmarkChain10Scenario compares, per stage execution, the chain run as
// the merged scenario kernel (one launch for all chains of a measurement,
// and one launch per chain) with one launch per stage (an event each), a
// batch of launches without events (device.Batcher: on CUDA replayed as a
// CUDA Graph) and, on CUDA, explicit CUDA-Graph replay of the captured
// chain.
func BenchmarkChain10Scenario(b *testing.B) {
	b.Run("opencl", func(b *testing.B) { d, q := openCL(b); benchChain(b, d, q) })
	b.Run("cuda", func(b *testing.B) { d, q := openCUDA(b); benchChain(b, d, q) })
}

func benchChain(b *testing.B, d device.Device, q device.Queue) {
	ctx := context.Background()
	lang, err := scenario.LangOf(d)
	if err != nil {
		b.Fatal(err)
	}
	buf, err := d.Alloc(4*chainN, device.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Release()
	wait(b)(q.Write(buf, 0, f32bytes(make([]float32, chainN))))
	shape := scenario.Launch{Groups: chainN / 256, Local: 256}

	// The merged kernel and a stream of chainRuns chains.
	p, err := scenario.Build(ctx, d, chainStage, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Release()
	bl := scenario.NewBuilder(1)
	for range chainRuns {
		for k := range chainStages {
			bl.Step(0, 0, 0, float32(k))
		}
	}
	s, err := p.Upload(ctx, q, bl.Scenario())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Release()
	bufs := []device.Buffer{buf}

	// The same stage as a kernel of its own, one per position in the chain.
	src, err := scenario.StageKernels(lang, chainStage)
	if err != nil {
		b.Fatal(err)
	}
	sp, err := d.Build(ctx, device.Source{Name: "step." + map[scenario.Lang]string{scenario.OpenCL: "cl", scenario.CUDA: "cu"}[lang], Text: src}, "")
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Release()
	ks := make([]device.Kernel, chainStages)
	for k := range ks {
		kk, err := sp.Kernel(scenario.StageKernelName("step"))
		if err != nil {
			b.Fatal(err)
		}
		defer kk.Release()
		for j, v := range []any{buf, buf, int32(chainN), float32(k)} {
			if err := kk.SetArg(j, v); err != nil {
				b.Fatal(err)
			}
		}
		ks[k] = kk
	}
	r := device.Groups(shape.Groups, shape.Local)
	finish := func() {
		if err := q.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	timeIt := func(f func()) time.Duration {
		t0 := time.Now()
		f()
		finish()
		return time.Since(t0)
	}
	modes := map[string]func(){
		"scenario-1launch": func() {
			ev, err := p.Run(q, s, 0, s.Len(), bufs, chainN, shape)
			if err != nil {
				b.Fatal(err)
			}
			ev.Release()
		},
		"scenario-launch/chain": func() {
			for c := range chainRuns {
				ev, err := p.Run(q, s, c*chainStages, chainStages, bufs, chainN, shape)
				if err != nil {
					b.Fatal(err)
				}
				ev.Release()
			}
		},
		"kernels": func() {
			for range chainRuns {
				for _, k := range ks {
					ev, err := q.Launch(k, r)
					if err != nil {
						b.Fatal(err)
					}
					ev.Release()
				}
			}
		},
	}
	if bt, ok := q.(device.Batcher); ok {
		modes["batch"] = func() {
			for range chainRuns {
				bt.BeginBatch(true)
				for _, k := range ks {
					if err := bt.LaunchQuiet(k, r); err != nil {
						b.Fatal(err)
					}
				}
				ev, err := bt.EndBatch()
				if err != nil {
					b.Fatal(err)
				}
				ev.Release()
			}
		}
	}
	if cq, ok := q.(*cuda.Queue); ok {
		g, err := cq.Capture(func() error {
			for _, k := range ks {
				ev, err := q.Launch(k, r)
				if err != nil {
					return err
				}
				ev.Release()
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Release()
		modes["cuda-graph"] = func() {
			for range chainRuns {
				ev, err := g.Launch(cq)
				if err != nil {
					b.Fatal(err)
				}
				ev.Release()
			}
		}
	}
	total := map[string]time.Duration{}
	for _, f := range modes { // warm up
		timeIt(f)
	}
	runs := 0
	for b.Loop() {
		for name, f := range modes {
			total[name] += timeIt(f)
		}
		runs++
	}
	for name, t := range total {
		b.ReportMetric(float64(t.Nanoseconds())/float64(runs*chainRuns*chainStages)/1e3, name+"-µs/stage")
	}
}
