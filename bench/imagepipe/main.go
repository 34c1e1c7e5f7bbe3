// Command imagepipe measures the image pipeline of examples/imagepipe
// (frame source → 5×5 Gaussian blur → Sobel magnitude → motion by frame
// differencing → checksumming sink, 320×240 u8 frames, one per firing) on
// each backend, in frames per second, against seed 002's 2347 frames/s
// (MJPEG decoding + the same three filters on a GTX 670 and four CPU
// cores) and, when given, the hand-written CUDA program of reference/.
//
//	go run ./bench/imagepipe [-json] [-frames N] [-backend cpu|opencl|cuda|all]
//	go run ./bench/imagepipe -backend cuda -G 64 -I 512 -reference 'bench/imagepipe/reference/imagepipe -batch 64'
//
// Each backend runs in its own child process (so each reports its own peak
// RSS); the rate counts the frames that reach the sink after the first
// -warm ones (kernel compilation and start-up left out). -json prints one
// object with cpu_fps, opencl_fps, cuda_fps, seed_fps, the ratios and the
// checksums of the motion frames, which must agree between backends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	rtrace "runtime/trace"
	"strings"
	"sync"
	"syscall"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/examples/imagepipe"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// SeedFPS is seed 002's best frame rate for the MJPEG + motion-detection
// application (§VIII-D, Fig. 12a: platform A, all CPU cores and the GPU).
const SeedFPS = 2347

// Config is one backend run.
type Config struct {
	Backend      string `json:"backend"`                 // cpu, opencl or cuda
	Frames       int64  `json:"frames"`                  // frames through the graph
	Warm         int64  `json:"warm"`                    // frames not timed
	G            int    `json:"work_groups,omitempty"`   // overrides the mapping's work-groups
	I            int    `json:"work_items,omitempty"`    // overrides the mapping's work-items
	Depth        int    `json:"depth,omitempty"`         // runtime.Options.DeviceDepth
	Lanes        int    `json:"lanes,omitempty"`         // runtime.Options.DeviceLanes
	Round        int    `json:"round,omitempty"`         // runtime.Options.DeviceRound
	Workers      int    `json:"workers,omitempty"`       // runtime.Options.Workers
	Hollow       bool   `json:"hollow,omitempty"`        // src and stats do no per-frame work (the device side's capacity)
	HollowOnly   string `json:"hollow_only,omitempty"`   // with Hollow: only this actor (src or stats) does no per-frame work
	Ring         int    `json:"ring,omitempty"`          // device ring / FIFO capacity in invocations (0: runtime default)
	OpenCLDevice string `json:"opencl_device,omitempty"` // overrides the OpenCL mapping's device
	Replicas     int    `json:"replicas,omitempty"`      // replicas of src and stats (on the CPU: and of the filters)
	Stats        bool   `json:"-"`                       // print the run's statistics table on stderr
	Keep         bool   `json:"-"`                       // keep the motion frames (tests)
	Trace        string `json:"-"`                       // write the run's Chrome trace to this file
}

// Result is what a run measured.
type Result struct {
	Config
	FPS        float64               `json:"fps"`
	ElapsedS   float64               `json:"elapsed_s"` // the whole run, start-up included
	PeakRSS    int64                 `json:"peak_rss_bytes,omitempty"`
	Checksum   imagepipe.Checksum    `json:"checksum"`
	Device     string                `json:"device,omitempty"`
	CopiedByte int64                 `json:"copied_bytes"`     // bytes copied by channels (host ↔ device)
	Rounds     []runtime.DeviceStats `json:"rounds,omitempty"` // the devices' rounds: launched as graphs or one by one
	Kept       [][]uint8             `json:"-"`
}

