package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"   // registers the CUDA backend
	_ "github.com/sluicehq/sluice/device/opencl" // registers the OpenCL backend
	"github.com/sluicehq/sluice/graph"
)

// openCLDevices returns the OpenCL device IDs, skipping the test (or
// failing it with SLUICE_REQUIRE_OPENCL=1) when there are none.
func openCLDevices(t testing.TB) []string {
	t.Helper()
	for _, r := range device.Discover(context.Background()) {
		if r.Backend != "opencl" {
			continue
		}
		if !r.Available() || len(r.Devices) == 0 {
			break
		}
		var ids []string
		if id := os.Getenv("SLUICE_OPENCL_DEVICE"); id != "" {
			ids = append(ids, id)
		}
		for _, d := range r.Devices {
			if len(ids) == 0 || d.ID != ids[0] {
				ids = append(ids, d.ID)
			}
		}
		return ids
	}
	if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
		t.Fatal("SLUICE_REQUIRE_OPENCL=1 but no OpenCL device (scripts/install-pocl.sh installs PoCL)")
	}
	t.Skip("no OpenCL device")
	return nil
}

// cudaDevices returns the CUDA device IDs, skipping the test (or failing it
// with SLUICE_REQUIRE_CUDA=1) when there are none.
func cudaDevices(t testing.TB) []string {
	t.Helper()
	if ids := backendDevices("cuda"); len(ids) > 0 {
		return ids
	}
	if os.Getenv("SLUICE_REQUIRE_CUDA") == "1" {
		t.Fatal("SLUICE_REQUIRE_CUDA=1 but no CUDA device (no NVIDIA driver, or it sees no GPU)")
	}
	t.Skip("no CUDA device")
	return nil
}

// backendDevices lists the devices of a backend (none when unavailable).
func backendDevices(backend string) []string {
	var ids []string
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend && r.Available() {
			for _, d := range r.Devices {
				ids = append(ids, d.ID)
			}
		}
	}
	return ids
}

// kernelBackends are the backends whose kernel actors the tests run: each
// a subtest that gets the backend's devices (skipping without them).
var kernelBackends = []struct {
	name    string
	devices func(testing.TB) []string
}{{"opencl", openCLDevices}, {"cuda", cudaDevices}}

// forBackends runs f once per kernel backend, as subtests.
func forBackends(t *testing.T, f func(t *testing.T, devs []string)) {
	for _, b := range kernelBackends {
		t.Run(b.name, func(t *testing.T) { f(t, b.devices(t)) })
	}
}

// saxpyCL is y = a·x + b as an ETH-style kernel actor: rate 64, blocks of 8.
const saxpyCL = `// saxpy.cl
void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++)
			y[j] = A * x[blk * BLOCK_Y_SIZE + j] + B;
	}
}
`

const rate = 64

// addAffine adds actor name: y = a·x + b, with a Go and an OpenCL version.
func addAffine(g *graph.Graph, name string, a, b float32) *graph.Actor {
	src := fmt.Sprintf("#define A %.8ef\n#define B %.8ef\n", a, b) + saxpyCL
	src = strings.Replace(src, "TOKEN_X_t *x", "TOKEN_X_t *xs", 1)
	src = strings.Replace(src, "x[blk", "xs[blk", 1)
	return addF32Kernel(g, name, src, 8, func(x, y []float32) {
		for i := range x {
			y[i] = a*x[i] + b
		}
	})
}

