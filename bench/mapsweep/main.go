// Command mapsweep holds the mapping that `sluice map` picks with the
// calibrated machine model against a sweep of mappings measured for real,
// and the simulator's prediction for each against its measurement:
//
//	go run ./bench/mapsweep -graph examples/predict/mixed.yaml -backend opencl
//	go run ./bench/mapsweep -graph examples/imagepipe/imagepipe.yaml -backend cuda -mapping examples/imagepipe/cuda.yaml -json
//
// The candidates are the graph's mappings: each actor with a Go or
// built-in implementation on the CPU with each replica count of -replicas
// (1 when it is stateful), each actor with a kernel for -backend on each
// of the backend's devices, its kernel actors sharing one G of -G. Every
// candidate is taken when there are at most -max, else -max drawn with
// -seed; besides them, "all-cpu" (every actor that can on the CPU, one
// replica), "all-device" (every kernel actor on the first device) and,
// with -mapping, that mapping ("default") and its variants over -G and
// -replicas ("default-G16-r2": G 16, stateless CPU actors with 2
// replicas).
//
// For each candidate it runs the graph (runtime.Run) for -warmup
// iterations, then for -iterations (more where the warm-up's rate says the
// run would last less than -min-time), and takes the measured throughput
// (iterations per second after every actor has done a tenth of its
// firings; the whole run's rate too) and the run's profile; it simulates
// the candidate on the machine model (package sim) with that profile
// (predicted, 1 / period) and with the cost table below (model).
//
// The cost table is what `sluice map` is given: each actor's mean firing
// time on the CPU from the all-cpu run and on the device from the
// all-device run (-costs-out writes it as a cost file for `sluice map
// --costs`); with -mapping, the CPU actors' times in the default
// mapping's run at each G of -G, and the kernel actors' own times from a
// callback run of the all-device mapping at each G (what `sluice map
// --profile FILE --profile FILE` takes: the search costs an actor from
// the G nearest its own or its neighbours'). HEFT and the search (package mapping, as `sluice map
// --strategy all`, -evaluations and -search-iterations as its
// --evaluations and --iterations, G searched over -G) pick a mapping; it
// is made runnable (device IDs, kernel settings of -mapping), measured,
// and held against the best candidate: the ratio picked ÷ best. Then the
// pick and the -finalists fastest candidates are measured again, in turn,
// until each has -rounds runs, and the pick's median is held against the
// best median: on a shared host consecutive runs of one mapping differ by
// more than the 10 % a pick may miss by.
//
// The machine model is calibrated now (package calibrate, as `sluice
// calibrate --device ID` for the backend's devices) unless -machine names
// one.
//
// -save DIR keeps the sweep (report.json, each candidate's mapping and
// profile, the kernel times' profile) so that a changed model can be held
// against the same measurements without running them again:
//
//	go run ./bench/mapsweep -replay DIR -machine machine.yaml [-mapping FILE -G 16,64,256]
//
// predicts every saved candidate on machine.yaml, prints measured, the
// sweep's prediction and the new one, and runs the mapping search on it:
// the mapping it picks now and, where the sweep measured that mapping,
// its measured throughput. The graph's Go actors must be registered: this program imports
// examples/imagepipe.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "github.com/sluicehq/sluice/actors" // built-in actors
	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/driver"
	_ "github.com/sluicehq/sluice/examples/imagepipe" // the image pipeline's Go actors
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/mapping"
)

