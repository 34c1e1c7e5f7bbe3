package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

// Benchmarks of kernel actors against the device's own raw operations,
// measured side by side in one run so their ratios mean something on any
// device. SLUICE_OPENCL_DEVICE picks the device (default: a GPU if there is
// one). Each reports the two rates and their ratio as metrics.

const (
	benchRate  = 16384 // f32 tokens per firing (64 KiB)
	benchG     = 64    // firings per invocation (4 MiB)
	benchI     = 256   // work-items per firing
	benchFires = 4096  // firings per measurement (256 MiB)
)

// prodCL writes rate tokens per firing; consCL reads them and writes one
// partial sum per work-item; copyCL copies. On a GPU work-item i takes
// tokens i, i+I, … (coalesced); on a CPU device (CONTIG) a contiguous run.
const prodCL = `void FIRE() {
	FOREACH(b IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, b);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) y[j] = (float)(b + j);
	}
}
`

const consCL = `void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(b IN PORT_s) {
		TOKEN_S_t *s = RESERVE(PORT_s, b);
		float acc = 0;
#if CONTIG
		const int n = TOKEN_X_RATE / BLOCK_COUNT(PORT_s);
		for (int i = b * n; i < (b + 1) * n; i++) acc += x[i];
#else
		for (int i = b; i < TOKEN_X_RATE; i += BLOCK_COUNT(PORT_s)) acc += x[i];
#endif
		s[0] = acc;
	}
}
`

const copyCL = `void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(b IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, b);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) y[j] = x[b * BLOCK_Y_SIZE + j];
	}
}
`

// contig is true when the benchmark device is a CPU: kernels then take
// contiguous runs of tokens per work-item (blocks of rate/I tokens).
var contig bool

var f32t = graph.MustTokenType("f32")

func kernelActor(g *graph.Graph, name, src string, in, out []string, inRate, outRate int) *graph.Actor {
	pre := "#define CONTIG 0\n"
	if contig {
		pre = "#define CONTIG 1\n"
	}
	a := g.AddActor(name, graph.WithImpl(graph.Impl{Kind: graph.ImplOpenCL, Source: name + ".cl", Func: pre + src}))
	for _, p := range in {
		a.AddPort(p, graph.In, f32t, graph.SDF(inRate), "")
	}
	for _, p := range out {
		blk := 1
		if contig && outRate%benchI == 0 && name != "cons" && name != "k3" {
			blk = outRate / benchI
		}
		a.AddPort(p, graph.Out, f32t, graph.SDF(outRate), "").Block = blk
	}
	return a
}

func goActor(g *graph.Graph, name string, in, out int) *graph.Actor {
	a := g.AddActor(name, graph.WithFunc(FireFunc(func(*Firing) error { return nil })))
	if in > 0 {
		a.AddPort("x", graph.In, f32t, graph.SDF(in), "")
	}
	if out > 0 {
		a.AddPort("y", graph.Out, f32t, graph.SDF(out), "")
	}
	return a
}

func benchDevice(b *testing.B) (string, device.Device, device.Queue) {
	id := openCLDevices(b)[0]
	d, err := device.Open(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	q, err := d.NewQueue()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = q.Release(); _ = d.Close() })
	contig = d.Info().Kind == device.CPU
	b.Logf("device %s (%s)", d.Info(), d.Info().Kind)
	return id, d, q
}

func runFor(b *testing.B, g *graph.Graph, opts Options) time.Duration {
	b.Helper()
	st, err := Run(context.Background(), g, opts)
	if err != nil {
		b.Fatal(err)
	}
	return st.Elapsed
}