// addF32Kernel adds actor name with an f32 input x and output y of the
// test rate (y in blocks of block tokens): a Go firing fire, and src as
// both its OpenCL and its CUDA kernel (the actor API is the backends'
// common one).
func addF32Kernel(g *graph.Graph, name, src string, block int, fire func(x, y []float32)) *graph.Actor {
	act := g.AddActor(name,
		graph.WithFunc(FireFunc(func(f *Firing) error {
			fire(Input[float32](f, 0), Output[float32](f, 0))
			return nil
		})),
		graph.WithImpl(graph.Impl{Kind: graph.ImplOpenCL, Source: name + ".cl", Func: src}),
		graph.WithImpl(graph.Impl{Kind: graph.ImplCUDA, Source: name + ".cu", Func: src}))
	f32 := graph.MustTokenType("f32")
	act.AddPort("x", graph.In, f32, graph.SDF(rate), "")
	act.AddPort("y", graph.Out, f32, graph.SDF(rate), "").Block = block
	return act
}

// addRandom adds a Go source of seeded random f32 tokens.
func addRandom(g *graph.Graph, name string, seed uint64) *graph.Actor {
	r := rand.New(rand.NewPCG(seed, 7))
	a := g.AddActor(name, graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		for i, out := 0, Output[float32](f, 0); i < len(out); i++ {
			out[i] = r.Float32()*2 - 1
		}
		return nil
	})))
	a.AddPort("out", graph.Out, graph.MustTokenType("f32"), graph.SDF(rate), "")
	return a
}

type f32sink struct {
	mu  sync.Mutex
	got []float32
}

func addF32Sink(g *graph.Graph, name string) *f32sink {
	s := &f32sink{}
	a := g.AddActor(name, graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		s.mu.Lock()
		s.got = append(s.got, Input[float32](f, 0)...)
		s.mu.Unlock()
		return nil
	})))
	a.AddPort("in", graph.In, graph.MustTokenType("f32"), graph.SDF(rate), "")
	return s
}

// chain builds src → a1 → a2 → snk (y = 2(3x+1)-0.5).
func chain() (*graph.Graph, *f32sink) {
	g := graph.New("chain")
	addRandom(g, "src", 42)
	addAffine(g, "a1", 3, 1)
	addAffine(g, "a2", 2, -0.5)
	s := addF32Sink(g, "snk")
	g.JoinNames("src.out", "a1.x")
	g.JoinNames("a1.y", "a2.x")
	g.JoinNames("a2.y", "snk.in")
	return g, s
}

// kernelAt places a kernel actor on device dev (an ID or a backend name)
// with that backend's implementation.
func kernelAt(dev string, g, i int) *graph.Placement {
	return &graph.Placement{Device: dev, Impl: implOf(dev), WorkGroups: g, WorkItems: i}
}

func implOf(dev string) graph.ImplKind {
	if strings.HasPrefix(dev, "cuda") {
		return graph.ImplCUDA
	}
	return graph.ImplOpenCL
}

func backendOf(dev string) string { return string(implOf(dev)) }

func sameF32(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tokens, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("token %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// Kernel actors agree with the Go implementations, on every placement of
// the chain's channels, in both device modes.
func TestKernelActorsPlacements(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) { testPlacements(t, devs, tuning{}) })
}

