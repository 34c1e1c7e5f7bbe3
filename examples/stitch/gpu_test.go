package stitch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/examples/stitch"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// needGPU returns the GPU engine for w×h tiles, or skips the test where
// there is no CUDA GPU with cuFFT and NVRTC (fails with
// SLUICE_REQUIRE_CUDA=1).
func needGPU(t *testing.T, w, h int) *stitch.GPU {
	t.Helper()
	e, err := stitch.GPUFor(w, h)
	if err != nil {
		if os.Getenv("SLUICE_REQUIRE_CUDA") == "1" || !errors.Is(err, stitch.ErrNoGPU) {
			t.Fatal(err)
		}
		t.Skipf("no CUDA GPU with cuFFT and NVRTC here: %v", err)
	}
	return e
}

// TestGPUGraphsCheck: the GPU graphs are consistent SDF without deadlock
// (runs without a GPU).
func TestGPUGraphsCheck(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"stitch-gpu.yaml", "stitch-42x59-gpu.yaml"} {
		g, err := spec.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if r := analysis.Check(g, analysis.CheckOptions{}); len(r.Errors) > 0 || r.Deadlock {
			t.Errorf("%s: errors %v, deadlock %v", p, r.Errors, r.Deadlock)
		}
	}
}

// TestGPUAlignMatchesGo aligns the west and north pairs of the first
// tiles on the GPU and in Go (Align) and wants the same translations and
// correlations, at 128×128 and 1024×1024; every handle is freed after its
// reads.
func TestGPUAlignMatchesGo(t *testing.T) {
	for _, n := range []int{128, 1024} {
		c := stitch.DefaultConfig()
		if n == 1024 {
			c = stitch.SeedConfig()
		}
		e := needGPU(t, c.Width, c.Height)
		live := e.Live()
		s, k := stitch.SceneFor(c), c.Known()
		tiles := map[int][]uint16{}
		specs := map[int][]complex64{}
		handles := map[int]uint64{}
		reads := map[int]int{}
		pairs := [][2]int{{0, 1}, {1, 2}, {0, c.Cols}, {1, c.Cols + 1}, {c.Cols, c.Cols + 1}}
		for _, p := range pairs {
			reads[p[0]]++
			reads[p[1]]++
		}
		for i, r := range reads {
			tiles[i] = make([]uint16, c.Pixels())
			c.Tile(s, k, i, tiles[i])
			specs[i] = make([]complex64, c.Pixels())
			stitch.Transform(tiles[i], specs[i], c.Width, c.Height)
			h, err := e.Upload(tiles[i], r)
			if err != nil {
				t.Fatal(err)
			}
			handles[i] = h
		}
		for _, p := range pairs {
			a, b := p[0], p[1]
			want := stitch.Align(tiles[a], tiles[b], specs[a], specs[b], c.Width, c.Height, c.Peaks)
			got, err := e.Align(handles[a], handles[b], c.Peaks)
			if err != nil {
				t.Fatal(err)
			}
			if got.DX != want.DX || got.DY != want.DY || math.Abs(got.NCC-want.NCC) > 1e-12 || !got.Valid {
				t.Errorf("%d×%d pair %d→%d: GPU %+v, Go %+v", n, n, a, b, got, want)
			}
			e.Release(handles[a])
			e.Release(handles[b])
		}
		if l := e.Live(); l != live {
			t.Errorf("%d×%d: %d spectra live after every read, want %d", n, n, l, live)
		}
	}
}

// TestGPUGraph runs stitch-gpu.yaml with replicas and checks every
// position, and that the run freed every spectrum on the GPU.
func TestGPUGraph(t *testing.T) {
	e := needGPU(t, 128, 128)
	g, err := spec.Load("stitch-gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.Actors {
		a.Attrs["mosaic"] = ""
	}
	m, err := spec.LoadMapping("cuda16.yaml")
	if err != nil {
		t.Fatal(err)
	}
	live := e.Live()
	stitch.Last()
	if _, err := runtime.Run(context.Background(), g, runtime.Options{Mapping: m, CheckEmpty: true}); err != nil {
		t.Fatal(err)
	}
	if res := stitch.Last(); res == nil || res.Mismatches != 0 {
		t.Fatalf("result %+v: want every position equal to the known one", res)
	}
	if l := e.Live(); l != live {
		t.Errorf("%d spectra live after the run, want %d", l, live)
	}
}

// TestGPUGraphTrace: a traced run of stitch-gpu.yaml shows the GPU's work
// the actors did themselves: each tile's copy up on "link to cuda:0", each
// pair's results down on "link from cuda:0" and their kernels on "device
// cuda:0", each within the run.
func TestGPUGraphTrace(t *testing.T) {
	needGPU(t, 128, 128)
	g, err := spec.Load("stitch-gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.Actors {
		a.Attrs["mosaic"] = ""
	}
	c, err := stitch.ActorConfig(g.Actors[0])
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st, err := runtime.Run(context.Background(), g, runtime.Options{Trace: &buf})
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Name, Cat, Ph string
			Tid           int
			Ts, Dur       float64
			Args          struct{ Name string }
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	lanes := map[int]string{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			lanes[e.Tid] = e.Args.Name
		}
	}
	n := map[string]int{}
	for _, e := range tr.TraceEvents {
		l := lanes[e.Tid]
		if e.Ph != "X" || (l != "device cuda:0" && l != "link to cuda:0" && l != "link from cuda:0") {
			continue
		}
		if e.Ts < 0 || e.Dur < 0 || e.Ts+e.Dur > float64(st.Elapsed.Microseconds())+1000 {
			t.Fatalf("%s on %s at %.1f µs for %.1f µs: outside the run (%v)", e.Name, l, e.Ts, e.Dur, st.Elapsed)
		}
		n[l]++
	}
	tiles := c.Tiles()
	pairs := (c.Cols-1)*c.Rows + (c.Rows-1)*c.Cols
	if n["link to cuda:0"] != tiles || n["link from cuda:0"] != pairs || n["device cuda:0"] != tiles+pairs {
		t.Fatalf("GPU spans per lane %v: want %d tiles up, %d pairs down, %d on the device", n, tiles, pairs, tiles+pairs)
	}
}
