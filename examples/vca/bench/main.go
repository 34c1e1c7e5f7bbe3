// Command bench times the VCA application of examples/vca: the sequential
// version (one cube after another, no graph: the seed's Sequential
// Version, Fig. 6.7) or the graph with an unfolding factor J, and reports
// the time, the cubes per second and the peak resident memory of the
// process (one configuration per process, so the peak is its own).
//
//	go run ./examples/vca/bench -seq                                  # sequential, seed size (200 cubes)
//	go run ./examples/vca/bench -J 4                                  # the graph, J = 4 cubes in flight
//	go run ./examples/vca/bench -J 4 -mapping examples/vca/cuda.yaml -G 16 -I 1024  # stats, project, unmix on the GPU, a cube per launch
//	go run ./examples/vca/bench -graph examples/vca/vca.yaml -cubes 8 # the small default problem
//
// The unfolding factor J (seed 003, §6.1.3: J graph iterations unrolled)
// is the number of cubes the channels hold: every channel whose capacity
// the graph leaves open gets J × its tokens per graph iteration (one cube),
// so up to J cubes are in flight and memory grows with J. The data-parallel
// Go actors (src, stats, project, unmix) get -replicas replicas (default:
// the cores Go may use, GOMAXPROCS, which follows taskset). The distinct
// cubes are generated before the clock starts (the seed read them from
// HDF5 files). Output: one line of text, or of JSON with -json.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/analysis"
	_ "github.com/sluicehq/sluice/device/cuda"   // registers the CUDA backend
	_ "github.com/sluicehq/sluice/device/opencl" // registers the OpenCL backend
	"github.com/sluicehq/sluice/examples/vca"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// Report is one configuration's measurement.
type Report struct {
	Mode      string    `json:"mode"` // sequential or graph
	Graph     string    `json:"graph"`
	Mapping   string    `json:"mapping,omitempty"`
	J         int       `json:"J,omitempty"`
	Replicas  int       `json:"replicas,omitempty"`
	G         int       `json:"work_groups,omitempty"` // -G
	I         int       `json:"work_items,omitempty"`  // -I
	Cores     int       `json:"cores"`                 // GOMAXPROCS
	Cubes     int       `json:"cubes"`
	Bands     int       `json:"bands"`
	Pixels    int       `json:"pixels"`
	Seconds   []float64 `json:"seconds"` // per repetition
	Mean      float64   `json:"mean_s"`
	SD        float64   `json:"sd_s"`
	CubesPerS float64   `json:"cubes_per_s"`
	CPUS      float64   `json:"cpu_s"` // user + system CPU time per repetition (mean)
	PeakRSSMB float64   `json:"peak_rss_mb"`
	MaxAngle  float64   `json:"max_angle_deg"` // worst endmember angle over all cubes
	MaxRMSE   float64   `json:"max_rmse"`      // worst abundance RMSE
}

func main() {
	var (
		graphFile = flag.String("graph", "examples/vca/vca-seed.yaml", "graph file")
		mapFile   = flag.String("mapping", "", "mapping file (kernel actors, replicas)")
		seq       = flag.Bool("seq", false, "time the sequential version instead of the graph")
		j         = flag.Int("J", 1, "unfolding factor: cubes the channels hold")
		replicas  = flag.Int("replicas", 0, "replicas of src, stats, project and unmix where the mapping leaves them on the CPU (0: GOMAXPROCS)")
		cubes     = flag.Int("cubes", 0, "cubes to unmix (0: the graph's cubes attribute)")
		reps      = flag.Int("reps", 1, "repetitions")
		groups    = flag.Int("G", 0, "work-groups (firings per launch) of the mapping's kernel actors (0: the mapping's)")
		items     = flag.Int("I", 0, "work-items per work-group of the mapping's kernel actors (0: the mapping's)")
		jsonOut   = flag.Bool("json", false, "print JSON")
		cpuProf   = flag.String("cpuprofile", "", "write a CPU profile of the measured runs to this file")
	)
	flag.Parse()
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "vca bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "vca bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	r, err := measure(*graphFile, *mapFile, *seq, *j, *replicas, *cubes, *reps, *groups, *items)
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "vca bench:", err)
		os.Exit(1)
	}
	if *jsonOut {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
		return
	}
	what := "sequential"
	if !*seq {
		what = fmt.Sprintf("graph J=%d replicas=%d", r.J, r.Replicas)
		if r.Mapping != "" {
			what += " mapping=" + r.Mapping
		}
	}
	fmt.Printf("%s, %d cores: %d cubes of %d bands × %d pixels in %.3f ± %.3f s (%.1f cubes/s, %.2f CPU s), peak RSS %.0f MB, worst angle %.2f°, worst RMSE %.4f\n",
		what, r.Cores, r.Cubes, r.Bands, r.Pixels, r.Mean, r.SD, r.CubesPerS, r.CPUS, r.PeakRSSMB, r.MaxAngle, r.MaxRMSE)
}

