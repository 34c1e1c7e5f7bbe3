// Command cluster measures sluice across worker processes on one host,
// over loopback: the bandwidth of a cross-machine channel against a raw
// TCP stream between the same two processes, the hop latency of a
// cross-machine channel (a token going client → worker → client around a
// loop), and an embarrassingly parallel graph (a stateless actor of about
// 1 ms per firing, one copy per worker) across 1, 2 and 4 worker
// processes.
//
//	go run ./bench/cluster -workers 1,2,4 -firings 4000 -json
//	go run ./bench/cluster -cpus 2,4,16 -workers '' -json
//	go run ./bench/cluster -workers '' -hops 0 -firing 1024 -window 65536 -bandwidth 268435456 -rounds 5
//	go run ./bench/cluster -workers '' -hops 0 -bandwidth 0 -latency-flush 0s,100us,500us,1ms,2ms,-1ns
//
// It starts an in-process broker on 127.0.0.1 and the workers as child
// processes of itself (-role worker). With -cpus it runs all of that once
// per core count in a child confined to that many CPUs (GOMAXPROCS and
// affinity; the workers inherit both) and prints one row per count.
//
// Bandwidth: -rounds times, alternating which goes first, a graph moves
// -bandwidth bytes from a source actor on the client to a sink actor on a
// worker through a channel of -window bytes (direct TCP, or NATS with
// -transport nats), and the client writes as many bytes to the same
// worker process over a plain TCP connection in 1 MiB writes, read there
// in 1 MiB reads. It reports the medians and the median of the per-round
// ratios. Each worker runs its actor on its own CPU pool, so N workers
// need N free cores to scale: run it on a host with at least 2×N cores
// (the client and broker need some too). -firing sets the bandwidth test's
// firing size (1024: the small firings that batching packs into chunks),
// -flush the cross-machine channels' flush timeout.
//
// Flush latency: for each timeout of -latency-flush, a source on the
// client sleeps -latency-gap before each 1 KiB firing (slower than any
// batch fills) that goes through an echo actor on a worker and back to a
// sink on the client, in channels of 64 firings; it reports the median and
// 99th percentile of the time from a firing's emission to its return.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/bench/internal/cpus"
	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

var cost = flag.Duration("cost", time.Millisecond, "time one firing of the parallel actor spins")

func init() {
	// Registered in both roles: the worker resolves them by name.
	runtime.RegisterFunc("bench.spin", runtime.FireFunc(spin))
	runtime.RegisterFunc("bench.echo", runtime.FireFunc(func(f *runtime.Firing) error {
		copy(f.Out(0), f.In(0))
		return nil
	}))
	// The bandwidth test's sink takes its window and leaves the bytes
	// alone, as the raw TCP reference's reader does.
	runtime.RegisterFunc("bench.discard", runtime.FireFunc(func(*runtime.Firing) error { return nil }))
}

// spin adds 1 to every token and spins until the firing took -cost.
func spin(f *runtime.Firing) error {
	t0 := time.Now()
	in, out := runtime.Input[float32](f, 0), runtime.Output[float32](f, 0)
	for i, x := range in {
		out[i] = x + 1
	}
	var acc float64
	for time.Since(t0) < *cost {
		for i := 0; i < 256; i++ {
			acc += math.Sqrt(float64(i))
		}
	}
	if acc < 0 {
		out[0] = float32(acc)
	}
	return nil
}

type result struct {
	Workers     int     `json:"workers"`
	Firings     int64   `json:"firings"`
	Seconds     float64 `json:"seconds"`
	FiringsPerS float64 `json:"firings_per_s"`
	Speedup     float64 `json:"speedup"`
	Efficiency  float64 `json:"efficiency"`
}

