package scenario_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/scenario"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// stageDecl is one element-wise actor of a test chain.
type stageDecl struct {
	name, body string
	p          float32
	iters      int
}

// The test pipeline: src → a → b → c (3 iterations) → mid (Go, CPU) →
// d → e → f → sink, every element-wise actor on one device, f with
// another G, d's and e's outputs in blocks of 32. Fuse merges a+b+c and
// d+e and leaves the rest alone.
var pipeline = []stageDecl{
	{name: "a", body: "out[i] = in[i] * p + 0.25f;", p: 1.7},
	{name: "b", body: "out[i] = in[i] * in[i] - p;", p: 0.3},
	{name: "c", body: "out[i] = in[i] / (1.0f + p * in[i] * in[i]);", p: 0.9, iters: 3},
	{name: "mid"},
	{name: "d", body: "out[i] = in[i] * p + in[i];", p: -2.5},
	{name: "e", body: "out[i] = (in[i] + p) * (in[i] - p);", p: 0.125},
	{name: "f", body: "out[i] = in[i] * 0.5f + p;", p: 1},
}

const (
	pipeRate    = 256
	pipeFirings = 12
)

// pipelineGraph builds the test pipeline with its mapping on device dev;
// sink appends the tokens that reach the end to *got.
func pipelineGraph(t testing.TB, dev string, decls []stageDecl, got *[]float32) (*graph.Graph, *graph.Mapping) {
	t.Helper()
	g := graph.New("pipeline")
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{}}
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		out := runtime.Output[float32](f, 0)
		for j := range out {
			out[j] = float32(3 * math.Sin(float64(f.Index()*int64(len(out))+int64(j))*0.37))
		}
		return nil
	})))
	prev := src.AddPort("o", graph.Out, graph.MustTokenType("f32"), graph.SDF(pipeRate), "")
	for _, s := range decls {
		var a *graph.Actor
		if s.body == "" {
			a = g.AddActor(s.name, graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
				copy(runtime.Output[float32](f, 0), runtime.Input[float32](f, 0))
				return nil
			})))
		} else {
			a = g.AddActor(s.name)
		}
		in := a.AddPort("x", graph.In, graph.MustTokenType("f32"), graph.SDF(pipeRate), "")
		out := a.AddPort("y", graph.Out, graph.MustTokenType("f32"), graph.SDF(pipeRate), "")
		if s.name == "d" || s.name == "e" {
			out.Block = 32 // work-items take blocks (the others stride over tokens)
		}
		g.Join(prev, in)
		prev = out
		if s.body == "" {
			continue
		}
		if s.iters > 1 {
			a.Iterations = s.iters
			a.Swap = map[string]string{"y": "x"}
		}
		if err := scenario.Elementwise(a, s.body, s.p); err != nil {
			t.Fatal(err)
		}
		groups := 3
		if s.name == "f" {
			groups = 2
		}
		mp.Actors[s.name] = &graph.Placement{Device: dev, WorkGroups: groups, WorkItems: 8}
	}
	var mu sync.Mutex
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		mu.Lock()
		*got = append(*got, runtime.Input[float32](f, 0)...)
		mu.Unlock()
		return nil
	})))
	g.Join(prev, sink.AddPort("i", graph.In, graph.MustTokenType("f32"), graph.SDF(pipeRate), ""))
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g, mp
}

