package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Host is what the host's microbenchmarks measured. Times are in
// nanoseconds.
type Host struct {
	// Hostname, CPUModel and NumCPU identify the host (NumCPU: the CPUs
	// this process may run on, as Go sees them).
	Hostname string `json:"hostname"`
	CPUModel string `json:"cpu_model"`
	NumCPU   int    `json:"num_cpu"`
	// Workers is the runtime's CPU pool size the model is for (GOMAXPROCS).
	Workers int `json:"workers"`
	// Parallelism is the effective parallelism of Workers goroutines
	// running CPU-bound loops at once (Workers on an idle host; less where
	// other jobs share the cores).
	Parallelism float64 `json:"parallelism"`
	// Availability is the share of the time Workers goroutines that want
	// the CPU all along really run (1 on an idle host; less where other
	// jobs preempt them).
	Availability float64 `json:"availability"`
	// FiringNs is the runtime's cost per firing outside the firing's own
	// time (what a profile's mean firing time does not hold), RoundNs its
	// cost per round and PortNs per port and round (acquire and commit or
	// release of one window), all from one-worker runs of empty actors.
	FiringNs float64 `json:"firing_ns"`
	RoundNs  float64 `json:"round_ns"`
	PortNs   float64 `json:"port_ns"`
	// EmptyFiringNs is the mean firing time a profile reports for an actor
	// whose firing does nothing (the runtime's share inside the timed
	// region).
	EmptyFiringNs float64 `json:"empty_firing_ns"`
	// WakeNs is how long a goroutine parked on a channel takes to run
	// after one that goes on computing wakes it (mean; WakeLatency).
	WakeNs float64 `json:"wake_ns"`
	// PoolWakeNs is how long a parked worker of the runtime's pool takes
	// to run a unit another worker's commit readied, and WakeCostNs what
	// that wake-up costs the worker that commits (PoolWake); both 0 with
	// one worker, where no worker is parked while another runs.
	PoolWakeNs float64 `json:"pool_wake_ns"`
	WakeCostNs float64 `json:"wake_cost_ns"`
	// HandoffNs is the one-way latency of a token between two goroutines
	// through a FIFO of capacity 1 (half a ping-pong round trip, median).
	HandoffNs float64 `json:"fifo_handoff_ns"`
	// ClockNs is the cost of one read of the clock (time.Now; median of
	// blocks of reads).
	ClockNs float64 `json:"clock_ns"`
	// BurnExtraNs and BurnStretch are how much longer than asked a busy
	// loop on the clock (Burn, what synthetic actors run for their
	// declared cost d) keeps a core while Workers goroutines burn at once:
	// BurnExtraNs + BurnStretch × d more (BurnLoad).
	BurnExtraNs float64 `json:"burn_extra_ns"`
	BurnStretch float64 `json:"burn_stretch"`
	// MemBandwidth is the memory copy bandwidth of one core in bytes/s
	// (copying 64 MiB, best of 5).
	MemBandwidth float64 `json:"mem_bandwidth_bytes_per_s"`
}

// PoolWake is the wake-up latency of the model's pool: the pool's own
// (PoolWakeNs) where it was measured, else a bare goroutine's (WakeNs: one
// worker, whose pool wakes only for work readied outside it).
func (h *Host) PoolWake() float64 {
	if h.PoolWakeNs > 0 {
		return h.PoolWakeNs
	}
	return h.WakeNs
}