func testPlacements(t *testing.T, devs []string, tune tuning) {
	const iters = 50
	ref, rs := chain()
	if _, err := Run(context.Background(), ref, Options{Iterations: iters}); err != nil {
		t.Fatal(err)
	}
	want := rs.got
	if len(want) != iters*rate {
		t.Fatalf("reference: %d tokens", len(want))
	}
	d0 := devs[0]
	type tc struct {
		name string
		m    map[string]*graph.Placement
		ring bool // a1 → a2 on one device: no copies
	}
	cases := []tc{
		{"go-to-device-to-go", map[string]*graph.Placement{"a1": kernelAt(d0, 4, 8)}, false},
		{"device-to-go", map[string]*graph.Placement{"a2": kernelAt(d0, 3, 2)}, false},
		{"same-device", map[string]*graph.Placement{"a1": kernelAt(d0, 4, 8), "a2": kernelAt(d0, 3, 4)}, true},
		{"same-device-G1", map[string]*graph.Placement{"a1": kernelAt(d0, 1, 1), "a2": kernelAt(d0, 1, 8)}, true},
		// the backend's name is its first device: a ring when that is d0
		{"backend-name", map[string]*graph.Placement{"a1": {Device: backendOf(d0), WorkGroups: 5}, "a2": kernelAt(d0, 7, 1)}, backendDevices(backendOf(d0))[0] == d0},
	}
	// across backends: OpenCL and CUDA kernels of one graph, host-staged
	for _, other := range [][]string{backendDevices("opencl"), backendDevices("cuda")} {
		if len(other) > 0 && backendOf(other[0]) != backendOf(d0) && backendOf(d0) == "cuda" {
			cases = append(cases, tc{"across-backends", map[string]*graph.Placement{"a1": kernelAt(other[0], 2, 8), "a2": kernelAt(d0, 4, 8)}, false})
		}
	}
	if len(devs) > 1 {
		cases = append(cases, tc{"two-devices", map[string]*graph.Placement{"a1": kernelAt(devs[0], 4, 8), "a2": kernelAt(devs[1], 4, 8)}, false})
	} else {
		t.Logf("one %s device: the across-devices placement is not tested", backendOf(d0))
	}
	for _, c := range cases {
		for _, mode := range []DeviceMode{EnqueueAhead, Callback} {
			t.Run(c.name+"/"+string(mode), func(t *testing.T) {
				g, s := chain()
				st, err := Run(context.Background(), g, Options{Iterations: iters, Mapping: &graph.Mapping{Actors: c.m}, DeviceMode: mode, CheckEmpty: true, tune: tune})
				if err != nil {
					t.Fatal(err)
				}
				sameF32(t, s.got, want)
				for _, ch := range st.Channels {
					onRing := ch.Device != ""
					if ch.Name == "a1.y->a2.x" || strings.HasPrefix(ch.Name, "a1.y") {
						if onRing != c.ring {
							t.Fatalf("channel %s on device %q: want ring %v", ch.Name, ch.Device, c.ring)
						}
						if c.ring && ch.CopiedBytes != 0 {
							t.Fatalf("channel %s copied %d bytes: want 0 on one device", ch.Name, ch.CopiedBytes)
						}
						// two CUDA devices: copied once, device to device
						if c.name == "two-devices" && backendOf(d0) == "cuda" && !tune.noPeer {
							if want := int64(iters * rate * 4); ch.Peer == "" || ch.CopiedBytes != want {
								t.Fatalf("channel %s: peer %q, %d bytes copied: want a peer ring on %s, %d bytes", ch.Name, ch.Peer, ch.CopiedBytes, devs[1], want)
							}
							t.Logf("channel %s: peer ring on %s", ch.Name, ch.Peer)
						}
					}
				}
				for _, a := range []string{"a1", "a2"} {
					if n := firings(t, st, a); n != iters {
						t.Fatalf("%s fired %d times, want %d", a, n, iters)
					}
				}
			})
		}
	}
}

// A source ending its stream drains through kernel actors.
func TestKernelActorsEndOfStream(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) { testEndOfStream(t, devs[0], tuning{}) })
}

func testEndOfStream(t *testing.T, d0 string, tune tuning) {
	g := graph.New("eos")
	addRamp(g, "src", 37)
	addAffine(g, "a1", 1, 1)
	addAffine(g, "a2", 1, -1)
	s := addF32Sink(g, "snk")
	g.JoinNames("src.out", "a1.x")
	g.JoinNames("a1.y", "a2.x")
	g.JoinNames("a2.y", "snk.in")
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"a1": kernelAt(d0, 8, 4), "a2": kernelAt(d0, 5, 4)}}
	if _, err := Run(context.Background(), g, Options{Mapping: m, tune: tune}); err != nil {
		t.Fatal(err)
	}
	if len(s.got) != 37*rate {
		t.Fatalf("got %d tokens, want %d", len(s.got), 37*rate)
	}
	for i, v := range s.got {
		if v != float32(i) {
			t.Fatalf("token %d = %v", i, v)
		}
	}
}

