// Command scale measures how sluice's CPU runtime scales with cores, side by
// side with hand-written Go in the same process, on two graphs:
//
//   - replicas: src -> work -> sink, where work is a stateless actor doing
//     about -work-us of CPU per firing (16 tokens in, 16 out); one replica
//     against as many replicas as cores. The speed-up is the ratio of their
//     firings per second (the goal is at least 0.85 x cores);
//   - ceiling: as many goroutines as cores, each doing -work-us pieces of
//     work back to back with no communication at all; its speed-up over one
//     goroutine is what the cores themselves allow (on a virtual machine
//     whose cores share physical ones, or slow down together, less than
//     the core count), the ceiling for both of the above;
//   - dag: a random DAG of -actors actors (fixed seed), each firing
//     consuming and producing -rate float32 tokens per port and doing about
//     -dag-us of CPU, against the same DAG written as one goroutine per
//     actor with a buffered Go channel per edge carrying []float32 batches
//     recycled through a free channel per edge. Both get -depth batches of
//     buffering per edge.
//
// Usage:
//
//	go run ./bench/scale -json -cpus 1,2,4,8,16
//
// prints one JSON object per core count (each measured in a child process
// confined to that many CPUs by GOMAXPROCS and affinity): firings per
// second of every variant, the replica speed-up, the DAG ratio
// (sluice / goroutines) and the DAG's own scaling against one core when 1
// is in the list.
//
//	go run ./bench/scale -mode dag-sluice -cpuprofile cpu.prof -memprofile mem.prof
//
// runs one variant in this process and profiles it (the allocation profile
// shows whatever allocates per firing: the DAG's actors allocate nothing).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/bench/internal/cpus"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

