// Command bench times image stitching: the sequential Go version
// (stitch.Sequential) or the graph (stitch.yaml, or stitch-42x59.yaml at
// the seed's scale) on a given number of CPU workers, optionally with the
// tiles' FFTs on an OpenCL device (the fft2d.cl kernel actor) or every FFT
// on cuFFT, and prints one JSON line: wall time, peak resident memory
// (VmHWM), GPU memory in use at the end (cuFFT), the positions that differ
// from the known ones, and per channel the capacity in bytes.
//
//	go run ./examples/stitch/bench -graph examples/stitch/stitch.yaml -mode graph -workers 2
//	go run ./examples/stitch/bench -graph examples/stitch/stitch.yaml -mode seq
//	go run ./examples/stitch/bench -graph examples/stitch/stitch.yaml -mode graph -opencl opencl
//	go run ./examples/stitch/bench -graph examples/stitch/stitch.yaml -mode graph -fft cufft
//
// Each run is one process (peak RSS is per process); pin it with taskset
// to count cores, as examples/stitch/device.sh does.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/pprof"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"

	_ "github.com/sluicehq/sluice/device/opencl" // registers the OpenCL backend
	"github.com/sluicehq/sluice/examples/stitch"
)

type result struct {
	Mode         string           `json:"mode"`
	Graph        string           `json:"graph"`
	Grid         string           `json:"grid"`
	Tile         string           `json:"tile"`
	Workers      int              `json:"workers"`
	Replicas     int              `json:"replicas,omitempty"`
	OpenCL       string           `json:"opencl,omitempty"`
	OpenCLDevs   []string         `json:"opencl_devices,omitempty"` // in order: "opencl" is the first
	Seconds      float64          `json:"seconds"`
	TilesPerSec  float64          `json:"tiles_per_s"`
	PeakRSSMiB   float64          `json:"peak_rss_mib"`
	Mismatches   int              `json:"mismatches"`
	Tiles        int              `json:"tiles"`
	ChannelBytes map[string]int64 `json:"channel_bytes,omitempty"`
	FIFOMiB      float64          `json:"fifo_mib,omitempty"`
	FFT          string           `json:"fft"`
	GPUUsedMiB   float64          `json:"gpu_used_mib,omitempty"`
	GPUSpectra   int64            `json:"gpu_spectra_peak,omitempty"` // GPU graph: the most tiles held on the GPU at once
	GPUReplicas  int              `json:"gpu_replicas,omitempty"`     // GPU graph: replicas of fft, west and north
}