// jacobiCL smooths x (rate 64) once per iteration: y[i] = (x[i-1]+x[i]+x[i+1])/3,
// ends held. Iterated with a swap pair y→x, it is a Jacobi relaxation.
const jacobiCL = `// jacobi.cl
void FIRE() {
	TOKEN_X_t *xs = CAPTURE(PORT_x);
	FOREACH(i IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, i);
		if (i == 0 || i == TOKEN_X_RATE - 1) y[0] = xs[i];
		else y[0] = (xs[i - 1] + xs[i] + xs[i + 1]) / 3.0f;
	}
}
`

func jacobiGraph(iters int) (*graph.Graph, *f32sink) {
	g := graph.New("jacobi")
	addRandom(g, "src", 9)
	a := g.AddActor("jac",
		graph.WithFunc(FireFunc(func(f *Firing) error {
			x, y := Input[float32](f, 0), Output[float32](f, 0)
			for i := range x {
				if i == 0 || i == len(x)-1 {
					y[i] = x[i]
				} else {
					y[i] = (x[i-1] + x[i] + x[i+1]) / 3
				}
			}
			return nil
		})),
		graph.WithImpl(graph.Impl{Kind: graph.ImplOpenCL, Source: "jacobi.cl", Func: jacobiCL}),
		graph.WithImpl(graph.Impl{Kind: graph.ImplCUDA, Source: "jacobi.cu", Func: jacobiCL}))
	f32 := graph.MustTokenType("f32")
	a.AddPort("x", graph.In, f32, graph.SDF(rate), "")
	a.AddPort("y", graph.Out, f32, graph.SDF(rate), "").Block = 1
	a.Iterations = iters
	if iters > 1 {
		a.Swap = map[string]string{"y": "x"}
	}
	s := addF32Sink(g, "snk")
	g.JoinNames("src.out", "jac.x")
	g.JoinNames("jac.y", "snk.in")
	return g, s
}

// Swap equals copy-device equals copy-host equals the Go version.
func TestSwapEqualsCopy(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) { testSwapEqualsCopy(t, devs[0]) })
}

func testSwapEqualsCopy(t *testing.T, d0 string) {
	const iters = 25
	ref, rs := jacobiGraph(iters)
	if _, err := Run(context.Background(), ref, Options{Iterations: 6}); err != nil {
		t.Fatal(err)
	}
	// one iteration differs from 25
	one, os1 := jacobiGraph(0)
	if _, err := Run(context.Background(), one, Options{Iterations: 6}); err != nil {
		t.Fatal(err)
	}
	if same := func() bool {
		for i := range rs.got {
			if rs.got[i] != os1.got[i] {
				return false
			}
		}
		return true
	}(); same {
		t.Fatal("iterating 25 times gave what iterating once does")
	}
	for _, mode := range []SwapMode{Swap, CopyDevice, CopyHost} {
		for _, gi := range [][2]int{{1, 64}, {3, 16}} {
			t.Run(fmt.Sprintf("%s/G%d", mode, gi[0]), func(t *testing.T) {
				g, s := jacobiGraph(iters)
				m := &graph.Mapping{Actors: map[string]*graph.Placement{"jac": kernelAt(d0, gi[0], gi[1])}}
				if _, err := Run(context.Background(), g, Options{Iterations: 6, Mapping: m, SwapMode: mode}); err != nil {
					t.Fatal(err)
				}
				sameF32(t, s.got, rs.got)
			})
		}
	}
}

func TestKernelActorErrors(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) { testKernelActorErrors(t, devs[0]) })
}

