// Command chain compares sluice with a hand-written goroutine-and-channel
// pipeline (and, when installed, GNU Radio) on a chain of saxpy stages over
// float32 streams: source -> 16 × (y = a·x + b) -> sink, 1024 samples per
// firing (per batch). sluice's source is stateless (its tokens depend on
// nothing, as the hand-fused loop's, which each worker makes for itself),
// so the runtime fuses it with the stages; -stateful-source makes it
// stateful, and then one core generates every sample.
//
//	go run ./bench/chain -json
//	go run ./bench/chain -json -cpus 2,4,8,16
//
// prints one JSON object (with -cpus, one per core count, each variant run
// in a child process confined to that many CPUs) with sluice_samples_per_s, goroutines_samples_per_s,
// ratio (sluice / goroutines), fused_samples_per_s and ratio_fused (sluice
// / the hand-fused data-parallel loop: one goroutine per core, each taking
// a batch and running every stage over it), the per-sample-channel variant, each
// variant's peak RSS (each runs in its own child process), and, when
// `python3 -c "import gnuradio"` works, gnuradio_samples_per_s and
// ratio_gnuradio from gnuradio_chain.py.
//
//	go run ./bench/chain -mode sluice -stages 64 -cpuprofile cpu.prof
//
// runs one variant (sluice, goroutines, fused or persample) in this
// process and writes a CPU profile of it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/bench/internal/cpus"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

const (
	scaleA = 1.0001
	addB   = 0.5
)

func main() {
	var (
		n       = flag.Int64("n", 1<<25, "samples to push through the chain")
		stages  = flag.Int("stages", 16, "saxpy stages")
		batch   = flag.Int("batch", 1024, "samples per firing / per channel message")
		asJSON  = flag.Bool("json", false, "print one JSON object")
		mode    = flag.String("mode", "", "internal: run one variant (sluice, goroutines, fused, persample) and print its rate")
		noFuse  = flag.Bool("no-fuse-cpu", false, "run sluice with runtime.Options.NoFuseCPU (a goroutine-free scheduling unit per actor)")
		stSrc   = flag.Bool("stateful-source", false, "make sluice's source stateful (it counts what it made), so it is not fused with the stages and one core generates every sample")
		perSamp = flag.Int64("n-per-sample", 1<<21, "samples for the per-sample-channel variant (it is slow)")
		gr      = flag.String("gnuradio", "auto", "run the GNU Radio flowgraph: auto, yes or no")
		cpuList = flag.String("cpus", "", "comma-separated core counts (GOMAXPROCS and affinity), one row each; empty: as started")
		profile = flag.String("cpuprofile", "", "with -mode: write a CPU profile of the run to this file")
		rounds  = flag.Int("rounds", 3, "runs of each variant per core count, alternating between the variants (the best of each is kept: the host's load drifts, and a single run of each may catch it at different moments)")
	)
	flag.Parse()
	statefulSource = *stSrc
	if *mode != "" {
		if *profile != "" {
			stop, err := cpus.StartProfile(*profile)
			if err != nil {
				fail(err)
			}
			defer stop()
		}
		var rate float64
		var err error
		switch *mode {
		case "sluice":
			rate, err = runSluice(*n, *stages, *batch, *noFuse, *stSrc)
		case "goroutines":
			rate = runGoroutines(*n, *stages, *batch)
		case "fused":
			rate = runFused(*n, *stages, *batch)
		case "persample":
			rate = runPerSample(*perSamp, *stages)
		default:
			err = fmt.Errorf("unknown mode %q", *mode)
		}
		if err != nil {
			fail(err)
		}
		fmt.Printf("%g %d\n", rate, peakRSS())
		return
	}
	counts, err := cpus.ParseList(*cpuList)
	if err != nil {
		fail(err)
	}
	for _, nc := range counts {
		row(nc, *cpuList != "", *n, *stages, *batch, *perSamp, *gr, *asJSON, *noFuse, max(1, *rounds))
	}
}

// row measures every variant on nc CPUs and prints one JSON object or a
// short table.
// statefulSource is -stateful-source, passed on to the child processes.
var statefulSource bool

