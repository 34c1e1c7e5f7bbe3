package runtime

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// TestSwitchSelectKernelBranch routes 64-token blocks by a control stream
// to a kernel branch (y = 3x + 1 on the device) or a Go branch (y = -x),
// switch and select wired by hand, and checks every token in order.
func TestSwitchSelectKernelBranch(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		const n = 97
		choose := func(i int64) uint8 { return uint8(i % 3 % 2) }
		g := graph.New("kbranch")
		k := int64(0)
		s := g.AddActor("src", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
			if k == n {
				return ErrEndOfStream
			}
			for i, out := 0, Output[float32](f, 0); i < len(out); i++ {
				out[i] = float32(k*rate + int64(i))
			}
			k++
			return nil
		})))
		f32 := graph.MustTokenType("f32")
		s.AddPort("out", graph.Out, f32, graph.SDF(rate), "")
		c := g.AddActor("ctl", graph.Stateful(), graph.WithFunc(func(f *Firing) error {
			if f.Index() >= n {
				return ErrEndOfStream
			}
			Output[uint8](f, 0)[0] = choose(f.Index())
			return nil
		}))
		c.AddPort("out", graph.Out, graph.MustTokenType("u8"), graph.SDF(1), "")
		params := map[string]any{"block": rate}
		sw := g.AddActor("sw", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "switch", Params: params}))
		se := g.AddActor("se", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "select", Params: params}))
		u8 := graph.MustTokenType("u8")
		sw.AddPort("ctl", graph.In, u8, graph.Dynamic(), "")
		sw.AddPort("in", graph.In, f32, graph.Dynamic(), "")
		sw.AddPort("o0", graph.Out, f32, graph.Dynamic(), "")
		sw.AddPort("o1", graph.Out, f32, graph.Dynamic(), "")
		se.AddPort("ctl", graph.In, u8, graph.Dynamic(), "")
		se.AddPort("i0", graph.In, f32, graph.Dynamic(), "")
		se.AddPort("i1", graph.In, f32, graph.Dynamic(), "")
		se.AddPort("out", graph.Out, f32, graph.Dynamic(), "")
		addAffine(g, "kern", 3, 1)
		neg := g.AddActor("neg", graph.WithFunc(FireFunc(func(f *Firing) error {
			x, y := Input[float32](f, 0), Output[float32](f, 0)
			for i := range x {
				y[i] = -x[i]
			}
			return nil
		})))
		neg.AddPort("x", graph.In, f32, graph.SDF(rate), "")
		neg.AddPort("y", graph.Out, f32, graph.SDF(rate), "")
		snk := addF32Sink(g, "snk")
		for _, e := range [][2]string{
			{"src.out", "sw.in"}, {"ctl.out", "sw.ctl"}, {"ctl.out", "se.ctl"},
			{"sw.o0", "neg.x"}, {"sw.o1", "kern.x"}, {"neg.y", "se.i0"}, {"kern.y", "se.i1"},
			{"se.out", "snk.in"},
		} {
			g.JoinNames(e[0], e[1])
		}
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"kern": kernelAt(devs[0], 8, 4)}}
		st, err := Run(context.Background(), g, Options{Mapping: m})
		if err != nil {
			t.Fatal(err)
		}
		var want []float32
		var ones int64
		for b := int64(0); b < n; b++ {
			for i := int64(0); i < rate; i++ {
				x := float32(b*rate + i)
				if choose(b) == 1 {
					want = append(want, 3*x+1)
				} else {
					want = append(want, -x)
				}
			}
			ones += int64(choose(b))
		}
		sameF32(t, snk.got, want)
		if a := st.Actor("kern"); a == nil || a.Kind != "kernel" || a.Firings != ones {
			t.Errorf("kernel branch stats %+v, want a kernel actor with %d firings", a, ones)
		}
	})
}