func testKernelActorErrors(t *testing.T, d0 string) {
	run := func(g *graph.Graph, m map[string]*graph.Placement) error {
		_, err := Run(context.Background(), g, Options{Iterations: 3, Mapping: &graph.Mapping{Actors: m}})
		return err
	}
	// A compile error names the user's file and line.
	g, _ := chain()
	for i, im := range g.Actor("a1").Impls {
		if im.Kind == implOf(d0) {
			g.Actor("a1").Impls[i].Func = strings.Replace(im.Func.(string), "+ B;", "+ nosuch;", 1)
		}
	}
	err := run(g, map[string]*graph.Placement{"a1": kernelAt(d0, 1, 1)})
	var be *device.BuildError
	file := "a1.cl:9:"
	if implOf(d0) == graph.ImplCUDA {
		file = "a1.cu:9:"
	}
	if !errors.As(err, &be) || !strings.Contains(err.Error(), file) {
		t.Fatalf("want a build error at %s, got %v", file, err)
	}
	// No such device.
	g, _ = chain()
	nosuch := "opencl:9:9"
	if implOf(d0) == graph.ImplCUDA {
		nosuch = "cuda:99"
	}
	if err := run(g, map[string]*graph.Placement{"a1": kernelAt(nosuch, 1, 1)}); !errors.Is(err, device.ErrNotFound) {
		t.Fatalf("no such device: %v", err)
	}
	// Out of device memory: a ring far beyond the device.
	g, _ = chain()
	g.Channels[1].Capacity = 1 << 40
	err = run(g, map[string]*graph.Placement{"a1": kernelAt(d0, 1, 1), "a2": kernelAt(d0, 1, 1)})
	if !errors.Is(err, device.ErrOutOfMemory) || !strings.Contains(err.Error(), "a1.y") {
		t.Fatalf("out of memory: %v", err)
	}
	// OpenCL implementation on the CPU, and a Go-only actor on a device.
	g, _ = chain()
	if err := run(g, map[string]*graph.Placement{"a1": {Device: "cpu", Impl: implOf(d0)}}); err == nil || !strings.Contains(err.Error(), "expected an OpenCL or CUDA device") {
		t.Fatalf("opencl on cpu: %v", err)
	}
	g, _ = chain()
	if err := run(g, map[string]*graph.Placement{"snk": {Device: d0}}); err == nil || !strings.Contains(err.Error(), "no kernel implementation") {
		t.Fatalf("go on device: %v", err)
	}
	// Cancellation stops a run with kernels in flight, leaking nothing.
	g, _ = chain()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, g, Options{Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"a1": kernelAt(d0, 2, 2)}}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Host FIFOs in a device's pinned host memory (as next to an OpenCL GPU's
// kernel actors) carry the same streams, on every placement and at the end
// of a stream.
func TestKernelActorsFIFOMemory(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	tune := tuning{fifoMemory: true}
	forBackends(t, func(t *testing.T, devs []string) {
		testPlacements(t, devs, tune)
		testEndOfStream(t, devs[0], tune)
		testNoTailCopies(t, devs[0], tune)
	})
}

// Two independent chains of kernel actors on one device (on CUDA in two
// lanes: streams that run concurrently within a round) give the Go
// results, with and without lanes.
func TestKernelActorsIndependentChains(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		const iters = 60
		build := func() (*graph.Graph, [2]*f32sink) {
			g := graph.New("two-chains")
			var sinks [2]*f32sink
			for c, p := range []string{"x", "y"} {
				addRandom(g, p+"src", uint64(42+c))
				addAffine(g, p+"a1", 3, float32(c))
				addAffine(g, p+"a2", 2, -0.5)
				sinks[c] = addF32Sink(g, p+"snk")
				g.JoinNames(p+"src.out", p+"a1.x")
				g.JoinNames(p+"a1.y", p+"a2.x")
				g.JoinNames(p+"a2.y", p+"snk.in")
			}
			return g, sinks
		}
		ref, want := build()
		if _, err := Run(context.Background(), ref, Options{Iterations: iters}); err != nil {
			t.Fatal(err)
		}
		m := map[string]*graph.Placement{}
		for _, a := range []string{"xa1", "xa2", "ya1", "ya2"} {
			m[a] = kernelAt(devs[0], 3, 8)
		}
		for _, noLanes := range []bool{false, true} {
			g, got := build()
			_, err := Run(context.Background(), g, Options{Iterations: iters, Mapping: &graph.Mapping{Actors: m}, tune: tuning{noFork: noLanes}})
			if err != nil {
				t.Fatal(err)
			}
			for c := range got {
				sameF32(t, got[c].got, want[c].got)
			}
		}
	})
}