// rawLoop enqueues n commands from op, then waits for all of them.
func rawLoop(b *testing.B, q device.Queue, n int, op func() (device.Event, error)) time.Duration {
	b.Helper()
	if err := q.Finish(); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	for range n {
		ev, err := op()
		if err != nil {
			b.Fatal(err)
		}
		ev.Release()
	}
	if err := q.Finish(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

func gbps(bytes int64, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }

// On-device channel (producer kernel → ring → consumer kernel) vs the
// device's own buffer copy of the same bytes (a copy reads and writes each
// byte once, as the channel's producer and consumer do).
func BenchmarkDeviceChannelVsCopy(b *testing.B) {
	id, d, q := benchDevice(b)
	chunk := int64(benchG * benchRate * 4)
	total := int64(benchFires) * benchRate * 4
	// The copies cycle over two regions as large as the channel's ring.
	src, _ := d.Alloc(4*chunk, device.ReadWrite)
	dst, _ := d.Alloc(4*chunk, device.ReadWrite)
	defer src.Release()
	defer dst.Release()
	pl := func() *graph.Placement { return kernelAt(id, benchG, benchI) }
	var ch, cp time.Duration
	run := func(fires int64) time.Duration {
		g := graph.New("ring")
		kernelActor(g, "prod", prodCL, nil, []string{"y"}, 0, benchRate)
		kernelActor(g, "cons", consCL, []string{"x"}, []string{"s"}, benchRate, benchI)
		goActor(g, "sink", benchI, 0)
		g.JoinNames("prod.y", "cons.x", graph.Capacity(4*benchG*benchRate))
		g.JoinNames("cons.s", "sink.x")
		return runFor(b, g, Options{Iterations: fires, Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"prod": pl(), "cons": pl()}}})
	}
	run(benchG) // warm-up: kernels compiled for this shape, memory touched
	for b.Loop() {
		ch = run(benchFires)
		i := int64(0)
		cp = rawLoop(b, q, int(total/chunk), func() (device.Event, error) {
			i++
			return q.Copy(dst, i%4*chunk, src, i%4*chunk, chunk)
		})
	}
	b.SetBytes(total)
	b.ReportMetric(gbps(total, ch), "channel-GB/s")
	b.ReportMetric(gbps(total, cp), "copy-GB/s")
	b.ReportMetric(cp.Seconds()/ch.Seconds(), "channel/copy")
}

// Host → device channel (Go source → kernel) and device → host (kernel →
// Go sink) vs raw pinned write/read of the same bytes in the same chunks.
func BenchmarkHostChannelVsPinned(b *testing.B) {
	id, d, q := benchDevice(b)
	chunk := int64(benchG * benchRate * 4)
	total := int64(benchFires) * benchRate * 4
	// The raw copies cycle over pinned and device regions as large as the
	// channel's FIFO and staging slots.
	h, err := d.AllocHost(4 * chunk)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Release()
	buf, _ := d.Alloc(4*chunk, device.ReadWrite)
	defer buf.Release()
	pl := func() *graph.Placement { return kernelAt(id, benchG, benchI) }
	var up, down, w, r time.Duration
	runUp := func(fires int64) time.Duration {
		g := graph.New("up")
		goActor(g, "src", 0, benchRate)
		kernelActor(g, "cons", consCL, []string{"x"}, []string{"s"}, benchRate, benchI)
		goActor(g, "sink", benchI, 0)
		g.JoinNames("src.y", "cons.x")
		g.JoinNames("cons.s", "sink.x")
		return runFor(b, g, Options{Iterations: fires, Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"cons": pl()}}})
	}
	runDown := func(fires int64) time.Duration {
		g := graph.New("down")
		kernelActor(g, "prod", prodCL, nil, []string{"y"}, 0, benchRate)
		goActor(g, "sink", benchRate, 0)
		g.JoinNames("prod.y", "sink.x")
		return runFor(b, g, Options{Iterations: fires, Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"prod": pl()}}})
	}
	runUp(benchG)
	runDown(benchG)
	for b.Loop() {
		up = runUp(benchFires)
		down = runDown(benchFires)
		i := int64(0)
		w = rawLoop(b, q, int(total/chunk), func() (device.Event, error) {
			i++
			return q.Write(buf, i%4*chunk, h.Bytes()[i%4*chunk:(i%4+1)*chunk])
		})
		r = rawLoop(b, q, int(total/chunk), func() (device.Event, error) {
			i++
			return q.Read(h.Bytes()[i%4*chunk:(i%4+1)*chunk], buf, i%4*chunk)
		})
	}
	b.SetBytes(2 * total)
	b.ReportMetric(gbps(total, up), "to-device-GB/s")
	b.ReportMetric(gbps(total, w), "pinned-write-GB/s")
	b.ReportMetric(w.Seconds()/up.Seconds(), "to-device/pinned")
	b.ReportMetric(gbps(total, down), "to-host-GB/s")
	b.ReportMetric(gbps(total, r), "pinned-read-GB/s")
	b.ReportMetric(r.Seconds()/down.Seconds(), "to-host/pinned")
}

