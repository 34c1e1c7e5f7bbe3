package scenario

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/all"
)

// chain10 is the runtime's Chain10 shape as elementwise stages: ten
// stages, each a different affine map, with a Go twin for the reference.
func chain10() ([]Stage, []func(float32) float32) {
	var st []Stage
	var fs []func(float32) float32
	for k := 0; k < 10; k++ {
		a, b := float32(1)+float32(k)/64, float32(k)/8-0.5
		st = append(st, Stage{Name: "k" + string(rune('0'+k)), Expr: fmtAffine(a, b)})
		fs = append(fs, func(x float32) float32 { return x*a + b })
	}
	return st, fs
}

func fmtAffine(a, b float32) string {
	return "x * " + f32lit(a) + " + " + f32lit(b)
}

func f32lit(v float32) string { return "(" + formatFloat(v) + "f)" }

var discoverMu sync.Mutex // concurrent discovery can crash PoCL

// devices lists the backend's device IDs, skipping the test without any.
func devices(t testing.TB, backend string) []string {
	t.Helper()
	discoverMu.Lock()
	defer discoverMu.Unlock()
	var ids []string
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend && r.Available() {
			for _, d := range r.Devices {
				ids = append(ids, d.ID)
			}
		}
	}
	if len(ids) == 0 {
		switch {
		case backend == "opencl" && os.Getenv("SLUICE_REQUIRE_OPENCL") == "1":
			t.Fatal("SLUICE_REQUIRE_OPENCL=1 but no OpenCL device")
		case backend == "cuda" && os.Getenv("SLUICE_REQUIRE_CUDA") == "1":
			t.Fatal("SLUICE_REQUIRE_CUDA=1 but no CUDA device")
		}
		t.Skipf("no %s device: scenario tests for %s skipped", backend, backend)
	}
	return ids
}

func open(t testing.TB, id string) (device.Device, device.Queue) {
	t.Helper()
	d, err := device.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	q, err := d.NewQueue()
	if err != nil {
		_ = d.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Release(); _ = d.Close() })
	return d, q
}

func floatsToBytes(xs []float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func int32sToBytes(xs []int32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func alloc(t testing.TB, d device.Device, q device.Queue, data []byte) device.Buffer {
	t.Helper()
	b, err := d.Alloc(int64(len(data)), device.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release() })
	ev, err := q.Write(b, 0, data)
	wait(t, ev, err)
	return b
}

func wait(t testing.TB, ev device.Event, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ev.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ev.Release()
}

func read(t testing.TB, q device.Queue, b device.Buffer, n int) []float32 {
	t.Helper()
	raw := make([]byte, 4*n)
	ev, err := q.Read(raw, b, 0)
	wait(t, ev, err)
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func TestOpenCL(t *testing.T) { testBackend(t, "opencl") }
func TestCUDA(t *testing.T)   { testBackend(t, "cuda") }

// testBackend runs a scenario (the ten stages in an irregular order, then
// a part of it chosen by the scenario index) over 1000 elements, 16
// work-groups with a partial last one, as one launch and as per-step
// launches, against the host reference.
func testBackend(t *testing.T, backend string) {
	ids := devices(t, backend)
	d, q := open(t, ids[0])
	stages, fs := chain10()
	c, err := Compile(context.Background(), d, stages)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	const n = 1000
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i%97) / 7
	}
	scen := []int32{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 0}
	for _, part := range [][2]int{{0, len(scen)}, {4, 7}, {5, 0}} {
		first, steps := part[0], part[1]
		want := append([]float32(nil), in...)
		for _, s := range scen[first : first+steps] {
			for i := range want {
				want[i] = fs[s](want[i])
			}
		}
		bin := alloc(t, d, q, floatsToBytes(in))
		bout := alloc(t, d, q, make([]byte, 4*n))
		bscen := alloc(t, d, q, int32sToBytes(scen))
		ev, err := c.Run(q, bin, bout, bscen, first, steps, n)
		wait(t, ev, err)
		check(t, "one launch", read(t, q, bout, n), want)

		if steps == 0 {
			continue
		}
		bb := alloc(t, d, q, make([]byte, 4*n))
		ev, res, err := c.RunPerKernel(q, bin, bb, scen[first:first+steps], n)
		wait(t, ev, err)
		check(t, "per-kernel launches", read(t, q, res, n), want)
	}
	bscen := alloc(t, d, q, int32sToBytes(scen))
	bin := alloc(t, d, q, floatsToBytes(in))
	if _, err := c.Run(q, bin, bin, bscen, 10, 10, n); err == nil {
		t.Error("steps past the scenario's end: no error")
	}
	if _, _, err := c.RunPerKernel(q, bin, bin, []int32{10}, n); err == nil {
		t.Error("stage index 10 of 10 stages: no error")
	}
	if _, err := Compile(context.Background(), d, []Stage{{Name: "bad", Expr: "x; }"}}); err == nil {
		t.Error("an expression with ; }: no error")
	}
}

func check(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := got[i] - want[i]; d > 1e-3*float32(math.Max(1, math.Abs(float64(want[i])))) || d < -1e-3*float32(math.Max(1, math.Abs(float64(want[i])))) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestSourceBackends(t *testing.T) {
	stages, _ := chain10()
	for _, be := range []string{"opencl", "cuda"} {
		src, err := Source(be, stages)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"opencl": "__kernel void scenario_walk", "cuda": `extern "C" __global__ void scenario_walk`}[be]; !contains(src, want) {
			t.Errorf("%s source lacks %q", be, want)
		}
	}
	if _, err := Source("metal", stages); err == nil {
		t.Error("unknown backend: no error")
	}
}

func formatFloat(v float32) string { return strconv.FormatFloat(float64(v), 'e', 9, 32) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