// bandwidth compares a cross-machine channel with a raw TCP stream
// between the same two processes.
type bandwidth struct {
	Bytes  int64 `json:"bytes"`
	Window int   `json:"window_bytes"`
	Rounds int   `json:"rounds"`
	// Medians over the rounds, in GB/s (1e9 bytes per second).
	ChannelGBs float64 `json:"channel_gb_s"`
	RawGBs     float64 `json:"raw_tcp_gb_s"`
	// Ratio is the median of the rounds' channel/raw ratios.
	Ratio    float64   `json:"ratio"`
	RatioMin float64   `json:"ratio_min"`
	RatioMax float64   `json:"ratio_max"`
	Ratios   []float64 `json:"ratios"`
}

type report struct {
	Cores      int        `json:"cores"`
	GoMaxProcs int        `json:"gomaxprocs"`
	Cost       string     `json:"cost"`
	Transport  string     `json:"transport"`
	Bandwidth  *bandwidth `json:"bandwidth,omitempty"`
	Parallel   []result   `json:"parallel"`
	// HopMicros is half the round trip client → worker → client of one
	// 4-byte token; LocalHopMicros the same loop with the echo actor local.
	HopMicros      float64 `json:"hop_us"`
	LocalHopMicros float64 `json:"local_hop_us"`
	// FlushLatency is the round trip of a slow stream's firings per
	// flush timeout (-latency-flush).
	FlushLatency []flushLatency `json:"flush_latency,omitempty"`
}

// flushLatency is a slow stream's round trip client → worker → client
// with one flush timeout.
type flushLatency struct {
	Flush        string  `json:"flush"`
	MedianMicros float64 `json:"median_us"`
	P99Micros    float64 `json:"p99_us"`
}

