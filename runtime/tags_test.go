package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// tagChain: src (8 tokens, a tag at offset 3 valued with the firing index)
// → dec (4 → 2, a decimator by 2) → interp (1 → 4) → sink (16), every
// actor passing tokens through by position. It records the tags each of
// dec and sink sees.
func tagChain(decPolicy string) (*graph.Graph, map[string][]Tag, *sync.Mutex) {
	g := graph.New("tags")
	seen := map[string][]Tag{}
	var mu sync.Mutex
	record := func(name string, f *Firing) {
		mu.Lock()
		for _, t := range f.Tags(0) {
			seen[name] = append(seen[name], Tag{Offset: int(f.Index())*1000 + t.Offset, Key: t.Key, Value: t.Value})
		}
		mu.Unlock()
	}
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(func(f *Firing) error {
		f.AddTag(0, 3, "frame", f.Index())
		return nil
	}))
	so := graph.AddOutput[int64](s, "out", graph.SDF(8))
	d := g.AddActor("dec", graph.WithFunc(func(f *Firing) error { record("dec", f); return nil }))
	if decPolicy != "" {
		d.Attrs = map[string]string{"tags": decPolicy}
	}
	di := graph.AddInput[int64](d, "in", graph.SDF(4))
	do := graph.AddOutput[int64](d, "out", graph.SDF(2))
	it := g.AddActor("interp", graph.WithFunc(func(f *Firing) error { return nil }))
	ii := graph.AddInput[int64](it, "in", graph.SDF(1))
	io := graph.AddOutput[int64](it, "out", graph.SDF(4))
	k := g.AddActor("sink", graph.Stateful(), graph.WithFunc(func(f *Firing) error { record("sink", f); return nil }))
	ki := graph.AddInput[int64](k, "in", graph.SDF(16))
	graph.Connect(g, so, di)
	graph.Connect(g, do, ii)
	graph.Connect(g, io, ki)
	return g, seen, &mu
}

func TestTagsRateAwarePropagation(t *testing.T) {
	t.Parallel()
	const n = 200
	g, seen, _ := tagChain("")
	if _, err := Run(context.Background(), g, Options{Iterations: n, Tags: true, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if len(seen["dec"]) != n || len(seen["sink"]) != n {
		t.Fatalf("dec saw %d tags, sink %d: want %d each", len(seen["dec"]), len(seen["sink"]), n)
	}
	for k := 0; k < n; k++ {
		// src token 8k+3 is dec firing 2k's offset 3 → dec output 4k+1
		// (offset 3·2/4 = 1) → interp firing 4k+1's offset 0 → output
		// 16k+4 → sink firing k, offset 4.
		if d := seen["dec"][k]; d.Offset != 2*k*1000+3 || d.Value != int64(k) {
			t.Fatalf("dec tag %d = %+v, want firing %d offset 3", k, d, 2*k)
		}
		if s := seen["sink"][k]; s.Offset != k*1000+4 || s.Value != int64(k) || s.Key != "frame" {
			t.Fatalf("sink tag %d = %+v, want firing %d offset 4 value %d", k, s, k, k)
		}
	}
}

func TestTagsPolicyNoneAndOff(t *testing.T) {
	t.Parallel()
	g, seen, _ := tagChain("none")
	if _, err := Run(context.Background(), g, Options{Iterations: 20}); err != nil {
		t.Fatal(err)
	}
	if len(seen["dec"]) != 20 || len(seen["sink"]) != 0 {
		t.Errorf("dec saw %d tags, sink %d: want 20 and 0 (dec's policy none stops them)", len(seen["dec"]), len(seen["sink"]))
	}
	g, seen, _ = tagChain("")
	if _, err := Run(context.Background(), g, Options{Iterations: 20}); err != nil {
		t.Fatal(err)
	}
	if len(seen["dec"]) != 0 {
		t.Errorf("tags tracked without Options.Tags or a tags attribute: %v", seen["dec"])
	}
	g, _, _ = tagChain("sideways")
	if _, err := Run(context.Background(), g, Options{Iterations: 1}); err == nil || !strings.Contains(err.Error(), `tags attribute "sideways": expected all, one-to-one or none`) {
		t.Errorf("err = %v", err)
	}
}

// Tags cross kernel actors: src (a tag at token 5 of every firing) → a1 →
// a2 (kernel actors on a device, joined by a device ring) → a sink that
// records them, at the same positions as through the Go versions.
func TestTagsAcrossKernelActors(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		const n = 40
		g := graph.New("tags-kernels")
		s := g.AddActor("src", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
			f.AddTag(0, 5, "frame", f.Index())
			return nil
		})))
		s.AddPort("out", graph.Out, graph.MustTokenType("f32"), graph.SDF(rate), "")
		addAffine(g, "a1", 3, 1)
		addAffine(g, "a2", 2, -0.5)
		var mu sync.Mutex
		var got []Tag
		k := g.AddActor("snk", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
			mu.Lock()
			for _, tg := range f.Tags(0) {
				got = append(got, Tag{Offset: int(f.Index())*rate + tg.Offset, Key: tg.Key, Value: tg.Value})
			}
			mu.Unlock()
			return nil
		})))
		k.AddPort("in", graph.In, graph.MustTokenType("f32"), graph.SDF(rate), "")
		g.JoinNames("src.out", "a1.x")
		g.JoinNames("a1.y", "a2.x")
		g.JoinNames("a2.y", "snk.in")
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"a1": kernelAt(devs[0], 4, 8), "a2": kernelAt(devs[0], 4, 8)}}
		if _, err := Run(context.Background(), g, Options{Iterations: n, Tags: true, Mapping: m}); err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("sink saw %d tags through the kernel actors, want %d", len(got), n)
		}
		for i, tg := range got {
			if tg.Offset != i*rate+5 || tg.Value != int64(i) || tg.Key != "frame" {
				t.Fatalf("tag %d = %+v, want token %d valued %d", i, tg, i*rate+5, i)
			}
		}
	})
}
