// Command predict holds the simulator's predicted throughput against the
// CPU runtime's measured throughput on this host, for the graphs of
// examples/predict (a pipeline, a multirate decimator, a fork-join):
//
//	go run ./bench/predict [-json]
//
// For each graph and each of -reps repetitions it
//
//  1. measures the host's effective parallelism (a CPU-bound loop on one
//     goroutine, then on GOMAXPROCS at once): on a shared machine the
//     cores nproc reports are not all there, and the machine model's
//     processor gets units = min(workers, round(parallelism));
//  2. runs the graph with runtime.Run for -warmup iterations (discarded),
//     then for -iterations iterations, and takes the run's profile
//     (Stats.WriteProfile, read back with sim.ParseProfile: per-actor mean
//     firing time) and its channel capacities;
//  3. simulates the same graph with package sim on the host machine model
//     (-machine, default examples/machines/host2.yaml: one processor
//     "cpu" whose communication costs are the runtime's measured overhead
//     per port access; see -calibrate), every actor placed on "cpu", the
//     profile's means as firing costs and the runtime's capacities;
//  4. measures the real throughput with a fresh run of -iterations
//     iterations (iterations per second of Stats.Elapsed).
//
// It prints, per graph, the medians over the repetitions of the predicted
// and measured throughput and the relative error (predicted − measured) /
// measured; -json prints one JSON object per graph instead.
//
// -calibrate measures the runtime's overhead per port access on a chain of
// empty actors (the same token size and rate as the graphs) and uses it in
// place of the machine file's constants; it prints the values to put in
// the machine file.
package main

import (
	"bytes"
	"context"
	"encoding/json"

	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	_ "github.com/sluicehq/sluice/actors" // built-in actors
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
	"github.com/sluicehq/sluice/spec"
)