// Enqueue-ahead vs the callback baseline on a chain of small kernels
// (256 tokens, one firing per invocation, rings of 2 invocations).
func BenchmarkEnqueueAheadVsCallback(b *testing.B) {
	id, _, _ := benchDevice(b)
	const small, fires = 256, 2000
	build := func() (*graph.Graph, *graph.Mapping) {
		g := graph.New("small")
		kernelActor(g, "k0", prodCL, nil, []string{"y"}, 0, small)
		kernelActor(g, "k1", copyCL, []string{"x"}, []string{"y"}, small, small)
		kernelActor(g, "k2", copyCL, []string{"x"}, []string{"y"}, small, small)
		kernelActor(g, "k3", consCL, []string{"x"}, []string{"s"}, small, 16)
		goActor(g, "sink", 16, 0)
		g.JoinNames("k0.y", "k1.x", graph.Capacity(2*small))
		g.JoinNames("k1.y", "k2.x", graph.Capacity(2*small))
		g.JoinNames("k2.y", "k3.x", graph.Capacity(2*small))
		g.JoinNames("k3.s", "sink.x")
		m := &graph.Mapping{Actors: map[string]*graph.Placement{}}
		for _, k := range []string{"k0", "k1", "k2", "k3"} {
			m.Actors[k] = kernelAt(id, 1, 16)
		}
		return g, m
	}
	var ahead, cb time.Duration
	g, m := build()
	runFor(b, g, Options{Iterations: 10, Mapping: m})
	for b.Loop() {
		g, m := build()
		ahead = runFor(b, g, Options{Iterations: fires, Mapping: m, DeviceMode: EnqueueAhead})
		g, m = build()
		cb = runFor(b, g, Options{Iterations: fires, Mapping: m, DeviceMode: Callback})
	}
	n := float64(4 * fires)
	b.ReportMetric(n/ahead.Seconds(), "ahead-firings/s")
	b.ReportMetric(n/cb.Seconds(), "callback-firings/s")
	b.ReportMetric(cb.Seconds()/ahead.Seconds(), "ahead/callback")
}

// Swap vs copy-device vs copy-host on an iterated Jacobi kernel (64 Ki
// tokens, 50 iterations per firing).
func BenchmarkSwapVsCopy(b *testing.B) {
	id, _, _ := benchDevice(b)
	const n, iters, fires = 65536, 50, 4
	build := func() (*graph.Graph, *graph.Mapping) {
		g := graph.New("jacobi")
		goActor(g, "src", 0, n)
		a := kernelActor(g, "jac", jacobiCL, []string{"x"}, []string{"y"}, n, n)
		a.Iterations = iters
		a.Swap = map[string]string{"y": "x"}
		goActor(g, "sink", n, 0)
		g.JoinNames("src.y", "jac.x")
		g.JoinNames("jac.y", "sink.x")
		return g, &graph.Mapping{Actors: map[string]*graph.Placement{"jac": kernelAt(id, 1, 256)}}
	}
	res := map[SwapMode]time.Duration{}
	for _, m := range []SwapMode{Swap, CopyDevice, CopyHost} { // warm-up
		g, mp := build()
		runFor(b, g, Options{Iterations: 1, Mapping: mp, SwapMode: m})
	}
	for b.Loop() {
		for _, m := range []SwapMode{Swap, CopyDevice, CopyHost} {
			g, mp := build()
			res[m] = runFor(b, g, Options{Iterations: fires, Mapping: mp, SwapMode: m})
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / (fires * iters) }
	b.ReportMetric(per(res[Swap]), "swap-µs/iter")
	b.ReportMetric(per(res[CopyDevice]), "copy-device-µs/iter")
	b.ReportMetric(per(res[CopyHost]), "copy-host-µs/iter")
	b.ReportMetric(res[CopyHost].Seconds()/res[Swap].Seconds(), "copy-host/swap")
	b.ReportMetric(res[CopyDevice].Seconds()/res[Swap].Seconds(), "copy-device/swap")
}
