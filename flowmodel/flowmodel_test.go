package flowmodel_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/flowmodel"
)

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func f32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// builtinSaxpy is a flow-model running the Go built-in saxpy_f32.
func builtinSaxpy(n int) *flowmodel.Model {
	return &flowmodel.Model{
		Name:   "saxpy-go",
		Kernel: flowmodel.Kernel{Builtin: "saxpy_f32"},
		In:     []flowmodel.Stream{{Name: "x", Type: "f32", Length: n}, {Name: "y0", Type: "f32", Length: n}},
		Out:    []flowmodel.Stream{{Name: "y", Type: "f32", Length: n}},
		Params: []flowmodel.Param{{Name: "a", Type: "f32", Value: 2}},
		Swap:   []flowmodel.SwapPair{{Out: "y", In: "y0"}},
	}
}

// runSaxpy writes x = i, y0 = 1, fires iterations times and checks
// y = iterations*2*x + 1 (each iteration adds 2x to the swapped-in result).
func runSaxpy(t *testing.T, h flowmodel.Host, m *flowmodel.Model, dev string, iterations int) device.Info {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, err := h.Map(ctx, m, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := in.Release(ctx); err != nil {
			t.Error(err)
		}
	}()
	n := m.In[0].Length
	x, y0 := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y0[i] = float32(i%100), 1
	}
	if err := in.Write(ctx, "x", f32bytes(x)); err != nil {
		t.Fatal(err)
	}
	if err := in.Write(ctx, "y0", f32bytes(y0)); err != nil {
		t.Fatal(err)
	}
	if err := in.Fire(ctx, iterations); err != nil {
		t.Fatal(err)
	}
	b, err := in.Read(ctx, "y")
	if err != nil {
		t.Fatal(err)
	}
	y := f32s(b)
	for i := range y {
		if want := float32(iterations)*2*x[i] + 1; y[i] != want {
			t.Fatalf("%s: y[%d] = %g after %d iterations: expected %g", in.Device().ID, i, y[i], iterations, want)
		}
	}
	return in.Device()
}

func TestBuiltinSwapIterations(t *testing.T) {
	d := runSaxpy(t, flowmodel.Local{}, builtinSaxpy(1000), "", 5)
	if d.Backend != "cpu" {
		t.Fatalf("built-in ran on %s: expected the cpu backend", d.ID)
	}
}

// skipOrFail skips when OpenCL is absent, failing instead under
// SLUICE_REQUIRE_OPENCL=1.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func TestOpenCLFromFile(t *testing.T) {
	ctx := context.Background()
	m, err := flowmodel.Load(ctx, "testdata/saxpy.yaml", flowmodel.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	able, err := flowmodel.Query(ctx, flowmodel.Local{}, m)
	if err != nil {
		skipOrFail(t, "no OpenCL device for the test: %v", err)
	}
	d := runSaxpy(t, flowmodel.Local{}, m, able[0].ID, 4)
	if d.Backend != "opencl" {
		t.Fatalf("ran on %s: expected an OpenCL device", d.ID)
	}
}

func TestLoadURL(t *testing.T) {
	yml, err := os.ReadFile("testdata/saxpy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer srv.Close()
	sum := sha256.Sum256(yml)
	pin := hex.EncodeToString(sum[:])
	ctx := context.Background()
	m, err := flowmodel.Load(ctx, srv.URL+"/saxpy.yaml", flowmodel.LoadOptions{SHA256: pin})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Kernel.OpenCL, "__kernel void saxpy") {
		t.Fatalf("kernel file not fetched relative to the URL: %q", m.Kernel.OpenCL)
	}
	bad := strings.Repeat("0", 64)
	if _, err := flowmodel.Load(ctx, srv.URL+"/saxpy.yaml", flowmodel.LoadOptions{SHA256: bad}); err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Fatalf("wrong pin: got %v, expected a pin mismatch", err)
	}
	if _, err := flowmodel.Load(ctx, srv.URL+"/saxpy.yaml", flowmodel.LoadOptions{MaxBytes: 100}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("size limit: got %v, expected a size error", err)
	}
	if _, err := flowmodel.Load(ctx, srv.URL+"/missing.yaml", flowmodel.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing file: got %v, expected HTTP 404", err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	if _, err := flowmodel.Load(ctx, slow.URL+"/m.yaml", flowmodel.LoadOptions{Timeout: 50 * time.Millisecond}); err == nil {
		t.Fatal("slow server: expected a timeout error")
	}
}

func TestValidateErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"name: a\nkernel: {builtin: saxpy_f32}\nout:\n  - {name: y, type: f33, length: 4}\n", `m.yaml:4: stream "y": type "f33"`},
		{"name: a\nkernel: {opencl: 'x'}\nout:\n  - {name: y, type: f32, length: 4}\n", "missing entry"},
		{"name: a\nkernel: {builtin: b}\nin:\n  - {name: x, type: f32, length: 2}\nout:\n  - {name: y, type: f32, length: 4}\nswap: [{out: y, in: x}]\n", "sizes differ"},
		{"name: a\nkernel: {builtin: b}\nout:\n  - {name: y, type: f32, length: 4, colour: red}\n", "colour"},
		{"name: a\nkernel: {builtin: b}\nout:\n  - {name: y, type: f32, length: 0}\n", "positive"},
		{"name: a\nkernel: {builtin: b}\nout:\n  - {name: y, type: f32, length: 4}\nrequires: {backend: vulkan}\n", `backend "vulkan"`},
	} {
		m, err := flowmodel.Parse("m.yaml", []byte(c.yaml))
		if err == nil {
			err = m.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, expected an error containing %q", c.yaml, err, c.want)
		}
	}
}

func TestRequirements(t *testing.T) {
	m := builtinSaxpy(4)
	m.Kernel = flowmodel.Kernel{OpenCL: "k", Entry: "k"}
	m.Requires = flowmodel.Requirements{Version: "2.0", MinMemory: 1 << 30, Kinds: []device.Kind{device.GPU}}
	gpu := device.Info{ID: "opencl:0:0", Backend: "opencl", Kind: device.GPU, Version: "OpenCL 3.0 X", GlobalMem: 8 << 30, ComputeUnits: 8}
	if err := m.Check(gpu); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d    device.Info
		want string
	}{
		{device.Info{ID: "opencl:0:1", Backend: "opencl", Kind: device.CPU, Version: "OpenCL 3.0", GlobalMem: 8 << 30}, "kind cpu"},
		{device.Info{ID: "opencl:0:2", Backend: "opencl", Kind: device.GPU, Version: "OpenCL 1.2", GlobalMem: 8 << 30}, "at least 2.0"},
		{device.Info{ID: "opencl:0:3", Backend: "opencl", Kind: device.GPU, Version: "OpenCL 3.0", GlobalMem: 1 << 20}, "memory"},
		{device.Info{ID: "cuda:0", Backend: "cuda", Kind: device.GPU, Version: "9.0", GlobalMem: 8 << 30}, "has code for opencl"},
	} {
		if err := m.Check(c.d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, expected %q", c.d.ID, err, c.want)
		}
	}
	h := flowmodel.Tree("h", []device.Info{{ID: "cpu", Backend: "cpu", Kind: device.CPU}, gpu})
	if len(h.Platforms) != 2 {
		t.Fatalf("tree: %d platforms: expected 2", len(h.Platforms))
	}
	got, err := h.Match(m)
	if err != nil || len(got) != 1 || got[0].ID != gpu.ID {
		t.Fatalf("match: %v, %v: expected only %s", got, err, gpu.ID)
	}
}