func main() {
	var (
		role      = flag.String("role", "", "internal: worker")
		brokerURL = flag.String("broker", "", "internal: the broker a worker joins")
		name      = flag.String("name", "", "internal: the worker's name")
		rawListen = flag.String("raw-listen", "", "internal: where a worker takes raw TCP streams")
		workers   = flag.String("workers", "1,2,4", "worker counts to measure the parallel graph with ('' skips it)")
		firings   = flag.Int64("firings", 4000, "firings of the parallel actor in all, per worker count")
		rate      = flag.Int("rate", 256, "f32 tokens per firing")
		hops      = flag.Int64("hops", 2000, "round trips for the hop latency (at least 2; 0 skips it)")
		bw        = flag.Int64("bandwidth", 1<<30, "bytes per round of the bandwidth test (0 skips it)")
		window    = flag.Int("window", 1<<20, "the bandwidth test's channel capacity in bytes")
		rounds    = flag.Int("rounds", 5, "rounds of the bandwidth test")
		transport = flag.String("transport", "tcp", "data path: tcp (direct streams) or nats")
		firing    = flag.Int("firing", 256<<10, "the bandwidth test's bytes per firing (a multiple of 4)")
		flush     = flag.Duration("flush", 0, "cross-machine channels' flush timeout (0: the default, negative: none)")
		latFlush  = flag.String("latency-flush", "", "flush timeouts to measure a slow stream's round trip with ('' skips it)")
		latGap    = flag.Duration("latency-gap", 200*time.Microsecond, "the slow stream's source sleeps this long before each firing")
		latN      = flag.Int("latency-firings", 2000, "firings of the slow stream per flush timeout")
		cpuList   = flag.String("cpus", "", "comma-separated core counts (GOMAXPROCS and affinity), one row each; empty: as started")
		asJSON    = flag.Bool("json", false, "print one JSON object (one per line with -cpus)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *role == "worker" {
		if err := runWorker(ctx, *brokerURL, *name, *transport, *rawListen); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuList != "" {
		if err := perCores(*cpuList, *asJSON); err != nil {
			fmt.Fprintln(os.Stderr, "bench/cluster:", err)
			os.Exit(1)
		}
		return
	}
	cfg := config{workers: *workers, firings: *firings, rate: *rate, hops: *hops, bytes: *bw,
		window: *window, rounds: *rounds, transport: *transport, firing: *firing, flush: *flush,
		latFlush: *latFlush, latGap: *latGap, latN: *latN}
	rep, err := measure(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/cluster:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return
	}
	printReport(rep)
}

// perCores runs this command once per core count of list in a child
// confined to that many CPUs, with the same flags but -cpus, and prints
// each child's report as one row.
func perCores(list string, asJSON bool) error {
	counts, err := cpus.ParseList(list)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var args []string
	flag.Visit(func(f *flag.Flag) {
		if f.Name != "cpus" && f.Name != "json" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	args = append(args, "-json")
	for _, n := range counts {
		out, err := cpus.Output(n, exe, args...)
		if err != nil {
			return fmt.Errorf("%d cores: %w", n, err)
		}
		var rep report
		if err := json.Unmarshal(out, &rep); err != nil {
			return fmt.Errorf("%d cores: the child printed %q: %w", n, out, err)
		}
		if asJSON {
			b, _ := json.Marshal(rep)
			fmt.Println(string(b))
			continue
		}
		printReport(&rep)
	}
	return nil
}

func printReport(rep *report) {
	fmt.Printf("%d cores (GOMAXPROCS %d), data over %s\n", rep.Cores, rep.GoMaxProcs, rep.Transport)
	if b := rep.Bandwidth; b != nil {
		fmt.Printf("  bandwidth: channel %.2f GB/s, raw TCP %.2f GB/s: ratio %.2f (median of %d rounds; %.2f to %.2f), %d MiB per round, window %d KiB\n",
			b.ChannelGBs, b.RawGBs, b.Ratio, b.Rounds, b.RatioMin, b.RatioMax, b.Bytes>>20, b.Window>>10)
	}
	if rep.HopMicros > 0 {
		fmt.Printf("  hop latency: %.1f µs across a cross-machine channel, %.2f µs locally\n", rep.HopMicros, rep.LocalHopMicros)
	}
	for _, l := range rep.FlushLatency {
		fmt.Printf("  flush %s: a slow stream's round trip %.0f µs median, %.0f µs 99th percentile\n", l.Flush, l.MedianMicros, l.P99Micros)
	}
	for _, r := range rep.Parallel {
		fmt.Printf("  %d workers: %d firings of %s in %.3f s = %.0f firings/s, speedup %.2f (efficiency %.2f)\n", r.Workers, r.Firings, rep.Cost, r.Seconds, r.FiringsPerS, r.Speedup, r.Efficiency)
	}
}

func runWorker(ctx context.Context, url, name, transport, rawListen string) error {
	o := cluster.WorkerOptions{Broker: url, Name: name,
		Devices: []device.Info{{ID: "cpu", Backend: "cpu", Name: "host cpu", Kind: device.CPU, ComputeUnits: goruntime.NumCPU()}}}
	if transport == "tcp" {
		o.DataListen = "127.0.0.1:0"
	}
	if rawListen != "" {
		l, err := net.Listen("tcp", rawListen)
		if err != nil {
			return err
		}
		defer l.Close()
		go rawSink(l)
	}
	w, err := cluster.StartWorker(ctx, o)
	if err != nil {
		return err
	}
	defer w.Close()
	<-ctx.Done()
	return nil
}

// rawSink takes raw TCP streams on l: it reads each in 1 MiB reads until
// its writer closes, and answers with the number of bytes it read.
func rawSink(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			buf := make([]byte, rawBuf)
			var n uint64
			for {
				k, err := c.Read(buf)
				n += uint64(k)
				if err != nil {
					break
				}
			}
			_, _ = c.Write(binary.LittleEndian.AppendUint64(nil, n))
		}()
	}
}

// rawBuf is the raw stream's write and read size.
const rawBuf = 1 << 20

// config is what one measurement run does.
type config struct {
	workers        string
	firings        int64
	rate           int
	hops           int64
	bytes          int64
	window, rounds int
	transport      string
	firing         int
	flush          time.Duration
	latFlush       string
	latGap         time.Duration
	latN           int
}

func measure(ctx context.Context, cfg config) (*report, error) {
	b, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "bench", Listen: "127.0.0.1:0"})
	if err != nil {
		return nil, err
	}
	defer b.Shutdown()
	rep := &report{Cores: goruntime.NumCPU(), GoMaxProcs: goruntime.GOMAXPROCS(0), Cost: cost.String(), Transport: cfg.transport}
	if cfg.bytes > 0 {
		if rep.Bandwidth, err = measureBandwidth(ctx, b.ClientURL(), cfg); err != nil {
			return nil, fmt.Errorf("bandwidth: %w", err)
		}
	}
	if hops := cfg.hops; hops > 0 {
		hops = max(hops, 2)
		if rep.HopMicros, err = hopLatency(ctx, b.ClientURL(), hops, cfg.transport, true); err != nil {
			return nil, fmt.Errorf("hop latency: %w", err)
		}
		if rep.LocalHopMicros, err = hopLatency(ctx, b.ClientURL(), hops, cfg.transport, false); err != nil {
			return nil, fmt.Errorf("local hop latency: %w", err)
		}
	}
	if cfg.latFlush != "" {
		if rep.FlushLatency, err = measureFlushLatency(ctx, b.ClientURL(), cfg); err != nil {
			return nil, fmt.Errorf("flush latency: %w", err)
		}
	}
	if strings.TrimSpace(cfg.workers) == "" {
		return rep, nil
	}
	var base float64
	for _, s := range strings.Split(cfg.workers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-workers %q: expected positive counts", cfg.workers)
		}
		r, err := parallel(ctx, b.ClientURL(), n, cfg.firings, cfg.rate, cfg.transport)
		if err != nil {
			return nil, fmt.Errorf("%d workers: %w", n, err)
		}
		if base == 0 {
			base = r.FiringsPerS / float64(n)
		}
		r.Speedup = r.FiringsPerS / base
		r.Efficiency = r.Speedup / float64(n)
		rep.Parallel = append(rep.Parallel, r)
	}
	return rep, nil
}

