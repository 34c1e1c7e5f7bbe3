package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

// Benchmarks of kernel actors against the device's own raw operations,
// measured side by side in one run so their ratios mean something on any
// device, once per backend (sub-benchmarks opencl and cuda; a backend
// without a device is skipped). SLUICE_OPENCL_DEVICE picks the OpenCL
// device (default: a GPU if there is one). Each reports the two rates and
// their ratio as metrics.
//
// Both sides move the same bytes the same way: in invocations (chunks) of
// G firings, several in flight, enqueued back to back and waited for once
// at the end. On a GPU an invocation is 16 MiB (G = 256 firings of 16 Ki
// f32, I = 1024 threads: enough to fill the device) and 2 GiB go through;
// on a CPU device 4 MiB (G = 64, I = 256) and 256 MiB.

// benchShape is the size of the channel benchmarks on one device.
type benchShape struct {
	rate, G, I int   // tokens per firing, firings per invocation, work-items
	total      int64 // bytes per measurement
}

func (s benchShape) chunk() int64 { return int64(s.G) * int64(s.rate) * 4 }
func (s benchShape) fires() int64 { return s.total / (int64(s.rate) * 4) }

func shapeOf(d device.Device) benchShape {
	if d.Info().Kind == device.CPU {
		return benchShape{rate: 16384, G: 64, I: 256, total: 256 << 20}
	}
	// BENCH_RATE and BENCH_ITEMS reshape an invocation of the same bytes:
	// fewer tokens per firing, more firings (work-groups).
	rate, items := envInt("BENCH_RATE", 16384), envInt("BENCH_ITEMS", 1024)
	return benchShape{rate: rate, G: 256 * 16384 / rate, I: items, total: 2 << 30}
}

// prodCL writes rate tokens per firing; consCL reads them and writes one
// token per firing (thread 0's partial sum; the others' sums are only
// compared, so their loads cannot be dropped; four independent sums keep
// four loads in flight per work-item); copyCL copies. On a GPU
// work-item i takes tokens i, i+I, … (coalesced); on a CPU device
// (CONTIG) a contiguous run. The sources are OpenCL C and CUDA C at once:
// the actor API is the backends' common one.
const prodCL = `void FIRE() {
	FOREACH(b IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, b);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) y[j] = (float)(b + j);
	}
}
`

