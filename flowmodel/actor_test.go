package flowmodel_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/sluicehq/sluice/actors" // gen.ramp, gen.const
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

const exampleDir = "../examples/flowmodel"

// needBackend skips a test without a device of backend, or fails it when
// SLUICE_REQUIRE_<BACKEND>=1.
func needBackend(t *testing.T, backend string) {
	t.Helper()
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend && r.Available() {
			return
		}
	}
	env := "SLUICE_REQUIRE_" + strings.ToUpper(backend)
	if os.Getenv(env) == "1" {
		t.Fatalf("%s=1 but no %s device", env, backend)
	}
	t.Skipf("no %s device", backend)
}

// runPrinted runs g with mapping mp (through flowmodel.Place) and returns
// the tokens reaching its print actor, and the run's statistics.
func runPrinted(t *testing.T, g *graph.Graph, mp *graph.Mapping) ([]float32, *runtime.Stats) {
	t.Helper()
	var mu sync.Mutex
	var got []float32
	g.Actor("print").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(func(f *runtime.Firing) error {
		mu.Lock()
		got = append(got, runtime.Input[float32](f, 0)...)
		mu.Unlock()
		return nil
	})}}
	ctx := context.Background()
	mp, err := flowmodel.Place(ctx, g, mp)
	if err != nil {
		t.Fatal(err)
	}
	st, err := runtime.Run(ctx, g, runtime.Options{Mapping: mp})
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