// Fuse finds the maximal chains on one device with one placement, merges
// each into one actor with a scenario step per actor iteration, rewires
// the channels around it and leaves g, mp and the other actors alone.
func TestFuseChains(t *testing.T) {
	var got []float32
	g, mp := pipelineGraph(t, "opencl:0:0", pipeline, &got)
	g2, mp2, fused, err := scenario.Fuse(g, mp)
	if err != nil {
		t.Fatal(err)
	}
	if len(fused) != 2 || fused[0].Name != "a+b+c" || fused[0].Steps != 5 || fused[1].Name != "d+e" || fused[1].Steps != 2 {
		t.Fatalf("fused %+v: expected a+b+c (5 steps) and d+e (2 steps)", fused)
	}
	var names []string
	for _, a := range g2.Actors {
		names = append(names, a.Name)
	}
	if want := []string{"src", "a+b+c", "mid", "d+e", "f", "sink"}; !slices.Equal(names, want) {
		t.Fatalf("actors %v: expected %v", names, want)
	}
	if len(g2.Channels) != 5 || len(g.Channels) != 8 || len(g.Actors) != 9 {
		t.Fatalf("%d channels (original %d, %d actors): expected 5 (8, 9)", len(g2.Channels), len(g.Channels), len(g.Actors))
	}
	m := g2.Actor("a+b+c")
	if m == nil || m.Inputs[0].Name != "x" || m.Outputs[0].Name != "y" || g2.ChannelsOf(m.Inputs[0])[0].From.Actor.Name != "src" {
		t.Fatalf("merged actor %+v: expected x from src, y", m)
	}
	if mp2.Actors["a+b+c"] == nil || mp2.Actors["a"] != nil || mp2.Actors["f"] == nil || mp.Actors["a"] == nil {
		t.Fatalf("mapping %v (original %v): expected a+b+c and f placed, a gone from the copy only", mp2.Actors, mp.Actors)
	}
	// Nothing to merge: the graph and mapping come back as they are.
	mp.Actors["b"].WorkItems = 4
	mp.Actors["e"].Device = "opencl:0:1"
	g3, mp3, fused, err := scenario.Fuse(g, mp)
	if err != nil || g3 != g || mp3 != mp || len(fused) != 0 {
		t.Fatalf("no chain: %v, %d fused: expected g and mp back", err, len(fused))
	}
}

// A broadcast output, initial tokens, the CPU or a graph boundary ends a
// chain.
func TestFuseLeavesNonChains(t *testing.T) {
	var got []float32
	decls := []stageDecl{pipeline[0], pipeline[1], pipeline[4]}
	for _, c := range []struct {
		name  string
		alter func(g *graph.Graph, mp *graph.Mapping)
		want  []string
	}{
		{"chain", func(*graph.Graph, *graph.Mapping) {}, []string{"a+b+d"}},
		{"cpu", func(_ *graph.Graph, mp *graph.Mapping) { mp.Actors["b"].Device = "cpu" }, nil},
		{"initial", func(g *graph.Graph, _ *graph.Mapping) { g.Channels[2].Initial = 256 }, []string{"a+b"}},
		{"broadcast", func(g *graph.Graph, _ *graph.Mapping) {
			s := g.AddActor("tap", graph.WithFunc(runtime.FireFunc(func(*runtime.Firing) error { return nil })))
			g.Join(g.Actor("a").Outputs[0], s.AddPort("i", graph.In, graph.MustTokenType("f32"), graph.SDF(pipeRate), ""))
		}, []string{"b+d"}},
		{"boundary", func(g *graph.Graph, _ *graph.Mapping) {
			g.Outputs = append(g.Outputs, graph.Boundary{Name: "out", Actor: "d", Port: "y"})
		}, []string{"a+b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, mp := pipelineGraph(t, "opencl:0:0", decls, &got)
			c.alter(g, mp)
			_, _, fused, err := scenario.Fuse(g, mp)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range fused {
				names = append(names, f.Name)
			}
			if !slices.Equal(names, c.want) {
				t.Fatalf("fused %v: expected %v", names, c.want)
			}
		})
	}
}

