package cuda_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/internal/cu"
)

// open opens cuda:0 (or SLUICE_CUDA_DEVICE) and a queue, or skips the test
// saying why there is no CUDA device here (SLUICE_REQUIRE_CUDA=1 makes that
// a failure, for the GPU check).
func open(t testing.TB) (*cuda.Device, *cuda.Queue) {
	t.Helper()
	if err := cuda.Reason(); err != nil {
		if os.Getenv("SLUICE_REQUIRE_CUDA") != "" {
			t.Fatalf("SLUICE_REQUIRE_CUDA is set but: %v", err)
		}
		if errors.Is(err, cu.ErrLibraryNotFound) {
			t.Skipf("no CUDA driver (libcuda.so.1 not found): %v", err)
		}
		t.Skipf("no CUDA device: %v", err)
	}
	id := os.Getenv("SLUICE_CUDA_DEVICE")
	if id == "" {
		id = "cuda:0"
	}
	d, err := cuda.Open(context.Background(), id, cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := d.Queue()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.Release(); err != nil {
			t.Error(err)
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d, q
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func wait(t testing.TB, ev device.Event) {
	t.Helper()
	defer ev.Release()
	if err := ev.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// f32view returns b's memory as float32s (no copy).
func f32view(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }

func bytesf32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

const saxpyCU = `// saxpy.cu
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void empty() {}
`

func TestDiscover(t *testing.T) {
	rs := device.Discover(context.Background())
	var r *device.Report
	for i := range rs {
		if rs[i].Backend == cuda.Name {
			r = &rs[i]
		}
	}
	if r == nil {
		t.Fatal("the cuda backend is not registered")
	}
	if !r.Available() {
		if !strings.Contains(r.Reason, "libcuda.so.1 not found") && !strings.Contains(r.Reason, "driver present") {
			t.Fatalf("unexpected reason %q", r.Reason)
		}
		t.Logf("unavailable: %s", r.Reason)
		return
	}
	for _, d := range r.Devices {
		t.Logf("%s: %s, %s, %d SMs, %s, max %d threads/block, %s", d.ID, d.Name, d.Version, d.ComputeUnits, device.Size(d.GlobalMem), d.MaxWorkGroupSize, d.Driver)
		if !strings.HasPrefix(d.ID, "cuda:") || d.Kind != device.GPU || d.ComputeUnits <= 0 || d.GlobalMem <= 0 || !strings.Contains(d.Version, "compute capability") {
			t.Fatalf("bad info %+v", d)
		}
	}
	if major, minor, err := cu.NVRTCVersion(); err == nil {
		t.Logf("NVRTC %d.%d (%s), archs %v", major, minor, cu.NVRTCLibrary(), cu.SupportedArchs())
	} else {
		t.Logf("NVRTC: %v", err)
	}
}

func TestUnknownDevice(t *testing.T) {
	_, err := device.Open(context.Background(), "cuda:99")
	var nf *device.NotFoundError
	if !errors.As(err, &nf) || !device.IsNotFound(err) {
		t.Fatalf("want a NotFoundError, got %v", err)
	}
	if cuda.Reason() == nil {
		if !strings.Contains(err.Error(), "cuda:0 (") {
			t.Fatalf("the error should list cuda:0: %v", err)
		}
	} else if !strings.Contains(err.Error(), "cuda (") {
		t.Fatalf("the error should say why cuda is unavailable: %v", err)
	}
	t.Log(err)
	if cuda.Reason() == nil {
		_, err := cuda.Open(context.Background(), "cuda:99", cuda.Options{})
		if !device.IsNotFound(err) || !strings.Contains(err.Error(), "cuda:0") {
			t.Fatalf("cuda.Open(cuda:99): %v", err)
		}
	}
}

func build(t testing.TB, d *cuda.Device, src device.Source) device.Program {
	t.Helper()
	p, err := d.Build(context.Background(), src, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release() })
	return p
}

func TestSaxpy(t *testing.T) {
	d, q := open(t)
	p := build(t, d, device.Source{Name: "saxpy.cu", Text: saxpyCU})
	if ks := p.Kernels(); len(ks) != 2 {
		t.Fatalf("kernels %v: want saxpy and empty", ks)
	}
	k := must(p.Kernel("saxpy"))
	defer k.Release()
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1<<20 + 3
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = r.Float32()*2-1, r.Float32()*2-1
	}
	a := float32(1.5)
	bx := must(d.Alloc(4*n, device.ReadOnly))
	defer bx.Release()
	by := must(d.Alloc(4*n, device.ReadWrite))
	defer by.Release()
	wait(t, must(q.Write(bx, 0, f32bytes(x))))
	wait(t, must(q.Write(by, 0, f32bytes(y))))
	for i, v := range []any{int32(n), a, bx, by} {
		if err := k.SetArg(i, v); err != nil {
			t.Fatal(err)
		}
	}
	const local = 256
	ev := must(q.Launch(k, device.Groups((n+local-1)/local, local)))
	out := make([]byte, 4*n)
	wait(t, must(q.Read(out, by, 0, ev)))
	ev.Release()
	got := bytesf32(out)
	for i := range got {
		if want := a*x[i] + y[i]; math.Abs(float64(got[i]-want)) > 1e-5 {
			t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
		}
	}
	// Wrong argument kinds are refused with advice.
	if err := k.SetArg(0, 3); err == nil || !strings.Contains(err.Error(), "not int") {
		t.Fatalf("SetArg(int): %v", err)
	}
	if cu.HasParamInfo() {
		if err := k.SetArg(0, float64(1)); err == nil {
			t.Fatal("an 8-byte value for a 4-byte parameter: no error")
		}
	}
}

func TestCopies(t *testing.T) {
	d, q := open(t)
	const n = 3<<20 + 17
	src := make([]byte, n)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	a := must(d.Alloc(n, device.ReadWrite))
	defer a.Release()
	b := must(d.Alloc(n+4096, device.ReadWrite))
	defer b.Release()
	w := must(q.Write(a, 0, src))
	c := must(q.Copy(b, 100, a, 0, n, w)) // D→D at an offset
	w.Release()
	out := make([]byte, n)
	wait(t, must(q.Read(out, b, 100, c)))
	c.Release()
	if string(out) != string(src) {
		t.Fatal("H→D→D→H round trip differs")
	}
	// A slice is a view.
	s := must(b.Slice(100+1000, 64))
	part := make([]byte, 64)
	wait(t, must(q.Read(part, s, 0)))
	if string(part) != string(src[1000:1064]) {
		t.Fatal("slice read differs")
	}
	s.Release()
	// Fill, and out-of-range commands are refused.
	wait(t, must(q.Fill(b, 0, 100, 0xAB)))
	wait(t, must(q.Read(part, b, 0)))
	if part[0] != 0xAB || part[63] != 0xAB {
		t.Fatalf("fill: %x", part[:4])
	}
	if _, err := q.Write(a, n-1, []byte{1, 2}); err == nil {
		t.Fatal("write past the end: no error")
	}
	// Map for writing, unmap, read back.
	m := must(q.Map(a, 10, 5, device.MapRead|device.MapWrite))
	if string(m) != string(src[10:15]) {
		t.Fatal("map read differs")
	}
	copy(m, "hello")
	wait(t, must(q.Unmap(a, m)))
	wait(t, must(q.Read(part[:5], a, 10)))
	if string(part[:5]) != "hello" {
		t.Fatalf("after unmap: %q", part[:5])
	}
	// device.Transfer between two buffers of the device.
	if err := device.Transfer(context.Background(), q, b, 0, q, a, 0, n); err != nil {
		t.Fatal(err)
	}
}

func TestPinned(t *testing.T) {
	d, q := open(t)
	const n = 8 << 20
	h := must(d.AllocHost(n))
	defer h.Release()
	hb := h.Bytes()
	if len(hb) != n {
		t.Fatalf("pinned buffer of %d bytes", len(hb))
	}
	for i := range hb {
		hb[i] = byte(i * 7)
	}
	buf := must(d.Alloc(n, device.ReadWrite))
	defer buf.Release()
	wait(t, must(q.Write(buf, 0, hb)))
	h2 := must(d.AllocHost(n))
	defer h2.Release()
	wait(t, must(q.Read(h2.Bytes(), buf, 0)))
	for i, v := range h2.Bytes() {
		if v != byte(i*7) {
			t.Fatalf("byte %d = %d", i, v)
		}
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatal("second release:", err)
	}
}

// Kernels read and write mapped host memory directly: saxpy with x in a
// mapped buffer (written by the host before the launch) and y in another
// (read by the host after the launch's event), then on a slice of it.
func TestMapped(t *testing.T) {
	d, q := open(t)
	p := build(t, d, device.Source{Name: "saxpy.cu", Text: saxpyCU})
	k := must(p.Kernel("saxpy"))
	defer k.Release()
	const n = 4099
	mx := must(d.AllocMapped(4 * n))
	defer mx.Release()
	my := must(d.AllocMapped(4 * n))
	defer my.Release()
	x, y := f32view(mx.Bytes()), f32view(my.Bytes())
	for i := range x {
		x[i], y[i] = float32(i), float32(-2*i)
	}
	for i, v := range []any{int32(n), float32(3), mx, my} {
		if err := k.SetArg(i, v); err != nil {
			t.Fatal(err)
		}
	}
	ev := must(q.Launch(k, device.Groups((n+255)/256, 256)))
	wait(t, ev)
	for i, v := range y {
		if want := float32(i); v != want {
			t.Fatalf("y[%d] = %v, want %v", i, v, want)
		}
	}
	// a slice: the last 99 tokens again
	sx := must(mx.Slice(4*(n-99), 4*99))
	sy := must(my.Slice(4*(n-99), 4*99))
	for i, v := range []any{int32(99), float32(1), sx, sy} {
		if err := k.SetArg(i, v); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, must(q.Launch(k, device.Groups(1, 128))))
	if want := float32(2 * (n - 1)); y[n-1] != want || y[n-100] != float32(n-100) {
		t.Fatalf("after the slice: y[n-1] = %v (want %v), y[n-100] = %v", y[n-1], want, y[n-100])
	}
	// copies work on it too
	out := make([]byte, 16)
	wait(t, must(q.Read(out, my, 0)))
	if got := bytesf32(out); got[3] != 3 {
		t.Fatalf("read from mapped memory: %v", got)
	}
	if err := mx.Release(); err != nil {
		t.Fatal(err)
	}
	if err := mx.Release(); err != nil {
		t.Fatal("second release:", err)
	}
}

// CopyPeer copies within a device, and between two CUDA devices (both
// ways, on either device's queue) when there are two; device.Transfer
// takes the same path.
func TestCopyPeer(t *testing.T) {
	d, q := open(t)
	const n = 3<<20 + 8
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i*13 + i>>11)
	}
	a := must(d.Alloc(n, device.ReadWrite))
	defer a.Release()
	b := must(d.Alloc(n, device.ReadWrite))
	defer b.Release()
	wait(t, must(q.Write(a, 0, src)))
	check := func(what string, q device.Queue, buf device.Buffer, off int64, want []byte) {
		t.Helper()
		got := make([]byte, len(want))
		wait(t, must(q.Read(got, buf, off)))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: bytes differ", what)
		}
	}
	wait(t, must(q.CopyPeer(b, 8, a, 0, n-8)))
	check("within the device", q, b, 8, src[:n-8])
	ids := cudaIDs(t)
	if len(ids) < 2 {
		t.Logf("one CUDA device (%v): copies between two devices not tested", ids)
		return
	}
	d2 := must(cuda.Open(context.Background(), ids[1], cuda.Options{}))
	q2 := must(d2.Queue())
	defer func() { _ = q2.Release(); _ = d2.Close() }()
	direct, err := d.EnablePeer(d2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s ↔ %s: direct peer access %v", d.Info().ID, d2.Info().ID, direct)
	c := must(d2.Alloc(n, device.ReadWrite))
	defer c.Release()
	wait(t, must(q.CopyPeer(c, 0, a, 0, n))) // pushed by the source's queue
	check("to the second device", q2, c, 0, src)
	wait(t, must(q.CopyPeer(b, 0, c, 8, n-8))) // pulled by the destination's
	check("back from it", q, b, 0, src[8:])
	if err := device.Transfer(context.Background(), q2, c, 16, q, a, 0, n-16); err != nil {
		t.Fatal(err)
	}
	check("device.Transfer", q2, c, 16, src[:n-16])
	if _, err := q2.CopyPeer(a, 0, b, 0, 8); err == nil {
		t.Fatal("a peer copy between two buffers of another device's queue: no error")
	}
}