// measureHost runs the host's microbenchmarks for a pool of workers.
func measureHost(ctx context.Context, workers int, logf func(string, ...any)) (*Host, error) {
	h := &Host{CPUModel: CPUModel(), NumCPU: goruntime.NumCPU(), Workers: workers}
	h.Hostname, _ = os.Hostname()
	h.Parallelism = Parallelism(workers)
	h.Availability = Availability(workers, 100*time.Millisecond)
	logf("effective parallelism of %d workers: %.2f; they ran %.0f%% of the time", workers, h.Parallelism, 100*h.Availability)
	var err error
	if err = MeasureRuntime(ctx, h); err != nil {
		return nil, err
	}
	logf("runtime: %.0f ns per firing (+%.0f ns timed), %.0f ns per round, %.0f ns per port", h.FiringNs, h.EmptyFiringNs, h.RoundNs, h.PortNs)
	h.WakeNs = WakeLatency()
	logf("wake-up latency of a goroutine parked on a channel: %.1f µs", h.WakeNs/1e3)
	pw, err := PoolWake(ctx, workers)
	if err != nil {
		return nil, err
	}
	h.PoolWakeNs, h.WakeCostNs = pw.WakeNs, pw.CostNs
	if workers > 1 {
		logf("pool: a parked worker runs the unit a commit readied %.1f µs after it (mean of %d); waking it costs the committing worker %.1f µs (gap between its firings %.1f µs, %.1f µs with nobody to wake)",
			pw.WakeNs/1e3, pw.Samples, pw.CostNs/1e3, pw.GapNs/1e3, pw.BaseGapNs/1e3)
	}
	if h.HandoffNs, err = Handoff(ctx); err != nil {
		return nil, err
	}
	logf("FIFO hand-off: %.0f ns", h.HandoffNs)
	h.ClockNs = Clock()
	h.BurnExtraNs, h.BurnStretch = BurnLoad(workers)
	logf("clock read: %.0f ns; a busy loop of d on the clock, on %d goroutines at once, lasts %.0f ns + %.1f%% of d more", h.ClockNs, workers, h.BurnExtraNs, 100*h.BurnStretch)
	h.MemBandwidth = MemBandwidth()
	logf("memory copy bandwidth: %.1f GB/s", h.MemBandwidth/1e9)
	return h, nil
}

// Parallelism measures how many of n goroutines running a CPU-bound loop
// really run at once: the loop alone (best of 3) against the same loop on
// n goroutines at once (best of 3), n·t1/tn.
func Parallelism(n int) float64 {
	if n <= 1 {
		return 1
	}
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
					panic("unreachable: spin returns a positive number")
				}
			}
			b = min(b, time.Since(t))
		}
		return b
	}
	t1 := best(1)
	tn := best(n)
	return min(float64(n), float64(n)*float64(t1)/float64(tn))
}

// Availability measures the share of the time n goroutines that spin on
// the clock for d really run: each records the gaps of more than 100 µs
// between its clock reads (the time it was descheduled: other jobs, other
// goroutines); the result is 1 − Σ gaps / (n × d).
func Availability(n int, d time.Duration) float64 {
	n = max(1, n)
	const gap = int64(100 * time.Microsecond)
	lost := make(chan int64, n)
	for range n {
		go func() {
			var sum int64
			start := time.Now()
			prev := int64(0)
			for {
				t := int64(time.Since(start))
				if t-prev > gap {
					sum += t - prev
				}
				prev = t
				if t >= int64(d) {
					break
				}
			}
			lost <- sum
		}()
	}
	var total int64
	for range n {
		total += <-lost
	}
	return max(0, 1-float64(total)/(float64(n)*float64(d)))
}

func spin(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 1e-9
	}
	return x
}