// measureBandwidth runs the channel and the raw stream side by side,
// cfg.rounds times each, alternating which goes first.
func measureBandwidth(ctx context.Context, url string, cfg config) (*bandwidth, error) {
	if cfg.rounds < 1 || cfg.window < 4 {
		return nil, fmt.Errorf("expected -rounds >= 1 and -window >= 4 bytes, found %d and %d", cfg.rounds, cfg.window)
	}
	cl, err := cluster.Connect(ctx, url, cluster.Credentials{})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	rawAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	stop, err := startWorkers(ctx, cl, url, 1, cfg.transport, "-raw-listen", rawAddr)
	if err != nil {
		return nil, err
	}
	defer stop()
	res := &bandwidth{Bytes: cfg.bytes, Window: cfg.window, Rounds: cfg.rounds}
	var ch, raw []float64
	for i := range cfg.rounds {
		var c, r time.Duration
		if i%2 == 0 {
			if r, err = rawStream(ctx, rawAddr, cfg.bytes); err == nil {
				c, err = channelStream(ctx, cl, cfg)
			}
		} else if c, err = channelStream(ctx, cl, cfg); err == nil {
			r, err = rawStream(ctx, rawAddr, cfg.bytes)
		}
		if err != nil {
			return nil, err
		}
		ch = append(ch, float64(cfg.bytes)/c.Seconds()/1e9)
		raw = append(raw, float64(cfg.bytes)/r.Seconds()/1e9)
		res.Ratios = append(res.Ratios, r.Seconds()/c.Seconds())
	}
	res.ChannelGBs, res.RawGBs, res.Ratio = median(ch), median(raw), median(res.Ratios)
	res.RatioMin, res.RatioMax = slices.Min(res.Ratios), slices.Max(res.Ratios)
	return res, nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// freeAddr returns a loopback address with a port free now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// rawStream writes n bytes to the worker's raw sink at addr in 1 MiB
// writes and returns the time until the sink confirmed it read them all.
func rawStream(ctx context.Context, addr string, n int64) (time.Duration, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("raw TCP: %w", err)
	}
	defer c.Close()
	defer context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })()
	// Written bytes: pages never written may all be the kernel's one zero
	// page, always in cache, which would flatter the reference.
	buf := make([]byte, rawBuf)
	for i := range buf {
		buf[i] = byte(i)
	}
	t0 := time.Now()
	for left := n; left > 0; left -= rawBuf {
		if _, err := c.Write(buf[:min(left, rawBuf)]); err != nil {
			return 0, fmt.Errorf("raw TCP: %w", err)
		}
	}
	_ = c.(*net.TCPConn).CloseWrite()
	var ack [8]byte
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return 0, fmt.Errorf("raw TCP: waiting for the sink's count: %w", err)
	}
	d0 := time.Since(t0)
	if got := binary.LittleEndian.Uint64(ack[:]); got != uint64(n) {
		return 0, fmt.Errorf("raw TCP: the sink read %d bytes, %d were sent", got, n)
	}
	return d0, nil
}