// cudaIDs returns the CUDA devices' IDs.
func cudaIDs(t *testing.T) []string {
	var ids []string
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "cuda" {
			for _, di := range r.Devices {
				ids = append(ids, di.ID)
			}
		}
	}
	return ids
}

// Go memory pinned with PinHost copies both ways and unpins; a copy of it
// is faster than of the same memory unpinned (logged, not checked).
func TestPinHost(t *testing.T) {
	d, q := open(t)
	const n = 16 << 20
	mem := make([]byte, n)
	for i := range mem {
		mem[i] = byte(i * 5)
	}
	buf := must(d.Alloc(n, device.ReadWrite))
	defer buf.Release()
	timed := func() time.Duration {
		t0 := time.Now()
		wait(t, must(q.Write(buf, 0, mem)))
		return time.Since(t0)
	}
	timed()
	slow := timed()
	unpin, err := d.PinHost(mem[3:]) // widened to whole pages
	if err != nil {
		t.Fatal(err)
	}
	fast := timed()
	back := make([]byte, n)
	copy(back, mem)
	clear(mem)
	wait(t, must(q.Read(mem, buf, 0)))
	if !bytes.Equal(mem, back) {
		t.Fatal("read into pinned Go memory differs from what was written")
	}
	if err := unpin(); err != nil {
		t.Fatal(err)
	}
	if err := unpin(); err != nil {
		t.Fatal("second unpin:", err)
	}
	t.Logf("16 MiB write: unpinned %v, pinned %v", slow, fast)
}