func row(nc int, pin bool, n int64, stages, batch int, perSamp int64, gr string, asJSON, noFuse bool, rounds int) {
	res := map[string]any{
		"samples": n, "stages": stages, "batch": batch,
		"gomaxprocs": nc, "cpus": goruntime.NumCPU(), "rounds": rounds,
	}
	child := func(m string) (float64, int64) {
		exe, err := os.Executable()
		if err != nil {
			fail(err)
		}
		args := []string{"-mode", m, "-n", fmt.Sprint(n), "-stages", fmt.Sprint(stages),
			"-batch", fmt.Sprint(batch), "-n-per-sample", fmt.Sprint(perSamp), fmt.Sprintf("-no-fuse-cpu=%v", noFuse),
			fmt.Sprintf("-stateful-source=%v", statefulSource)}
		var out []byte
		if pin {
			out, err = cpus.Output(nc, exe, args...)
		} else {
			out, err = exec.Command(exe, args...).Output()
		}
		if err != nil {
			fail(fmt.Errorf("%s run: %w", m, err))
		}
		var rate float64
		var rss int64
		if _, err := fmt.Sscan(string(out), &rate, &rss); err != nil {
			fail(fmt.Errorf("%s run printed %q: %w", m, out, err))
		}
		return rate, rss
	}
	// The three batched variants run in turn, rounds times; the slow
	// per-sample one once.
	var sr, gr2, fr float64
	var srss, grss, frss int64
	for range rounds {
		for _, v := range []struct {
			m    string
			rate *float64
			rss  *int64
		}{{"sluice", &sr, &srss}, {"goroutines", &gr2, &grss}, {"fused", &fr, &frss}} {
			r, rss := child(v.m)
			if r > *v.rate {
				*v.rate, *v.rss = r, rss
			}
		}
	}
	pr, prss := child("persample")
	res["sluice_samples_per_s"] = sr
	res["sluice_peak_rss_bytes"] = srss
	res["goroutines_samples_per_s"] = gr2
	res["goroutines_peak_rss_bytes"] = grss
	res["ratio"] = sr / gr2
	res["fused_samples_per_s"] = fr
	res["fused_peak_rss_bytes"] = frss
	res["ratio_fused"] = sr / fr
	res["no_fuse_cpu"] = noFuse
	res["stateful_source"] = statefulSource
	res["goroutines_per_sample_samples_per_s"] = pr
	res["goroutines_per_sample_peak_rss_bytes"] = prss
	res["ratio_per_sample"] = sr / pr
	if py := gnuradioPython(); gr == "yes" || (gr == "auto" && py != "") {
		if rate, err := runGNURadio(n, stages); err != nil {
			res["gnuradio_error"] = err.Error()
		} else {
			res["gnuradio_samples_per_s"] = rate
			res["ratio_gnuradio"] = sr / rate
		}
	}
	if asJSON {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		return
	}
	fmt.Printf("%d cores, %d stages\n", nc, stages)
	fmt.Printf("sluice:                 %12.4g samples/s  (peak RSS %d MiB)\n", sr, srss>>20)
	fmt.Printf("goroutines (batches):   %12.4g samples/s  (peak RSS %d MiB)  ratio %.2f\n", gr2, grss>>20, sr/gr2)
	fmt.Printf("hand-fused loop:        %12.4g samples/s  (peak RSS %d MiB)  ratio %.2f\n", fr, frss>>20, sr/fr)
	fmt.Printf("goroutines (per sample):%12.4g samples/s  (peak RSS %d MiB)  ratio %.2f\n", pr, prss>>20, sr/pr)
	if v, ok := res["gnuradio_samples_per_s"]; ok {
		fmt.Printf("GNU Radio:              %12.4g samples/s  ratio %.2f\n", v, res["ratio_gnuradio"])
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "chain:", err)
	os.Exit(1)
}

// peakRSS returns the process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}

// saxpy is every variant's stage: out = a·in + b. It is not inlined, so
// that every variant runs the same machine code, its loop at the same
// offset from a 32-byte boundary (functions are aligned) in every build:
// inlined, the loop moved with the code around it, and the same sluice
// runtime ran 25 % slower in one build than in another (its loop crossed a
// 64-byte line there).
//
//go:noinline
func saxpy(in, out []float32) {
	out = out[:len(in)]
	for i, x := range in {
		out[i] = scaleA*x + addB
	}
}

// runSluice runs the chain as a sluice graph until the source ends.
func runSluice(n int64, stages, batch int, noFuse, statefulSource bool) (float64, error) {
	g := graph.New("chain")
	// The source's tokens depend on nothing (as the hand-fused loop's,
	// which each worker makes for itself): stateless, it is fused with the
	// stages and the run ends after n/batch iterations. Stateful, one core
	// generates every sample.
	var opts []graph.ActorOption
	if statefulSource {
		opts = append(opts, graph.Stateful())
	}
	src := g.AddActor("src", append(opts, graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		out := runtime.Output[float32](f, 0)
		for i := range out {
			out[i] = float32(i)
		}
		return nil
	})))...)
	prev := graph.AddOutput[float32](src, "out", graph.SDF(batch))
	for s := 0; s < stages; s++ {
		a := g.AddActor(fmt.Sprintf("saxpy%02d", s), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
			saxpy(runtime.Input[float32](f, 0), runtime.Output[float32](f, 0))
			return nil
		})))
		in := graph.AddInput[float32](a, "in", graph.SDF(batch))
		graph.Connect(g, prev, in)
		prev = graph.AddOutput[float32](a, "out", graph.SDF(batch))
	}
	var check float32
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		check += runtime.Input[float32](f, 0)[0]
		return nil
	})))
	graph.Connect(g, prev, graph.AddInput[float32](sink, "in", graph.SDF(batch)))
	iters := n / int64(batch)
	st, err := runtime.Run(context.Background(), g, runtime.Options{NoFuseCPU: noFuse, Iterations: iters})
	if err != nil {
		return 0, err
	}
	_ = check
	return float64(iters*int64(batch)) / st.Elapsed.Seconds(), nil
}

