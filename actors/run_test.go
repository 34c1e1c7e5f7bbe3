package actors

import (
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// runGraph runs g to completion with a time limit.
func runGraph(t *testing.T, g *graph.Graph) *runtime.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := runtime.Run(ctx, g, runtime.Options{})
	if err != nil {
		t.Fatalf("run %s: %v", g.Name, err)
	}
	return st
}

// loadExample loads examples/run/<name> and rewrites the built-ins' paths:
// inputs relative to the repository root, outputs into dir.
func loadExample(t *testing.T, name, dir string) *graph.Graph {
	t.Helper()
	g, err := spec.LoadGraph(filepath.Join("..", "examples", "run", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.Actors {
		for _, im := range a.Impls {
			p, ok := im.Params["path"].(string)
			if !ok {
				continue
			}
			if len(a.Inputs) == 0 {
				im.Params["path"] = filepath.Join("..", p)
			} else {
				im.Params["path"] = filepath.Join(dir, filepath.Base(p))
			}
		}
	}
	return g
}

func TestExampleToneFilter(t *testing.T) {
	g := loadExample(t, "tone-filter.yaml", t.TempDir())
	out := withStdio(t, "", func() { runGraph(t, g) })
	lines := strings.Fields(out)
	if len(lines) != 64 {
		t.Fatalf("%d lines, want 64 (one spectrum):\n%s", len(lines), out)
	}
	db := make([]float64, 64)
	for i, l := range lines {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatal(err)
		}
		db[i] = v
	}
	peak := 0
	for i := 1; i < 32; i++ {
		if db[i] > db[peak] {
			peak = i
		}
	}
	if peak != 16 {
		t.Fatalf("spectrum peak at bin %d, want 16: %v", peak, db)
	}
	for i := 1; i < 32; i++ {
		if i != 16 && i != 15 && i != 17 && db[16]-db[i] < 20 {
			t.Errorf("bin %d at %.1f dB, within 20 dB of the tone (%.1f dB)", i, db[i], db[16])
		}
		if math.Abs(db[i]-db[64-i]) > 1e-3 {
			t.Errorf("bin %d (%.3f) does not mirror bin %d (%.3f)", i, db[i], 64-i, db[64-i])
		}
	}
}

func TestExampleImageThreshold(t *testing.T) {
	dir := t.TempDir()
	runGraph(t, loadExample(t, "image-threshold.yaml", dir))
	f, err := os.Open(filepath.Join(dir, "threshold.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 128 || b.Dy() != 128 {
		t.Fatalf("output is %v, want 128×128", b)
	}
	counts := map[uint32]int{}
	for y := 0; y < 128; y++ {
		for x := 0; x < 128; x++ {
			r, _, _, _ := img.At(x, y).RGBA()
			counts[r>>8]++
		}
	}
	if len(counts) != 2 || counts[0] == 0 || counts[255] == 0 {
		t.Fatalf("pixel values %v, want only 0 and 255", counts)
	}
	if r, _, _, _ := img.At(80, 48).RGBA(); r>>8 != 255 {
		t.Fatal("the disc's centre is not white")
	}
	if r, _, _, _ := img.At(30, 90).RGBA(); r>>8 != 255 {
		t.Fatal("the square (150) is not white")
	}
	if r, _, _, _ := img.At(2, 2).RGBA(); r>>8 != 0 {
		t.Fatal("the background is not black")
	}
}

func TestExampleStdinSaxpy(t *testing.T) {
	g := loadExample(t, "stdin-saxpy.yaml", t.TempDir())
	out := withStdio(t, "1\n2\n3.5\n", func() { runGraph(t, g) })
	if out != "3\n5\n8\n" {
		t.Fatalf("output %q, want 3 5 8", out)
	}
}

// TestRunFIRToFile runs gen.ramp → fir → file.write and file.read →
// file.write through the runtime and checks the files.
func TestRunFIRToFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "y.f32")
	const rate, count = 100, 7
	g := graph.New("fir-file")
	builtin := func(use string, params map[string]any) graph.ActorOption {
		return graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: use, Params: params})
	}
	src := g.AddActor("src", builtin("gen.ramp", map[string]any{"start": 1, "step": 0.25, "count": count}))
	fir := g.AddActor("fir", builtin("fir", map[string]any{"taps": []any{0.5, -0.25, 0.125, 1}}), graph.Stateful())
	sink := g.AddActor("sink", builtin("file.write", map[string]any{"path": out}), graph.Stateful(), graph.IO())
	srcY := graph.AddOutput[float32](src, "y", graph.SDF(rate))
	firX := graph.AddInput[float32](fir, "x", graph.SDF(rate))
	firY := graph.AddOutput[float32](fir, "y", graph.SDF(rate))
	sinkX := graph.AddInput[float32](sink, "x", graph.SDF(rate))
	graph.Connect(g, srcY, firX, graph.Capacity(3*rate))
	graph.Connect(g, firY, sinkX)
	st := runGraph(t, g)
	for _, a := range st.Actors {
		if a.Name == "fir" && a.Firings != count {
			t.Errorf("fir fired %d times, want %d", a.Firings, count)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := tokensOf[float32](data)
	x := make([]float64, rate*count)
	for i := range x {
		x[i] = 1 + 0.25*float64(i)
	}
	want := convolve([]float64{0.5, -0.25, 0.125, 1}, x)
	if len(got) != len(want) {
		t.Fatalf("%d tokens in the file, want %d", len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-3*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("y[%d] = %v, want %v", i, got[i], want[i])
		}
	}

	// file.read (zero-padded last window) → file.write: 700 tokens read 300
	// at a time give 900, the last 200 zero.
	copyPath := filepath.Join(dir, "copy.f32")
	g = graph.New("copy")
	rd := g.AddActor("rd", builtin("file.read", map[string]any{"path": out}), graph.Stateful(), graph.IO())
	wr := g.AddActor("wr", builtin("file.write", map[string]any{"path": copyPath}), graph.Stateful(), graph.IO())
	graph.Connect(g, graph.AddOutput[float32](rd, "y", graph.SDF(300)), graph.AddInput[float32](wr, "x", graph.SDF(300)))
	runGraph(t, g)
	cp, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(cp) != 4*900 || string(cp[:len(data)]) != string(data) {
		t.Fatalf("copy has %d bytes, want 3600 starting with the original", len(cp))
	}
	for _, b := range cp[len(data):] {
		if b != 0 {
			t.Fatal("padding is not zero")
		}
	}
}