func main() {
	var (
		graphFile = flag.String("graph", "", "graph file (required)")
		backend   = flag.String("backend", "", "kernel backend: opencl, cuda, or empty for the CPU only")
		devs      = flag.String("devices", "", "device IDs kernel actors may go to, comma-separated (default: the backend's devices)")
		def       = flag.String("mapping", "", "default mapping: measured with its variants over -G and -replicas, and the kernel settings (work-items, distribution) of its actors")
		mach      = flag.String("machine", "", "machine model file (default: calibrate this host and the devices now)")
		iters     = flag.Int64("iterations", 2000, "iterations of each measured run")
		warm      = flag.Int64("warmup", 200, "iterations of the warm-up run before each")
		minTime   = flag.Duration("min-time", time.Second, "lengthen a measured run the warm-up says would be shorter (up to 50 × -iterations)")
		maxC      = flag.Int("max", 40, "candidates: all when the space has at most this many, else this many drawn at random")
		seed      = flag.Uint64("seed", 1, "seed of the random draw")
		gs        = flag.String("G", "16,64", "work-groups (firings per invocation) tried for kernel actors")
		reps      = flag.String("replicas", "", "replica counts tried for stateless CPU actors (default: 1, 2, workers/2, workers)")
		items     = flag.Int("I", 64, "work-items per work-group where -mapping sets none")
		workers   = flag.Int("workers", 0, "CPU workers (0: GOMAXPROCS)")
		evals     = flag.Int("evaluations", 300, "simulations the mapping search may run (sluice map --evaluations)")
		siters    = flag.Int64("search-iterations", 64, "graph iterations per simulation of the search (sluice map --iterations)")
		asJSON    = flag.Bool("json", false, "print the report as one JSON object")
		outFile   = flag.String("out", "", "also write the JSON report to this file")
		costsOut  = flag.String("costs-out", "", "write the cost table as a cost file (sluice map --costs)")
		pickedOut = flag.String("picked-out", "", "write the picked mapping to this file")
		machOut   = flag.String("machine-out", "", "write the machine model used to this file")
		quiet     = flag.Bool("q", false, "no progress lines on standard error")
		save      = flag.String("save", "", "also save the sweep (report, each candidate's mapping and profile) into this directory for -replay")
		replay    = flag.String("replay", "", "predict a sweep saved with -save again on -machine, without measuring, and run sluice map's search on it")
		rounds    = flag.Int("rounds", 3, "measure the picked mapping and the -finalists fastest candidates this many times in all, in turn, and hold the pick's median against the best median")
		finals    = flag.Int("finalists", 3, "candidates measured again beside the pick (-rounds)")
	)
	flag.Parse()
	if (*graphFile == "" && *replay == "") || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: mapsweep -graph FILE [-backend opencl|cuda] [-mapping FILE] [-json] [flags]\n       mapsweep -replay DIR -machine FILE [-mapping FILE] [-G LIST]")
		os.Exit(2)
	}
	ctx := context.Background()
	cfg := Config{Graph: *graphFile, Backend: graph.ImplKind(*backend), Iterations: *iters, Warmup: *warm, MinTime: *minTime, Max: *maxC, Seed: *seed,
		WorkItems: *items, Workers: *workers, Evaluations: *evals, SearchIterations: *siters,
		Rounds: *rounds, Finalists: *finals, Log: os.Stderr}
	if *quiet {
		cfg.Log = nil
	}
	if cfg.Workers <= 0 {
		cfg.Workers = goruntime.GOMAXPROCS(0)
	}
	var err error
	if cfg.G, err = ints("-G", *gs); err != nil {
		fail(err)
	}
	if cfg.Replicas, err = ints("-replicas", *reps); err != nil {
		fail(err)
	}
	if len(cfg.Replicas) == 0 {
		cfg.Replicas = defaultReplicas(cfg.Workers)
	}
	if *replay == "" {
		if cfg.Devices, err = devices(ctx, *backend, *devs); err != nil {
			fail(err)
		}
	}
	if *def != "" {
		if cfg.Default, err = driver.LoadMapping(*def); err != nil {
			fail(err)
		}
	}
	if *replay != "" {
		if err := replayDir(ctx, *replay, *mach, cfg); err != nil {
			fail(err)
		}
		return
	}
	if cfg.Machine, err = model(ctx, *mach, cfg); err != nil {
		fail(err)
	}
	rep, err := Sweep(ctx, cfg)
	if err != nil {
		fail(err)
	}
	if err := writeOutputs(rep, cfg, *outFile, *costsOut, *pickedOut, *machOut); err != nil {
		fail(err)
	}
	if *save != "" {
		if err := Save(*save, rep); err != nil {
			fail(err)
		}
	}
	if *asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
			fail(err)
		}
		return
	}
	Print(os.Stdout, rep)
}

// replayDir runs Replay on a saved sweep with the machine model in file
// (required: the model to hold the saved measurements against).
func replayDir(ctx context.Context, dir, file string, cfg Config) error {
	if file == "" {
		return fmt.Errorf("-replay %s: expected -machine FILE (the model to predict the saved sweep with)", dir)
	}
	mach, err := machine.Load(file)
	if err != nil {
		return err
	}
	return Replay(ctx, dir, mach, cfg, os.Stdout)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mapsweep:", err)
	os.Exit(1)
}

