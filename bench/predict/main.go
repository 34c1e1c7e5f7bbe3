// Command predict holds the simulator's predicted throughput against the
// CPU runtime's measured throughput on this host, for the graphs of
// examples/predict (a pipeline, a multirate decimator, a fork-join) and
// examples/cd2dat.yaml (actors that only declare a cost, run as synthetic
// actors that keep a core busy for it):
//
//	go run ./bench/predict [-json] [-machine FILE] [-graphs pipeline,multirate,forkjoin,cd2dat] [-invocations N]
//
// The machine model is calibrated now (package calibrate, as `sluice
// calibrate` does; -machine FILE reads one instead): one pool processor
// "cpu" of GOMAXPROCS units that runs firings the way the runtime does
// (rounds, time slices, spinning and parked workers, per-firing, per-round
// and per-port costs). For each graph and each of -reps repetitions it
//
//  1. runs the graph with runtime.Run for -warmup iterations (discarded),
//     then for -iterations iterations, and takes the run's profile
//     (Stats.WriteProfile, read back with sim.ParseProfile: per-actor mean
//     firing time);
//  2. simulates the graph on the model, every actor on "cpu", with the
//     profile's means as firing costs ("profile"), and, when the graph
//     declares costs, with the declared costs ("declared");
//  3. measures the real throughput with a fresh run of -iterations
//     iterations (iterations per second of Stats.Elapsed).
//
// It prints, per graph, the medians over the repetitions of the predicted
// and measured throughputs and the relative errors (predicted − measured)
// / measured; -json prints one JSON object per graph instead. Run it under
// taskset to choose the cores: `taskset -c 0,1 go run ./bench/predict`
// (GOMAXPROCS follows the CPUs the process may use).
//
// -invocations N does the whole comparison N times in a row, each time as
// one invocation of the command would (a fresh calibration unless
// -machine, then every graph), and prints per graph each invocation's
// error and their spread: the lowest, the highest and the difference
// (Invocations, Spreads). One invocation's figures move with the host's
// load; the spread says how far a single run of the command can be trusted.
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
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/actors" // built-in actors, and Synthesize
	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
)

// Config is what one invocation compares.
type Config struct {
	// Graphs are the graph files.
	Graphs []string
	// Machine is the machine model; nil: calibrate this host now.
	Machine *machine.Machine
	// Warmup and Iterations are the iterations of the discarded warm-up
	// run and of the profiled and measured runs.
	Warmup, Iterations int64
	// Reps is the number of repetitions whose medians are reported.
	Reps int
	// Workers is the runtime's CPU pool (0: GOMAXPROCS); the model's pool
	// processor gets as many units unless Units is set.
	Workers int
	// Units forces the model's units (0: Workers).
	Units int
	// Log receives progress lines (nil: none).
	Log io.Writer
	// SameRunOnly skips the measured run: the comparison is the profiled
	// run's own throughput against the prediction from its profile
	// (measured stays 0).
	SameRunOnly bool
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
	Units      int    `json:"units"`
	// Parallelism is the host's effective parallelism for Workers
	// goroutines measured before each repetition (median): below Workers
	// where other jobs share the cores.
	Parallelism float64 `json:"parallelism"`
	// Availability is the share of the time Workers goroutines spinning on
	// the clock really ran, measured before each repetition (median): 1 on
	// an idle host.
	Availability float64 `json:"availability"`
	Figures
	// BurnExtraNs and BurnStretch are what the model adds to every
	// declared cost d of a synthetic actor, whose busy loop lasts
	// BurnExtraNs + BurnStretch × d longer than asked.
	BurnExtraNs float64 `json:"burn_extra_ns,omitempty"`
	BurnStretch float64 `json:"burn_stretch,omitempty"`
	// BusyCores is the profiled run's firing time over its elapsed time (how
	// many workers were firing on average), PredictedBusyCores the
	// simulated pool's (utilization × units); medians.
	BusyCores          float64 `json:"busy_cores"`
	PredictedBusyCores float64 `json:"predicted_busy_cores"`
	// BusyNs is the profile's firing time per iteration (Σ repetitions ×
	// mean firing time, ns; median over reps).
	BusyNs float64 `json:"busy_ns_per_iter"`
	// Synthetic lists the actors run as synthetic ones (declared cost only).
	Synthetic []string `json:"synthetic,omitempty"`
	// CPU is the host's CPU model; NumCPU what Go sees.
	CPU    string `json:"cpu"`
	NumCPU int    `json:"num_cpu"`
	Go     string `json:"go"`
}

