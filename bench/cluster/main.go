// Command cluster measures sluice across worker processes on one host,
// over loopback: an embarrassingly parallel graph (a stateless actor of
// about 1 ms per firing, one copy per worker) across 1, 2 and 4 worker
// processes, and the hop latency of a cross-machine channel (a token going
// client → worker → client around a loop).
//
//	go run ./bench/cluster -workers 1,2,4 -firings 4000 -json
//
// It starts an in-process broker on 127.0.0.1 and the workers as child
// processes of itself (-role worker). Each worker runs its actor on its own
// CPU pool, so N workers need N free cores to scale: run it on a host with
// at least 2×N cores (the client and broker need some too).
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

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

type report struct {
	Cores     int      `json:"cores"`
	Cost      string   `json:"cost"`
	Transport string   `json:"transport"`
	Parallel  []result `json:"parallel"`
	// HopMicros is half the round trip client → worker → client of one
	// 4-byte token; LocalHopMicros the same loop with the echo actor local.
	HopMicros      float64 `json:"hop_us"`
	LocalHopMicros float64 `json:"local_hop_us"`
}

func main() {
	var (
		role      = flag.String("role", "", "internal: worker")
		brokerURL = flag.String("broker", "", "internal: the broker a worker joins")
		name      = flag.String("name", "", "internal: the worker's name")
		workers   = flag.String("workers", "1,2,4", "worker counts to measure")
		firings   = flag.Int64("firings", 4000, "firings of the parallel actor in all, per worker count")
		rate      = flag.Int("rate", 256, "f32 tokens per firing")
		hops      = flag.Int64("hops", 2000, "round trips for the hop latency (at least 2)")
		transport = flag.String("transport", "tcp", "data path: tcp (direct streams) or nats")
		asJSON    = flag.Bool("json", false, "print one JSON object")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *role == "worker" {
		if err := runWorker(ctx, *brokerURL, *name, *transport); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		return
	}
	rep, err := measure(ctx, *workers, *firings, *rate, *hops, *transport)
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
	fmt.Printf("%d cores, %s firings, data over %s\n", rep.Cores, rep.Cost, rep.Transport)
	for _, r := range rep.Parallel {
		fmt.Printf("%d workers: %d firings in %.3f s = %.0f firings/s, speedup %.2f (efficiency %.2f)\n", r.Workers, r.Firings, r.Seconds, r.FiringsPerS, r.Speedup, r.Efficiency)
	}
	fmt.Printf("hop latency: %.1f µs across a cross-machine channel, %.1f µs locally\n", rep.HopMicros, rep.LocalHopMicros)
}

func runWorker(ctx context.Context, url, name, transport string) error {
	o := cluster.WorkerOptions{Broker: url, Name: name,
		Devices: []device.Info{{ID: "cpu", Backend: "cpu", Name: "host cpu", Kind: device.CPU, ComputeUnits: goruntime.NumCPU()}}}
	if transport == "tcp" {
		o.DataListen = "127.0.0.1:0"
	}
	w, err := cluster.StartWorker(ctx, o)
	if err != nil {
		return err
	}
	defer w.Close()
	<-ctx.Done()
	return nil
}

func measure(ctx context.Context, list string, firings int64, rate int, hops int64, transport string) (*report, error) {
	b, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "bench", Listen: "127.0.0.1:0"})
	if err != nil {
		return nil, err
	}
	defer b.Shutdown()
	rep := &report{Cores: goruntime.NumCPU(), Cost: cost.String(), Transport: transport}
	var base float64
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-workers %q: expected positive counts", list)
		}
		r, err := parallel(ctx, b.ClientURL(), n, firings, rate, transport)
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
	if hops > 0 {
		hops = max(hops, 2)
		if rep.HopMicros, err = hopLatency(ctx, b.ClientURL(), hops, transport, true); err != nil {
			return nil, fmt.Errorf("hop latency: %w", err)
		}
		if rep.LocalHopMicros, err = hopLatency(ctx, b.ClientURL(), hops, transport, false); err != nil {
			return nil, fmt.Errorf("local hop latency: %w", err)
		}
	}
	return rep, nil
}

// startWorkers starts n worker processes and waits until the tree sees them.
func startWorkers(ctx context.Context, cl *cluster.Client, url string, n int, transport string) (func(), error) {
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
		c := exec.Command(exe, "-role", "worker", "-broker", url, "-name", fmt.Sprintf("w%d", i+1), "-transport", transport, "-cost", cost.String())
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