func loadGraph(t *testing.T, path string) *graph.Graph {
	t.Helper()
	needExamples(t)
	l, err := driver.Load(context.Background(), path, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Graph
}

// parseGraph reads a graph through the driver, which resolves its
// flowmodel: references with flowmodel.Load.
func parseGraph(name string, data []byte) (*graph.Graph, error) {
	l, err := driver.Parse(context.Background(), name, data, driver.Options{})
	if err != nil {
		return nil, err
	}
	return l.Graph, nil
}

func loadMapping(t *testing.T, path string) *graph.Mapping {
	t.Helper()
	m, err := spec.LoadMapping(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The example graph using the flow-model file as an actor gives the same
// tokens as the graph written with an inline kernel actor, on OpenCL and
// on CUDA, and the model's kernel runs as a kernel actor.
func TestFlowModelActorMatchesInlineKernel(t *testing.T) {
	needExamples(t)
	for _, backend := range []string{"opencl", "cuda"} {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			mp := loadMapping(t, filepath.Join(exampleDir, backend+"-map.yaml"))
			want, _ := runPrinted(t, loadGraph(t, filepath.Join(exampleDir, "graph-inline.yaml")), mp)
			got, st := runPrinted(t, loadGraph(t, filepath.Join(exampleDir, "graph.yaml")), mp)
			if len(got) != 64 || len(want) != 64 {
				t.Fatalf("got %d and %d tokens: expected 64", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] || got[i] != 3*float32(i%16+16*(i/16))+1 {
					t.Fatalf("token %d: flow-model %v, inline kernel %v: expected %v", i, got[i], want[i], 3*float32(i)+1)
				}
			}
			if a := st.Actor("axpy"); a == nil || a.Kind != "kernel" || a.Firings != 4 {
				t.Fatalf("axpy: %+v: expected a kernel actor fired 4 times", a)
			}
		})
	}
}

// needExamples skips a test run outside the repository (a test binary
// copied elsewhere), where the examples are not found.
func needExamples(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(exampleDir); err != nil {
		t.Skipf("%s not found (test binary run outside the repository's flowmodel directory)", exampleDir)
	}
}

// copyExample copies the example model's files into a new directory.
func copyExample(t *testing.T) string {
	t.Helper()
	needExamples(t)
	dir := t.TempDir()
	for _, f := range []string{"saxpy.yaml", "saxpy.cl", "saxpy.cu"} {
		b, err := os.ReadFile(filepath.Join(exampleDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// graphYAML is a graph around one flow-model actor whose flowmodel: key
// is model.
func graphYAML(model string) string {
	return `name: fm
actors:
  ramp: {use: gen.ramp, with: {count: 3}, out: {x: {type: f32, rate: 16}}}
  one:  {use: gen.const, with: {value: 1, count: 3}, out: {y: {type: f32, rate: 16}}}
  axpy:
    flowmodel: ` + model + `
  print: {use: stdout, in: {y: {type: f32, rate: 16}}, stateful: true, io: true}
channels:
  - {from: ramp.x, to: axpy.x}
  - {from: one.y, to: axpy.y0}
  - {from: axpy.y, to: print.y}
`
}

// A flow-model served over HTTP is an actor like a local one; a sha256
// pin that differs and a file over max_bytes are refused at the actor's
// line and column.
func TestFlowModelActorFromURL(t *testing.T) {
	dir := copyExample(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	data, err := os.ReadFile(filepath.Join(dir, "saxpy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	pin := hex.EncodeToString(sum[:])
	url := srv.URL + "/saxpy.yaml"

	g, err := parseGraph(filepath.Join(dir, "g.yaml"), []byte(graphYAML("{src: "+url+", sha256: "+pin+"}")))
	if err != nil {
		t.Fatal(err)
	}
	a := g.Actor("axpy")
	if len(a.Inputs) != 2 || len(a.Outputs) != 1 || a.Inputs[1].Name != "y0" || a.Outputs[0].Rate.Sum() != 16 || a.Attrs[flowmodel.AttrModel] != url {
		t.Fatalf("axpy: inputs %v outputs %v attrs %v: expected x, y0 → y of 16 f32 from %s", a.Inputs, a.Outputs, a.Attrs, url)
	}
	if _, ok := a.Impl(graph.ImplOpenCL); !ok {
		t.Fatal("axpy has no OpenCL implementation")
	}
	if _, ok := a.Impl(graph.ImplCUDA); !ok {
		t.Fatal("axpy has no CUDA implementation")
	}

	bad := strings.Repeat("0", 64)
	_, err = parseGraph("g.yaml", []byte(graphYAML("{src: "+url+", sha256: "+bad+"}")))
	if err == nil || !strings.Contains(err.Error(), "g.yaml:6:22") || !strings.Contains(err.Error(), "expected the pinned "+bad) || !strings.Contains(err.Error(), "sha256 "+pin) {
		t.Fatalf("sha256 mismatch: got %v: expected g.yaml:6:22:…: sha256 %s: expected the pinned %s", err, pin, bad)
	}
	_, err = parseGraph("g.yaml", []byte(graphYAML("{src: "+url+", max_bytes: 100}")))
	if err == nil || !strings.Contains(err.Error(), "larger than the limit of 100 bytes") {
		t.Fatalf("max_bytes: got %v: expected the size limit refused", err)
	}
	_, err = parseGraph("g.yaml", []byte(graphYAML(srv.URL+"/none.yaml")))
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing model: got %v: expected HTTP 404", err)
	}

	needBackend(t, "opencl")
	got, _ := runPrinted(t, g, &graph.Mapping{Actors: map[string]*graph.Placement{"axpy": {Device: "opencl", WorkGroups: 3, WorkItems: 4}}})
	local, _ := runPrinted(t, loadGraph(t, filepath.Join(exampleDir, "graph.yaml")), nil)
	if len(got) != 48 {
		t.Fatalf("got %d tokens: expected 48", len(got))
	}
	for i := range got {
		// a is 2 here (no params override), 3 in the example graph.
		if got[i] != 2*float32(i)+1 || local[i] != 3*float32(i)+1 {
			t.Fatalf("token %d: %v from the URL, %v from the file: expected %v and %v", i, got[i], local[i], 2*float32(i)+1, 3*float32(i)+1)
		}
	}
}

// With iterations: N the model's swap pair (y → y0) becomes the actor's:
// y = N·a·x + 1. Parameters are overridden by name; unknown ones are
// refused.
func TestFlowModelActorIterationsAndParams(t *testing.T) {
	dir := copyExample(t)
	text := strings.Replace(graphYAML("{src: saxpy.yaml, params: {a: 0.5}}"), "    flowmodel:", "    iterations: 4\n    flowmodel:", 1)
	g, err := parseGraph(filepath.Join(dir, "g.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if a := g.Actor("axpy"); a.Iterations != 4 || a.Swap["y"] != "y0" {
		t.Fatalf("axpy: iterations %d swap %v: expected 4 and y → y0", a.Iterations, a.Swap)
	}
	_, err = parseGraph(filepath.Join(dir, "g.yaml"), []byte(graphYAML("{src: saxpy.yaml, params: {b: 1}}")))
	if err == nil || !strings.Contains(err.Error(), `params: "b": expected one of the model's parameters (a, n)`) {
		t.Fatalf("unknown parameter: got %v", err)
	}
	_, err = parseGraph(filepath.Join(dir, "g.yaml"), []byte(strings.Replace(graphYAML("saxpy.yaml"), "    flowmodel:", "    in: {x: {type: f32, rate: 16}}\n    flowmodel:", 1)))
	if err == nil || !strings.Contains(err.Error(), "has no in: the model gives its ports") {
		t.Fatalf("in: beside flowmodel: got %v", err)
	}
	needBackend(t, "opencl")
	got, _ := runPrinted(t, g, &graph.Mapping{Actors: map[string]*graph.Placement{"axpy": {Device: "opencl", WorkGroups: 2, WorkItems: 3}}})
	if len(got) != 48 {
		t.Fatalf("got %d tokens: expected 48", len(got))
	}
	for i := range got {
		if want := 4*0.5*float32(i) + 1; got[i] != want {
			t.Fatalf("token %d: %v: expected %v", i, got[i], want)
		}
	}
}

// A mapping onto a device that misses a requirement is refused naming
// the actor, the requirement and the device; without a placement, Place
// picks a device that meets them.
func TestPlaceChecksRequirements(t *testing.T) {
	dir := copyExample(t)
	model := filepath.Join(dir, "saxpy.yaml")
	m, err := flowmodel.Load(context.Background(), model, flowmodel.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New("g")
	a, err := m.Actor(g, "axpy", flowmodel.ActorOptions{Params: map[string]float64{"a": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Ports()) != 3 || len(g.Actors) != 1 {
		t.Fatalf("actor %v in %d actors: expected 3 ports, 1 actor", a.Ports(), len(g.Actors))
	}
	if _, err := m.Actor(g, "again", flowmodel.ActorOptions{Params: map[string]float64{"z": 1}}); err == nil || len(g.Actors) != 1 {
		t.Fatalf("bad params: %v, %d actors: expected an error and no actor added", err, len(g.Actors))
	}
	ctx := context.Background()
	_, err = flowmodel.Place(ctx, g, &graph.Mapping{Actors: map[string]*graph.Placement{"axpy": {Device: "cpu"}}})
	if err == nil || !strings.Contains(err.Error(), "actor axpy: flow-model saxpy is mapped to a device that does not meet its requirements: cpu: backend cpu") {
		t.Fatalf("on the CPU: got %v", err)
	}
	needBackend(t, "opencl")
	mp, err := flowmodel.Place(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl := mp.Actors["axpy"]; pl == nil || !strings.HasPrefix(pl.Device, "opencl:") && !strings.HasPrefix(pl.Device, "cuda:") {
		t.Fatalf("placement %+v: expected an OpenCL or CUDA device", pl)
	}
	m.Requires.MinComputeUnits = 1 << 20
	g2 := graph.New("g2")
	if _, err := m.Actor(g2, "big", flowmodel.ActorOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = flowmodel.Place(ctx, g2, &graph.Mapping{Actors: map[string]*graph.Placement{"big": {Device: "opencl"}}})
	if err == nil || !strings.Contains(err.Error(), "actor big:") || !strings.Contains(err.Error(), "requires.min_compute_units expects at least 1048576") || !strings.Contains(err.Error(), "opencl:") {
		t.Fatalf("too few compute units: got %v", err)
	}
	_, err = flowmodel.Place(ctx, g2, nil)
	if err == nil || !strings.Contains(err.Error(), "no device of this host meets its requirements") {
		t.Fatalf("no device: got %v", err)
	}
}

// Kernels whose work-items cooperate, Go built-ins and unknown entries are
// not graph actors; the error points at the kernel's line.
func TestFlowModelActorRefused(t *testing.T) {
	base := `name: k
kernel:
  entry: k
  opencl: |
    __kernel void k(__global const float *x, __global float *y) {
      // a comment naming barrier( is no barrier
      int i = get_global_id(0);
      y[i] = x[i];
      BODY
    }
in: [{name: x, type: f32, length: 8}]
out: [{name: y, type: f32, length: 8}]
`
	for _, c := range []struct{ body, want string }{
		{"barrier(CLK_LOCAL_MEM_FENCE);", "k.yaml.opencl:5: the opencl kernel uses barrier"},
		{"__local float t[8];", "uses __local"},
		{"y[get_local_id(0)] = 0;", "uses get_local_id"},
	} {
		m, err := flowmodel.Parse("k.yaml", []byte(strings.Replace(base, "BODY", c.body, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Actor(graph.New("g"), "k", flowmodel.ActorOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v: expected %q", c.body, err, c.want)
		}
	}
	m, err := flowmodel.Parse("k.yaml", []byte(strings.Replace(base, "BODY", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Actor(graph.New("g"), "k", flowmodel.ActorOptions{}); err != nil {
		t.Fatalf("a comment naming barrier: %v", err)
	}
	m.Kernel.Entry = "other"
	if _, err := m.Actor(graph.New("g"), "k", flowmodel.ActorOptions{}); err == nil || !strings.Contains(err.Error(), `expected one opencl kernel named "other", found 0`) {
		t.Fatalf("unknown entry: got %v", err)
	}
	if _, err := builtinSaxpy(8).Actor(graph.New("g"), "b", flowmodel.ActorOptions{}); err == nil || !strings.Contains(err.Error(), "a Go built-in is not a graph kernel actor") {
		t.Fatalf("built-in: got %v", err)
	}
}

// A model with a 2-D range sees its work-items' ids and sizes per
// dimension: a transpose of a 3×4 matrix (rows of 4) into 4×3.
func TestFlowModelActor2DRange(t *testing.T) {
	needBackend(t, "opencl")
	dir := t.TempDir()
	model := `name: transpose
kernel:
  entry: transpose
  opencl: |
    __kernel void transpose(__global const float *x, __global float *y) {
      size_t c = get_global_id(0), r = get_global_id(1);
      size_t w = get_global_size(0), h = get_global_size(1);
      if (get_work_dim() == 2) y[c * h + r] = x[r * w + c];
    }
in: [{name: x, type: f32, length: 12}]
out: [{name: y, type: f32, length: 12}]
range: {global: [4, 3]}
`
	if err := os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := parseGraph(filepath.Join(dir, "g.yaml"), []byte(`name: g
actors:
  ramp: {use: gen.ramp, with: {count: 2}, out: {x: {type: f32, rate: 12}}}
  tr: {flowmodel: t.yaml}
  print: {use: stdout, in: {y: {type: f32, rate: 12}}, stateful: true, io: true}
channels:
  - {from: ramp.x, to: tr.x}
  - {from: tr.y, to: print.y}
`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := runPrinted(t, g, &graph.Mapping{Actors: map[string]*graph.Placement{"tr": {Device: "opencl", WorkGroups: 2, WorkItems: 5}}})
	if len(got) != 24 {
		t.Fatalf("got %d tokens: expected 24", len(got))
	}
	for f := range 2 {
		for r := range 3 {
			for c := range 4 {
				if want, have := float32(12*f+r*4+c), got[12*f+c*3+r]; have != want {
					t.Fatalf("firing %d, y[%d][%d] = %v: expected x[%d][%d] = %v", f, c, r, have, r, c, want)
				}
			}
		}
	}
}