func main() {
	var (
		asJSON  = flag.Bool("json", false, "print one JSON object per graph")
		dir     = flag.String("dir", filepath.Join("examples", "predict"), "directory of the graphs")
		only    = flag.String("graphs", "pipeline,multirate,forkjoin,cd2dat", "graphs to run, comma-separated: names in -dir without .yaml, or paths of YAML files (cd2dat: examples/cd2dat.yaml)")
		mach    = flag.String("machine", "", "machine model file (default: calibrate this host now)")
		iters   = flag.Int64("iterations", 20000, "iterations of the profiled and the measured runs (cd2dat: a twentieth)")
		warm    = flag.Int64("warmup", 2000, "iterations of the discarded warm-up run (cd2dat: a twentieth)")
		reps    = flag.Int("reps", 3, "repetitions (medians are reported)")
		work    = flag.Int("workers", 0, "runtime CPU workers and model units (0: GOMAXPROCS)")
		units   = flag.Int("units", 0, "units of the model's pool processor (0: as many as workers)")
		invoc   = flag.Int("invocations", 1, "do the whole comparison this many times in a row (calibration included) and report each graph's errors and their spread")
		outFile = flag.String("out", "", "also write the JSON lines to this file")
		quiet   = flag.Bool("q", false, "no progress lines on standard error")

		clusterMode  = flag.Bool("cluster", false, "compare a graph spread over the client and two worker processes on loopback instead")
		clusterGraph = flag.String("graph", filepath.Join("examples", "predict", "cluster-chain.yaml"), "with -cluster: the graph")
		clusterMap   = flag.String("mapping", filepath.Join("examples", "predict", "cluster-chain.map.yaml"), "with -cluster: the mapping placing actors on workers w1 and w2")
	)
	if spec := os.Getenv(workerEnv); spec != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := workerMain(ctx, spec); err != nil {
			fail(err)
		}
		return
	}
	flag.Parse()
	if *clusterMode {
		runCluster(*clusterGraph, *clusterMap, *iters, *warm, *reps, *asJSON, *outFile, *quiet)
		return
	}
	cfg := Config{Warmup: *warm, Iterations: *iters, Reps: *reps, Workers: *work, Units: *units, Log: os.Stderr}
	if *quiet {
		cfg.Log = nil
	}
	if *mach != "" {
		m, err := machine.Load(*mach)
		if err != nil {
			fail(err)
		}
		cfg.Machine = m
	}
	for _, n := range strings.Split(*only, ",") {
		switch n = strings.TrimSpace(n); {
		case n == "":
		case n == "cd2dat":
			cfg.Graphs = append(cfg.Graphs, filepath.Join(filepath.Dir(filepath.Clean(*dir)), "cd2dat.yaml"))
		case strings.HasSuffix(n, ".yaml"):
			cfg.Graphs = append(cfg.Graphs, n)
		default:
			cfg.Graphs = append(cfg.Graphs, filepath.Join(*dir, n+".yaml"))
		}
	}
	if *invoc > 1 {
		runInvocations(cfg, *invoc, *asJSON, *outFile)
		return
	}
	res, err := Compare(context.Background(), cfg)
	if err != nil {
		fail(err)
	}
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for _, r := range res {
		if err := enc.Encode(r); err != nil {
			fail(err)
		}
	}
	if *outFile != "" {
		if err := os.WriteFile(*outFile, lines.Bytes(), 0o644); err != nil {
			fail(err)
		}
	}
	if *asJSON {
		os.Stdout.Write(lines.Bytes())
		return
	}
	if len(res) > 0 {
		r := res[0]
		fmt.Printf("host: %s, NumCPU %d, %s, %d workers (effective parallelism %.2f, running %.0f%% of the time); model %s; medians of %d runs\n",
			r.CPU, r.NumCPU, r.Go, r.Workers, r.Parallelism, 100*r.Availability, r.Machine, r.Reps)
	}
	fmt.Printf("%-18s %14s %14s %8s %14s %8s %14s %8s\n", "graph", "measured it/s", "profile it/s", "error", "declared it/s", "error", "same run it/s", "error")
	for _, r := range res {
		decl, derr := "-", "-"
		if r.Declared > 0 {
			decl, derr = fmt.Sprintf("%.0f", r.Declared), fmt.Sprintf("%+.1f%%", r.DeclaredErrorPct)
		}
		fmt.Printf("%-18s %14.0f %14.0f %+7.1f%% %14s %8s %14.0f %+7.1f%%\n", r.Graph, r.Measured, r.Predicted, r.ErrorPct, decl, derr, r.SameRun, r.SameRunErrorPct)
	}
}