// channelStream runs src → sink with the sink on worker w1 and returns
// the time from the source's first firing until the run ended.
func channelStream(ctx context.Context, cl *cluster.Client, cfg config) (time.Duration, error) {
	firingBytes := int64(cfg.firing)
	if firingBytes < 4 || firingBytes%4 != 0 {
		return 0, fmt.Errorf("-firing %d: expected a positive multiple of 4 bytes", firingBytes)
	}
	f32 := graph.MustTokenType("f32")
	tok := int(firingBytes / 4)
	g := graph.New("bandwidth")
	var t0 time.Time
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(*runtime.Firing) error {
		if t0.IsZero() {
			t0 = time.Now()
		}
		return nil
	})))
	sink := g.AddActor("sink", graph.WithImpl(graph.Impl{Kind: graph.ImplGo, Source: "bench.discard"}))
	g.Join(src.AddPort("y", graph.Out, f32, graph.SDF(tok), ""), sink.AddPort("x", graph.In, f32, graph.SDF(tok), ""),
		graph.Capacity(max(tok, cfg.window/4)))
	if cfg.bytes%firingBytes != 0 {
		return 0, fmt.Errorf("-bandwidth %d: expected a multiple of %d bytes", cfg.bytes, firingBytes)
	}
	iters := cfg.bytes / firingBytes
	opts := runtime.Options{Iterations: iters,
		Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"sink": {Device: "worker:w1/cpu"}}},
		Remote:  cluster.NewExecutor(cl, cluster.ExecutorOptions{Transport: cfg.transport, Flush: cfg.flush})}
	st, err := runtime.Run(ctx, g, opts)
	if err != nil {
		return 0, fmt.Errorf("channel: %w", err)
	}
	d := time.Since(t0)
	if a := st.Actor("sink"); a == nil || a.Firings != iters {
		return 0, fmt.Errorf("channel: the sink's firings: %+v, expected %d", a, iters)
	}
	return d, nil
}