// Host channels of small invocations stage through mapped host memory on a
// device that has it (CUDA); the same placements with copy commands
// instead carry the same streams.
func TestKernelActorsCopyStaging(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		d, err := device.Open(context.Background(), devs[0])
		if err != nil {
			t.Fatal(err)
		}
		_, mapper := d.(device.HostMapper)
		_ = d.Close()
		if !mapper {
			t.Skipf("%s has no mapped host memory: its host channels always use copies (tested elsewhere)", devs[0])
		}
		tune := tuning{noMapped: true}
		testPlacements(t, devs, tune)
		testEndOfStream(t, devs[0], tune)
	})
}

// A Go source's windows into a FIFO in a device's memory stop at the
// ring's end, so that the FIFO copies nothing into its tail: the channel
// copies each token once, to the device.
func testNoTailCopies(t *testing.T, dev string, tune tuning) {
	const iters = 200
	ref, rs := chain()
	ref.Channels[0].Capacity = 7 * rate // rounds of up to 3 firings, a ring of 8
	if _, err := Run(context.Background(), ref, Options{Iterations: iters}); err != nil {
		t.Fatal(err)
	}
	g, s := chain()
	g.Channels[0].Capacity = 7 * rate
	st, err := Run(context.Background(), g, Options{Iterations: iters, Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"a1": kernelAt(dev, 2, 8)}}, tune: tune})
	if err != nil {
		t.Fatal(err)
	}
	sameF32(t, s.got, rs.got)
	c := st.Channels[0]
	if want := int64(iters * rate * 4); c.Name != "src.out->a1.x" || c.CopiedBytes != want {
		t.Fatalf("channel %s copied %d bytes: want %d (each token once, none at the ring's end)", c.Name, c.CopiedBytes, want)
	}
}

// TestKernelActorsFiringsCap checks that Options.Firings caps a kernel
// actor as it caps a Go actor (a cluster worker running one kernel actor of
// a client's graph does the client's count with it): the source fires 20
// times, the kernel actor 12, so the sink sees 12 firings' tokens.
func TestKernelActorsFiringsCap(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		g := graph.New("cap")
		addRamp(g, "src", -1)
		addAffine(g, "a1", 1, 0)
		s := addF32Sink(g, "snk")
		g.JoinNames("src.out", "a1.x")
		g.JoinNames("a1.y", "snk.in")
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"a1": kernelAt(devs[0], 4, 4)}}
		st, err := Run(context.Background(), g, Options{Mapping: m, Firings: map[string]int64{"src": 20, "a1": 12}})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Actor("a1").Firings; got != 12 {
			t.Fatalf("a1 fired %d times, want the cap of 12", got)
		}
		if len(s.got) != 12*rate {
			t.Fatalf("the sink got %d tokens, want %d", len(s.got), 12*rate)
		}
		for i, v := range s.got {
			if v != float32(i) {
				t.Fatalf("token %d = %v", i, v)
			}
		}
	})
}

// addRamp adds a source of rate f32 tokens counting 0, 1, 2, … that ends
// its stream after end firings (end < 0: never).
func addRamp(g *graph.Graph, name string, end int) {
	n := 0
	a := g.AddActor(name, graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		if n == end {
			return ErrEndOfStream
		}
		for i, out := 0, Output[float32](f, 0); i < len(out); i++ {
			out[i] = float32(n*rate + i)
		}
		n++
		return nil
	})))
	a.AddPort("out", graph.Out, graph.MustTokenType("f32"), graph.SDF(rate), "")
}

