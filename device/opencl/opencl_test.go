package opencl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cpu"
	_ "github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/internal/cl"
)

// openCL opens the first OpenCL device and a queue on it, or skips the test
// with the reason OpenCL is unavailable on this machine.
func openCL(t testing.TB) (*opencl.Device, device.Queue) {
	t.Helper()
	ctx := context.Background()
	for _, r := range device.Discover(ctx) {
		if r.Backend != opencl.Name {
			continue
		}
		if !r.Available() {
			skipOrFail(t, "OpenCL unavailable on this machine: %s (scripts/install-pocl.sh installs PoCL)", r.Reason)
		}
		d, err := device.Open(ctx, pickDevice(r.Devices))
		if err != nil {
			t.Fatal(err)
		}
		q, err := d.NewQueue()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := errors.Join(q.Release(), d.Close()); err != nil {
				t.Error(err)
			}
		})
		return d.(*opencl.Device), q
	}
	skipOrFail(t, "the opencl backend is not registered")
	return nil, nil
}

// must returns v, or panics with err (failing the test binary loudly).
// pickDevice chooses the device the tests run on: $SLUICE_OPENCL_DEVICE
// when set (e.g. "opencl:1:0"), else the first GPU, else the first device.
func pickDevice(ds []device.Info) string {
	if id := os.Getenv("SLUICE_OPENCL_DEVICE"); id != "" {
		return id
	}
	for _, d := range ds {
		if d.Kind == device.GPU {
			return d.ID
		}
	}
	return ds[0].ID
}

// must returns v, or panics with err (failing the test binary loudly).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func wait(t testing.TB, ev device.Event) {
	t.Helper()
	if err := ev.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev.Release()
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesf32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func TestDiscover(t *testing.T) {
	d, _ := openCL(t)
	reports := device.Discover(context.Background())
	if reports[0].Backend != "cpu" || len(reports[0].Devices) != 1 {
		t.Fatalf("the CPU must come first and always be there: %+v", reports[0])
	}
	var sawCUDA bool
	for _, r := range reports {
		t.Logf("%s: %d device(s) %s", r.Backend, len(r.Devices), r.Reason)
		for _, i := range r.Devices {
			t.Logf("  %s %s %q %s, %d CUs, %s global, %s local, max alloc %s, max WG %d", i.ID, i.Kind, i.Name, i.Version,
				i.ComputeUnits, device.Size(i.GlobalMem), device.Size(i.LocalMem), device.Size(i.MaxAlloc), i.MaxWorkGroupSize)
		}
		if r.Backend == "cuda" {
			sawCUDA = true
			if !r.Available() && r.Reason == "" {
				t.Fatalf("an unavailable CUDA backend must say why: %+v", r)
			}
		}
	}
	if !sawCUDA {
		t.Fatal("the cuda probe did not register")
	}
	i := d.Info()
	if !strings.HasPrefix(i.ID, "opencl:") || i.Name == "" || i.ComputeUnits < 1 || i.GlobalMem <= 0 || i.MaxWorkGroupSize < 1 || i.Platform == "" {
		t.Fatalf("incomplete info %+v", i)
	}
}

const saxpy = `
__kernel void saxpy(float a, __global const float *x, __global float *y, uint n) {
	uint i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void empty(void) {}
__kernel void fill(__global uint *p, uint v) { p[get_global_id(0)] = v + get_global_id(0); }
`

func build(t testing.TB, d device.Device, src string) device.Program {
	t.Helper()
	p, err := d.Build(context.Background(), device.Source{Name: "test.cl", Text: src}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release() })
	return p
}