func main() {
	var (
		asJSON  = flag.Bool("json", false, "print one JSON object per core count")
		cpuList = flag.String("cpus", "", "comma-separated core counts (GOMAXPROCS and affinity), one row each; empty: as started")
		mode    = flag.String("mode", "", "internal: run one variant (replicas, ceiling, dag-sluice, dag-goroutines) and print its firings/s")
		reps    = flag.Int("replicas", 1, "internal: replicas of the work actor (-mode replicas)")
		workUS  = flag.Float64("work-us", 20, "CPU time of one replicated firing, in microseconds")
		dagUS   = flag.Float64("dag-us", 2, "CPU time of one DAG firing, in microseconds")
		actors  = flag.Int("actors", 256, "actors in the DAG")
		rate    = flag.Int("rate", 1024, "tokens per DAG port and firing")
		depth   = flag.Int("depth", 8, "batches of buffering per DAG edge")
		secs    = flag.Float64("seconds", 1, "approximate duration of each measurement")
		rounds  = flag.Int("rounds", 3, "measurements per variant (the best is kept)")
		seed    = flag.Uint64("seed", 1, "DAG seed")
		profile = flag.String("cpuprofile", "", "with -mode: write a CPU profile of the measurement to this file")
		memProf = flag.String("memprofile", "", "with -mode: write an allocation profile of the measurement to this file")
		noFuse  = flag.Bool("no-fuse-cpu", false, "run sluice with runtime.Options.NoFuseCPU (each actor its own scheduling unit: no fused chains)")
		units   = flag.Float64("work-units", 0, "iterations of the work loop per microsecond (0: calibrate now; the parent calibrates once and passes its figure to every child, so that all variants do the same work)")
		cpuTime = flag.Bool("cpu-time", false, "with -mode: also print the process's CPU time per firing, in ns (less sensitive than the rate to other load on the machine)")
	)
	flag.Parse()
	if *units > 0 {
		calOnce.Do(func() { workUnits = *units })
	}
	cfg := config{workUS: *workUS, dagUS: *dagUS, actors: *actors, rate: *rate, depth: *depth, seed: *seed, noFuse: *noFuse}
	if *mode != "" {
		if *profile != "" {
			stop, err := cpus.StartProfile(*profile)
			if err != nil {
				fail(err)
			}
			defer stop()
		}
		if *memProf != "" {
			goruntime.MemProfileRate = 4096
		}
		r, cpuNs, err := cfg.measure(*mode, *reps, *secs)
		if err != nil {
			fail(err)
		}
		if *memProf != "" {
			if err := writeHeapProfile(*memProf); err != nil {
				fail(err)
			}
		}
		if *cpuTime {
			fmt.Println(r, cpuNs)
			return
		}
		fmt.Println(r)
		return
	}
	counts, err := cpus.ParseList(*cpuList)
	if err != nil {
		fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		fail(err)
	}
	calibrate()
	common := []string{"-work-units", fmt.Sprint(workUnits), "-work-us", fmt.Sprint(*workUS), "-dag-us", fmt.Sprint(*dagUS), "-actors", fmt.Sprint(*actors),
		"-rate", fmt.Sprint(*rate), "-depth", fmt.Sprint(*depth), "-seconds", fmt.Sprint(*secs), "-seed", fmt.Sprint(*seed),
		fmt.Sprintf("-no-fuse-cpu=%v", *noFuse)}
	once := func(n int, m string, replicas int) float64 {
		args := append([]string{"-mode", m, "-replicas", fmt.Sprint(replicas)}, common...)
		var out []byte
		var err error
		if *cpuList != "" {
			out, err = cpus.Output(n, exe, args...)
		} else {
			out, err = exec.Command(exe, args...).Output()
		}
		if err != nil {
			fail(fmt.Errorf("%s on %d cores: %w", m, n, err))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			fail(fmt.Errorf("%s on %d cores: expected a rate, found %q", m, n, out))
		}
		return v
	}
	child := func(n int, m string, replicas int) float64 {
		best := 0.0
		for range *rounds {
			best = max(best, once(n, m, replicas))
		}
		return best
	}
	// pair measures two variants in alternating rounds (the host's load
	// drifts; side by side, both see the same): the best of each.
	pair := func(n int, a, b string) (float64, float64) {
		var ba, bb float64
		for range *rounds {
			ba = max(ba, once(n, a, 0))
			bb = max(bb, once(n, b, 0))
		}
		return ba, bb
	}
	var dag1 float64
	for _, n := range counts {
		one := child(n, "replicas", 1)
		many := child(n, "replicas", n)
		c1 := child(n, "ceiling", 1)
		cn := child(n, "ceiling", n)
		ds, dg := pair(n, "dag-sluice", "dag-goroutines")
		if n == 1 {
			dag1 = ds
		}
		row := map[string]any{
			"cores": n, "work_us": *workUS, "dag_us": *dagUS, "actors": *actors, "rate": *rate, "depth": *depth,
			"replicas_1_firings_per_s": one, "replicas_n_firings_per_s": many, "replica_speedup": many / one,
			"replica_speedup_per_core": many / one / float64(n),
			"ceiling_speedup":          cn / c1, "ceiling_speedup_per_core": cn / c1 / float64(n),
			"no_fuse_cpu": *noFuse, "dag_sluice_firings_per_s": ds, "dag_goroutines_firings_per_s": dg, "dag_ratio": ds / dg,
		}
		if dag1 > 0 {
			row["dag_scaling"] = ds / dag1
			row["dag_scaling_per_core"] = ds / dag1 / float64(n)
		}
		if *asJSON {
			b, _ := json.Marshal(row)
			fmt.Println(string(b))
			continue
		}
		fmt.Printf("%2d cores: replicas x%d %.3g firings/s vs x1 %.3g: speed-up %.2f (%.2f per core; the cores allow %.2f); "+
			"DAG sluice %.3g firings/s vs goroutines %.3g: %.2fx\n",
			n, n, many, one, many/one, many/one/float64(n), cn/c1/float64(n), ds, dg, ds/dg)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/scale:", err)
	os.Exit(1)
}

type config struct {
	workUS, dagUS float64
	actors        int
	rate, depth   int
	seed          uint64
	noFuse        bool // runtime.Options.NoFuseCPU
}

// measure runs one variant for about secs seconds and returns its firings
// per second (for the DAG, firings of all actors) and the process's CPU
// time per firing during the measured run, in ns.
func (c config) measure(mode string, replicas int, secs float64) (float64, float64, error) {
	calibrate()
	// A short run sizes the measured one.
	probe := func(iters int64) (float64, time.Duration, error) {
		switch mode {
		case "replicas":
			return c.replicas(replicas, iters)
		case "ceiling":
			return c.ceiling(replicas, iters)
		case "dag-sluice":
			return c.dagSluice(iters)
		case "dag-goroutines":
			return c.dagGoroutines(iters)
		}
		return 0, 0, fmt.Errorf("-mode: expected replicas, ceiling, dag-sluice or dag-goroutines, found %q", mode)
	}
	iters := int64(200)
	for {
		cpu0 := cpuTime()
		r, el, err := probe(iters)
		if err != nil {
			return 0, 0, err
		}
		if el.Seconds() >= secs/4 {
			return r, float64(cpuTime()-cpu0) / (r * el.Seconds()), nil
		}
		iters = max(iters*2, int64(float64(iters)*secs/max(el.Seconds(), 1e-3)))
	}
}

// replicas runs src -> work (replicas) -> sink for iters firings of work.
func (c config) replicas(replicas int, iters int64) (float64, time.Duration, error) {
	g := graph.New("replicas")
	nop := func(f *runtime.Firing) error { return nil }
	d := time.Duration(c.workUS * float64(time.Microsecond))
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(runtime.FireFunc(nop)))
	so := graph.AddOutput[float32](s, "out", graph.SDF(16))
	w := g.AddActor("work", graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		copy(runtime.Output[float32](f, 0), runtime.Input[float32](f, 0))
		work(d)
		return nil
	})))
	wi := graph.AddInput[float32](w, "in", graph.SDF(16))
	wo := graph.AddOutput[float32](w, "out", graph.SDF(16))
	k := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(nop)))
	graph.Connect(g, so, wi)
	graph.Connect(g, wo, graph.AddInput[float32](k, "in", graph.SDF(16)))
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"work": {Replicas: replicas}}}
	st, err := runtime.Run(context.Background(), g, runtime.Options{Iterations: iters, Mapping: m})
	if err != nil {
		return 0, 0, err
	}
	return float64(iters) / st.Elapsed.Seconds(), st.Elapsed, nil
}