// The chain's two kernel actors over a device ring on CUDA: its rounds
// recur with ring windows at other offsets, so most are replayed as cached
// CUDA Graphs with their kernels' arguments set anew (Stats.Devices), and
// the stream equals the Go actors'.
func TestKernelRoundsReplayWithArgs(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	devs := cudaDevices(t)
	const iters = 3000
	ref, want := chain()
	if _, err := Run(context.Background(), ref, Options{Iterations: iters}); err != nil {
		t.Fatal(err)
	}
	m := map[string]*graph.Placement{"a1": kernelAt(devs[0], 3, 8), "a2": kernelAt(devs[0], 3, 8)}
	g, got := chain()
	st, err := Run(context.Background(), g, Options{Iterations: iters, Mapping: &graph.Mapping{Actors: m}})
	if err != nil {
		t.Fatal(err)
	}
	sameF32(t, got.got, want.got)
	if len(st.Devices) != 1 {
		t.Fatalf("%d devices in the statistics, expected 1", len(st.Devices))
	}
	r := st.Devices[0].Rounds
	t.Logf("%s: %+v", st.Devices[0].Device, r)
	if r.Batches == 0 || r.Replayed < r.Batches/2 || r.Updated == 0 {
		t.Fatalf("rounds %+v: expected most replayed as graphs, some with arguments set anew", r)
	}
	var table strings.Builder
	if err := st.WriteTable(&table); err != nil || !strings.Contains(table.String(), "args set") {
		t.Fatalf("statistics table without the devices' rounds (%v):\n%s", err, table.String())
	}
}

// slowCL is y = x after STEPS dependent steps per token, so that an
// invocation's kernel runs long after its input copy completed.
const slowCL = `void FIRE() {
	TOKEN_X_t *xs = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) {
			float v = xs[blk * BLOCK_Y_SIZE + j];
			for (int r = 0; r < STEPS; r++) v = v * 0.5f + 0.5f * v;
			y[j] = v;
		}
	}
}
`

// A host FIFO copied into the device releases an invocation's tokens once
// its copy completes, while the kernel still runs: the stream is intact,
// and some invocations' inputs were released before they completed. (On
// CUDA, mapped staging is turned off: small windows would be read in
// place, not copied; and the kernel takes more steps, the GPU being
// faster than PoCL's CPU threads.)
func TestKernelInputsReleasedAfterCopy(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		const iters = 400
		steps := 4000
		tune := tuning{earlyReleases: new(atomic.Int64)}
		if backendOf(devs[0]) == "cuda" {
			steps = 400000
			tune.noMapped = true
		}
		src := fmt.Sprintf("#define STEPS %d\n", steps) + slowCL
		build := func() (*graph.Graph, *f32sink) {
			g := graph.New("early")
			addRandom(g, "src", 5)
			addF32Kernel(g, "slow", src, 8, func(x, y []float32) { copy(y, x) })
			s := addF32Sink(g, "snk")
			g.JoinNames("src.out", "slow.x")
			g.JoinNames("slow.y", "snk.in")
			return g, s
		}
		ref, want := build()
		if _, err := Run(context.Background(), ref, Options{Iterations: iters}); err != nil {
			t.Fatal(err)
		}
		g, got := build()
		m := map[string]*graph.Placement{"slow": kernelAt(devs[0], 2, 8)}
		if _, err := Run(context.Background(), g, Options{Iterations: iters, Mapping: &graph.Mapping{Actors: m}, DeviceDepth: 8, tune: tune}); err != nil {
			t.Fatal(err)
		}
		sameF32(t, got.got, want.got)
		if n := tune.earlyReleases.Load(); n == 0 {
			t.Fatalf("no invocation's inputs were released before it completed (of %d)", iters/2)
		} else {
			t.Logf("%d of %d invocations released their inputs before completing", n, iters/2)
		}
	})
}