// runGoroutines is the hand-written pipeline: one goroutine per stage,
// []float32 batches passed through buffered Go channels, each stage
// transforming the batch in place; the sink returns batches to the source
// through a free list, so nothing is allocated in the steady state.
func runGoroutines(n int64, stages, batch int) float64 {
	const depth = 4
	free := make(chan []float32, depth*(stages+2))
	for i := 0; i < depth*(stages+2); i++ {
		free <- make([]float32, batch)
	}
	chans := make([]chan []float32, stages+1)
	for i := range chans {
		chans[i] = make(chan []float32, depth)
	}
	start := time.Now()
	go func() {
		for made := int64(0); made < n; made += int64(batch) {
			b := <-free
			for i := range b {
				b[i] = float32(i)
			}
			chans[0] <- b
		}
		close(chans[0])
	}()
	for s := 0; s < stages; s++ {
		in, out := chans[s], chans[s+1]
		go func() {
			for b := range in {
				saxpy(b, b)
				out <- b
			}
			close(out)
		}()
	}
	var got int64
	var check float32
	for b := range chans[stages] {
		check += b[0]
		got += int64(len(b))
		free <- b
	}
	_ = check
	return float64(got) / time.Since(start).Seconds()
}

// runFused is the loop a Go programmer fuses by hand: one goroutine per
// core (GOMAXPROCS), each taking the next batch of samples (an atomic
// counter), filling it as the source does and running every stage over it
// in place while it sits in L1, then summing it as the sink does.
func runFused(n int64, stages, batch int) float64 {
	workers := goruntime.GOMAXPROCS(0)
	var next atomic.Int64
	var wg sync.WaitGroup
	sums := make([]float32, workers*16) // one cache line per worker
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]float32, batch)
			for next.Add(int64(batch)) <= n {
				for i := range b {
					b[i] = float32(i)
				}
				for range stages {
					saxpy(b, b)
				}
				sums[w*16] += b[0]
			}
		}()
	}
	wg.Wait()
	return float64(n/int64(batch)*int64(batch)) / time.Since(start).Seconds()
}

// runPerSample is the naive pipeline: one goroutine per stage, one float32
// per channel message.
func runPerSample(n int64, stages int) float64 {
	chans := make([]chan float32, stages+1)
	for i := range chans {
		chans[i] = make(chan float32, 1024)
	}
	start := time.Now()
	go func() {
		for i := int64(0); i < n; i++ {
			chans[0] <- float32(i & 1023)
		}
		close(chans[0])
	}()
	for s := 0; s < stages; s++ {
		in, out := chans[s], chans[s+1]
		go func() {
			for x := range in {
				out <- scaleA*x + addB
			}
			close(out)
		}()
	}
	var got int64
	for range chans[stages] {
		got++
	}
	return float64(got) / time.Since(start).Seconds()
}

// runGNURadio runs gnuradio_chain.py (next to this file) and reads its
// samples/s.
func runGNURadio(n int64, stages int) (float64, error) {
	script := "bench/chain/gnuradio_chain.py"
	if _, err := os.Stat(script); err != nil {
		_, file, _, _ := goruntime.Caller(0)
		script = filepath.Join(filepath.Dir(file), "gnuradio_chain.py")
	}
	out, err := exec.Command(gnuradioPython(), script, "-n", fmt.Sprint(n), "--stages", fmt.Sprint(stages)).Output()
	if err != nil {
		return 0, fmt.Errorf("gnuradio_chain.py: %w", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return 0, fmt.Errorf("gnuradio_chain.py printed nothing")
	}
	return strconv.ParseFloat(fields[len(fields)-1], 64)
}

// gnuradioPython returns a Python interpreter that can import gnuradio: the
// first python3 on PATH, else the system's /usr/bin/python3 (where Debian's
// gnuradio package installs its module); "" when none can.
func gnuradioPython() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import gnuradio").Run() == nil {
			return py
		}
	}
	return ""
}