func TestSaxpyRoundTrip(t *testing.T) {
	d, q := openCL(t)
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{1, 1000, 1 << 20} {
		x, y, want := make([]float32, n), make([]float32, n), make([]float32, n)
		a := r.Float32()*4 - 2
		for i := range x {
			x[i], y[i] = r.Float32()*200-100, r.Float32()*200-100
			want[i] = a*x[i] + y[i]
		}
		bx := must(d.Alloc(int64(4*n), device.ReadOnly))
		by := must(d.Alloc(int64(4*n), device.ReadWrite))
		p := build(t, d, saxpy)
		k := must(p.Kernel("saxpy"))
		for i, v := range []any{a, bx, by, uint32(n)} {
			if err := k.SetArg(i, v); err != nil {
				t.Fatal(err)
			}
		}
		wx := must(q.Write(bx, 0, f32bytes(x)))
		wy := must(q.Write(by, 0, f32bytes(y)))
		const wg = 64
		run := must(q.Launch(k, device.Groups((n+wg-1)/wg, wg), wx, wy))
		out := make([]byte, 4*n)
		rd := must(q.Read(out, by, 0, run))
		wait(t, rd)
		if s, err := run.Status(); s != device.Complete || err != nil {
			t.Fatalf("kernel status %v %v", s, err)
		}
		if tm, err := run.Times(); err != nil || tm.End < tm.Start || tm.Start == 0 {
			t.Fatalf("profiling times %+v %v", tm, err)
		}
		for _, e := range []device.Event{wx, wy, run} {
			e.Release()
		}
		got := bytesf32(out)
		for i := range got {
			if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("n=%d: y[%d] = %v, want %v", n, i, got[i], want[i])
			}
		}
		if err := errors.Join(k.Release(), bx.Release(), by.Release()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestKernelArgErrors(t *testing.T) {
	d, _ := openCL(t)
	k := must(build(t, d, saxpy).Kernel("saxpy"))
	defer k.Release()
	if err := k.SetArg(3, 5); err == nil || !strings.Contains(err.Error(), "not int") {
		t.Fatalf("a plain int must be refused with advice, got %v", err)
	}
	c := cpu.New()
	cb := must(c.Alloc(16, device.ReadWrite))
	if err := k.SetArg(1, cb); err == nil || !strings.Contains(err.Error(), "expected a buffer of") {
		t.Fatalf("a CPU buffer as kernel argument must be refused, got %v", err)
	}
	if _, err := build(t, d, saxpy).Kernel("nope"); err == nil || !strings.Contains(err.Error(), "saxpy") {
		t.Fatalf("an unknown kernel must list the program's kernels, got %v", err)
	}
}

func TestCopies(t *testing.T) {
	d, q := openCL(t)
	const n = 3<<20 + 17 // not a multiple of the staging size
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*31 + i>>11)
	}
	a := must(d.Alloc(n, device.ReadWrite))
	b := must(d.Alloc(n, device.ReadWrite))
	defer a.Release()
	defer b.Release()
	w := must(q.Write(a, 0, src))
	// Device-to-device copy on one queue, ordered after the write.
	cp := must(q.Copy(b, 0, a, 0, n, w))
	got := make([]byte, n)
	wait(t, must(q.Read(got, b, 0, cp)))
	w.Release()
	cp.Release()
	if string(got) != string(src) {
		t.Fatal("device-to-device copy corrupted the data")
	}
	// Across devices: OpenCL → CPU → OpenCL, staged through pinned memory.
	old := device.StageSize
	device.StageSize = 1 << 20
	defer func() { device.StageSize = old }()
	c := cpu.New()
	cq := must(c.NewQueue())
	hb := must(c.Alloc(n, device.ReadWrite))
	ctx := context.Background()
	if err := device.Transfer(ctx, cq, hb, 0, q, b, 0, n); err != nil {
		t.Fatal(err)
	}
	if string(hb.(*cpu.Buffer).Bytes()) != string(src) {
		t.Fatal("OpenCL → CPU transfer corrupted the data")
	}
	hb.(*cpu.Buffer).Bytes()[5] ^= 0xFF
	src[5] ^= 0xFF
	if err := device.Transfer(ctx, q, a, 0, cq, hb, 0, n); err != nil {
		t.Fatal(err)
	}
	wait(t, must(q.Read(got, a, 0)))
	if string(got) != string(src) {
		t.Fatal("CPU → OpenCL transfer corrupted the data")
	}
	if err := device.Transfer(ctx, q, a, 1, q, b, 0, n); err == nil {
		t.Fatal("an out-of-range transfer must fail")
	}
}

func TestPinnedAndMap(t *testing.T) {
	d, q := openCL(t)
	const n = 1 << 16
	h := must(d.AllocHost(n))
	hb := h.Bytes()
	if len(hb) != n {
		t.Fatalf("pinned buffer has %d bytes, want %d", len(hb), n)
	}
	for i := range hb {
		hb[i] = byte(i ^ 0x5A)
	}
	buf := must(d.Alloc(n, device.ReadWrite))
	defer buf.Release()
	wait(t, must(q.Write(buf, 0, hb)))
	// Map a device buffer, check and change it, unmap, read it back.
	m := must(q.Map(buf, 1024, 4096, device.MapRead|device.MapWrite))
	for i := range m {
		if m[i] != byte((i+1024)^0x5A) {
			t.Fatalf("mapped[%d] = %d", i, m[i])
		}
		m[i] = 7
	}
	wait(t, must(q.Unmap(buf, m)))
	clear(hb)
	wait(t, must(q.Read(hb, buf, 0)))
	for i := range hb {
		want := byte(i ^ 0x5A)
		if i >= 1024 && i < 1024+4096 {
			want = 7
		}
		if hb[i] != want {
			t.Fatalf("after unmap byte %d = %d, want %d", i, hb[i], want)
		}
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatal("a second Release must do nothing", err)
	}
}