// runCluster runs the -cluster comparison and prints it.
func runCluster(graphFile, mapFile string, iters, warm int64, reps int, asJSON bool, outFile string, quiet bool) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := ClusterConfig{Graph: graphFile, Mapping: mapFile, Iterations: iters, Warmup: warm, Reps: reps}
	if !quiet {
		cfg.Log = func(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
	}
	r, err := CompareCluster(ctx, cfg)
	if err != nil {
		fail(err)
	}
	line, _ := json.Marshal(r)
	line = append(line, '\n')
	if outFile != "" {
		if err := os.WriteFile(outFile, line, 0o644); err != nil {
			fail(err)
		}
	}
	if asJSON {
		os.Stdout.Write(line)
		return
	}
	fmt.Printf("host: %s, NumCPU %d (goroutines spinning ran %.0f%% of the time); client, broker and workers w1, w2 on 127.0.0.1; medians of %d runs of %d iterations\n",
		r.CPU, r.NumCPU, 100*r.Availability, r.Reps, r.Iterations)
	for _, l := range r.Links {
		fmt.Printf("link %s (%s): hop %.1f µs, start latency %.1f µs, bandwidth %.2f GB/s, %d units\n", l.Worker, l.Transport, l.HopNs/1e3, l.StartLatencyNs/1e3, l.Bandwidth/1e9, l.Units)
	}
	fmt.Printf("%-28s %14s %14s %8s %14s %8s %14s %8s\n", "graph", "measured it/s", "profile it/s", "error", "declared it/s", "error", "same run it/s", "error")
	fmt.Printf("%-28s %14.0f %14.0f %+7.1f%% %14.0f %+7.1f%% %14.0f %+7.1f%%\n", filepath.Base(r.Graph), r.Measured, r.Predicted, r.ErrorPct, r.Declared, r.DeclaredErrorPct, r.SameRun, r.SameRunErrorPct)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "predict:", err)
	os.Exit(1)
}

// Compare runs the comparison for every graph of cfg.
func Compare(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Iterations <= 0 || cfg.Reps <= 0 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("iterations %d, reps %d, warm-up %d: expected iterations and reps > 0, warm-up ≥ 0", cfg.Iterations, cfg.Reps, cfg.Warmup)
	}
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = goruntime.GOMAXPROCS(0)
	}
	base := cfg.Machine
	if base == nil {
		cal, err := calibrate.Run(ctx, calibrate.Options{Workers: workers, NoGPU: true, Log: logf})
		if err != nil {
			return nil, err
		}
		base = cal.Model()
	}
	cpu := CPUOf(base)
	if cpu == nil {
		return nil, fmt.Errorf("machine %s has no cpu-kind processor", base.Name)
	}
	cpu.Units = workers
	if cfg.Units > 0 {
		cpu.Units = cfg.Units
	}
	var out []Result
	for _, file := range cfg.Graphs {
		r := Result{File: filepath.ToSlash(file), Machine: base.Name, Reps: cfg.Reps, Workers: workers, Units: cpu.Units,
			CPU: calibrate.CPUModel(), NumCPU: goruntime.NumCPU(), Go: goruntime.Version()}
		var busy, pars, bc, sbc, avs []float64
		for rep := 0; rep < cfg.Reps; rep++ {
			par := calibrate.Parallelism(workers)
			av := calibrate.Availability(workers, 50*time.Millisecond)
			avs = append(avs, av)
			c, err := compareOnce(ctx, file, base, cpu, workers, cfg)
			if err != nil {
				return nil, err
			}
			r.Graph, r.Iterations, r.Synthetic = c.graph, c.iters, c.synthetic
			r.add(c)
			busy = append(busy, c.busyNs)
			bc = append(bc, c.busyCores)
			sbc = append(sbc, c.simBusyCores)
			pars = append(pars, par)
			logf("%s rep %d: parallelism %.2f, availability %.2f, busy cores %.2f (simulated %.2f): measured %.0f it/s (profiled run %.0f); predicted from the profile %.0f it/s (%+.1f%%; %+.1f%% of the profiled run), from declared costs %.0f it/s",
				c.graph, rep+1, par, av, c.busyCores, c.simBusyCores, c.measured, c.sameRun, c.profile, pct(c.profile, c.measured), pct(c.profile, c.sameRun), c.declared)
		}
		r.BurnExtraNs, r.BurnStretch, _ = calibrate.BusyLoop(base)
		r.summarize()
		r.BusyNs = median(busy)
		r.BusyCores, r.PredictedBusyCores = median(bc), median(sbc)
		r.Parallelism = median(pars)
		r.Availability = median(avs)
		out = append(out, r)
	}
	return out, nil
}