func measure(graphFile, mapFile string, seq bool, j, replicas, cubes, reps, groups, items int) (*Report, error) {
	if j < 1 || reps < 1 || replicas < 0 || cubes < 0 || groups < 0 || items < 0 {
		return nil, fmt.Errorf("-J %d, -reps %d, -replicas %d, -cubes %d, -G %d, -I %d: expected J ≥ 1, reps ≥ 1 and the others ≥ 0", j, reps, replicas, cubes, groups, items)
	}
	g, err := spec.LoadGraph(graphFile)
	if err != nil {
		return nil, err
	}
	src := g.Actor("src")
	if src == nil {
		return nil, fmt.Errorf("%s: expected an actor src (the VCA graph), found none", graphFile)
	}
	p, err := vca.ParseParams(src.Attrs)
	if err != nil {
		return nil, err
	}
	if cubes > 0 {
		p.Cubes = cubes
		for _, a := range g.Actors {
			if a.Attrs != nil {
				a.Attrs["cubes"] = strconv.Itoa(cubes)
			}
		}
	}
	if p.Cubes == 0 {
		return nil, fmt.Errorf("%s: the stream has no end (cubes 0): give -cubes", graphFile)
	}
	p.Warm()
	r := &Report{Mode: "sequential", Graph: graphFile, Cores: goruntime.GOMAXPROCS(0), Cubes: p.Cubes, Bands: p.Bands, Pixels: p.Pixels()}
	var run func() ([]vca.Result, error)
	if seq {
		run = func() ([]vca.Result, error) { return vca.Sequential(p, p.Cubes) }
	} else {
		r.Mode, r.Mapping, r.J, r.G, r.I = "graph", mapFile, j, groups, items
		if replicas == 0 {
			replicas = r.Cores
		}
		r.Replicas = replicas
		opts, err := options(g, mapFile, j, replicas, groups, items)
		if err != nil {
			return nil, err
		}
		vca.DefaultSink.SetOutput(nil)
		run = func() ([]vca.Result, error) {
			vca.DefaultSink.Take()
			if _, err := runtime.Run(context.Background(), g, opts); err != nil {
				return nil, err
			}
			return vca.DefaultSink.Take(), nil
		}
	}
	cpu0 := cpuTime()
	for range reps {
		t0 := time.Now()
		res, err := run()
		if err != nil {
			return nil, err
		}
		r.Seconds = append(r.Seconds, time.Since(t0).Seconds())
		if len(res) != p.Cubes {
			return nil, fmt.Errorf("%d cubes unmixed, expected %d", len(res), p.Cubes)
		}
		for _, x := range res {
			r.MaxAngle = max(r.MaxAngle, x.MaxAngle)
			r.MaxRMSE = max(r.MaxRMSE, x.RMSE)
		}
	}
	for _, s := range r.Seconds {
		r.Mean += s / float64(len(r.Seconds))
	}
	for _, s := range r.Seconds {
		r.SD += (s - r.Mean) * (s - r.Mean) / float64(len(r.Seconds))
	}
	r.SD = math.Sqrt(r.SD)
	r.CPUS = (cpuTime() - cpu0) / float64(reps)
	r.CubesPerS = float64(p.Cubes) / r.Mean
	r.PeakRSSMB = peakRSS()
	return r, nil
}

// options builds the run's options: the mapping (if any) with replicas
// for the data-parallel actors left on the CPU and groups × items for
// those on a device, and capacities of J graph iterations.
func options(g *graph.Graph, mapFile string, j, replicas, groups, items int) (runtime.Options, error) {
	opts := runtime.Options{Watchdog: 60 * time.Second}
	m := &graph.Mapping{Name: "bench", Actors: map[string]*graph.Placement{}}
	if mapFile != "" {
		mm, err := spec.LoadMapping(mapFile)
		if err != nil {
			return opts, err
		}
		m = mm
	}
	for _, a := range []string{"src", "stats", "project", "unmix"} {
		pl := m.Actors[a]
		if pl == nil {
			pl = &graph.Placement{}
			m.Actors[a] = pl
		}
		if pl.Device == "" || pl.Device == "cpu" {
			pl.Replicas = replicas
		} else {
			if groups > 0 {
				pl.WorkGroups = groups
			}
			if items > 0 {
				pl.WorkItems = items
			}
		}
	}
	opts.Mapping = m
	chk := analysis.Check(g, analysis.CheckOptions{})
	if len(chk.Errors) > 0 || chk.Deadlock {
		return opts, fmt.Errorf("graph check: %s", strings.Join(chk.Errors, "; "))
	}
	opts.DefaultCapacity = func(c *graph.Channel) int {
		return c.Initial + j*c.From.Rate.Sum()*int(chk.Repetitions[c.From.Actor.Name])
	}
	return opts, nil
}

// cpuTime is the process's user + system CPU time so far, in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// peakRSS is the process's peak resident set (VmHWM) in MB, 0 where
// /proc does not say.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