// ceiling runs iters pieces of -work-us work split over n goroutines that
// share nothing.
func (c config) ceiling(n int, iters int64) (float64, time.Duration, error) {
	d := time.Duration(c.workUS * float64(time.Microsecond))
	var wg sync.WaitGroup
	start := time.Now()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(g); i < iters; i += int64(n) {
				work(d)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	return float64(iters) / el.Seconds(), el, nil
}

// dag is a random DAG: preds[i] lists the actors feeding actor i, in port
// order; succs[i] the actors it feeds.
type dag struct {
	preds, succs [][]int
}

// makeDAG draws a DAG of n actors: the first eight are sources; every
// other actor reads one or two of the 32 actors before it; an actor that
// feeds none is a sink.
func makeDAG(n int, seed uint64) dag {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	d := dag{preds: make([][]int, n), succs: make([][]int, n)}
	for i := min(8, n); i < n; i++ {
		k := 1 + rng.IntN(2)
		lo := max(0, i-32)
		seen := map[int]bool{}
		for range k {
			p := lo + rng.IntN(i-lo)
			if seen[p] {
				continue
			}
			seen[p] = true
			d.preds[i] = append(d.preds[i], p)
			d.succs[p] = append(d.succs[p], i)
		}
	}
	return d
}

// fire is one DAG actor's firing: out = sum of the inputs (or a ramp for a
// source), copied to every output, then about d of CPU.
func fire(ins [][]float32, outs [][]float32, d time.Duration) {
	if len(outs) > 0 {
		o := outs[0]
		if len(ins) == 0 {
			for j := range o {
				o[j] = float32(j)
			}
		} else {
			copy(o, ins[0])
			for _, in := range ins[1:] {
				for j := range o {
					o[j] += in[j]
				}
			}
		}
		for _, x := range outs[1:] {
			copy(x, o)
		}
	}
	work(d)
}

// dagSluice runs the DAG as a sluice graph for iters iterations.
func (c config) dagSluice(iters int64) (float64, time.Duration, error) {
	dg := makeDAG(c.actors, c.seed)
	g := graph.New("dag")
	d := time.Duration(c.dagUS * float64(time.Microsecond))
	ins := make([][]graph.InPort[float32], c.actors)
	outs := make([][]graph.OutPort[float32], c.actors)
	for i := range c.actors {
		ni, no := len(dg.preds[i]), len(dg.succs[i])
		opts := []graph.ActorOption{graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
			// The port lists live on the stack (no allocation per
			// firing, like the goroutines' lists made once).
			var inb, outb [8][]float32
			in, out := inb[:0], outb[:0]
			if no > len(outb) {
				out = make([][]float32, 0, no)
			}
			for p := range ni {
				in = append(in, runtime.Input[float32](f, p))
			}
			for p := range no {
				out = append(out, runtime.Output[float32](f, p))
			}
			fire(in, out, d)
			return nil
		}))}
		if ni == 0 {
			opts = append(opts, graph.Stateful())
		}
		a := g.AddActor(fmt.Sprintf("a%03d", i), opts...)
		for p := range ni {
			ins[i] = append(ins[i], graph.AddInput[float32](a, fmt.Sprintf("in%d", p), graph.SDF(c.rate)))
		}
		for p := range no {
			outs[i] = append(outs[i], graph.AddOutput[float32](a, fmt.Sprintf("out%d", p), graph.SDF(c.rate)))
		}
	}
	next := make([]int, c.actors) // next unused output port per actor
	for i := range c.actors {
		for p, src := range dg.preds[i] {
			graph.Connect(g, outs[src][next[src]], ins[i][p], graph.Capacity(c.depth*c.rate))
			next[src]++
		}
	}
	st, err := runtime.Run(context.Background(), g, runtime.Options{Iterations: iters, NoFuseCPU: c.noFuse})
	if err != nil {
		return 0, 0, err
	}
	return float64(iters) * float64(c.actors) / st.Elapsed.Seconds(), st.Elapsed, nil
}