func main() {
	var (
		asJSON     = flag.Bool("json", false, "print one JSON object")
		frames     = flag.Int64("frames", 20000, "frames per backend")
		backend    = flag.String("backend", "all", "cpu, opencl, cuda or all")
		warm       = flag.Int64("warm", -1, "frames not timed (default: frames/10)")
		g          = flag.Int("G", 0, "work-groups (frames per kernel invocation); 0: the mapping's")
		items      = flag.Int("I", 0, "work-items per work-group; 0: the mapping's")
		depth      = flag.Int("depth", 0, "invocations in flight per kernel actor (runtime.Options.DeviceDepth); 0: the runtime's")
		lanes      = flag.Int("lanes", 0, "most streams a round of invocations is spread over (runtime.Options.DeviceLanes); 0: the runtime's, 1: one")
		workers    = flag.Int("workers", 0, "CPU pool size (runtime.Options.Workers); 0: the runtime's")
		round      = flag.Int("round", 0, "most invocations per kernel actor in one round (runtime.Options.DeviceRound); 0: the runtime's")
		hollow     = flag.Bool("hollow", false, "src and stats do no per-frame work (frames are not written or summed): measures the device side alone; checksums differ")
		hollowOnly = flag.String("hollow-only", "", "with -hollow: only this actor (src or stats) does no per-frame work")
		ring       = flag.Int("ring", 0, "capacity of every channel in invocations of G frames; 0: the runtime's default")
		cldev      = flag.String("opencl-device", "auto", "OpenCL device for the opencl backend; auto: the first GPU, else the mapping's")
		ref        = flag.String("reference", "", "command line of the hand-written reference program to run too (it prints one JSON line)")
		reps       = flag.Int("replicas", 0, "replicas of the src and stats actors (cpu backend: and of the filters); 0: the mapping's")
		stats      = flag.Bool("stats", false, "print each run's statistics table on stderr")
		child      = flag.Bool("child", false, "internal: run one backend in this process and print its JSON result")
		profile    = flag.String("cpuprofile", "", "with -child: write a CPU profile of the run to this file")
		trace      = flag.String("trace", "", "with -child: write the run's Chrome trace (runtime.Options.Trace) to this file")
		gotrace    = flag.String("gotrace", "", "with -child: write a Go execution trace of the run (runtime/trace: goroutine scheduling, for go tool trace) to this file")
	)
	flag.Parse()
	if *warm < 0 {
		*warm = *frames / 10
	}
	cfg := Config{Frames: *frames, Warm: *warm, G: *g, I: *items, Depth: *depth, Lanes: *lanes, Round: *round, Workers: *workers, Hollow: *hollow, HollowOnly: *hollowOnly, Ring: *ring, OpenCLDevice: *cldev, Replicas: *reps, Stats: *stats}
	if *child {
		cfg.Backend = *backend
		cfg.Trace = *trace
		if *profile != "" {
			f, err := os.Create(*profile)
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "imagepipe: -cpuprofile:", err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		if *gotrace != "" {
			f, err := os.Create(*gotrace)
			if err == nil {
				err = rtrace.Start(f)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "imagepipe: -gotrace:", err)
				os.Exit(1)
			}
			defer rtrace.Stop()
		}
		r, err := Run(context.Background(), cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "imagepipe:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		r.PeakRSS = peakRSS()
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
		return
	}
	backends := []string{*backend}
	if *backend == "all" {
		backends = []string{"cpu", "opencl", "cuda"}
	}
	out := map[string]any{"frames": *frames, "warm": *warm, "seed_fps": SeedFPS, "cpus": goruntime.NumCPU()}
	var sums []imagepipe.Checksum
	for _, b := range backends {
		c := cfg
		c.Backend = b
		r, err := runChild(c)
		if err != nil {
			out[b+"_error"] = err.Error()
			if !*asJSON {
				fmt.Printf("%-7s error: %v\n", b, err)
			}
			continue
		}
		out[b+"_fps"] = r.FPS
		out[b+"_vs_seed"] = r.FPS / SeedFPS
		out[b+"_peak_rss_bytes"] = r.PeakRSS
		out[b+"_checksum"] = r.Checksum
		out[b+"_device"] = r.Device
		if r.G > 0 {
			out[b+"_work_groups"], out[b+"_work_items"] = r.G, r.I
		}
		sums = append(sums, r.Checksum)
		if !*asJSON {
			fmt.Printf("%-7s %10.0f frames/s  (%.2f× seed 002's %d)  peak RSS %d MiB  %s  checksum %+v\n",
				b, r.FPS, r.FPS/SeedFPS, SeedFPS, r.PeakRSS>>20, r.Device, r.Checksum)
		}
	}
	if len(sums) > 1 {
		same := true
		for _, s := range sums[1:] {
			same = same && s == sums[0]
		}
		out["checksums_match"] = same
	}
	for _, b := range []string{"opencl", "cuda"} {
		if v, ok := out[b+"_fps"].(float64); ok {
			if c, ok := out["cpu_fps"].(float64); ok && c > 0 {
				out[b+"_vs_cpu"] = v / c
			}
		}
	}
	if *ref != "" {
		r, err := runReference(*ref)
		if err != nil {
			out["reference_error"] = err.Error()
		} else {
			out["reference"] = r
			if fps, ok := r["fps"].(float64); ok && fps > 0 {
				out["reference_fps"] = fps
				if v, ok := out["cuda_fps"].(float64); ok {
					out["cuda_vs_reference"] = v / fps
				}
			}
		}
		if !*asJSON {
			fmt.Printf("reference: %v\n", out["reference"])
			if v, ok := out["cuda_vs_reference"]; ok {
				fmt.Printf("cuda / reference: %.3f (goal ≥ 0.9)\n", v)
			}
		}
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	}
}

// runChild runs one backend in a child process.
func runChild(c Config) (*Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-child", "-backend", c.Backend, "-frames", fmt.Sprint(c.Frames), "-warm", fmt.Sprint(c.Warm),
		"-G", fmt.Sprint(c.G), "-I", fmt.Sprint(c.I), "-depth", fmt.Sprint(c.Depth), "-lanes", fmt.Sprint(c.Lanes), "-round", fmt.Sprint(c.Round), "-workers", fmt.Sprint(c.Workers),
		fmt.Sprintf("-hollow=%v", c.Hollow), "-hollow-only", c.HollowOnly, "-ring", fmt.Sprint(c.Ring),
		"-opencl-device", c.OpenCLDevice, "-replicas", fmt.Sprint(c.Replicas), fmt.Sprintf("-stats=%v", c.Stats)}
	cmd := exec.Command(exe, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if c.Stats {
		cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	}
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", c.Backend, err, strings.TrimSpace(stderr.String()))
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s printed %q: %w", c.Backend, b, err)
	}
	return &r, nil
}

