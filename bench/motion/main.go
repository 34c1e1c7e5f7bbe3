// Command motion measures the Motion-JPEG motion detector of
// examples/motion (read → decode → Gaussian blur → Sobel → Lucas–Kanade
// flow → statistics → sink, 320×240 grey frames) in frames per second,
// for seed 002's Fig. 12a configurations: all actors on one core; all
// cores, no GPU; one core + GPU; all cores + GPU (run the one-core ones
// under taskset -c 0). The seed measured 57 frames/s on one core and 2347
// frames/s with four cores and a GTX 670.
//
//	go run ./bench/motion [-backend cpu|opencl|cuda] [-replicas N] [-frames N] [-decoder auto|go|turbojpeg] [-json]
//	taskset -c 0 motion -backend cpu -replicas 1 -workers 1
//
// The reader loops over the input (default: the example's generated clip;
// -input FILE or SLUICE_MOTION_INPUT for another MJPEG file); the frame
// after the last is compared with the first, so one flow field per pass is
// against an unrelated frame (the work is the same). -replicas
// sets the decoder's and the stats actor's replicas (with -backend cpu:
// the filters' too); 0 keeps the mapping's. The rate counts the frames
// that reach the sink after the first -warm ones. Per actor it prints the
// busy time per frame; the busiest CPU actor per replica is the
// bottleneck when the device is not. -decoder picks the decode actor's
// JPEG decoder: libjpeg-turbo's TurboJPEG where libturbojpeg loads (auto,
// the default), Go's image/jpeg (go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"syscall"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/examples/motion"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Seed 002's Fig. 12a frame rates (platform A: Core i7-2600K, GTX 670).
const (
	SeedOneCoreFPS = 57
	SeedBestFPS    = 2347
)

// ActorLoad is one actor's share of the work.
type ActorLoad struct {
	Name     string  `json:"name"`
	Kind     string  `json:"kind"`
	Replicas int     `json:"replicas"`
	BusyUS   float64 `json:"busy_us_per_frame"` // busy time per frame, all replicas together
	// Load is the busy time per frame and replica over the time between
	// frames: near 1 for the actor that bounds the rate.
	Load float64 `json:"load"`
}

// Result is one run's measurement.
type Result struct {
	Backend   string      `json:"backend"`
	Replicas  int         `json:"replicas"`
	Workers   int         `json:"workers"`
	CPUs      int         `json:"cpus"` // GOMAXPROCS (taskset limits it)
	G         int         `json:"work_groups,omitempty"`
	I         int         `json:"work_items,omitempty"`
	Device    string      `json:"device"`
	Decoder   string      `json:"decoder"` // the JPEG decoder the decode actor used
	Frames    int64       `json:"frames"`
	FPS       float64     `json:"fps"`
	VsOneCore float64     `json:"vs_seed_one_core"`
	VsSeed    float64     `json:"vs_seed_best"`
	ElapsedS  float64     `json:"elapsed_s"`
	PeakRSS   int64       `json:"peak_rss_bytes"`
	Summary   any         `json:"summary"`
	Actors    []ActorLoad `json:"actors"`
	Bottle    string      `json:"bottleneck"`
}

func main() {
	var (
		backend = flag.String("backend", "cpu", "cpu, opencl or cuda")
		frames  = flag.Int64("frames", 3000, "frames through the graph (the input loops)")
		warm    = flag.Int64("warm", -1, "frames not timed (default: frames/10)")
		reps    = flag.Int("replicas", 0, "replicas of decode and stats (cpu: and of the filters); 0: the mapping's")
		workers = flag.Int("workers", 0, "CPU pool size (runtime.Options.Workers); 0: GOMAXPROCS")
		g       = flag.Int("G", 0, "work-groups (frames per kernel invocation); 0: the mapping's")
		items   = flag.Int("I", 0, "work-items per work-group; 0: the mapping's")
		input   = flag.String("input", "", "MJPEG file (default: SLUICE_MOTION_INPUT, else the generated clip)")
		asJSON  = flag.Bool("json", false, "print one JSON object")
		dir     = flag.String("dir", "", "examples/motion (default: found from the working directory)")
		decoder = flag.String("decoder", "auto", "JPEG decoder of the decode actor: auto (TurboJPEG where libturbojpeg loads, else image/jpeg), go or turbojpeg")
	)
	flag.Parse()
	if *warm < 0 {
		*warm = *frames / 10
	}
	dec, err := motion.ParseDecoder(*decoder)
	if err != nil {
		fmt.Fprintln(os.Stderr, "motion: -decoder:", err)
		os.Exit(2)
	}
	r, err := run(context.Background(), *dir, *backend, *input, dec, *frames, *warm, *reps, *workers, *g, *items)
	if err != nil {
		fmt.Fprintln(os.Stderr, "motion:", err)
		os.Exit(1)
	}
	if *asJSON {
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
		return
	}
	fmt.Printf("%s on %s, %d CPUs, replicas %d, decoder %s: %.0f frames/s (%.1f× seed's one core %d, %.2f× seed's best %d), bottleneck %s\n",
		r.Backend, r.Device, r.CPUs, r.Replicas, r.Decoder, r.FPS, r.VsOneCore, SeedOneCoreFPS, r.VsSeed, SeedBestFPS, r.Bottle)
	for _, a := range r.Actors {
		fmt.Printf("  %-7s %-6s ×%-2d %8.1f µs/frame  load %.2f\n", a.Name, a.Kind, a.Replicas, a.BusyUS, a.Load)
	}
}