// Config is what one invocation compares.
type Config struct {
	// Graphs are the graph files.
	Graphs []string
	// Machine is the machine model file; its processor "cpu" (or its first
	// cpu-kind processor) runs every actor.
	Machine string
	// Warmup and Iterations are the iterations of the discarded warm-up
	// run and of the profiled and measured runs.
	Warmup, Iterations int64
	// Reps is the number of repetitions whose medians are reported.
	Reps int
	// Units forces the processor's units (0: min(workers, measured
	// effective parallelism)).
	Units int
	// Workers is the runtime's CPU pool (0: GOMAXPROCS).
	Workers int
	// Calibrate replaces the machine file's per-port costs with ones
	// measured now (OverheadNs).
	Calibrate bool
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// Result is one graph's comparison. Throughputs are in iterations per
// second.
type Result struct {
	Graph      string `json:"graph"`
	File       string `json:"file"`
	Machine    string `json:"machine"`
	Iterations int64  `json:"iterations"`
	Reps       int    `json:"reps"`
	Workers    int    `json:"workers"`
	// Units is the processor's units in the model (median over reps);
	// Parallelism the measured effective parallelism (median).
	Units       int     `json:"units"`
	Parallelism float64 `json:"parallelism"`
	// PortNs is the cost per port access the model charged and WakeNs
	// its wake latency (ns).
	PortNs float64 `json:"port_ns"`
	WakeNs float64 `json:"wake_ns"`
	// Predicted and Measured are medians over the repetitions.
	// PredictedNoWake is the prediction without the wake latency, and
	// PredictedFiringsOnly without the port costs either (firing times
	// only), to show what each part of the model adds.
	Predicted            float64 `json:"predicted_iter_per_s"`
	PredictedNoWake      float64 `json:"predicted_no_wake_iter_per_s"`
	PredictedFiringsOnly float64 `json:"predicted_firings_only_iter_per_s"`
	Measured             float64 `json:"measured_iter_per_s"`
	// ErrorPct is 100 × (Predicted − Measured) / Measured.
	ErrorPct float64 `json:"error_pct"`
	// Per-repetition figures.
	PredictedRuns []float64 `json:"predicted_runs"`
	MeasuredRuns  []float64 `json:"measured_runs"`
	// BusyNs is the profile's firing time per iteration (Σ repetitions ×
	// mean firing time, ns; median over reps).
	BusyNs float64 `json:"busy_ns_per_iter"`
	// CPU is the host's CPU model; NumCPU what Go sees.
	CPU    string `json:"cpu"`
	NumCPU int    `json:"num_cpu"`
	Go     string `json:"go"`
}

func main() {
	var (
		asJSON = flag.Bool("json", false, "print one JSON object per graph")
		dir    = flag.String("dir", filepath.Join("examples", "predict"), "directory of the graphs")
		only   = flag.String("graphs", "pipeline,multirate,forkjoin", "graphs of -dir to run (comma-separated, without .yaml)")
		mach   = flag.String("machine", filepath.Join("examples", "machines", "host2.yaml"), "machine model")
		iters  = flag.Int64("iterations", 20000, "iterations of the profiled and the measured runs")
		warm   = flag.Int64("warmup", 2000, "iterations of the discarded warm-up run")
		reps   = flag.Int("reps", 5, "repetitions (medians are reported)")
		units  = flag.Int("units", 0, "processor units in the model (0: min(workers, measured effective parallelism))")
		work   = flag.Int("workers", 0, "runtime CPU workers (0: GOMAXPROCS)")
		calib  = flag.Bool("calibrate", false, "measure the per-port overhead now instead of using the machine file's")
		quiet  = flag.Bool("q", false, "no progress lines on standard error")
	)
	flag.Parse()
	cfg := Config{Machine: *mach, Warmup: *warm, Iterations: *iters, Reps: *reps, Units: *units,
		Workers: *work, Calibrate: *calib, Log: os.Stderr}
	if *quiet {
		cfg.Log = nil
	}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			cfg.Graphs = append(cfg.Graphs, filepath.Join(*dir, n+".yaml"))
		}
	}
	res, err := Compare(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "predict:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		for _, r := range res {
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(os.Stderr, "predict:", err)
				os.Exit(1)
			}
		}
		return
	}
	if len(res) > 0 {
		r := res[0]
		fmt.Printf("host: %s, NumCPU %d, %s, %d workers; model: units %d (effective parallelism %.2f), %.0f ns per port access, wake latency %.1f µs; medians of %d runs of %d iterations\n",
			r.CPU, r.NumCPU, r.Go, r.Workers, r.Units, r.Parallelism, r.PortNs, r.WakeNs/1e3, r.Reps, r.Iterations)
	}
	fmt.Printf("%-18s %15s %15s %8s %16s %16s\n", "graph", "predicted it/s", "measured it/s", "error", "(no wake it/s)", "(firings only)")
	for _, r := range res {
		fmt.Printf("%-18s %15.0f %15.0f %+7.1f%% %16.0f %16.0f\n", r.Graph, r.Predicted, r.Measured, r.ErrorPct, r.PredictedNoWake, r.PredictedFiringsOnly)
	}
}