const consCL = `void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	TOKEN_S_t *s = RESERVE(PORT_s, 0);
	const int li = (int)get_local_id(0), ls = (int)get_local_size(0);
	float acc = 0;
#if CONTIG
	const int n = TOKEN_X_RATE / ls;
	for (int i = li * n; i < (li + 1) * n; i++) acc += x[i];
#else
	// four loads in flight per work-item, not one: a single running sum
	// would make the kernel wait for each load in turn
	float a1 = 0, a2 = 0, a3 = 0;
	int i = li;
	for (; i + 3 * ls < TOKEN_X_RATE; i += 4 * ls) {
		acc += x[i];
		a1 += x[i + ls];
		a2 += x[i + 2 * ls];
		a3 += x[i + 3 * ls];
	}
	for (; i < TOKEN_X_RATE; i += ls) acc += x[i];
	acc += a1 + a2 + a3;
#endif
	if (li == 0 || acc == -1.0f) s[0] = acc;
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

// kernelActor adds an actor with an OpenCL and a CUDA implementation of
// src; outputs of rate outRate in blocks (of rate/I tokens on a CPU when
// blocked, else 1).
func kernelActor(g *graph.Graph, name, src string, in, out []string, inRate, outRate int) *graph.Actor {
	return kernelActorI(g, name, src, in, out, inRate, outRate, 0)
}

func kernelActorI(g *graph.Graph, name, src string, in, out []string, inRate, outRate, items int) *graph.Actor {
	pre := "#define CONTIG 0\n"
	if contig {
		pre = "#define CONTIG 1\n"
	}
	a := g.AddActor(name,
		graph.WithImpl(graph.Impl{Kind: graph.ImplOpenCL, Source: name + ".cl", Func: pre + src}),
		graph.WithImpl(graph.Impl{Kind: graph.ImplCUDA, Source: name + ".cu", Func: pre + src}))
	for _, p := range in {
		a.AddPort(p, graph.In, f32t, graph.SDF(inRate), "")
	}
	for _, p := range out {
		blk := 1
		if contig && items > 0 && outRate%items == 0 {
			blk = outRate / items
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

// benchBackends runs f as one sub-benchmark per kernel backend, on its
// benchmark device: for OpenCL SLUICE_OPENCL_DEVICE or the first GPU (else
// the first device), for CUDA the first device.
func benchBackends(b *testing.B, f func(b *testing.B, id string, d device.Device, q device.Queue)) {
	for _, be := range kernelBackends {
		b.Run(be.name, func(b *testing.B) {
			ids := be.devices(b)
			id := ids[0]
			if be.name == "opencl" && os.Getenv("SLUICE_OPENCL_DEVICE") == "" {
				for _, r := range device.Discover(context.Background()) {
					for _, di := range r.Devices {
						if r.Backend == "opencl" && di.Kind == device.GPU {
							id = di.ID
							break
						}
					}
				}
			}
			d, err := device.Open(context.Background(), id)
			if err != nil {
				b.Fatal(err)
			}
			q, err := d.NewQueue()
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = q.Release(); _ = d.Close() }()
			contig = d.Info().Kind == device.CPU
			b.Logf("device %s (%s)", d.Info(), d.Info().Kind)
			f(b, id, d, q)
		})
	}
}

func runFor(b *testing.B, g *graph.Graph, opts Options) time.Duration {
	b.Helper()
	if opts.tune == (tuning{}) {
		opts.tune = envTuning()
	}
	st, err := Run(context.Background(), g, opts)
	if err != nil {
		b.Fatal(err)
	}
	return st.Elapsed
}

// rawLoop enqueues n commands from op back to back, then waits for all of
// them once.
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
// device's own buffer copy of the same bytes in the same chunks (a copy
// reads and writes each byte once, as the channel's producer and consumer
// do).
func BenchmarkDeviceChannelVsCopy(b *testing.B) {
	benchBackends(b, benchDeviceChannel)
}

func benchDeviceChannel(b *testing.B, id string, d device.Device, q device.Queue) {
	sh := shapeOf(d)
	if d.Info().Kind == device.CPU {
		benchDeviceChannelShape(b, id, d, q, sh)
		return
	}
	// on a GPU also 64 MiB invocations: 16 MiB take the H100 about 15 µs,
	// as long as the host's enqueueing of one invocation
	// 8 GiB, so that the rounds' first captures and the run's start weigh
	// little (2 GiB of 16 MiB are only 128 rounds)
	for _, g := range []int{sh.G, 4 * sh.G} {
		s := sh
		s.G = g
		s.total = 8 << 30
		b.Run(device.Size(s.chunk()), func(b *testing.B) { benchDeviceChannelShape(b, id, d, q, s) })
	}
}

func benchDeviceChannelShape(b *testing.B, id string, d device.Device, q device.Queue, sh benchShape) {
	chunk, total := sh.chunk(), sh.total
	// The copies cycle over two regions as large as the channel's ring.
	src, err := d.Alloc(4*chunk, device.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := d.Alloc(4*chunk, device.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Release()
	defer dst.Release()
	pl := func() *graph.Placement { return kernelAt(id, sh.G, sh.I) }
	var ch, cp, pair time.Duration
	pairLoop := kernelPair(b, d, q, sh, src)
	run := func(fires int64) time.Duration {
		g := prodCons("ring", sh, os.Getenv("BENCH_NOSINK") != "")
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"prod": pl(), "cons": pl()}}
		if os.Getenv("BENCH_NOSINK") != "" {
			m.Actors["sink"] = kernelAt(id, 1, 1)
		}
		return runFor(b, g, Options{Iterations: fires / int64(sh.G), NoGraphs: os.Getenv("BENCH_NOGRAPHS") != "", DeviceDepth: envInt("BENCH_DEPTH", 0), Mapping: m})
	}
	run(4 * int64(sh.G)) // warm-up: memory touched, code loaded
	for b.Loop() {
		ch = run(sh.fires())
		i := int64(0)
		cp = rawLoop(b, q, int(total/chunk), func() (device.Event, error) {
			i++
			return q.Copy(dst, i%4*chunk, src, i%4*chunk, chunk)
		})
		pair = pairLoop(int(total / chunk))
	}
	b.SetBytes(total)
	b.ReportMetric(gbps(total, ch), "channel-GB/s")
	b.ReportMetric(gbps(total, cp), "copy-GB/s")
	b.ReportMetric(gbps(total, pair), "kernels-GB/s")
	b.ReportMetric(cp.Seconds()/ch.Seconds(), "channel/copy")
	b.ReportMetric(pair.Seconds()/ch.Seconds(), "channel/kernels")
}

// prodCons is the channel benchmarks' graph: the producer kernel actor
// prod → a ring of BENCH_RINGX invocations (default 4) → the consumer cons
// → a sink of one token per firing through a FIFO of BENCH_SINKX
// invocations: a Go actor, or with kernelSink an empty kernel actor (no
// host traffic; map it).
func prodCons(name string, sh benchShape, kernelSink bool) *graph.Graph {
	g := graph.New(name)
	kernelActorI(g, "prod", prodCL, nil, []string{"y"}, 0, sh.rate, sh.I)
	kernelActorI(g, "cons", consCL, []string{"x"}, []string{"s"}, sh.rate, 1, 0)
	if kernelSink {
		kernelActorI(g, "sink", "void FIRE() {}\n", []string{"x"}, nil, sh.G, 0, 0)
	} else {
		goActor(g, "sink", sh.G, 0)
	}
	g.JoinNames("prod.y", "cons.x", graph.Capacity(envInt("BENCH_RINGX", 4)*sh.G*sh.rate))
	g.JoinNames("cons.s", "sink.x", graph.Capacity(envInt("BENCH_SINKX", 4)*sh.G))
	return g
}

// kernelPair compiles the channel benchmark's producer and consumer
// kernels outside the runtime and returns a loop that launches them back to
// back on one queue, n times, on a buffer of four invocations (the
// producer writing window k mod 4, the consumer reading it): the same
// kernels with no channel around them, the floor the channel is measured
// against.
func kernelPair(b *testing.B, d device.Device, q device.Queue, sh benchShape, buf device.Buffer) func(n int) time.Duration {
	b.Helper()
	g := prodCons("pair", sh, false)
	comp := d.(device.ActorCompiler)
	compile := func(name string) device.ActorKernel {
		a := g.Actor(name)
		im, _ := a.Impl(graph.ImplKind(d.Info().Backend))
		ak, err := comp.CompileActor(context.Background(), a, &graph.Placement{WorkGroups: sh.G, WorkItems: sh.I}, im)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ak.Release() })
		return ak
	}
	prod, cons := compile("prod"), compile("cons")
	sums, err := d.Alloc(int64(4*sh.G*4), device.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sums.Release() })
	per := int64(sh.G * sh.rate) // tokens per invocation
	return func(n int) time.Duration {
		k := int64(0)
		var second bool
		return rawLoop(b, q, 2*n, func() (device.Event, error) {
			second = !second
			if second {
				k++
				if err := prod.Bind(prod.Fire(), []device.Window{{Buf: buf, Off: k % 4 * per}}); err != nil {
					return nil, err
				}
				return q.Launch(prod.Fire(), prod.Range(sh.G))
			}
			if err := cons.Bind(cons.Fire(), []device.Window{{Buf: buf, Off: k % 4 * per}, {Buf: sums, Off: k % 4 * int64(sh.G)}}); err != nil {
				return nil, err
			}
			return q.Launch(cons.Fire(), cons.Range(sh.G))
		})
	}
}

// Host → device channel (Go source → kernel) and device → host (kernel →
// Go sink) vs raw pinned write/read of the same bytes in the same chunks.
func BenchmarkHostChannelVsPinned(b *testing.B) {
	benchBackends(b, benchHostChannel)
}

func benchHostChannel(b *testing.B, id string, d device.Device, q device.Queue) {
	sh := shapeOf(d)
	chunk, total := sh.chunk(), sh.total
	// The raw copies cycle over pinned and device regions as large as the
	// channel's FIFO and staging slots.
	h, err := d.AllocHost(4 * chunk)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Release()
	buf, err := d.Alloc(4*chunk, device.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Release()
	pl := func() *graph.Placement { return kernelAt(id, sh.G, sh.I) }
	var up, down, w, r time.Duration
	capTok := 4 * sh.G * sh.rate
	runUp := func(fires int64) time.Duration {
		g := graph.New("up")
		goActor(g, "src", 0, sh.rate)
		kernelActorI(g, "cons", consCL, []string{"x"}, []string{"s"}, sh.rate, 1, 0)
		goActor(g, "sink", sh.G, 0)
		g.JoinNames("src.y", "cons.x", graph.Capacity(capTok))
		g.JoinNames("cons.s", "sink.x", graph.Capacity(4*sh.G))
		return runFor(b, g, Options{Iterations: fires / int64(sh.G), Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"cons": pl()}}})
	}
	runDown := func(fires int64) time.Duration {
		g := graph.New("down")
		kernelActorI(g, "prod", prodCL, nil, []string{"y"}, 0, sh.rate, sh.I)
		goActor(g, "sink", sh.rate, 0)
		g.JoinNames("prod.y", "sink.x", graph.Capacity(capTok))
		return runFor(b, g, Options{Iterations: fires, Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"prod": pl()}}})
	}
	runUp(4 * int64(sh.G))
	runDown(4 * int64(sh.G))
	for b.Loop() {
		up = runUp(sh.fires())
		down = runDown(sh.fires())
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

// Host → device → host in one run (Go source → copy kernel → Go sink): both
// directions at once, as an image pipeline moves its frames, against raw
// pinned writes and reads of the same chunks on two queues at once (the
// GPU's copy engines run the two directions concurrently) and one after
// the other. to-device-and-back/concurrent-raw near 1 means the channels
// overlap their two directions as a hand-written program does.
func BenchmarkHostRoundTrip(b *testing.B) {
	benchBackends(b, benchHostRoundTrip)
}

func benchHostRoundTrip(b *testing.B, id string, d device.Device, q device.Queue) {
	sh := shapeOf(d)
	chunk, total := sh.chunk(), sh.total
	hin, err := d.AllocHost(4 * chunk)
	if err != nil {
		b.Fatal(err)
	}
	defer hin.Release()
	hout, err := d.AllocHost(4 * chunk)
	if err != nil {
		b.Fatal(err)
	}
	defer hout.Release()
	buf, err := d.Alloc(8*chunk, device.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Release()
	q2, err := d.NewQueue()
	if err != nil {
		b.Fatal(err)
	}
	defer q2.Release()
	capTok := 4 * sh.G * sh.rate
	run := func(fires int64) time.Duration {
		g := graph.New("round-trip")
		goActor(g, "src", 0, sh.rate)
		kernelActorI(g, "cp", copyCL, []string{"x"}, []string{"y"}, sh.rate, sh.rate, sh.I)
		goActor(g, "sink", sh.rate, 0)
		g.JoinNames("src.y", "cp.x", graph.Capacity(capTok))
		g.JoinNames("cp.y", "sink.x", graph.Capacity(capTok))
		return runFor(b, g, Options{Iterations: fires, DeviceDepth: envInt("BENCH_DEPTH", 0),
			Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"cp": kernelAt(id, sh.G, sh.I)}}})
	}
	run(4 * int64(sh.G))
	n := int(total / chunk)
	var rt, both, serial time.Duration
	for b.Loop() {
		rt = run(sh.fires())
		if err := errors.Join(q.Finish(), q2.Finish()); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		for i := int64(0); i < int64(n); i++ {
			w, err := q.Write(buf, i%4*chunk, hin.Bytes()[i%4*chunk:(i%4+1)*chunk])
			if err != nil {
				b.Fatal(err)
			}
			w.Release()
			r, err := q2.Read(hout.Bytes()[i%4*chunk:(i%4+1)*chunk], buf, (4+i%4)*chunk)
			if err != nil {
				b.Fatal(err)
			}
			r.Release()
		}
		if err := errors.Join(q.Finish(), q2.Finish()); err != nil {
			b.Fatal(err)
		}
		both = time.Since(t0)
		i := int64(0)
		serial = rawLoop(b, q, n, func() (device.Event, error) {
			i++
			return q.Write(buf, i%4*chunk, hin.Bytes()[i%4*chunk:(i%4+1)*chunk])
		}) + rawLoop(b, q, n, func() (device.Event, error) {
			i++
			return q.Read(hout.Bytes()[i%4*chunk:(i%4+1)*chunk], buf, i%4*chunk)
		})
	}
	b.SetBytes(2 * total)
	b.ReportMetric(gbps(total, rt), "round-trip-GB/s")
	b.ReportMetric(gbps(total, both), "concurrent-raw-GB/s")
	b.ReportMetric(gbps(total, serial), "serial-raw-GB/s")
	b.ReportMetric(both.Seconds()/rt.Seconds(), "round-trip/concurrent-raw")
}

// Enqueue-ahead vs the callback baseline on a chain of small kernels
// (256 tokens, one firing per invocation, rings of 2 invocations).
func BenchmarkEnqueueAheadVsCallback(b *testing.B) {
	benchBackends(b, func(b *testing.B, id string, _ device.Device, _ device.Queue) { benchAheadVsCallback(b, id) })
}

func benchAheadVsCallback(b *testing.B, id string) {
	const small, fires = 256, 2000
	build := func() (*graph.Graph, *graph.Mapping) {
		g := graph.New("small")
		kernelActor(g, "k0", prodCL, nil, []string{"y"}, 0, small)
		kernelActor(g, "k1", copyCL, []string{"x"}, []string{"y"}, small, small)
		kernelActor(g, "k2", copyCL, []string{"x"}, []string{"y"}, small, small)
		kernelActor(g, "k3", consCL, []string{"x"}, []string{"s"}, small, 1)
		goActor(g, "sink", 1, 0)
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
	benchBackends(b, func(b *testing.B, id string, _ device.Device, _ device.Queue) { benchSwapVsCopy(b, id) })
}

func benchSwapVsCopy(b *testing.B, id string) {
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

// chainGraph is a chain of n trivial kernel actors (small tokens per
// firing, G = 1, rings of 2 invocations) ending in a Go sink of 1 token per
// iteration.
func chainGraph(id string, n, small int) (*graph.Graph, *graph.Mapping) {
	g := graph.New("chain")
	m := &graph.Mapping{Actors: map[string]*graph.Placement{}}
	prev := ""
	for k := range n {
		name := fmt.Sprintf("k%d", k)
		switch {
		case k == 0:
			kernelActor(g, name, prodCL, nil, []string{"y"}, 0, small)
		case k == n-1:
			kernelActor(g, name, consCL, []string{"x"}, []string{"s"}, small, 1)
		default:
			kernelActor(g, name, copyCL, []string{"x"}, []string{"y"}, small, small)
		}
		if prev != "" {
			g.JoinNames(prev+".y", name+".x", graph.Capacity(2*small))
		}
		prev = name
		m.Actors[name] = kernelAt(id, 1, 32)
	}
	goActor(g, "sink", 1, 0)
	g.JoinNames(prev+".s", "sink.x")
	return g, m
}

// A chain of 10 trivial kernel actors (256 tokens each, one firing per
// invocation): the time per iteration (10 firings) and per firing, with
// each iteration replayed as a CUDA Graph (the default; OpenCL has none)
// and with Options.NoGraphs.
func BenchmarkChain10(b *testing.B) {
	benchBackends(b, func(b *testing.B, id string, _ device.Device, _ device.Queue) {
		const fires = 2000
		g, m := chainGraph(id, 10, 256)
		runFor(b, g, Options{Iterations: 10, Mapping: m})
		var el, ng, el16, ng16 time.Duration
		for b.Loop() {
			g, m := chainGraph(id, 10, 256)
			el = runFor(b, g, Options{Iterations: fires, Mapping: m})
			g, m = chainGraph(id, 10, 256)
			ng = runFor(b, g, Options{Iterations: fires, Mapping: m, NoGraphs: true})
			g, m = chainGraph(id, 10, 256)
			el16 = runFor(b, g, Options{Iterations: fires, Mapping: m, DeviceDepth: 16})
			g, m = chainGraph(id, 10, 256)
			ng16 = runFor(b, g, Options{Iterations: fires, Mapping: m, DeviceDepth: 16, NoGraphs: true})
		}
		b.ReportMetric(float64(el16.Nanoseconds())/fires/1e3, "depth16-µs/iteration")
		b.ReportMetric(float64(ng16.Nanoseconds())/fires/1e3, "depth16-no-graphs-µs/iteration")
		b.ReportMetric(float64(el.Nanoseconds())/fires/1e3, "µs/iteration")
		b.ReportMetric(float64(el.Nanoseconds())/fires/10/1e3, "µs/firing")
		b.ReportMetric(float64(ng.Nanoseconds())/fires/1e3, "no-graphs-µs/iteration")
		b.ReportMetric(el.Seconds()/ng.Seconds(), "graphs/no-graphs")
	})
}

// spinCL is a producer whose firings compute for a while (a dependent
// chain of SPIN multiply-adds per work-item): one work-group keeps one
// multiprocessor busy for a fixed time.
const spinCL = `void FIRE() {
	FOREACH(b IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, b);
		float v = (float)b;
		for (int i = 0; i < SPIN; i++) v = v * 0.9999f + 1.0f;
		for (int j = 0; j < BLOCK_Y_SIZE; j++) y[j] = v;
	}
}
`

// Independent actors on one device: two producers of one work-group each,
// every firing ~0.1–0.3 ms of arithmetic, each feeding its own Go sink. In
// a round the second launch touches nothing the first does, so it goes to
// a second stream (CUDA) and the two run concurrently; tuning.noFork puts both
// on one stream, one after the other. OpenCL has one queue for kernels:
// the ratio there is ~1.
func BenchmarkIndependentActors(b *testing.B) {
	benchBackends(b, func(b *testing.B, id string, _ device.Device, _ device.Queue) {
		const fires = 200
		spin := 100000 // ~0.1–0.3 ms on a GPU's multiprocessor
		if contig {    // a CPU device: each work-item on a core of its own
			spin = 500
		}
		src := fmt.Sprintf("#define SPIN %d\n", spin) + spinCL
		run := func(noFork bool) time.Duration {
			g := graph.New("two")
			m := &graph.Mapping{Actors: map[string]*graph.Placement{}}
			for _, n := range []string{"a", "b"} {
				kernelActorI(g, n, src, nil, []string{"y"}, 0, 256, 256)
				goActor(g, n+"sink", 256, 0)
				g.JoinNames(n+".y", n+"sink.x")
				m.Actors[n] = kernelAt(id, 1, 256)
			}
			t := envTuning()
			t.noFork = noFork
			return runFor(b, g, Options{Iterations: fires, Mapping: m, tune: t})
		}
		run(false)
		var fork, serial time.Duration
		for b.Loop() {
			fork = run(false)
			serial = run(true)
		}
		b.ReportMetric(float64(fork.Microseconds())/fires, "concurrent-µs/iteration")
		b.ReportMetric(float64(serial.Microseconds())/fires, "one-stream-µs/iteration")
		b.ReportMetric(serial.Seconds()/fork.Seconds(), "one-stream/concurrent")
	})
}

// Two GPUs: a producer kernel on the first CUDA device and a consumer on
// the second, 16 and 64 MiB per invocation: the channel as a peer ring
// (device-to-device copies) and staged through host memory
// (tuning.noPeer), against raw peer copies of the same chunks on one queue.
func BenchmarkTwoGPUChannel(b *testing.B) {
	ids := cudaDevices(b)
	if len(ids) < 2 {
		b.Skipf("%d CUDA device(s): the two-GPU channel needs two", len(ids))
	}
	d0, err := device.Open(context.Background(), ids[0])
	if err != nil {
		b.Fatal(err)
	}
	d1, err := device.Open(context.Background(), ids[1])
	if err != nil {
		b.Fatal(err)
	}
	q, err := d0.NewQueue()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = q.Release(); _ = d0.Close(); _ = d1.Close() }()
	direct, err := d0.(device.PeerEnabler).EnablePeer(d1)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s → %s, direct peer access: %v", d0.Info(), d1.Info(), direct)
	base := shapeOf(d0)
	for _, g := range []int{base.G, 4 * base.G} {
		sh := base
		sh.G, sh.total = g, 8<<30
		chunk := sh.chunk()
		b.Run(device.Size(chunk), func(b *testing.B) {
			src, err := d0.Alloc(4*chunk, device.ReadWrite)
			if err != nil {
				b.Fatal(err)
			}
			dst, err := d1.Alloc(4*chunk, device.ReadWrite)
			if err != nil {
				b.Fatal(err)
			}
			defer src.Release()
			defer dst.Release()
			run := func(fires int64, noPeer bool) time.Duration {
				g := prodCons("two", sh, false)
				m := &graph.Mapping{Actors: map[string]*graph.Placement{"prod": kernelAt(ids[0], sh.G, sh.I), "cons": kernelAt(ids[1], sh.G, sh.I)}}
				t := envTuning()
				t.noPeer = noPeer
				return runFor(b, g, Options{Iterations: fires / int64(sh.G), Mapping: m, tune: t})
			}
			run(4*int64(sh.G), false)
			run(4*int64(sh.G), true)
			var peer, host, raw time.Duration
			pc := q.(device.PeerCopier)
			for b.Loop() {
				peer = run(sh.fires(), false)
				host = run(sh.fires()/4, true) * 4 // slower: a quarter of the bytes
				i := int64(0)
				raw = rawLoop(b, q, int(sh.total/chunk), func() (device.Event, error) {
					i++
					return pc.CopyPeer(dst, i%4*chunk, src, i%4*chunk, chunk)
				})
			}
			b.ReportMetric(gbps(sh.total, peer), "peer-channel-GB/s")
			b.ReportMetric(gbps(sh.total, host), "host-staged-GB/s")
			b.ReportMetric(gbps(sh.total, raw), "peer-copy-GB/s")
			b.ReportMetric(raw.Seconds()/peer.Seconds(), "peer-channel/peer-copy")
			b.ReportMetric(host.Seconds()/peer.Seconds(), "peer/host-staged")
		})
	}
}

// envTuning returns the benchmarks' switches from the environment
// (BENCH_NOFORK, BENCH_NOMAPPED, BENCH_ROUNDPER, BENCH_NOSPREAD): runFor
// runs with them unless the benchmark set its own.
func envTuning() tuning {
	return tuning{noFork: os.Getenv("BENCH_NOFORK") != "", noMapped: os.Getenv("BENCH_NOMAPPED") != "",
		roundPer: envInt("BENCH_ROUNDPER", 0), noSpread: os.Getenv("BENCH_NOSPREAD") != ""}
}

// envInt reads a benchmark knob (BENCH_RINGX, BENCH_SINKX: the on-device
// channel's ring and sink FIFO in invocations; BENCH_DEPTH: its
// DeviceDepth; BENCH_ROUNDPER: invocations per actor in a round, 0 =
// the runtime's choice; BENCH_NOSINK=1 makes its sink an empty kernel actor, so the
// run moves nothing to the host).
func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return v
	}
	return def
}