// MeasureRuntime derives the runtime's per-firing, per-round and per-port
// costs from one-worker runs of a chain src → 4 × empty → sink of rate-1
// float32 actors whose firings do nothing:
//
//   - with the default capacities (rounds of thousands of firings) the
//     time per firing is the per-firing cost;
//   - with capacity 2 (rounds of one firing) each firing also pays a round
//     and its ports (one per channel end);
//   - with three parallel channels between neighbours instead of one,
//     capacity 2, each round pays twice as many more ports.
//
// Each figure is the median of 5 runs (of a tenth of the firings in a
// program built with the race detector: its figures are for tests). It
// sets h's EmptyFiringNs, FiringNs, PortNs and RoundNs, and is part of
// Run; called alone it measures them again under the host's present load
// (a comparison with a run whose costs the calibration's load inflated).
func MeasureRuntime(ctx context.Context, h *Host) error {
	const stages = 4
	actors := float64(stages + 2)
	ends := float64(2 * (stages + 1)) // channel ends per iteration with one channel between neighbours
	run := func(iters int64, width, capacity int) (perIter, emptyMean float64, err error) {
		var v, m []float64
		for range 5 {
			g := emptyChain(stages, width, capacity)
			st, err := runtime.Run(ctx, g, runtime.Options{Iterations: iters, Workers: 1})
			if err != nil {
				return 0, 0, fmt.Errorf("calibrate: empty chain (%d channels between neighbours, capacity %d): %w", width, capacity, err)
			}
			var busy time.Duration
			var fir int64
			for _, a := range st.Actors {
				busy += a.Busy
				fir += a.Firings
			}
			v = append(v, float64(st.Elapsed.Nanoseconds())/float64(iters))
			if fir > 0 {
				m = append(m, float64(busy.Nanoseconds())/float64(fir))
			}
		}
		return median(v), median(m), nil
	}
	iters := int64(400_000)
	if raceDetector {
		iters /= 10
	}
	big, mean, err := run(iters, 1, 0)
	if err != nil {
		return err
	}
	one, _, err := run(iters/10, 1, 2)
	if err != nil {
		return err
	}
	wide, _, err := run(iters/10, 3, 2)
	if err != nil {
		return err
	}
	h.EmptyFiringNs = mean
	h.FiringNs = max(0, big/actors-mean)
	h.PortNs = max(0, (wide-one)/(2*ends))
	h.RoundNs = max(0, (one-ends*h.PortNs)/actors-big/actors)
	return nil
}

// emptyChain is src → stages × empty → sink over rate-1 float32 ports,
// width parallel channels between neighbours, of the given capacity (0:
// the runtime's default), with firings that do nothing.
func emptyChain(stages, width, capacity int) *graph.Graph {
	g := graph.New("calibrate-empty-chain")
	nop := runtime.FireFunc(func(*runtime.Firing) error { return nil })
	prev := g.AddActor("src", graph.Stateful(), graph.WithFunc(nop))
	link := func(from, to *graph.Actor) {
		for w := range width {
			o := graph.AddOutput[float32](from, fmt.Sprintf("o%d", w), graph.SDF(1))
			i := graph.AddInput[float32](to, fmt.Sprintf("i%d", w), graph.SDF(1))
			c := graph.Connect(g, o, i)
			c.Capacity = capacity
		}
	}
	for s := range stages {
		a := g.AddActor(fmt.Sprintf("e%d", s), graph.WithFunc(nop))
		link(prev, a)
		prev = a
	}
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(nop))
	link(prev, sink)
	return g
}