func TestSubBuffer(t *testing.T) {
	d, q := openCL(t)
	al := d.Align()
	n := 4 * al
	buf := must(d.Alloc(n, device.ReadWrite))
	defer buf.Release()
	wait(t, must(q.Write(buf, 0, make([]byte, n))))
	sub := must(buf.Slice(al, al))
	if sub.Size() != al {
		t.Fatalf("sub-buffer size %d", sub.Size())
	}
	k := must(build(t, d, saxpy).Kernel("fill"))
	defer k.Release()
	if err := errors.Join(k.SetArg(0, sub), k.SetArg(1, uint32(1000))); err != nil {
		t.Fatal(err)
	}
	wait(t, must(q.Launch(k, device.Range{Global: []int{int(al / 4)}})))
	out := make([]byte, n)
	wait(t, must(q.Read(out, buf, 0)))
	for i := int64(0); i < n/4; i++ {
		got := binary.LittleEndian.Uint32(out[4*i:])
		want := uint32(0)
		if i >= al/4 && i < 2*al/4 {
			want = uint32(1000 + i - al/4)
		}
		if got != want {
			t.Fatalf("word %d = %d, want %d", i, got, want)
		}
	}
	if err := sub.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := buf.Slice(1, 8); err == nil || !strings.Contains(err.Error(), "alignment") {
		t.Fatalf("a misaligned slice must be refused naming the alignment, got %v", err)
	}
	if _, err := buf.Slice(0, n+1); err == nil {
		t.Fatal("an out-of-range slice must be refused")
	}
}

func TestBuildErrorPointsAtUserLine(t *testing.T) {
	d, _ := openCL(t)
	prelude := "// generated prelude\n#define TOKEN_IN_t float\n#define RATE 4\n"
	user := "__kernel void k(__global TOKEN_IN_t *x) {\n" +
		"  int i = get_global_id(0);\n" +
		"  x[i] = undeclared_thing + RATE;\n" +
		"}\n"
	_, err := d.Build(context.Background(), device.Source{Name: "kernel.cl", Prelude: prelude, Text: user}, "")
	var be *device.BuildError
	if !errors.As(err, &be) || !errors.Is(err, device.ErrBuild) || !errors.Is(err, cl.ErrBuildProgramFailure) {
		t.Fatalf("expected a BuildError wrapping ErrBuild and CL_BUILD_PROGRAM_FAILURE, got %v", err)
	}
	t.Logf("error:\n%v", err)
	if len(be.Diagnostics) == 0 {
		t.Fatalf("no diagnostics parsed from log %q", be.Log)
	}
	first := be.Diagnostics[0]
	if first.File != "kernel.cl" || first.Line != 3 || first.Col != 10 || first.Severity != "error" || !strings.Contains(first.Message, "undeclared_thing") {
		t.Fatalf("diagnostic %+v: want kernel.cl:3:10 error about undeclared_thing", first)
	}
	if !strings.Contains(err.Error(), "kernel.cl:3:10: error:") {
		t.Fatalf("message lacks kernel.cl:3:10: %v", err)
	}
	// An error inside the prelude is reported as the prelude's.
	_, err = d.Build(context.Background(), device.Source{Name: "kernel.cl", Prelude: "int bad = ;\n", Text: "__kernel void k(void) {}\n"}, "")
	if !errors.As(err, &be) || len(be.Diagnostics) == 0 || be.Diagnostics[0].File != device.PreludeName || be.Diagnostics[0].Line != 1 {
		t.Fatalf("prelude error: got %v", err)
	}
	// Bad options are an error too, not a crash.
	_, err = d.Build(context.Background(), device.Source{Name: "kernel.cl", Text: "__kernel void k(void) {}\n"}, "-no-such-option-xyz")
	if err == nil {
		t.Fatal("bad build options must fail")
	}
	t.Logf("bad options: %v", err)
}

func TestAbsurdAllocation(t *testing.T) {
	d, q := openCL(t)
	for _, size := range []int64{1 << 40, d.Info().MaxAlloc + 1} {
		b, err := d.Alloc(size, device.ReadWrite)
		if err == nil {
			b.Release()
			t.Fatalf("allocating %s succeeded", device.Size(size))
		}
		if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), d.Info().Name) || !strings.Contains(err.Error(), device.Size(size)) {
			t.Fatalf("allocating %s: want an out-of-memory error naming the size and the device, got %v", device.Size(size), err)
		}
		t.Log(err)
	}
	if _, err := d.AllocHost(1 << 40); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("pinned 1 TiB: got %v", err)
	}
	if _, err := d.Alloc(0, device.ReadWrite); err == nil {
		t.Fatal("a zero-size buffer must be refused")
	}
	// Writing past the end is an error, not a crash.
	b := must(d.Alloc(16, device.ReadWrite))
	defer b.Release()
	if _, err := q.Write(b, 8, make([]byte, 16)); err == nil {
		t.Fatal("writing past the end must fail")
	}
}