// Elementwise refuses actors and bodies that are not element-wise.
func TestElementwiseRefused(t *testing.T) {
	g := graph.New("g")
	a := g.AddActor("a")
	a.AddPort("x", graph.In, graph.MustTokenType("f32"), graph.SDF(4), "")
	a.AddPort("y", graph.Out, graph.MustTokenType("f32"), graph.SDF(4), "")
	for body, want := range map[string]string{
		"out[i] = in[i + 1];":  "in[i + 1]: an element-wise body reads in[i] and writes out[i] only",
		"out[n - 1 - i] = 0;":  "out[n - 1 - i]",
		"float t = in[i] * p;": "expected code writing out[i]",
	} {
		if err := scenario.Elementwise(a, body, 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v: expected %q", body, err, want)
		}
	}
	b := g.AddActor("b")
	b.AddPort("x", graph.In, graph.MustTokenType("i32"), graph.SDF(4), "")
	b.AddPort("y", graph.Out, graph.MustTokenType("f32"), graph.SDF(4), "")
	if err := scenario.Elementwise(b, "out[i] = in[i];", 0); err == nil || !strings.Contains(err.Error(), "port b.x: type i32: an element-wise actor's ports carry f32") {
		t.Errorf("i32 port: got %v", err)
	}
	a.Iterations = 2
	if err := scenario.Elementwise(a, "out[i] = in[i];", 0); err == nil || !strings.Contains(err.Error(), "iterates through the swap pair y: x") {
		t.Errorf("iterations without swap: got %v", err)
	}
}

// runPipeline runs the pipeline on dev, fused or not, and returns the
// tokens reaching the sink and the run's statistics.
func runPipeline(t testing.TB, dev string, fuse bool, opts runtime.Options) ([]float32, *runtime.Stats) {
	t.Helper()
	var got []float32
	g, mp := pipelineGraph(t, dev, pipeline, &got)
	if fuse {
		var err error
		if g, mp, _, err = scenario.Fuse(g, mp); err != nil {
			t.Fatal(err)
		}
	}
	opts.Mapping = mp
	opts.Iterations = pipeFirings
	st, err := runtime.Run(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

// The fused pipeline gives the unfused one's results bit for bit, on
// OpenCL and on CUDA, and its merged actors fire once per chain firing.
func TestFusedPipelineBitIdentical(t *testing.T) {
	for _, backend := range []string{"opencl", "cuda"} {
		t.Run(backend, func(t *testing.T) {
			var dev string
			if backend == "opencl" {
				d, _ := openCL(t)
				dev = d.Info().ID
			} else {
				d, _ := openCUDA(t)
				dev = d.Info().ID
			}
			want, _ := runPipeline(t, dev, false, runtime.Options{})
			got, st := runPipeline(t, dev, true, runtime.Options{})
			if len(got) != pipeRate*pipeFirings || len(want) != len(got) {
				t.Fatalf("%d and %d tokens: expected %d", len(got), len(want), pipeRate*pipeFirings)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("token %d: fused %v, unfused %v", i, got[i], want[i])
				}
			}
			ref := reference(t)
			for i := range got {
				if d := math.Abs(float64(got[i] - ref[i])); d > 1e-3*(1+math.Abs(float64(ref[i]))) {
					t.Fatalf("token %d: %v: expected about %v (Go)", i, got[i], ref[i])
				}
			}
			for _, name := range []string{"a+b+c", "d+e", "f"} {
				if a := st.Actor(name); a == nil || a.Kind != "kernel" || a.Firings != pipeFirings {
					t.Fatalf("%s: %+v: expected a kernel actor fired %d times", name, a, pipeFirings)
				}
			}
			if st.Actor("a") != nil {
				t.Fatal("actor a still runs on its own")
			}
		})
	}
}

// reference computes the pipeline in Go (float32 arithmetic, so close to
// but not necessarily the device's bits).
func reference(t testing.TB) []float32 {
	var out []float32
	for k := range pipeFirings {
		for j := range pipeRate {
			x := float32(3 * math.Sin(float64(k*pipeRate+j)*0.37))
			x = x*1.7 + 0.25
			x = x*x - 0.3
			for range 3 {
				x = x / (1 + 0.9*x*x)
			}
			x = x*-2.5 + x
			x = (x + 0.125) * (x - 0.125)
			x = x*0.5 + 1
			out = append(out, x)
		}
	}
	return out
}

var _ = device.GPU