// WakeLatency measures how long a parked worker (blocked on a channel of
// its own, as the runtime's pool workers park) takes to run after another
// goroutine, which goes on computing, wakes it: the mean of 300 wakes, in
// ns (the mean, not the median: the simulator charges every wake the same
// latency, and the slow wakes are what costs throughput). A wake not over
// after 1 ms of the waker's computing counts as 1 ms.
func WakeLatency() float64 {
	const limit = 1_000_000
	var t0 int64
	var mu sync.Mutex
	wake := make(chan struct{}, 1)
	lat := make(chan int64)
	quit := make(chan struct{})
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }
	go func() {
		for {
			select {
			case <-wake:
			case <-quit:
				return
			}
			mu.Lock()
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
		spinFor(50_000) // the worker parks
		mu.Lock()
		t0 = now()
		mu.Unlock()
		wake <- struct{}{}
		done := false
		var d int64
		for t := now(); !done; {
			select {
			case d = <-lat:
				done = true
			default:
				if now()-t > limit {
					d, done = <-lat, true
					d = min(d, limit)
				}
			}
		}
		v = append(v, float64(d))
	}
	close(quit)
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// Handoff measures the one-way latency of a token between two goroutines
// through FIFOs of capacity 1 (the default wait strategy): half the median
// round trip of 2000 ping-pongs, in ns.
func Handoff(ctx context.Context) (float64, error) {
	mk := func(name string) (*fifo.FIFO, error) {
		return fifo.New(fifo.Options{Name: name, TokenSize: 4, Capacity: 1})
	}
	ping, err := mk("calibrate.ping")
	if err != nil {
		return 0, err
	}
	defer ping.Free()
	pong, err := mk("calibrate.pong")
	if err != nil {
		return 0, err
	}
	defer pong.Free()
	const n = 2000
	errc := make(chan error, 1)
	go func() {
		for range n {
			if _, err := ping.Reader(0).Acquire(ctx, 1); err != nil {
				errc <- err
				return
			}
			ping.Reader(0).Release(1)
			if _, err := pong.Writer().Acquire(ctx, 1); err != nil {
				errc <- err
				return
			}
			pong.Writer().Commit(1)
		}
		errc <- nil
	}()
	v := make([]float64, 0, n)
	for range n {
		t := time.Now()
		if _, err := ping.Writer().Acquire(ctx, 1); err != nil {
			return 0, err
		}
		ping.Writer().Commit(1)
		if _, err := pong.Reader(0).Acquire(ctx, 1); err != nil {
			return 0, err
		}
		pong.Reader(0).Release(1)
		v = append(v, float64(time.Since(t).Nanoseconds()))
	}
	if err := <-errc; err != nil {
		return 0, err
	}
	return median(v) / 2, nil
}

// Clock measures the cost of one read of the clock (time.Now), the
// median over blocks of reads.
func Clock() (readNs float64) {
	var reads []float64
	for range 21 {
		const n = 2000
		t := time.Now()
		for range n {
			_ = time.Now()
		}
		reads = append(reads, float64(time.Since(t).Nanoseconds())/n)
	}
	return median(reads)
}

// BurnLoad measures how much longer than asked actors.Burn(d), a
// synthetic actor's busy loop, keeps a core while n goroutines burn at
// once, as a run's workers fire synthetic actors: blocks of about 20 ms of 1 µs burns and of 4 µs burns on n goroutines,
// the mean excess of each length (median over 5 blocks) fit as extraNs +
// stretch × d. The fixed part is the clock reads that end the loop; the
// part that grows with d is the time the cores are taken away while a
// loop runs (another job, the hypervisor), since a busy loop on the clock
// ends at its deadline however little of it ran.
func BurnLoad(n int) (extraNs, stretch float64) {
	n = max(1, n)
	excess := func(d time.Duration) float64 {
		per := int(20 * time.Millisecond / d)
		var blocks []float64
		for range 5 {
			out := make(chan float64, n)
			for range n {
				go func() {
					t := time.Now()
					for range per {
						actors.Burn(d)
					}
					out <- float64(time.Since(t).Nanoseconds())/float64(per) - float64(d.Nanoseconds())
				}()
			}
			var sum float64
			for range n {
				sum += <-out
			}
			blocks = append(blocks, sum/float64(n))
		}
		return median(blocks)
	}
	return burnFit(excess(time.Microsecond), excess(4*time.Microsecond))
}

// burnFit is the line extraNs + stretch × d through the mean excesses of
// 1 µs loops (e1) and 4 µs loops (e4), in ns; neither part below 0.
func burnFit(e1, e4 float64) (extraNs, stretch float64) {
	stretch = max(0, (e4-e1)/3000)
	return max(0, e1-stretch*1000), stretch
}

// MemBandwidth measures one core's memory copy bandwidth in bytes/s:
// copying 64 MiB, best of 5 (bytes read plus bytes written).
func MemBandwidth() float64 {
	const n = 64 << 20
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src)
	best := time.Duration(math.MaxInt64)
	for range 5 {
		t := time.Now()
		copy(dst, src)
		best = min(best, time.Since(t))
	}
	return 2 * n / best.Seconds()
}

// CPUModel returns the "model name" of /proc/cpuinfo, else GOARCH.
func CPUModel() string {
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

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