// exampleDir finds examples/motion from the working directory.
func exampleDir() string {
	for _, d := range []string{"examples/motion", "../examples/motion", "../../examples/motion"} {
		if _, err := os.Stat(filepath.Join(d, "motion.yaml")); err == nil {
			return d
		}
	}
	return "examples/motion"
}

func available(backend string) (bool, string) {
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend {
			return r.Available(), r.Reason
		}
	}
	return false, "backend " + backend + " not registered"
}

func run(ctx context.Context, dir, backend, input string, decoder motion.Decoder, frames, warm int64, reps, workers, g, items int) (*Result, error) {
	if dir == "" {
		dir = exampleDir()
	}
	gr, err := driver.LoadGraph(context.Background(), filepath.Join(dir, "motion.yaml"), driver.Options{})
	if err != nil {
		return nil, err
	}
	sink := &motion.Sink{Warm: warm}
	gr.Actor("read").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: &motion.Reader{Path: input, Loop: true}}}
	gr.Actor("sink").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: sink}}
	decoder = decoder.Resolve()
	if decoder == motion.DecoderTurbo {
		if err := motion.TurboJPEG(); err != nil {
			return nil, fmt.Errorf("-decoder turbojpeg: %w", err)
		}
	}
	if gr.Actor("decode").Attrs == nil {
		gr.Actor("decode").Attrs = map[string]string{}
	}
	gr.Actor("decode").Attrs["decoder"] = string(decoder)
	res := &Result{Backend: backend, Workers: workers, CPUs: goruntime.GOMAXPROCS(0), Device: "cpu", Decoder: string(decoder), Frames: frames}
	opts := runtime.Options{Iterations: frames, Workers: workers}
	var m *graph.Mapping
	switch backend {
	case "cpu":
		m = &graph.Mapping{Name: "cpu", Actors: map[string]*graph.Placement{}}
		if reps == 0 {
			if m, err = driver.LoadMapping(filepath.Join(dir, "cpu.yaml")); err != nil {
				return nil, err
			}
		}
		for _, a := range []string{"decode", "blur", "sobel", "flow", "stats"} {
			if reps > 0 {
				m.Actors[a] = &graph.Placement{Device: "cpu", Replicas: reps}
			}
		}
	case "opencl", "cuda":
		if ok, why := available(backend); !ok {
			return nil, fmt.Errorf("no %s device: %s", backend, why)
		}
		if m, err = driver.LoadMapping(filepath.Join(dir, backend+".yaml")); err != nil {
			return nil, err
		}
		for name, p := range m.Actors {
			if name == "decode" || name == "stats" {
				if reps > 0 {
					p.Replicas = reps
				}
				continue
			}
			if g > 0 {
				p.WorkGroups = g
			}
			if items > 0 {
				p.WorkItems = items
			}
			res.G, res.I, res.Device = p.WorkGroups, p.WorkItems, p.Device
		}
		res.Device = describe(backend)
	default:
		return nil, fmt.Errorf("backend %q: expected cpu, opencl or cuda", backend)
	}
	opts.Mapping = m
	if p := m.Actors["decode"]; p != nil {
		res.Replicas = p.Replicas
	} else {
		res.Replicas = 1
	}
	st, err := runtime.Run(ctx, gr, opts)
	if err != nil {
		return nil, err
	}
	if sink.Sum.Frames != frames {
		return nil, fmt.Errorf("sink got %d frames, expected %d", sink.Sum.Frames, frames)
	}
	res.FPS = sink.Rate()
	if res.FPS == 0 {
		return nil, errors.New("too few frames to time: raise -frames or lower -warm")
	}
	res.VsOneCore, res.VsSeed = res.FPS/SeedOneCoreFPS, res.FPS/SeedBestFPS
	res.ElapsedS = st.Elapsed.Seconds()
	res.PeakRSS = peakRSS()
	res.Summary = sink.Sum
	best := 0.0
	for _, a := range st.Actors {
		l := ActorLoad{Name: a.Name, Kind: a.Kind, Replicas: max(a.Replicas, 1)}
		if a.Firings > 0 {
			l.BusyUS = float64(a.Busy.Microseconds()) / float64(a.Firings)
			l.Load = l.BusyUS / float64(l.Replicas) * res.FPS / 1e6
		}
		res.Actors = append(res.Actors, l)
		if a.Kind != "kernel" && l.Load > best {
			best, res.Bottle = l.Load, a.Name
		}
	}
	// With fewer CPUs than busy actors, the CPUs are the limit: their sum.
	var cpu float64
	for _, a := range res.Actors {
		if a.Kind != "kernel" {
			cpu += a.BusyUS
		}
	}
	cores := res.CPUs
	if workers > 0 {
		cores = min(cores, workers)
	}
	if share := cpu * res.FPS / 1e6 / float64(cores); share > 0.8 && share > best {
		res.Bottle = fmt.Sprintf("the %d CPU core(s): %.0f µs of CPU work per frame", cores, cpu)
	}
	return res, nil
}

// describe names the backend's first device.
func describe(backend string) string {
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend && len(r.Devices) > 0 {
			return r.Devices[0].ID + " (" + r.Devices[0].Name + ")"
		}
	}
	return backend
}

// peakRSS returns the process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024
}