// startWorkers starts n worker processes and waits until the tree sees them.
func startWorkers(ctx context.Context, cl *cluster.Client, url string, n int, transport string, extra ...string) (func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var cmds []*exec.Cmd
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Signal(os.Interrupt)
		}
		for _, c := range cmds {
			_ = c.Wait()
		}
	}
	for i := range n {
		args := append([]string{"-role", "worker", "-broker", url, "-name", fmt.Sprintf("w%d", i+1), "-transport", transport, "-cost", cost.String()}, extra...)
		c := exec.Command(exe, args...)
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ws, _ := cl.Workers(ctx)
		if len(ws) == n {
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("%d of %d workers joined within 20 s", len(ws), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// parallel runs src → split → n × spin (one per worker) → join → sink.
func parallel(ctx context.Context, url string, n int, firings int64, rate int, transport string) (result, error) {
	cl, err := cluster.Connect(ctx, url, cluster.Credentials{})
	if err != nil {
		return result{}, err
	}
	defer cl.Close()
	stop, err := startWorkers(ctx, cl, url, n, transport)
	if err != nil {
		return result{}, err
	}
	defer stop()
	f32 := graph.MustTokenType("f32")
	g := graph.New("parallel")
	var next float32
	var t0 time.Time // the first firing: placement and connection setup are not measured
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		if t0.IsZero() {
			t0 = time.Now()
		}
		for i, out := 0, runtime.Output[float32](f, 0); i < len(out); i++ {
			out[i] = next
			next++
		}
		return nil
	})))
	so := src.AddPort("y", graph.Out, f32, graph.SDF(n*rate), "")
	split := g.AddActor("split", graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		in := f.In(0)
		for i := range f.NumOut() {
			copy(f.Out(i), in[i*rate*4:(i+1)*rate*4])
		}
		return nil
	})))
	g.Join(so, split.AddPort("x", graph.In, f32, graph.SDF(n*rate), ""))
	join := g.AddActor("join", graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		out := f.Out(0)
		for i := range f.NumIn() {
			copy(out[i*rate*4:], f.In(i))
		}
		return nil
	})))
	var sum float64
	var got int64
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		for _, x := range runtime.Input[float32](f, 0) {
			sum += float64(x)
			got++
		}
		return nil
	})))
	g.Join(join.AddPort("y", graph.Out, f32, graph.SDF(n*rate), ""), sink.AddPort("x", graph.In, f32, graph.SDF(n*rate), ""))
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{}}
	for i := range n {
		w := g.AddActor(fmt.Sprintf("spin%d", i+1), graph.WithImpl(graph.Impl{Kind: graph.ImplGo, Source: "bench.spin"}))
		g.Join(split.AddPort(fmt.Sprintf("y%d", i), graph.Out, f32, graph.SDF(rate), ""), w.AddPort("x", graph.In, f32, graph.SDF(rate), ""))
		g.Join(w.AddPort("y", graph.Out, f32, graph.SDF(rate), ""), join.AddPort(fmt.Sprintf("x%d", i), graph.In, f32, graph.SDF(rate), ""))
		mp.Actors[w.Name] = &graph.Placement{Device: fmt.Sprintf("worker:w%d/cpu", i+1)}
	}
	iters := max(1, firings/int64(n))
	ex := cluster.NewExecutor(cl, cluster.ExecutorOptions{Transport: transport})
	if _, err := runtime.Run(ctx, g, runtime.Options{Iterations: iters, Mapping: mp, Remote: ex}); err != nil {
		return result{}, err
	}
	d := time.Since(t0)
	total := iters * int64(n)
	// Every token x of the ramp came back as x+1.
	m := float64(got)
	if want := m*(m-1)/2 + m; got != total*int64(rate) || math.Abs(sum-want) > 1e-6*want {
		return result{}, fmt.Errorf("sink got %d tokens summing to %g, want %d summing to %g", got, sum, total*int64(rate), want)
	}
	return result{Workers: n, Firings: total, Seconds: d.Seconds(), FiringsPerS: float64(total) / d.Seconds()}, nil
}