// Compare runs the comparison for every graph of cfg.
func Compare(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Iterations <= 0 || cfg.Reps <= 0 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("iterations %d, reps %d, warm-up %d: expected iterations and reps > 0, warm-up ≥ 0", cfg.Iterations, cfg.Reps, cfg.Warmup)
	}
	base, err := machine.Load(cfg.Machine)
	if err != nil {
		return nil, err
	}
	cpu := cpuOf(base)
	if cpu == nil {
		return nil, fmt.Errorf("machine %s has no cpu-kind processor", base.Name)
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = goruntime.GOMAXPROCS(0)
	}
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	if cfg.Calibrate {
		port, wake, err := Calibrate(ctx)
		if err != nil {
			return nil, err
		}
		setPortCost(cpu, port)
		cpu.WakeLatency = int64(math.Round(wake))
		h := cpu.PushAcq
		logf("calibrated: %.0f ns per port access, wake latency %.0f ns; in the machine file (clock 1GHz): push_acquire_cost: %d, push_send_fixed_cost: %d, pop_acquire_fixed_cost: %d, pop_discard_cost: %d, wake_latency: %d",
			port, wake, h, h, h, h, cpu.WakeLatency)
	}
	portNs, wakeNs := portCost(cpu), cpu.Seconds(cpu.WakeLatency)*1e9
	var out []Result
	for _, file := range cfg.Graphs {
		r := Result{File: filepath.ToSlash(file), Machine: base.Name, Iterations: cfg.Iterations, Reps: cfg.Reps,
			Workers: workers, PortNs: portNs, WakeNs: wakeNs, CPU: cpuModel(), NumCPU: goruntime.NumCPU(), Go: goruntime.Version()}
		var nooh, nowake, busy, pars []float64
		var unitsL []int
		for rep := 0; rep < cfg.Reps; rep++ {
			par := Parallelism(workers)
			units := cfg.Units
			if units <= 0 {
				units = max(1, min(workers, int(math.Round(par))))
			}
			p, err := predictOnce(ctx, file, base, cpu, units, workers, cfg)
			if err != nil {
				return nil, err
			}
			m, err := measure(ctx, file, workers, cfg.Iterations)
			if err != nil {
				return nil, err
			}
			r.Graph = p.graph
			r.PredictedRuns = append(r.PredictedRuns, p.withOverhead)
			r.MeasuredRuns = append(r.MeasuredRuns, m)
			nooh = append(nooh, p.noOverhead)
			nowake = append(nowake, p.noWake)
			busy = append(busy, p.busyNs)
			pars = append(pars, par)
			unitsL = append(unitsL, units)
			logf("%s rep %d: parallelism %.2f, units %d: predicted %.0f it/s (no wake %.0f, firings only %.0f), measured %.0f it/s (%+.1f%%)",
				p.graph, rep+1, par, units, p.withOverhead, p.noWake, p.noOverhead, m, 100*(p.withOverhead-m)/m)
		}
		r.Predicted = median(r.PredictedRuns)
		r.Measured = median(r.MeasuredRuns)
		r.PredictedFiringsOnly = median(nooh)
		r.PredictedNoWake = median(nowake)
		r.BusyNs = median(busy)
		r.Parallelism = median(pars)
		slices.Sort(unitsL)
		r.Units = unitsL[len(unitsL)/2]
		r.ErrorPct = 100 * (r.Predicted - r.Measured) / r.Measured
		out = append(out, r)
	}
	return out, nil
}

type prediction struct {
	graph                    string
	withOverhead, noOverhead float64
	noWake                   float64
	busyNs                   float64
}

// load reads a graph file; every run gets a fresh graph.
func load(file string) (*graph.Graph, error) {
	return spec.Load(file)
}

func runOpts(workers int, iters int64) runtime.Options {
	return runtime.Options{Iterations: iters, Workers: workers}
}