// runReference runs the reference program's command line and reads the
// JSON object on its last line.
func runReference(cmdline string) (map[string]any, error) {
	f := strings.Fields(cmdline)
	cmd := exec.Command(f[0], f[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", cmdline, err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var r map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return nil, fmt.Errorf("%s printed %q: %w", cmdline, b, err)
	}
	return r, nil
}

// ExampleDir finds examples/imagepipe: from the working directory (the
// repository root or below it), else next to this source file.
func ExampleDir() string {
	for _, d := range []string{"examples/imagepipe", "../examples/imagepipe", "../../examples/imagepipe"} {
		if _, err := os.Stat(filepath.Join(d, "imagepipe.yaml")); err == nil {
			return d
		}
	}
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "examples", "imagepipe")
}

// Available reports whether a backend has a device, and the reason if not.
func Available(backend string) (bool, string) {
	if backend == "cpu" {
		return true, ""
	}
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == backend {
			return r.Available(), r.Reason
		}
	}
	return false, "backend " + backend + " not registered"
}

// Run runs the graph once on one backend.
func Run(ctx context.Context, c Config) (*Result, error) {
	dir := ExampleDir()
	g, err := spec.Load(filepath.Join(dir, "imagepipe.yaml"))
	if err != nil {
		return nil, err
	}
	sink := &imagepipe.Sink{Warm: c.Warm}
	g.Actor("sink").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: sink}}
	var kept sync.Map // frame index → motion frame
	if c.Keep {
		g.Actor("stats").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(func(f *runtime.Firing) error {
			kept.Store(f.Index(), append([]uint8(nil), runtime.Input[uint8](f, 0)...))
			return imagepipe.Stats(f)
		})}}
	}
	if c.Hollow {
		for _, a := range []string{"src", "stats"} {
			if c.HollowOnly == "" || c.HollowOnly == a {
				g.Actor(a).Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(func(*runtime.Firing) error { return nil })}}
			}
		}
	}
	res := &Result{Config: c, Device: "cpu"}
	opts := runtime.Options{Iterations: c.Frames, DeviceDepth: c.Depth, DeviceLanes: c.Lanes, DeviceRound: c.Round, Workers: c.Workers}
	if c.Trace != "" {
		f, err := os.Create(c.Trace)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		opts.Trace = f
	}
	switch c.Backend {
	case "cpu":
		if c.Replicas > 0 {
			opts.Mapping = &graph.Mapping{Name: "cpu-replicas", Actors: map[string]*graph.Placement{}}
			for _, a := range []string{"src", "blur", "sobel", "motion", "stats"} {
				opts.Mapping.Actors[a] = &graph.Placement{Device: "cpu", Replicas: c.Replicas}
			}
			res.Device = fmt.Sprintf("cpu (replicas %d)", c.Replicas)
		}
	case "opencl", "cuda":
		if ok, why := Available(c.Backend); !ok {
			return nil, fmt.Errorf("no %s device: %s", c.Backend, why)
		}
		m, err := spec.LoadMapping(filepath.Join(dir, c.Backend+".yaml"))
		if err != nil {
			return nil, err
		}
		dev := ""
		if c.Backend == "opencl" {
			dev = pickOpenCL(c.OpenCLDevice)
		}
		for name, p := range m.Actors {
			if name == "stats" || name == "src" {
				if c.Replicas > 0 {
					p.Replicas = c.Replicas
				}
				continue
			}
			if c.G > 0 {
				p.WorkGroups = c.G
			}
			if c.I > 0 {
				p.WorkItems = c.I
			}
			if dev != "" {
				p.Device = dev
			}
			res.G, res.I = p.WorkGroups, p.WorkItems
			res.Device = p.Device
		}
		opts.Mapping = m
		res.Device = describe(res.Device)
	default:
		return nil, fmt.Errorf("backend %q: expected cpu, opencl or cuda", c.Backend)
	}
	if c.Ring > 0 {
		inv := int64(max(res.G, 1)) * imagepipe.Pixels
		opts.DefaultCapacity = func(ch *graph.Channel) int {
			return ch.Initial + int(int64(c.Ring)*inv)
		}
	}
	st, err := runtime.Run(ctx, g, opts)
	if err != nil {
		return nil, err
	}
	if sink.Sum.Frames != c.Frames {
		return nil, fmt.Errorf("sink got %d frames, expected %d", sink.Sum.Frames, c.Frames)
	}
	res.FPS = sink.Rate()
	if res.FPS == 0 {
		return nil, errors.New("too few frames to time: raise -frames or lower -warm")
	}
	res.ElapsedS = st.Elapsed.Seconds()
	res.Checksum = sink.Sum
	for i := int64(0); c.Keep && i < c.Frames; i++ {
		v, _ := kept.Load(i)
		res.Kept = append(res.Kept, v.([]uint8))
	}
	if c.Stats {
		_ = st.WriteTable(os.Stderr)
	}
	for _, ch := range st.Channels {
		res.CopiedByte += ch.CopiedBytes
	}
	res.Rounds = st.Devices
	return res, nil
}

// pickOpenCL returns the OpenCL device to use: the one asked for, or with
// "auto" the first OpenCL GPU ("" when there is none: the mapping's).
func pickOpenCL(want string) string {
	if want != "auto" {
		return want
	}
	for _, r := range device.Discover(context.Background()) {
		if r.Backend != "opencl" {
			continue
		}
		for _, d := range r.Devices {
			if d.Kind == device.GPU {
				return d.ID
			}
		}
	}
	return ""
}

// describe names a device ID with the device's name.
func describe(id string) string {
	for _, r := range device.Discover(context.Background()) {
		for _, d := range r.Devices {
			if d.ID == id || (id == r.Backend && len(r.Devices) > 0 && d.ID == r.Devices[0].ID) {
				return d.ID + " (" + d.Name + ")"
			}
		}
	}
	return id
}

// peakRSS returns the process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}