func pct(p, m float64) float64 { return 100 * (p - m) / m }

// Figures are a comparison's throughputs (iterations per second) over its
// repetitions, in Result and ClusterResult.
type Figures struct {
	// Predicted is the prediction from the profile, Declared from the
	// graph's declared costs (0 when it declares none); medians over the
	// repetitions.
	Predicted float64 `json:"predicted_iter_per_s"`
	Declared  float64 `json:"declared_iter_per_s,omitempty"`
	Measured  float64 `json:"measured_iter_per_s"`
	// SameRun is the throughput of the profiled run itself (median), and
	// SameRunErrorPct the profile's prediction against it: the profile and
	// the measurement then share the host's load, which on a shared host
	// moves between runs.
	SameRun         float64 `json:"same_run_iter_per_s"`
	SameRunErrorPct float64 `json:"same_run_error_pct"`
	// ErrorPct is 100 × (Predicted − Measured) / Measured; DeclaredErrorPct
	// the same for Declared.
	ErrorPct         float64 `json:"error_pct"`
	DeclaredErrorPct float64 `json:"declared_error_pct,omitempty"`
	// Per-repetition figures.
	PredictedRuns []float64 `json:"predicted_runs"`
	DeclaredRuns  []float64 `json:"declared_runs,omitempty"`
	MeasuredRuns  []float64 `json:"measured_runs"`
	SameRuns      []float64 `json:"same_runs"`
}

// add records one repetition.
func (f *Figures) add(c comparison) {
	f.PredictedRuns = append(f.PredictedRuns, c.profile)
	if c.declared > 0 {
		f.DeclaredRuns = append(f.DeclaredRuns, c.declared)
	}
	f.MeasuredRuns = append(f.MeasuredRuns, c.measured)
	f.SameRuns = append(f.SameRuns, c.sameRun)
}

// summarize sets the medians and the errors from the repetitions.
func (f *Figures) summarize() {
	f.Predicted, f.Measured, f.SameRun = median(f.PredictedRuns), median(f.MeasuredRuns), median(f.SameRuns)
	f.ErrorPct, f.SameRunErrorPct = pct(f.Predicted, f.Measured), pct(f.Predicted, f.SameRun)
	if len(f.DeclaredRuns) > 0 {
		f.Declared = median(f.DeclaredRuns)
		f.DeclaredErrorPct = pct(f.Declared, f.Measured)
	}
}

type comparison struct {
	graph                       string
	iters                       int64
	profile, declared, measured float64
	sameRun                     float64
	busyCores, simBusyCores     float64
	busyNs                      float64
	synthetic                   []string
}

// Load reads a graph file and gives every actor without an implementation
// a synthetic one that keeps its core busy for the actor's declared cost
// (as `sluice run` does for design-only graphs such as cd2dat). It returns
// the graph and the names of those actors.
func Load(file string) (*graph.Graph, []string, error) {
	g, err := driver.LoadGraph(context.Background(), file, driver.Options{})
	if err != nil {
		return nil, nil, err
	}
	return g, actors.Synthesize(g), nil
}

// declaresCosts reports whether some actor of g declares a cost.
func declaresCosts(g *graph.Graph) bool {
	for _, a := range g.Actors {
		if a.Cost > 0 {
			return true
		}
	}
	return false
}

// iterationsFor scales the iterations to the graph: a graph whose
// iteration declares more than 100 µs of work runs a twentieth of them.
func iterationsFor(g *graph.Graph, n int64) int64 {
	var declared time.Duration
	if rv, err := analysis.RepetitionVector(g); err == nil {
		for _, a := range g.Actors {
			declared += a.Cost * time.Duration(rv.Firings[a.Name])
		}
	}
	if declared > 100*time.Microsecond {
		return max(1, n/20)
	}
	return n
}