// ints parses a comma-separated list of positive integers.
func ints(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s: expected positive integers separated by commas, found %q", flagName, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// defaultReplicas is 1, 2, workers/2 and workers, without repeats.
func defaultReplicas(workers int) []int {
	var out []int
	for _, v := range []int{1, 2, workers / 2, workers} {
		if v >= 1 && v <= max(workers, 1) && (len(out) == 0 || v > out[len(out)-1]) {
			out = append(out, v)
		}
	}
	return out
}

// devices returns the IDs given, else every device of backend ("" : none).
func devices(ctx context.Context, backend, given string) ([]string, error) {
	switch backend {
	case "":
		return nil, nil
	case "opencl", "cuda":
	default:
		return nil, fmt.Errorf("-backend %q: expected opencl, cuda or nothing", backend)
	}
	if given != "" {
		return strings.Split(given, ","), nil
	}
	var ids, why []string
	for _, r := range device.Discover(ctx) {
		if r.Backend != backend {
			continue
		}
		for _, d := range r.Devices {
			ids = append(ids, d.ID)
		}
		if r.Reason != "" {
			why = append(why, r.Reason)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("-backend %s: expected at least one %s device, found none (%s)", backend, backend, strings.Join(why, "; "))
	}
	return ids, nil
}

// model reads the machine file, or calibrates this host and the devices.
func model(ctx context.Context, file string, cfg Config) (*machine.Machine, error) {
	if file != "" {
		return machine.Load(file)
	}
	logf := func(format string, args ...any) { cfg.logf(format, args...) }
	r, err := calibrate.Run(ctx, calibrate.Options{Workers: cfg.Workers, NoGPU: len(cfg.Devices) == 0, Devices: cfg.Devices, Log: logf})
	if err != nil {
		return nil, err
	}
	m := r.Model()
	for _, id := range cfg.Devices {
		if p := m.Resolve(id); p == nil || p.Kind != "gpu" {
			return nil, fmt.Errorf("calibrated model %s: expected a gpu processor for device %s, found none (calibration skipped: %v)", m.Name, id, r.Skipped)
		}
	}
	return m, nil
}

// writeOutputs writes the files the flags ask for.
func writeOutputs(rep *Report, cfg Config, out, costs, picked, mach string) error {
	if out != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if costs != "" {
		var b bytes.Buffer
		if err := WriteCosts(&b, rep.Costs); err != nil {
			return err
		}
		if err := os.WriteFile(costs, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if picked != "" {
		var b bytes.Buffer
		doc := fmt.Sprintf("picked by bench/mapsweep (sluice map's %s on machine %s): measured %.0f it/s, %.2f × the best candidate", rep.PickedBy, rep.Machine, rep.Picked.Measured, rep.Ratio)
		b.WriteString("kind: mapping\n")
		if err := mapping.WriteMapping(&b, rep.Picked.m, doc); err != nil {
			return err
		}
		if err := os.WriteFile(picked, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if mach != "" {
		return os.WriteFile(mach, machine.Format(cfg.Machine, "Machine model used by bench/mapsweep."), 0o644)
	}
	return nil
}

// Print writes the report as a table: per candidate measured, predicted
// and their error, sorted by measured throughput; then the best, the pick
// and their ratio.
func Print(w io.Writer, r *Report) {
	fmt.Fprintf(w, "graph %s, backend %q %v, machine %s, %d workers, %d iterations per run; %d candidates of a space of %.0f (exhaustive %v)\n",
		r.Graph, r.Backend, r.Devices, r.Machine, r.Workers, r.Iterations, len(r.Candidates), r.SpaceSize, r.Exhaustive)
	cs := append([]Candidate(nil), r.Candidates...)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Measured > cs[j].Measured })
	fmt.Fprintf(w, "%-16s %12s %12s %8s %12s %8s  %s\n", "candidate", "measured", "predicted", "error", "model", "error", "mapping")
	for _, c := range append(cs, r.Picked) {
		if c.Err != "" {
			fmt.Fprintf(w, "%-16s %12s  failed: %s  %s\n", c.Name, "-", c.Err, c.Mapping)
			continue
		}
		fmt.Fprintf(w, "%-16s %12.0f %12.0f %+7.1f%% %12.0f %+7.1f%%  %s\n", c.Name, c.Measured, c.Predicted, c.ErrorPct, c.Model, c.ModelErrorPct, c.Mapping)
	}
	fmt.Fprintf(w, "best measured: %s, %.0f it/s\n", r.Best, r.BestIterS)
	fmt.Fprintf(w, "picked (sluice map, %s, predicted %.0f it/s): measured %.0f it/s\n", r.PickedBy, r.PickedPredicted, r.Picked.Measured)
	fmt.Fprintf(w, "ratio picked/best: %.3f\n", r.Ratio)
	if len(r.Finals) == 0 {
		return
	}
	fmt.Fprintf(w, "measured again, in turn (%d runs each):\n", len(r.Finals[0].Runs))
	for _, f := range r.Finals {
		runs := make([]string, len(f.Runs))
		for i, v := range f.Runs {
			runs[i] = fmt.Sprintf("%.0f", v)
		}
		fmt.Fprintf(w, "  %-16s median %12.0f  runs %s\n", f.Name, f.Median, strings.Join(runs, " "))
	}
	fmt.Fprintf(w, "ratio picked/best of the medians: %.3f (best: %s)\n", r.RatioRounds, r.FinalBest)
}