// hopLatency runs ping ⇄ echo with one token in the loop.
func hopLatency(ctx context.Context, url string, hops int64, transport string, remote bool) (float64, error) {
	g := graph.New("hop")
	u32 := graph.MustTokenType("u32")
	var seen uint32
	var t0, t1 time.Time // first and last firing: setup is not measured
	ping := g.AddActor("ping", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		if t0.IsZero() {
			t0 = time.Now()
		}
		t1 = time.Now()
		v := binary.LittleEndian.Uint32(f.In(0))
		if v != seen {
			return fmt.Errorf("token %d came back, expected %d", v, seen)
		}
		seen++
		binary.LittleEndian.PutUint32(f.Out(0), seen)
		return nil
	})))
	echo := g.AddActor("echo", graph.WithImpl(graph.Impl{Kind: graph.ImplGo, Source: "bench.echo"}))
	g.Join(ping.AddPort("y", graph.Out, u32, graph.SDF(1), ""), echo.AddPort("x", graph.In, u32, graph.SDF(1), ""), graph.Capacity(1))
	g.Join(echo.AddPort("y", graph.Out, u32, graph.SDF(1), ""), ping.AddPort("x", graph.In, u32, graph.SDF(1), ""), graph.Capacity(1), graph.Initial(1))
	opts := runtime.Options{Iterations: hops}
	if remote {
		cl, err := cluster.Connect(ctx, url, cluster.Credentials{})
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		stop, err := startWorkers(ctx, cl, url, 1, transport)
		if err != nil {
			return 0, err
		}
		defer stop()
		opts.Mapping = &graph.Mapping{Actors: map[string]*graph.Placement{"echo": {Device: "worker:w1/cpu"}}}
		opts.Remote = cluster.NewExecutor(cl, cluster.ExecutorOptions{Transport: transport})
	}
	if _, err := runtime.Run(ctx, g, opts); err != nil {
		return 0, err
	}
	// hops-1 round trips between the first and the last firing.
	return float64(t1.Sub(t0).Nanoseconds()) / 1e3 / float64(hops-1) / 2, nil
}

// measureFlushLatency runs the slow stream once per flush timeout of
// cfg.latFlush.
func measureFlushLatency(ctx context.Context, url string, cfg config) ([]flushLatency, error) {
	cl, err := cluster.Connect(ctx, url, cluster.Credentials{})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	stop, err := startWorkers(ctx, cl, url, 1, cfg.transport)
	if err != nil {
		return nil, err
	}
	defer stop()
	var out []flushLatency
	for _, f := range strings.Split(cfg.latFlush, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("-latency-flush %q: %w", f, err)
		}
		lat, err := slowStream(ctx, cl, cfg, d)
		if err != nil {
			return nil, fmt.Errorf("flush %s: %w", d, err)
		}
		slices.Sort(lat)
		out = append(out, flushLatency{Flush: d.String(), MedianMicros: lat[len(lat)/2], P99Micros: lat[len(lat)*99/100]})
	}
	return out, nil
}

// slowStream sends cfg.latN firings of 1 KiB, one every cfg.latGap, from
// the client through an echo actor on worker w1 and back, and returns each
// firing's round trip in µs.
func slowStream(ctx context.Context, cl *cluster.Client, cfg config, flush time.Duration) ([]float64, error) {
	const tok = 128 // u64 tokens: 1 KiB a firing
	u64 := graph.MustTokenType("u64")
	g := graph.New("slow")
	var lat []float64
	start := time.Now()
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		time.Sleep(cfg.latGap) // a slow producer, idle in between
		binary.LittleEndian.PutUint64(f.Out(0), uint64(time.Since(start)))
		return nil
	})))
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		sent := time.Duration(binary.LittleEndian.Uint64(f.In(0)))
		lat = append(lat, float64(time.Since(start)-sent)/1e3)
		return nil
	})))
	echo := g.AddActor("echo", graph.WithImpl(graph.Impl{Kind: graph.ImplGo, Source: "bench.echo"}))
	g.Join(src.AddPort("y", graph.Out, u64, graph.SDF(tok), ""), echo.AddPort("x", graph.In, u64, graph.SDF(tok), ""), graph.Capacity(64*tok))
	g.Join(echo.AddPort("y", graph.Out, u64, graph.SDF(tok), ""), sink.AddPort("x", graph.In, u64, graph.SDF(tok), ""), graph.Capacity(64*tok))
	opts := runtime.Options{Iterations: int64(cfg.latN),
		Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"echo": {Device: "worker:w1/cpu"}}},
		Remote:  cluster.NewExecutor(cl, cluster.ExecutorOptions{Transport: cfg.transport, Flush: flush})}
	if _, err := runtime.Run(ctx, g, opts); err != nil {
		return nil, err
	}
	if len(lat) != cfg.latN {
		return nil, fmt.Errorf("%d firings came back, expected %d", len(lat), cfg.latN)
	}
	return lat, nil
}