// edge is a goroutine pipeline's channel: full batches one way, empty ones
// back.
type edge struct {
	data, free chan []float32
}

// dagGoroutines runs the DAG as one goroutine per actor.
func (c config) dagGoroutines(iters int64) (float64, time.Duration, error) {
	dg := makeDAG(c.actors, c.seed)
	d := time.Duration(c.dagUS * float64(time.Microsecond))
	inE := make([][]*edge, c.actors)
	outE := make([][]*edge, c.actors)
	for i := range c.actors {
		for _, src := range dg.preds[i] {
			e := &edge{data: make(chan []float32, c.depth), free: make(chan []float32, c.depth)}
			for range c.depth {
				e.free <- make([]float32, c.rate)
			}
			inE[i] = append(inE[i], e)
			outE[src] = append(outE[src], e)
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for i := range c.actors {
		wg.Add(1)
		go func(ie, oe []*edge) {
			defer wg.Done()
			in := make([][]float32, len(ie))
			out := make([][]float32, len(oe))
			for range iters {
				for p, e := range ie {
					in[p] = <-e.data
				}
				for p, e := range oe {
					out[p] = <-e.free
				}
				fire(in, out, d)
				for p, e := range ie {
					e.free <- in[p]
				}
				for p, e := range oe {
					e.data <- out[p]
				}
			}
		}(inE[i], outE[i])
	}
	wg.Wait()
	el := time.Since(start)
	return float64(iters) * float64(c.actors) / el.Seconds(), el, nil
}

// workUnits is the number of iterations of busy that take about 1 µs.
var (
	workUnits float64
	calOnce   sync.Once
)

func calibrate() {
	calOnce.Do(func() {
		const n = 1 << 16
		best := time.Duration(1 << 62)
		for range 20 {
			t0 := time.Now()
			if busy(n) < 0 {
				panic("unreachable")
			}
			best = min(best, time.Since(t0))
		}
		workUnits = float64(n) * float64(time.Microsecond) / float64(best)
	})
}

// busy does n iterations of floating-point work. It is not inlined, so
// that calibrate and work run the same machine code (inlined, each copy's
// loop has its own alignment, and so its own speed).
//
//go:noinline
func busy(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 1e-9
	}
	return x
}

// work does about d of CPU work (a fixed amount, so that a preempted firing
// does not do less).
func work(d time.Duration) {
	if busy(int(workUnits*float64(d)/float64(time.Microsecond))) < 0 {
		panic("unreachable")
	}
}

// cpuTime returns the CPU time (user and system) this process has used,
// in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// writeHeapProfile writes the allocations made so far into path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