// startNATS runs an in-process NATS server on loopback.
func startNATS(t *testing.T) *nats.Conn {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func TestRemote(t *testing.T) {
	nc := startNATS(t)
	srv, err := flowmodel.Serve(nc, "w1", flowmodel.Local{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := flowmodel.Remote{Conn: nc, Name: "w1"}
	ctx := context.Background()
	hi, err := r.Devices(ctx)
	if err != nil || len(hi.Platforms) == 0 {
		t.Fatalf("remote devices: %+v, %v", hi, err)
	}
	// 300000 floats (1.2 MB) cross the 256 KiB chunk size of messages.
	runSaxpy(t, r, builtinSaxpy(300000), "cpu", 3)
	if m, err := flowmodel.Load(ctx, "testdata/saxpy.yaml", flowmodel.LoadOptions{}); err == nil {
		if able, err := flowmodel.Query(ctx, r, m); err == nil {
			runSaxpy(t, r, m, able[0].ID, 2)
		}
	}
	lim, err := flowmodel.Serve(nc, "small", flowmodel.Limited{Host: flowmodel.Local{}, MaxStream: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	if _, err := (flowmodel.Remote{Conn: nc, Name: "small"}).Map(ctx, builtinSaxpy(1000), ""); err == nil || !strings.Contains(err.Error(), "at most 1 KiB") {
		t.Fatalf("stream over the host's limit: %v, expected a refusal", err)
	}
	if _, err := (flowmodel.Remote{Conn: nc, Name: "nobody"}).Devices(ctx); err == nil {
		t.Fatal("remote host without a server: expected an error")
	}
}

// TestRemoteRefusesParts: a name that is no subject token, and write
// parts outside their message's bounds, are refused with what was
// expected, before the server allocates the message.
func TestRemoteRefusesParts(t *testing.T) {
	nc := startNATS(t)
	if _, err := flowmodel.Serve(nc, "a.b", flowmodel.Local{}); err == nil || !strings.Contains(err.Error(), "expected a non-empty name without '.'") {
		t.Fatalf("serving under a name with a dot: %v, expected a refusal", err)
	}
	srv, err := flowmodel.Serve(nc, "w1", flowmodel.Local{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := (flowmodel.Remote{Conn: nc, Name: "w1"}).Map(ctx, builtinSaxpy(1000), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release(ctx)
	for _, tc := range []struct{ off, total, want string }{
		{"0", "4000000000000", "a stream of 4000000000000 bytes: expected at most 1073741824"},
		{"8", "4", "expected it within the message's 4 bytes"},
		{"x", "4", `offset "x" and total "4": expected byte counts`},
		{"4", "8", "expected the part at offset 0"},
	} {
		m := nats.NewMsg(flowmodel.Subject("w1"))
		m.Header.Set("Op", "write")
		m.Header.Set("Id", "1")
		m.Header.Set("Stream", "x")
		m.Header.Set("Off", tc.off)
		m.Header.Set("Total", tc.total)
		m.Data = make([]byte, 4)
		r, err := nc.RequestMsgWithContext(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if e := r.Header.Get("Error"); !strings.Contains(e, tc.want) {
			t.Errorf("write part at %s of %s: %q, expected %q", tc.off, tc.total, e, tc.want)
		}
	}
}

// benchFire writes x and y0, fires once and reads y: one round of a
// 1000-float saxpy on host h.
func benchFire(b *testing.B, h flowmodel.Host) {
	ctx := context.Background()
	in, err := h.Map(ctx, builtinSaxpy(1000), "cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer in.Release(ctx)
	data := make([]byte, 4000)
	for b.Loop() {
		if err := in.Write(ctx, "x", data); err != nil {
			b.Fatal(err)
		}
		if err := in.Fire(ctx, 1); err != nil {
			b.Fatal(err)
		}
		if _, err := in.Read(ctx, "y"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoundLocal(b *testing.B) { benchFire(b, flowmodel.Local{}) }

func BenchmarkRoundRemote(b *testing.B) {
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		b.Fatal("nats server not ready")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	srv, err := flowmodel.Serve(nc, "b", flowmodel.Local{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	benchFire(b, flowmodel.Remote{Conn: nc, Name: "b"})
}

// The same flow-model with CUDA C beside OpenCL C, on a CUDA device (the
// requirements ask for one). It skips where CUDA is absent.
func TestCUDA(t *testing.T) {
	ctx := context.Background()
	m, err := flowmodel.Load(ctx, "testdata/saxpy-cuda.yaml", flowmodel.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	able, err := flowmodel.Query(ctx, flowmodel.Local{}, m)
	if err != nil {
		t.Skipf("no CUDA device on this machine: %v", err)
	}
	d := runSaxpy(t, flowmodel.Local{}, m, able[0].ID, 5)
	if d.Backend != "cuda" {
		t.Fatalf("ran on %s: expected a CUDA device", d.ID)
	}
}