func TestBuildErrorLine(t *testing.T) {
	d, _ := open(t)
	src := "extern \"C\" __global__ void k(float *y) {\n\tint i = threadIdx.x;\n\ty[i] = undeclared_thing;\n}\n"
	for _, prelude := range []string{"", "#define A 1\n#define B 2\n// three lines of prelude\n"} {
		_, err := d.Build(context.Background(), device.Source{Name: "bad.cu", Text: src, Prelude: prelude}, "")
		var be *device.BuildError
		if !errors.As(err, &be) || !errors.Is(err, device.ErrBuild) {
			t.Fatalf("want a BuildError, got %v", err)
		}
		if !strings.Contains(err.Error(), "bad.cu:3:") || !strings.Contains(err.Error(), "undeclared_thing") {
			t.Fatalf("the error should point at bad.cu:3: %v\nlog:\n%s", err, be.Log)
		}
		t.Log(err)
	}
	// An error inside the prelude is reported as such.
	_, err := d.Build(context.Background(), device.Source{Name: "ok.cu", Text: saxpyCU, Prelude: "#error prelude broken\n"}, "")
	if err == nil || !strings.Contains(err.Error(), device.PreludeName) {
		t.Fatalf("prelude error: %v", err)
	}
}

func TestOutOfMemory(t *testing.T) {
	d, _ := open(t)
	_, err := d.Alloc(1<<40, device.ReadWrite)
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "1 TiB") {
		t.Fatalf("1 TiB: %v", err)
	}
	t.Log(err)
	// Within the device's size but more than is free: the driver says no.
	_, err = d.Alloc(d.Info().GlobalMem, device.ReadWrite)
	if !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("all of the device's memory: %v", err)
	}
	t.Log(err)
}