// compareOnce warms up, profiles one run, simulates the graph with the
// profile (and with the declared costs), and measures a fresh run.
func compareOnce(ctx context.Context, file string, base *machine.Machine, cpu *machine.Processor, workers int, cfg Config) (comparison, error) {
	var c comparison
	g, synth, err := Load(file)
	if err != nil {
		return c, err
	}
	iters, warm := iterationsFor(g, cfg.Iterations), iterationsFor(g, cfg.Warmup)
	c.graph, c.iters, c.synthetic = g.Name, iters, synth
	if warm > 0 {
		if _, err := runtime.Run(ctx, g, runtime.Options{Iterations: warm, Workers: workers}); err != nil {
			return c, fmt.Errorf("%s: warm-up run: %w", file, err)
		}
	}
	if g, _, err = Load(file); err != nil {
		return c, err
	}
	st, err := runtime.Run(ctx, g, runtime.Options{Iterations: iters, Workers: workers})
	if err != nil {
		return c, fmt.Errorf("%s: profiled run: %w", file, err)
	}
	var buf bytes.Buffer
	if err := st.WriteProfile(&buf); err != nil {
		return c, err
	}
	prof, err := sim.ParseProfile(file+" (profile)", buf.Bytes())
	if err != nil {
		return c, err
	}
	c.sameRun = float64(iters) / st.Elapsed.Seconds()
	var busy time.Duration
	for _, a := range st.Actors {
		c.busyNs += float64(a.Mean.Nanoseconds()) * float64(a.Firings) / float64(iters)
		busy += a.Busy
	}
	c.busyCores = busy.Seconds() / st.Elapsed.Seconds()
	var res *sim.Result
	if c.profile, res, err = simulate(g, base, cpu.Name, &sim.Costs{Profile: prof}, iters); err != nil {
		return c, fmt.Errorf("%s: %w", file, err)
	}
	c.simBusyCores = res.Utilization[cpu.Name] * float64(cpu.Units)
	if declaresCosts(g) {
		if c.declared, err = Predict(g, base, cpu.Name, DeclaredCosts(base, synth), iters); err != nil {
			return c, fmt.Errorf("%s: %w", file, err)
		}
	}
	if cfg.SameRunOnly {
		return c, nil
	}
	if g, _, err = Load(file); err != nil {
		return c, err
	}
	st, err = runtime.Run(ctx, g, runtime.Options{Iterations: iters, Workers: workers})
	if err != nil {
		return c, fmt.Errorf("%s: measured run: %w", file, err)
	}
	c.measured = float64(iters) / st.Elapsed.Seconds()
	return c, nil
}

// Predict simulates iters iterations of g with every actor on processor
// proc of m, the runtime's default capacities (those of the graph where it
// sets them) and the given costs (nil: the declared ones), and returns
// iters over the simulated makespan: iterations per second counted as the
// runtime's are (filling and draining the pipeline included).
func Predict(g *graph.Graph, m *machine.Machine, proc string, costs *sim.Costs, iters int64) (float64, error) {
	tp, _, err := simulate(g, m, proc, costs, iters)
	return tp, err
}

func simulate(g *graph.Graph, m *machine.Machine, proc string, costs *sim.Costs, iters int64) (float64, *sim.Result, error) {
	mapping := &graph.Mapping{Name: "all-on-" + proc, Actors: map[string]*graph.Placement{}}
	for _, a := range g.Actors {
		mapping.Actors[a.Name] = &graph.Placement{Device: proc}
	}
	prog, err := sim.Build(g, mapping, m, costs, sim.Options{})
	if err != nil {
		return 0, nil, err
	}
	res, err := sim.Run(prog, sim.Config{Iterations: iters})
	if err != nil {
		return 0, nil, err
	}
	tp := float64(iters) / res.Makespan
	if tp <= 0 || math.IsInf(tp, 0) || math.IsNaN(tp) {
		return 0, nil, fmt.Errorf("simulated makespan %g s for %d iterations: expected a positive time", res.Makespan, iters)
	}
	return tp, res, nil
}

// DeclaredCosts predicts from the graph's declared costs, the synthetic
// actors named (Load's) charged as their busy loops last on the host m
// was calibrated on (calibrate.SyntheticBurn; nil names: at their
// declared costs).
func DeclaredCosts(m *machine.Machine, synthetic []string) *sim.Costs {
	return &sim.Costs{Burn: calibrate.SyntheticBurn(m, synthetic)}
}

// CPUOf returns the processor named "cpu", else the first of kind cpu.
func CPUOf(m *machine.Machine) *machine.Processor {
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