// predictOnce warms up, profiles one run and simulates the graph with the
// profile on the machine (units set on its cpu processor), with and
// without the communication costs.
func predictOnce(ctx context.Context, file string, base *machine.Machine, cpu *machine.Processor, units, workers int, cfg Config) (prediction, error) {
	var p prediction
	if cfg.Warmup > 0 {
		g, err := load(file)
		if err != nil {
			return p, err
		}
		if _, err := runtime.Run(ctx, g, runOpts(workers, cfg.Warmup)); err != nil {
			return p, fmt.Errorf("%s: warm-up run: %w", file, err)
		}
	}
	g, err := load(file)
	if err != nil {
		return p, err
	}
	p.graph = g.Name
	st, err := runtime.Run(ctx, g, runOpts(workers, cfg.Iterations))
	if err != nil {
		return p, fmt.Errorf("%s: profiled run: %w", file, err)
	}
	var buf bytes.Buffer
	if err := st.WriteProfile(&buf); err != nil {
		return p, err
	}
	prof, err := sim.ParseProfile(file+" (profile)", buf.Bytes())
	if err != nil {
		return p, err
	}
	capacity := map[string]int{}
	for _, c := range st.Channels {
		capacity[c.Name] = c.Capacity
	}
	for _, a := range st.Actors {
		p.busyNs += float64(a.Mean.Nanoseconds()) * float64(a.Firings) / float64(cfg.Iterations)
	}
	mapping := &graph.Mapping{Name: "all-on-cpu", Actors: map[string]*graph.Placement{}}
	for _, a := range g.Actors {
		mapping.Actors[a.Name] = &graph.Placement{Device: cpu.Name}
	}
	simulate := func(c *machine.Processor) (float64, error) {
		saved := *cpu
		*cpu = *c
		cpu.Units = units
		defer func() { *cpu = saved }()
		prog, err := sim.Build(g, mapping, base, &sim.Costs{Profile: prof}, sim.Options{Capacity: capacity})
		if err != nil {
			return 0, err
		}
		res, err := sim.Run(prog, sim.Config{Iterations: cfg.Iterations})
		if err != nil {
			return 0, err
		}
		if res.Throughput <= 0 || math.IsInf(res.Throughput, 0) || math.IsNaN(res.Throughput) {
			return 0, fmt.Errorf("%s: simulated throughput %g: expected a positive finite number", file, res.Throughput)
		}
		return res.Throughput, nil
	}
	if p.withOverhead, err = simulate(cpu); err != nil {
		return p, err
	}
	nowake := *cpu
	nowake.WakeLatency = 0
	if p.noWake, err = simulate(&nowake); err != nil {
		return p, err
	}
	bare := nowake
	setPortCost(&bare, 0)
	if p.noOverhead, err = simulate(&bare); err != nil {
		return p, err
	}
	return p, nil
}

// measure runs the graph afresh and returns iterations per second.
func measure(ctx context.Context, file string, workers int, iters int64) (float64, error) {
	g, err := load(file)
	if err != nil {
		return 0, err
	}
	st, err := runtime.Run(ctx, g, runOpts(workers, iters))
	if err != nil {
		return 0, fmt.Errorf("%s: measured run: %w", file, err)
	}
	return float64(iters) / st.Elapsed.Seconds(), nil
}

// cpuOf returns the processor named "cpu", else the first of kind cpu.
func cpuOf(m *machine.Machine) *machine.Processor {
	if p := m.Processor("cpu"); p != nil {
		return p
	}
	for _, p := range m.Processors {
		if p.Kind == "cpu" {
			return p
		}
	}
	return nil
}

// portCost is the processor's cost per port access in ns: a firing pays
// pushAcq + pushSend per output and popAcq + popDisc per input.
func portCost(p *machine.Processor) float64 {
	out := p.Seconds(p.PushAcq+p.PushSend.Fixed) * 1e9
	in := p.Seconds(p.PopAcq.Fixed+p.PopDisc) * 1e9
	return (out + in) / 2
}

// setPortCost charges ns per port access, half on acquire and half on
// release, on a processor whose clock is then 1 GHz (one cycle = 1 ns).
func setPortCost(p *machine.Processor, ns float64) {
	p.ClockHz = 1e9
	h := int64(math.Round(ns / 2))
	p.PushAcq, p.PopDisc = h, h
	p.PushSend = machine.Staircase{Fixed: h}
	p.PopAcq = machine.Staircase{Fixed: h}
}