func TestEvents(t *testing.T) {
	d, q := open(t)
	p := build(t, d, device.Source{Name: "spin.cu", Text: `extern "C" __global__ void spin(long long cycles) {
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {}
}`})
	k := must(p.Kernel("spin"))
	if err := k.SetArg(0, int64(50_000_000)); err != nil { // tens of ms
		t.Fatal(err)
	}
	ev := must(q.Launch(k, device.Groups(1, 1)))
	defer ev.Release()
	if s, err := ev.Status(); err != nil || s == device.Complete {
		t.Fatalf("status right after launch: %v %v", s, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	if err := ev.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v", err)
	}
	cancel()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	if err := ev.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := ev.Status(); s != device.Complete {
		t.Fatalf("status %v", s)
	}
	tm, err := ev.Times()
	if err != nil || tm.End <= tm.Start {
		t.Fatalf("times %+v %v", tm, err)
	}
	t.Logf("spin kernel: %.2f ms", float64(tm.End-tm.Start)/1e6)
	// A marker waits for everything before it; events of this device in a
	// wait list are waited for on the GPU.
	m := must(q.Marker(ev))
	wait(t, m)
}

// graphKernel updates x[i] = 2·x[i] + v: the order of launches matters.
const graphKernel = `extern "C" __global__ void step(float *x, float v, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = 2.0f * x[i] + v;
}`

func TestGraphEqualsSequential(t *testing.T) {
	d, q := open(t)
	p := build(t, d, device.Source{Name: "step.cu", Text: graphKernel})
	const n = 4096
	init := make([]float32, n)
	for i := range init {
		init[i] = float32(i%97) * 0.25
	}
	ks := make([]device.Kernel, 10)
	a := must(d.Alloc(4*n, device.ReadWrite))
	defer a.Release()
	b := must(d.Alloc(4*n, device.ReadWrite))
	defer b.Release()
	for i := range ks {
		ks[i] = must(p.Kernel("step"))
		if err := errors.Join(ks[i].SetArg(1, float32(i+1)), ks[i].SetArg(2, int32(n))); err != nil {
			t.Fatal(err)
		}
	}
	run := func(buf device.Buffer) {
		for _, k := range ks {
			if err := k.SetArg(0, buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One by one on a.
	wait(t, must(q.Write(a, 0, f32bytes(init))))
	run(a)
	for _, k := range ks {
		must(q.Launch(k, device.Groups(n/256, 256))).Release()
	}
	seq := make([]byte, 4*n)
	wait(t, must(q.Read(seq, a, 0)))
	// Captured once on b, replayed twice (starting from init each time).
	run(b)
	g, err := q.Capture(func() error {
		for _, k := range ks {
			ev, err := q.Launch(k, device.Groups(n/256, 256))
			if err != nil {
				return err
			}
			if err := ev.Wait(context.Background()); err == nil {
				t.Error("waiting on a captured command should fail")
			}
			ev.Release()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if g.Commands() != 10 {
		t.Fatalf("captured %d commands", g.Commands())
	}
	t.Logf("graph: %d commands, %d nodes", g.Commands(), g.Nodes())
	for range 2 {
		wait(t, must(q.Write(b, 0, f32bytes(init))))
		wait(t, must(g.Launch(q)))
		got := make([]byte, 4*n)
		wait(t, must(q.Read(got, b, 0)))
		if string(got) != string(seq) {
			t.Fatal("the graph's result differs from launching one by one")
		}
	}
	// A failing capture is discarded.
	boom := errors.New("boom")
	if _, err := q.Capture(func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failing capture: %v", err)
	}
	wait(t, must(q.Marker())) // the queue still works
}

func TestReleaseLoop(t *testing.T) {
	d, _ := open(t)
	p := build(t, d, device.Source{Name: "saxpy.cu", Text: saxpyCU})
	before := cu.LiveObjects()
	pool := d.Pool()
	for i := range 300 {
		buf := must(d.Alloc(int64(4096+i*256), device.ReadWrite))
		h := must(d.AllocHost(4096))
		q2 := must(d.Queue())
		k := must(p.Kernel("saxpy"))
		if err := errors.Join(k.SetArg(0, int32(1024)), k.SetArg(1, float32(2)), k.SetArg(2, buf), k.SetArg(3, buf)); err != nil {
			t.Fatal(err)
		}
		w := must(q2.Write(buf, 0, h.Bytes()))
		l := must(q2.Launch(k, device.Groups(4, 256), w))
		r := must(q2.Read(h.Bytes(), buf, 0, l))
		if err := r.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, e := range []device.Event{w, l, r} {
			e.Release()
			e.Release()
		}
		if err := errors.Join(k.Release(), q2.Release(), h.Release(), buf.Release(), buf.Release()); err != nil {
			t.Fatal(err)
		}
	}
	after := cu.LiveObjects()
	after.Events = before.Events // pooled events are kept until Close
	if after != before {
		t.Fatalf("leak: before %+v, after %+v", before, after)
	}
	if s := d.Pool(); s.Used != pool.Used || s.Buffers != pool.Buffers || s.Largest != pool.Largest {
		t.Fatalf("pool before %+v, after %+v", pool, s)
	}
	// Opening and closing the device leaks nothing either.
	base := cu.LiveObjects()
	for range 5 {
		d2 := must(cuda.Open(context.Background(), d.Info().ID, cuda.Options{PoolSize: 64 << 20}))
		q2 := must(d2.Queue())
		wait(t, must(q2.Marker()))
		if err := errors.Join(q2.Release(), d2.Close(), d2.Close()); err != nil {
			t.Fatal(err)
		}
	}
	if now := cu.LiveObjects(); now != base {
		t.Fatalf("open/close leak: before %+v, after %+v", base, now)
	}
}

func TestPoolServesAllocations(t *testing.T) {
	d, _ := open(t)
	s0 := d.Pool()
	if s0.Size <= 0 {
		t.Skip("pool disabled")
	}
	var bufs []device.Buffer
	for range 16 {
		bufs = append(bufs, must(d.Alloc(1<<20, device.ReadWrite)))
	}
	s := d.Pool()
	if s.Buffers != s0.Buffers+16 || s.Direct != s0.Direct {
		t.Fatalf("pool %+v: want 16 more pool buffers and no direct allocation", s)
	}
	big := must(d.Alloc(s.Size, device.ReadWrite)) // larger than what is left: cuMemAlloc
	if d.Pool().Direct != s0.Direct+1 {
		t.Fatalf("pool %+v: want one direct allocation", d.Pool())
	}
	big.Release()
	for i := 0; i < len(bufs); i += 2 {
		bufs[i].Release()
	}
	for i := 1; i < len(bufs); i += 2 {
		bufs[i].Release()
	}
	if s := d.Pool(); s.Used != s0.Used || s.Largest != s0.Largest || s.Direct != s0.Direct {
		t.Fatalf("after release: %+v, want %+v", s, s0)
	}
}