func main() {
	graphPath := flag.String("graph", "examples/stitch/stitch.yaml", "graph file (its src attributes give the data set)")
	mode := flag.String("mode", "graph", "seq (sequential Go) or graph (sluice runtime)")
	workers := flag.Int("workers", goruntime.NumCPU(), "CPU workers (and GOMAXPROCS)")
	replicas := flag.Int("replicas", 0, "replicas of src/fft/west/north (0: as many as workers)")
	ocl := flag.String("opencl", "", "run fft on this OpenCL device: opencl (the first), gpu (the first GPU) or an ID (opencl:1:0); empty: on the CPU")
	groups := flag.Int("work-groups", 4, "OpenCL: tiles per invocation")
	items := flag.Int("work-items", 256, "OpenCL: work-items per tile")
	mosaic := flag.String("mosaic", "", "write the mosaic here (.png or .pgm); empty: none")
	rows := flag.Int("rows", 0, "stitch only the first ROWS rows of the grid (0: all)")
	fft := flag.String("fft", "go", "the Go actors' FFTs: go, or cufft (GPU 0)")
	gpuReps := flag.Int("gpu-replicas", 4, "GPU graphs (stitch-gpu.yaml, stitch-42x59-gpu.yaml): replicas of fft, west and north, each a firing in flight on the GPU")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	trace := flag.String("trace", "", "graph mode: write the run's Chrome trace (runtime.Options.Trace) to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: -cpuprofile:", err)
			os.Exit(1)
		}
	}
	err := run(*graphPath, *mode, *workers, *replicas, *gpuReps, *ocl, *groups, *items, *mosaic, *rows, *fft, *trace)
	pprof.StopCPUProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(path, mode string, workers, replicas, gpuReps int, ocl string, groups, items int, mosaic string, rows int, fft, traceFile string) error {
	goruntime.GOMAXPROCS(workers)
	g, err := spec.Load(path)
	if err != nil {
		return err
	}
	src := g.Actor("src")
	if src == nil {
		return fmt.Errorf("%s: no actor src: expected stitch.yaml's actors", path)
	}
	cfg, err := stitch.ParseConfig(src.Attrs)
	if err != nil {
		return err
	}
	if rows > 0 && rows < cfg.Rows {
		cfg.Rows = rows // the columns (the north delay) stay as the graph has them
	}
	for _, a := range g.Actors {
		a.Attrs["mosaic"] = mosaic
		a.Attrs["grid"] = fmt.Sprintf("%dx%d", cfg.Rows, cfg.Cols)
		a.Attrs["fft"] = fft
	}
	cfg.Mosaic, cfg.FFT = mosaic, fft
	if err := cfg.Validate(); err != nil {
		return err
	}
	// The GPU graphs' fft emits handles (u64) to tiles kept on the GPU.
	var gpu *stitch.GPU
	if f := g.Actor("fft"); f != nil && len(f.Outputs) > 0 && f.Outputs[0].Type.String() == "u64" {
		if mode != "graph" || ocl != "" || fft != "go" {
			return fmt.Errorf("%s: a GPU graph runs in -mode graph without -opencl or -fft", path)
		}
		if gpu, err = stitch.GPUFor(cfg.Width, cfg.Height); err != nil { // compiled and planned outside the timing
			return err
		}
	}
	if fft == "cufft" { // load and plan outside the timing, as the FFTW plans of the seed's code were
		if _, err := stitch.EngineFor(cfg); err != nil {
			return err
		}
	}
	out := result{Mode: mode, Graph: path, Workers: workers, Tiles: cfg.Tiles(), FFT: fft,
		Grid: fmt.Sprintf("%dx%d", cfg.Rows, cfg.Cols), Tile: fmt.Sprintf("%dx%d", cfg.Width, cfg.Height)}
	stitch.SceneFor(cfg) // the scene's textures, outside the timing (a microscope's tiles exist before stitching)
	start := time.Now()
	var res *stitch.Result
	switch mode {
	case "seq":
		r, err := stitch.Sequential(context.Background(), cfg)
		if err != nil {
			return err
		}
		res = &r
	case "graph":
		if replicas <= 0 {
			replicas = workers
		}
		out.Replicas, out.OpenCL = replicas, ocl
		m := &graph.Mapping{Name: "bench", Actors: map[string]*graph.Placement{}}
		for _, n := range []string{"src", "fft", "west", "north"} {
			m.Actors[n] = &graph.Placement{Device: "cpu", Replicas: replicas}
			if gpu != nil && n != "src" {
				m.Actors[n].Replicas = gpuReps
				out.GPUReplicas = gpuReps
			}
		}
		if ocl != "" {
			gpu := ""
			for _, r := range device.Discover(context.Background()) {
				if r.Backend == "opencl" {
					for _, d := range r.Devices {
						out.OpenCLDevs = append(out.OpenCLDevs, d.ID+" "+d.Name)
						if d.Kind == device.GPU && gpu == "" {
							gpu = d.ID
						}
					}
				}
			}
			if ocl == "gpu" {
				if gpu == "" {
					return fmt.Errorf("-opencl gpu: no OpenCL GPU among %v", out.OpenCLDevs)
				}
				ocl, out.OpenCL = gpu, gpu
			}
			m.Actors["fft"] = &graph.Placement{Device: ocl, Impl: graph.ImplOpenCL, WorkGroups: groups, WorkItems: items}
		}
		stitch.Last()
		opts := runtime.Options{Workers: workers, Mapping: m, Watchdog: time.Minute}
		if traceFile != "" {
			f, err := os.Create(traceFile)
			if err != nil {
				return err
			}
			defer f.Close()
			opts.Trace = f
		}
		st, err := runtime.Run(context.Background(), g, opts)
		if err != nil {
			return err
		}
		if res = stitch.Last(); res == nil {
			return fmt.Errorf("the run ended before the last tile")
		}
		// A broadcast is one FIFO: count each output port once, at the
		// largest capacity of its channels.
		out.ChannelBytes = map[string]int64{}
		fifo := map[*graph.Port]int64{}
		for _, cs := range st.Channels {
			c := g.Channel(cs.Name)
			if c == nil {
				continue
			}
			b := int64(cs.Capacity) * int64(c.From.Type.Size)
			out.ChannelBytes[cs.Name] = b
			fifo[c.From] = max(fifo[c.From], b)
		}
		var sum int64
		for _, b := range fifo {
			sum += b
		}
		out.FIFOMiB = float64(sum) / (1 << 20)
	default:
		return fmt.Errorf("mode %q: expected seq or graph", mode)
	}
	el := time.Since(start)
	out.Seconds = el.Seconds()
	out.TilesPerSec = float64(cfg.Tiles()) / el.Seconds()
	out.Mismatches = res.Mismatches
	out.PeakRSSMiB = stitch.PeakRSS()
	if fft == "cufft" {
		e, _ := stitch.CUFFTFor(cfg.Width, cfg.Height)
		if used, err := e.MemUsed(); err == nil {
			out.GPUUsedMiB = float64(used) / (1 << 20)
		}
	}
	if gpu != nil {
		if used, err := gpu.MemUsed(); err == nil {
			out.GPUUsedMiB = float64(used) / (1 << 20)
		}
		out.GPUSpectra = gpu.PeakHandles()
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