func TestNoSuchDevice(t *testing.T) {
	d, _ := openCL(t)
	_, err := device.Open(context.Background(), "opencl:9:9")
	var nf *device.NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("want a NotFoundError, got %v", err)
	}
	msg := err.Error()
	// CUDA appears either as devices ("cuda:0 (") or as the reason it is
	// unavailable ("cuda (").
	cuda := "cuda ("
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "cuda" && r.Available() {
			cuda = "cuda:0 ("
		}
	}
	for _, want := range []string{`"opencl:9:9"`, "cpu (", d.Info().ID, d.Info().Name, cuda} {
		if !strings.Contains(msg, want) {
			t.Fatalf("error %q does not mention %q", msg, want)
		}
	}
	t.Log(msg)
	// By part of the name: it opens the device when only one device's name
	// holds it (an H100 is both cuda:0 and an OpenCL device: ambiguous).
	frag := d.Info().Name[:8]
	var same []string
	for _, i := range device.Devices(context.Background()) {
		if strings.Contains(i.Name, frag) {
			same = append(same, i.ID)
		}
	}
	ids := []string{"opencl"}
	if len(same) == 1 {
		ids = append(ids, frag)
	} else if _, err := device.Open(context.Background(), frag); err == nil {
		t.Fatalf("open %q succeeded though %v all match it", frag, same)
	} else {
		t.Logf("open %q: %v", frag, err)
	}
	// By backend name and, when unambiguous, by part of the name.
	for _, id := range ids {
		o, err := device.Open(context.Background(), id)
		if err != nil {
			t.Fatalf("open %q: %v", id, err)
		}
		if o.Info().Backend != "opencl" {
			t.Fatalf("open %q gave %v", id, o.Info())
		}
		o.Close()
	}
}

func TestEvents(t *testing.T) {
	d, q := openCL(t)
	k := must(build(t, d, saxpy).Kernel("empty"))
	defer k.Release()
	var evs []device.Event
	for range 50 {
		evs = append(evs, must(q.Launch(k, device.Groups(4, 1))))
	}
	// Polling path (cancellable context) and blocking path.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := evs[len(evs)-1].Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := e.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s, err := e.Status(); s != device.Complete || err != nil {
			t.Fatalf("status %v %v", s, err)
		}
		e.Release()
		e.Release() // idempotent
	}
	if err := evs[0].Wait(context.Background()); !errors.Is(err, device.ErrReleased) {
		t.Fatalf("waiting on a released event: got %v", err)
	}
	// A marker with no commands before it completes at once.
	m := must(q.(*opencl.Queue).Marker())
	wait(t, m)
	// A cancelled context stops a wait.
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	ev := must(q.Launch(k, device.Groups(1, 1)))
	if err := ev.Wait(cctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	wait(t, ev)
}

func TestNoLeaks(t *testing.T) {
	d, q := openCL(t)
	p := build(t, d, saxpy)
	// The device keeps one queue for mapping pinned memory until Close.
	if err := must(d.AllocHost(64)).Release(); err != nil {
		t.Fatal(err)
	}
	before := cl.LiveObjects()
	src := make([]byte, 4096)
	for range 1000 {
		b := must(d.Alloc(4096, device.ReadWrite))
		k := must(p.Kernel("fill"))
		if err := errors.Join(k.SetArg(0, b), k.SetArg(1, uint32(3))); err != nil {
			t.Fatal(err)
		}
		w := must(q.Write(b, 0, src))
		l := must(q.Launch(k, device.Groups(16, 64), w))
		wait(t, l)
		w.Release()
		if err := errors.Join(k.Release(), b.Release()); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		h := must(d.AllocHost(1 << 16))
		pr := build(t, d, saxpy)
		if err := errors.Join(h.Release(), pr.Release()); err != nil {
			t.Fatal(err)
		}
		o := must(device.Open(context.Background(), d.Info().ID))
		oq := must(o.NewQueue())
		if err := errors.Join(oq.Release(), o.Close()); err != nil {
			t.Fatal(err)
		}
	}
	if after := cl.LiveObjects(); after != before {
		t.Fatalf("leaked OpenCL objects: before %+v, after %+v", before, after)
	}
}

// skipOrFail skips the test, or fails it when SLUICE_REQUIRE_OPENCL=1 (set
// by scripts/test.sh after installing PoCL, so CI cannot silently skip the
// OpenCL tests).
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
		t.Fatalf("SLUICE_REQUIRE_OPENCL=1 but: "+format, args...)
	}
	t.Skipf(format, args...)
}
