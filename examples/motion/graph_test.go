package motion

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/testtmp"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// result is what one run of motion.yaml gave.
type result struct {
	sum     Summary
	out     string
	decoded map[int64][]uint8      // the decoder's frames
	flows   map[int64][][2]float32 // flow's fields
	kinds   map[string]string      // actor → how it ran (runtime.ActorStats.Kind)
}

// clipPath writes the default clip once for the package's tests (in
// their own TMPDIR, which TestMain removes).
var clipPath = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "motion-test")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, ClipName)
	return p, WriteClip(p)
})

func TestMain(m *testing.M) { testtmp.Main(m) }

func avail(backend string) bool {
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend && r.Available() {
			return true
		}
	}
	return false
}

// runGraph runs motion.yaml on the default clip (frames: 0 for the whole
// clip) under a mapping file ("" for none), keeping the decoded frames and
// flow fields when keep is set.
func runGraph(t *testing.T, mapping string, frames int64, keep bool) result {
	t.Helper()
	var m *graph.Mapping
	if mapping != "" {
		var err error
		if m, err = spec.LoadMapping(mapping); err != nil {
			t.Fatal(err)
		}
	}
	return runGraphWith(t, frames, m, nil, keep, keep)
}

// runGraphWith runs motion.yaml on the default clip with a mapping (nil
// for none) and a remote executor (nil for none).
func runGraphWith(t *testing.T, frames int64, m *graph.Mapping, remote runtime.RemoteExecutor, keepDecoded, keepFlows bool) result {
	t.Helper()
	clip, err := clipPath()
	if err != nil {
		t.Fatal(err)
	}
	g, err := spec.Load("motion.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sink := &Sink{Out: &out}
	res := result{decoded: map[int64][]uint8{}, flows: map[int64][][2]float32{}}
	var mu sync.Mutex
	g.Actor("read").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: &Reader{Path: clip}}}
	g.Actor("sink").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: sink}}
	if keepDecoded {
		g.Actor("decode").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(func(f *runtime.Firing) error {
			err := Decode(f)
			mu.Lock()
			res.decoded[f.Index()] = append([]uint8(nil), runtime.Output[uint8](f, 0)...)
			mu.Unlock()
			return err
		})}}
	}
	if keepFlows {
		g.Actor("stats").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(func(f *runtime.Firing) error {
			mu.Lock()
			res.flows[f.Index()] = append([][2]float32(nil), runtime.Input[[2]float32](f, 0)...)
			mu.Unlock()
			return Stats(f)
		})}}
	}
	opts := runtime.Options{Iterations: frames, Mapping: m}
	if remote != nil {
		opts.Remote = remote
	}
	st, err := runtime.Run(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	res.sum, res.out = sink.Sum, out.String()
	res.kinds = map[string]string{}
	for _, a := range st.Actors {
		res.kinds[a.Name] = a.Kind
	}
	return res
}

// The whole default clip on the CPU: every frame arrives, the global
// motion is the camera's pan, and motion against it is found in nearly
// every frame, at the objects.
func TestGraphCPU(t *testing.T) {
	r := runGraph(t, "", 0, false)
	t.Logf("sink printed:\n%s", r.out)
	if r.sum.Frames != ClipFrames {
		t.Fatalf("sink got %d frames, expected %d", r.sum.Frames, ClipFrames)
	}
	if math.Abs(r.sum.GlobalU-Pan[0]) > 0.1 || math.Abs(r.sum.GlobalV-Pan[1]) > 0.1 {
		t.Errorf("mean global motion (%.3f, %.3f), expected the pan %v within 0.1 px", r.sum.GlobalU, r.sum.GlobalV, Pan)
	}
	if r.sum.MovingFrames < ClipFrames*9/10 {
		t.Errorf("motion found in %d frames of %d, expected at least 90%%", r.sum.MovingFrames, ClipFrames-1)
	}
	if !strings.Contains(r.out, "95 frames") && !strings.Contains(r.out, "96 frames") {
		t.Errorf("sink's summary missing: %q", r.out)
	}
}