// Parallelism measures how many of the workers' goroutines really run at
// once: a fixed CPU-bound loop alone (best of 3) against the same loop on
// n goroutines at once (best of 3); the ratio n·t1/tn.
func Parallelism(n int) float64 {
	const work = 1 << 22 // about 5-10 ms
	best := func(k int) time.Duration {
		b := time.Duration(math.MaxInt64)
		for range 3 {
			t := time.Now()
			done := make(chan float64, k)
			for range k {
				go func() { done <- spin(work) }()
			}
			for range k {
				if <-done < 0 {
					panic("unreachable")
				}
			}
			b = min(b, time.Since(t))
		}
		return b
	}
	if n <= 1 {
		return 1
	}
	t1 := best(1)
	tn := best(n)
	return float64(n) * float64(t1) / float64(tn)
}

func spin(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 1e-9
	}
	return x
}

// Calibrate measures the two runtime constants of the machine model.
//
// The overhead per port access is the runtime's time outside the firings
// on a chain src → 3 × empty → sink of rate-1024 float32 ports (default
// capacities, as in the graphs) whose firings do nothing, run by one
// worker, so that no time is spent waiting for another: (elapsed − Σ
// firing time) / port accesses (8 per iteration); the median of 5 runs.
//
// The wake latency is WakeLatency's median.
func Calibrate(ctx context.Context) (portNs, wakeNs float64, err error) {
	const iters = 50000
	var costs []float64
	for range 5 {
		st, err := runtime.Run(ctx, emptyChain(3, 1024), runOpts(1, iters))
		if err != nil {
			return 0, 0, err
		}
		var busy time.Duration
		for _, a := range st.Actors {
			busy += a.Busy
		}
		costs = append(costs, max(0, float64((st.Elapsed-busy).Nanoseconds())/(8*iters)))
	}
	return median(costs), WakeLatency(), nil
}

// WakeLatency measures how long a parked pool worker takes to run after
// it is signalled by a worker that goes on computing, as the runtime's
// workers do (a sync.Cond, as in its queue): the median of 300 wakes, in
// ns. A wake that is not over after 300 µs of the signaller's computing
// counts as 300 µs.
func WakeLatency() float64 {
	var (
		mu   sync.Mutex
		cond = sync.NewCond(&mu)
		sig  bool
		quit bool
		t0   int64
		lat  = make(chan int64)
	)
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }
	go func() {
		for {
			mu.Lock()
			for !sig && !quit {
				cond.Wait()
			}
			if quit {
				mu.Unlock()
				return
			}
			sig = false
			d := now() - t0
			mu.Unlock()
			lat <- d
		}
	}()
	spinFor := func(d int64) {
		for t := now(); now()-t < d; {
		}
	}
	var v []float64
	for range 300 {
		spinFor(20_000) // the worker parks
		mu.Lock()
		sig, t0 = true, now()
		cond.Signal()
		mu.Unlock()
		spinFor(300_000) // the signaller goes on firing
		v = append(v, float64(min(<-lat, 300_000)))
	}
	mu.Lock()
	quit = true
	cond.Signal()
	mu.Unlock()
	return median(v)
}

// emptyChain is src → stages × empty → sink over float32 ports of the given
// rate, with firings that do nothing.
func emptyChain(stages, rate int) *graph.Graph {
	g := graph.New("empty-chain")
	nop := runtime.FireFunc(func(*runtime.Firing) error { return nil })
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(nop))
	prev := graph.AddOutput[float32](src, "out", graph.SDF(rate))
	for i := range stages {
		a := g.AddActor(fmt.Sprintf("e%d", i), graph.WithFunc(nop))
		graph.Connect(g, prev, graph.AddInput[float32](a, "in", graph.SDF(rate)))
		prev = graph.AddOutput[float32](a, "out", graph.SDF(rate))
	}
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(nop))
	graph.Connect(g, prev, graph.AddInput[float32](sink, "in", graph.SDF(rate)))
	return g
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuModel returns the "model name" of /proc/cpuinfo, or GOARCH.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return goruntime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return goruntime.GOARCH
}
