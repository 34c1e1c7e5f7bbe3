// Package carsh_test runs the shell's 2-D FFT filter (filter.sh) and the
// kernels of the graph examples/fft-filter.yaml in the graph's schedule on
// the same image and compares the two filtered images.
package carsh_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/shell"
	"github.com/sluicehq/sluice/spec"
)

const w = 512

func openCL(t *testing.T) {
	for _, d := range device.Devices(context.Background()) {
		if d.Backend == "opencl" {
			return
		}
	}
	if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
		t.Fatal("no OpenCL device")
	}
	t.Skip("no OpenCL device on this machine (scripts/install-pocl.sh installs PoCL)")
}

func floats(t *testing.T, path string) []float32 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func TestShellMatchesGraph(t *testing.T) {
	openCL(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(".")); err != nil {
		t.Fatal(err)
	}
	gen := exec.Command("go", "run", "./gen", "-o", filepath.Join(dir, "image.bin"))
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// The shell.
	script, err := os.ReadFile("filter.sh")
	if err != nil {
		t.Fatal(err)
	}
	sh := shell.New(shell.Options{Dir: dir})
	start := time.Now()
	err = sh.RunScript(ctx, "filter.sh", strings.NewReader(string(script)))
	if err := errorsJoin(err, sh.Close()); err != nil {
		t.Fatal(err)
	}
	t.Logf("sluice sh filter.sh: %v", time.Since(start))

	// The graph, with every kernel actor on OpenCL.
	graphOut := filepath.Join(dir, "graph.bin")
	runGraph(t, ctx, dir, filepath.Join(dir, "image.bin"), graphOut)

	got, want := floats(t, filepath.Join(dir, "filtered.bin")), floats(t, graphOut)
	if len(got) != w*w || len(want) != w*w {
		t.Fatalf("images of %d and %d pixels: expected %d", len(got), len(want), w*w)
	}
	in := floats(t, filepath.Join(dir, "image.bin"))
	var maxDiff, maxChange float64
	same := 0
	for i := range got {
		maxDiff = math.Max(maxDiff, math.Abs(float64(got[i]-want[i])))
		maxChange = math.Max(maxChange, math.Abs(float64(got[i]-in[i])))
		if got[i] == want[i] {
			same++
		}
	}
	t.Logf("shell vs graph: %d of %d pixels bit-identical, largest difference %.3g; the filter changed pixels by up to %.3g", same, len(got), maxDiff, maxChange)
	if maxDiff > 1e-5 {
		t.Errorf("shell and graph images differ by up to %g: expected at most 1e-5", maxDiff)
	}
	var sumIn, sumOut float64
	for i := range got {
		sumIn += float64(in[i])
		sumOut += float64(got[i])
	}
	// A low pass keeps the mean (the DC bin's gain is 1) of a positive image.
	if d := math.Abs(sumOut-sumIn) / sumIn; d > 0.01 {
		t.Errorf("mean brightness moved by %.2g%%: expected a low pass to keep it", 100*d)
	}
	if maxChange < 0.1 {
		t.Errorf("the filter changed the image by at most %g: expected a visible low pass", maxChange)
	}
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// runGraph fires the kernels of examples/fft-filter.yaml as the graph
// does: it flattens the graph, follows its channels from the first actor,
// and fires each kernel actor's own kernel (from the graph's kernel files)
// once per firing of the graph's schedule — 512 one-row firings for row
// actors, one whole-image firing for transposes — on the first OpenCL
// device, each firing on its window of the stream. (The runtime's OpenCL
// actors use FIRE procedures; the kernels of fft-filter.yaml are plain
// OpenCL kernels, so the test launches them directly.)
func runGraph(t *testing.T, ctx context.Context, _ string, in, out string) {
	path, err := filepath.Abs("../fft-filter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := spec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	flat, err := g.Flatten()
	if err != nil {
		t.Fatal(err)
	}
	chain := order(t, flat)
	d, err := flowmodel.OpenDevice(ctx, "opencl")
	if err != nil {
		t.Fatal(err)
	}
	q, err := d.NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	img, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := d.Alloc(int64(len(img)), device.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := q.Write(cur, 0, img); err != nil {
		t.Fatal(err)
	} else {
		ev.Release()
	}
	var names []string
	for _, a := range chain {
		next := fire(t, ctx, d, q, a, filepath.Dir(path), cur)
		cur.Release()
		cur = next
		names = append(names, a.Name)
	}
	defer cur.Release()
	t.Logf("graph schedule: %s", strings.Join(names, " → "))
	res := make([]byte, 4*w*w)
	ev, err := q.Read(res, cur, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	if err := ev.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, res, 0o644); err != nil {
		t.Fatal(err)
	}
}

// order returns the flattened graph's actors along its channels (the
// filter is a chain).
func order(t *testing.T, g *graph.Graph) []*graph.Actor {
	next := map[*graph.Actor]*graph.Actor{}
	hasIn := map[*graph.Actor]bool{}
	for _, c := range g.Channels {
		next[c.From.Actor] = c.To.Actor
		hasIn[c.To.Actor] = true
	}
	var first *graph.Actor
	for _, a := range g.Actors {
		if !hasIn[a] {
			if first != nil {
				t.Fatalf("fft-filter: actors %s and %s both start the graph: expected a chain", first.Name, a.Name)
			}
			first = a
		}
	}
	var chain []*graph.Actor
	for a := first; a != nil; a = next[a] {
		chain = append(chain, a)
	}
	if len(chain) != len(g.Actors) {
		t.Fatalf("fft-filter: chain of %d actors, graph has %d", len(chain), len(g.Actors))
	}
	return chain
}

// tokenBytes is the size of the token types of the filter.
func tokenBytes(t *testing.T, p *graph.Port) int64 {
	switch s := fmt.Sprint(p.Type); s {
	case "f32":
		return 4
	case "c64":
		return 8
	default:
		t.Fatalf("port %s: type %s: expected f32 or c64", p.Name, s)
	}
	return 0
}

// fire runs every firing of actor a over the image in `in` and returns the
// output image.
func fire(t *testing.T, ctx context.Context, d device.Device, q device.Queue, a *graph.Actor, dir string, in device.Buffer) device.Buffer {
	var im *graph.Impl
	for i := range a.Impls {
		if a.Impls[i].Kind == graph.ImplOpenCL {
			im = &a.Impls[i]
		}
	}
	if im == nil {
		t.Fatalf("actor %s has no OpenCL kernel", a.Name)
	}
	src := im.Source
	if !filepath.IsAbs(src) {
		src = filepath.Join(dir, src)
	}
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := d.Build(ctx, device.Source{Name: filepath.Base(src), Text: string(text)}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	entry := im.Entry
	k, err := prog.Kernel(entry)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	ip, op := a.Inputs[0], a.Outputs[0]
	rate := int64(ip.Rate.Sum())
	inTok, outTok := tokenBytes(t, ip), tokenBytes(t, op)
	out, err := d.Alloc(w*w*outTok, device.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	firings := w * w / rate
	for f := int64(0); f < firings; f++ {
		x, err := in.Slice(f*rate*inTok, rate*inTok)
		if err != nil {
			t.Fatal(err)
		}
		y, err := out.Slice(f*rate*outTok, rate*outTok)
		if err != nil {
			t.Fatal(err)
		}
		r := device.Range{Global: []int{int(rate)}}
		args := []any{x, y}
		switch entry {
		case "fft_row", "ifft_row": // one work-group per row, __local row
			r = device.Range{Global: []int{64}, Local: []int{64}}
			args = append(args, device.Local(w*8))
		case "transpose": // 16 x 16 tiles of the whole image
			r = device.Range{Global: []int{w, w}, Local: []int{16, 16}}
		case "lowpass", "highpass": // the row index of the firing
			args = append(args, int32(f%w))
		}
		for i, v := range args {
			if err := k.SetArg(i, v); err != nil {
				t.Fatalf("%s argument %d: %v", a.Name, i, err)
			}
		}
		ev, err := q.Launch(k, r)
		if err != nil {
			t.Fatalf("%s firing %d: %v", a.Name, f, err)
		}
		ev.Release()
		if err := q.Finish(); err != nil {
			t.Fatal(err)
		}
		x.Release()
		y.Release()
	}
	return out
}