// The moving pixels lie on the objects: in every frame but the first, at
// least 80% of the mask's pixels are within 6 px of an object.
func TestMaskOnObjects(t *testing.T) {
	r := runGraph(t, "", 24, true)
	mask := make([]uint8, Pixels)
	for i := int64(1); i < 24; i++ {
		Analyse(r.flows[i], mask)
		var in, all int
		for p, m := range mask {
			if m == 0 {
				continue
			}
			all++
			x, y := float64(p%W), float64(p/W)
			for _, o := range Objects {
				cx, cy := o.X+float64(i)*o.VX, o.Y+float64(i)*o.VY
				if math.Abs(x-cx) <= o.R*1.42+6 && math.Abs(y-cy) <= o.R*1.42+6 {
					in++
					break
				}
			}
		}
		if all == 0 || float64(in) < 0.8*float64(all) {
			t.Errorf("frame %d: %d of %d moving pixels on the objects", i, in, all)
		}
	}
}

// The decoder actor's frames (replicated, through the graph) equal
// image/jpeg's decoding of the file's frames, in order.
func TestGraphDecodedFrames(t *testing.T) {
	r := runGraph(t, "cpu.yaml", 16, true)
	clip, _ := clipPath()
	fr, c, err := OpenStream(clip)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := make([]uint8, Pixels)
	for i := int64(0); i < 16; i++ {
		jpg, err := fr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if err := DecodeGray(jpg, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.decoded[i], want) {
			t.Fatalf("frame %d: the graph's decoded frame differs from the decoder's own (%s)", i, DecoderAuto.Resolve())
		}
	}
}

// compareFlows checks two runs' flow fields: the same pixels have an
// estimate, and the flows differ by at most FlowTolerance.
func compareFlows(t *testing.T, name string, got, want map[int64][][2]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d flow fields, expected %d", name, len(got), len(want))
	}
	var worst float64
	for i, w := range want {
		g := got[i]
		for p := range w {
			for k := 0; k < 2; k++ {
				gn, wn := g[p][k] != g[p][k], w[p][k] != w[p][k]
				if gn != wn {
					t.Fatalf("%s: frame %d pixel %d: flow %v, Go %v (estimate on one side only)", name, i, p, g[p], w[p])
				}
				if !gn {
					worst = max(worst, math.Abs(float64(g[p][k]-w[p][k])))
				}
			}
		}
	}
	t.Logf("%s: largest flow difference from Go %.3g px/frame (tolerance %g)", name, worst, FlowTolerance)
	if worst > FlowTolerance {
		t.Errorf("%s: flow differs from Go's by %.3g px/frame, expected at most %g", name, worst, FlowTolerance)
	}
}

// The replicated CPU mapping gives the same statistics as one core each.
func TestGraphCPUMapping(t *testing.T) {
	a := runGraph(t, "", 20, true)
	b := runGraph(t, "cpu.yaml", 20, true)
	if a.sum != b.sum {
		t.Errorf("cpu.yaml summary %+v, expected %+v", b.sum, a.sum)
	}
	compareFlows(t, "cpu.yaml", b.flows, a.flows)
}

func testDevice(t *testing.T, backend string) {
	if !avail(backend) {
		env := "SLUICE_REQUIRE_" + strings.ToUpper(backend)
		if os.Getenv(env) == "1" {
			t.Fatalf("%s=1 but no %s device", env, backend)
		}
		t.Skipf("no %s device (the %s kernels are checked on a machine with one)", backend, backend)
	}
	const n = 12
	goRun := runGraph(t, "", n, true)
	dev := runGraph(t, backend+".yaml", n, true)
	compareFlows(t, backend+".yaml", dev.flows, goRun.flows)
	for _, a := range []string{"blur", "sobel", "flow"} {
		if dev.kinds[a] != "kernel" {
			t.Errorf("%s ran as %q, expected a kernel actor", a, dev.kinds[a])
		}
	}
	if dev.sum.Frames != n || dev.sum.Hash != goRun.sum.Hash {
		t.Errorf("%s summary %+v, Go %+v", backend, dev.sum, goRun.sum)
	}
}

// The OpenCL filters give Go's flow field within FlowTolerance (and the
// same pixels with an estimate).
func TestGraphOpenCL(t *testing.T) { testDevice(t, "opencl") }

// The CUDA filters give Go's flow field within FlowTolerance.
func TestGraphCUDA(t *testing.T) { testDevice(t, "cuda") }
