// Command fifo measures sluice's FIFO against the obvious Go baselines, side
// by side in one run:
//
//   - throughput: 4-byte tokens in windows of 1024 (producer and consumer
//     goroutines, the producer fills each window, the consumer sums it)
//     versus a buffered chan float32 sending one value per operation;
//   - 64 KiB windows versus one plain copy of 64 KiB: the producer copies
//     each block into its window (the same one memmove as the baseline) and
//     the consumer takes it without copying; and, second figure, the
//     consumer copies it out too (two memmoves, the data crossing cores);
//   - hop latency: a token ping-pongs between two goroutines through two
//     FIFOs of capacity 1, with Park (timing its waits as the runtime's
//     FIFOs do; with Options.NoWaitTime; and with a cancellable context, as
//     the runtime's actors wait), Spin and SpinPark (and two channels for
//     reference, and the hardware floor: one atomic each way); a hop is half
//     a round trip;
//   - peak RSS (getrusage maxrss).
//
// Usage:
//
//	go run ./bench/fifo            # a readable table
//	go run ./bench/fifo -json      # one JSON object
//	go run ./bench/fifo -duration 1s -rounds 5
//	go run ./bench/fifo -json -cpus 2,4,8,16  # one JSON object per core count
//	go run ./bench/fifo -hop -json -cpus 2,16 # hop latencies only
//
// With -cpus, each core count is measured in a child process confined to
// that many CPUs (GOMAXPROCS and affinity); the FIFO and its baselines run
// in the same child, side by side.
//
// Each figure is the best of -rounds runs of about -duration each; the FIFO
// and its baseline alternate, so they see the same machine load.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/sluicehq/sluice/bench/internal/cpus"
	"github.com/sluicehq/sluice/fifo"
)

const (
	window   = 1024
	block64k = 64 << 10
)

// Result is the JSON object printed with -json.
type Result struct {
	SluiceTokensPerS float64 `json:"sluice_tokens_per_s"`
	GochanTokensPerS float64 `json:"gochan_tokens_per_s"`
	Ratio            float64 `json:"ratio"`
	Window           int     `json:"window_tokens"`
	TokenBytes       int     `json:"token_bytes"`
	Wait             string  `json:"wait"`

	Window64KBytesPerS float64 `json:"fifo_64k_bytes_per_s"`
	Copy64KBytesPerS   float64 `json:"copy_64k_bytes_per_s"`
	Ratio64K           float64 `json:"ratio_64k_vs_copy"`
	InOut64KBytesPerS  float64 `json:"fifo_64k_copy_in_out_bytes_per_s"`
	RatioInOut64K      float64 `json:"ratio_64k_copy_in_out_vs_copy"`

	HopNsParked   float64 `json:"hop_ns_parked"`
	HopNsUntimed  float64 `json:"hop_ns_parked_untimed"`
	HopNsCtx      float64 `json:"hop_ns_parked_ctx"`
	HopNsSpinning float64 `json:"hop_ns_spinning"`
	HopNsSpinPark float64 `json:"hop_ns_spin_park"`
	HopNsGochan   float64 `json:"hop_ns_gochan"`
	HopNsFloor    float64 `json:"hop_ns_atomic_floor"`
	// HopSpinParked is the share of the spinning hop's waits (the four
	// sides', past their first poll, in the kept round's longest run) that
	// its tuners made wait as Park does.
	HopSpinParked float64 `json:"hop_spin_parked_share"`

	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	Mirrored     bool    `json:"mirrored"`
	GOMAXPROCS   int     `json:"gomaxprocs"`
	NumCPU       int     `json:"num_cpu"`
	CPU          string  `json:"cpu"`
	GoVersion    string  `json:"go_version"`
	DurationS    float64 `json:"duration_s_per_run"`
	Rounds       int     `json:"rounds"`
	LoadAvg      string  `json:"loadavg,omitempty"`
}

func main() {
	asJSON := flag.Bool("json", false, "print one JSON object instead of a table")
	dur := flag.Duration("duration", 300*time.Millisecond, "approximate duration of one measurement run")
	rounds := flag.Int("rounds", 3, "runs per figure (the best is kept)")
	waitName := flag.String("wait", "spin-park", "wait strategy for the throughput runs: spin, spin-park, park")
	hopOnly := flag.Bool("hop", false, "measure the hop latencies only")
	cpuList := flag.String("cpus", "", "comma-separated core counts (GOMAXPROCS and affinity), one row each; empty: as started")
	flag.Parse()
	if *cpuList != "" {
		perCPUs(*cpuList, *asJSON)
		return
	}
	ws, err := fifo.ParseWaitStrategy(*waitName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *rounds < 1 || *dur <= 0 {
		fmt.Fprintln(os.Stderr, "bench/fifo: -rounds must be >= 1 and -duration > 0")
		os.Exit(2)
	}
	start := time.Now()
	res := Result{Window: window, TokenBytes: 4, Wait: ws.String(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU: runtime.NumCPU(), CPU: cpuModel(), GoVersion: runtime.Version(), DurationS: dur.Seconds(), Rounds: *rounds}

	probe, err := fifo.New(fifo.Options{Name: "probe", TokenSize: 4, Capacity: 1})
	if err != nil {
		fail(err)
	}
	res.Mirrored = probe.Mirrored()
	_ = probe.Free()

	for range *rounds {
		if *hopOnly {
			break
		}
		res.SluiceTokensPerS = max(res.SluiceTokensPerS, 1e9/measure(*dur, func(n int) { fifoThroughput(n, ws) }))
		res.GochanTokensPerS = max(res.GochanTokensPerS, 1e9/measure(*dur, chanThroughput))
	}
	if !*hopOnly {
		res.Ratio = res.SluiceTokensPerS / res.GochanTokensPerS
	}

	for range *rounds {
		if *hopOnly {
			break
		}
		res.Window64KBytesPerS = max(res.Window64KBytesPerS, block64k*1e9/measure(*dur, func(n int) { fifo64K(n, false) }))
		res.Copy64KBytesPerS = max(res.Copy64KBytesPerS, block64k*1e9/measure(*dur, copy64K))
		res.InOut64KBytesPerS = max(res.InOut64KBytesPerS, block64k*1e9/measure(*dur, func(n int) { fifo64K(n, true) }))
	}
	if !*hopOnly {
		res.Ratio64K = res.Window64KBytesPerS / res.Copy64KBytesPerS
		res.RatioInOut64K = res.InOut64KBytesPerS / res.Copy64KBytesPerS
	}

	hop := func(old float64, ns float64) float64 {
		if old == 0 || ns/2 < old {
			return ns / 2
		}
		return old
	}
	for range *rounds {
		res.HopNsParked = hop(res.HopNsParked, measure(*dur, func(n int) { fifoPingPong(n, fifo.Park) }))
		res.HopNsUntimed = hop(res.HopNsUntimed, measure(*dur, func(n int) {
			fifoPingPongOpts(context.Background(), n, fifo.Options{Wait: fifo.Park, NoWaitTime: true})
		}))
		res.HopNsCtx = hop(res.HopNsCtx, measure(*dur, func(n int) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fifoPingPongOpts(ctx, n, fifo.Options{Wait: fifo.Park})
		}))
		var share float64
		ns := measure(*dur, func(n int) {
			spun, parked := fifoPingPong(n, fifo.Spin)
			share = float64(parked) / float64(max(spun+parked, 1))
		})
		if res.HopNsSpinning == 0 || ns/2 < res.HopNsSpinning {
			res.HopSpinParked = share
		}
		res.HopNsSpinning = hop(res.HopNsSpinning, ns)
		res.HopNsSpinPark = hop(res.HopNsSpinPark, measure(*dur, func(n int) { fifoPingPong(n, fifo.SpinPark) }))
		res.HopNsGochan = hop(res.HopNsGochan, measure(*dur, chanPingPong))
		res.HopNsFloor = hop(res.HopNsFloor, measure(*dur, atomicPingPong))
	}

	res.PeakRSSBytes = peakRSS()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		res.LoadAvg = strings.Join(strings.Fields(string(b))[:3], " ")
	}

	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		if err := enc.Encode(res); err != nil {
			fail(err)
		}
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "measure\tsluice fifo\tbaseline\tratio\t\n")
	if !*hopOnly {
		throughputRows(tw, res, ws)
	}
	fmt.Fprintf(tw, "hop latency ns, park vs chan\t%.0f\t%.0f\t\t\n", res.HopNsParked, res.HopNsGochan)
	fmt.Fprintf(tw, "hop latency ns, park without wait times vs chan\t%.0f\t%.0f\t\t\n", res.HopNsUntimed, res.HopNsGochan)
	fmt.Fprintf(tw, "hop latency ns, park with a cancellable context vs chan\t%.0f\t%.0f\t\t\n", res.HopNsCtx, res.HopNsGochan)
	fmt.Fprintf(tw, "hop latency ns, spin (%.0f%% of its waits parked)\t%.0f\t\t\t\n", 100*res.HopSpinParked, res.HopNsSpinning)
	fmt.Fprintf(tw, "hop latency ns, spin-park\t%.0f\t\t\t\n", res.HopNsSpinPark)
	fmt.Fprintf(tw, "hop latency ns, floor: two spinning goroutines, one atomic each way\t\t%.0f\t\t\n", res.HopNsFloor)
	tw.Flush()
	fmt.Printf("\npeak RSS %.1f MiB; mirrored ring %v; GOMAXPROCS %d, %d CPUs (%s); %s; load %s; %d rounds of ~%v, %.1fs\n",
		float64(res.PeakRSSBytes)/(1<<20), res.Mirrored, res.GOMAXPROCS, res.NumCPU, res.CPU, res.GoVersion,
		res.LoadAvg, res.Rounds, *dur, time.Since(start).Seconds())
}

// throughputRows prints the table's throughput rows.
func throughputRows(tw *tabwriter.Writer, res Result, ws fifo.WaitStrategy) {
	fmt.Fprintf(tw, "tokens/s, 4 B tokens, windows of %d (%s) vs chan float32\t%.3g\t%.3g\t%.1fx\t\n",
		window, ws, res.SluiceTokensPerS, res.GochanTokensPerS, res.Ratio)
	fmt.Fprintf(tw, "GB/s, 64 KiB windows (copy in, zero-copy out) vs copy of 64 KiB\t%.2f\t%.2f\t%.2fx\t\n",
		res.Window64KBytesPerS/1e9, res.Copy64KBytesPerS/1e9, res.Ratio64K)
	fmt.Fprintf(tw, "GB/s, 64 KiB windows (copy in, copy out: crosses cores) vs copy\t%.2f\t%.2f\t%.2fx\t\n",
		res.InOut64KBytesPerS/1e9, res.Copy64KBytesPerS/1e9, res.RatioInOut64K)
}

// perCPUs runs this program once per core count of list, confined to that
// many CPUs, with the same flags less -cpus, and prints the children's
// outputs in order.
func perCPUs(list string, asJSON bool) {
	counts, err := cpus.ParseList(list)
	if err != nil {
		fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		fail(err)
	}
	var args []string
	flag.Visit(func(f *flag.Flag) {
		if f.Name != "cpus" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	for _, n := range counts {
		out, err := cpus.Output(n, exe, args...)
		if err != nil {
			fail(fmt.Errorf("%d cores: %w", n, err))
		}
		if !asJSON {
			fmt.Printf("== %d cores\n", n)
		}
		os.Stdout.Write(out)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/fifo:", err)
	os.Exit(1)
}

// measure runs fn(n) with growing n until one run takes about d and returns
// the nanoseconds per unit of n.
func measure(d time.Duration, fn func(n int)) float64 {
	n := 1
	for {
		t0 := time.Now()
		fn(n)
		el := time.Since(t0)
		if el >= d || n >= 1<<40 {
			return float64(el.Nanoseconds()) / float64(n)
		}
		next := n * 100
		if el > 0 {
			next = int(float64(n) * 1.2 * float64(d) / float64(el))
		}
		n = min(max(next, n+1), 100*n)
	}
}

func newFIFO(o fifo.Options) *fifo.FIFO {
	f, err := fifo.New(o)
	if err != nil {
		fail(err)
	}
	return f
}

var sink float32

// fifoThroughput moves n 4-byte tokens (rounded up to whole windows).
func fifoThroughput(n int, ws fifo.WaitStrategy) {
	f := newFIFO(fifo.Options{Name: "throughput", TokenSize: 4, Capacity: 16 * window, Wait: ws})
	defer f.Free()
	ctx := context.Background()
	windows := (n + window - 1) / window
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := f.Writer()
		for i := range windows {
			win, err := w.Acquire(ctx, window)
			if err != nil {
				panic(err)
			}
			v := fifo.Tokens[float32](win)
			base := float32(i * window)
			for k := range v {
				v[k] = base + float32(k)
			}
			w.Commit(window)
		}
	}()
	r := f.Reader(0)
	var s float32
	for range windows {
		win, err := r.Acquire(ctx, window)
		if err != nil {
			panic(err)
		}
		for _, x := range fifo.Tokens[float32](win) {
			s += x
		}
		r.Release(window)
	}
	<-done
	sink = s
}

func chanThroughput(n int) {
	c := make(chan float32, 16*window)
	go func() {
		for i := range n {
			c <- float32(i)
		}
	}()
	var s float32
	for range n {
		s += <-c
	}
	sink = s
}

var src64k, dst64k, dst64kCopy = make([]byte, block64k), make([]byte, block64k), make([]byte, block64k)

// fifo64K moves n blocks of 64 KiB through a FIFO of 4 blocks: the producer
// copies each block into its window; the consumer takes the window without
// copying (it reads one token) or, with copyOut, copies it out too.
func fifo64K(n int, copyOut bool) {
	const tokens = block64k / 4
	f := newFIFO(fifo.Options{Name: "64k", TokenSize: 4, Capacity: 4 * tokens})
	defer f.Free()
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := f.Writer()
		for range n {
			win, err := w.Acquire(ctx, tokens)
			if err != nil {
				panic(err)
			}
			copy(win, src64k)
			w.Commit(tokens)
		}
	}()
	r := f.Reader(0)
	for range n {
		win, err := r.Acquire(ctx, tokens)
		if err != nil {
			panic(err)
		}
		if copyOut {
			copy(dst64k, win)
		} else {
			sink += float32(win[0])
		}
		r.Release(tokens)
	}
	<-done
}

func copy64K(n int) {
	for range n {
		copy(dst64kCopy, src64k)
	}
}

// fifoPingPong makes n round trips of one 8-byte token through two FIFOs of
// capacity 1.
func fifoPingPong(n int, ws fifo.WaitStrategy) (spun, parked int64) {
	return fifoPingPongOpts(context.Background(), n, fifo.Options{Wait: ws})
}

// fifoPingPongOpts is fifoPingPong with a context for both sides' waits
// and the FIFOs' other options (name, token size and capacity are set
// here). It returns the four sides' Spin waits by mode (SpinWaits).
func fifoPingPongOpts(ctx context.Context, n int, o fifo.Options) (spun, parked int64) {
	o.TokenSize, o.Capacity = 8, 1
	o.Name = "there"
	there := newFIFO(o)
	o.Name = "back"
	back := newFIFO(o)
	defer there.Free()
	defer back.Free()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, w := there.Reader(0), back.Writer()
		for {
			in, err := r.Acquire(ctx, 1)
			if err != nil {
				return
			}
			out, _ := w.Acquire(ctx, 1)
			copy(out, in)
			r.Release(1)
			w.Commit(1)
		}
	}()
	w, r := there.Writer(), back.Reader(0)
	for i := range n {
		out, _ := w.Acquire(ctx, 1)
		fifo.Tokens[uint64](out)[0] = uint64(i)
		w.Commit(1)
		in, err := r.Acquire(ctx, 1)
		if err != nil || fifo.Tokens[uint64](in)[0] != uint64(i) {
			panic(fmt.Sprint("ping-pong: wrong token or ", err))
		}
		r.Release(1)
	}
	w.Close()
	<-done
	for _, side := range []interface{ SpinWaits() (int64, int64) }{there.Writer(), there.Reader(0), back.Writer(), back.Reader(0)} {
		s, p := side.SpinWaits()
		spun, parked = spun+s, parked+p
	}
	return spun, parked
}

func chanPingPong(n int) {
	there, back := make(chan uint64, 1), make(chan uint64, 1)
	go func() {
		for v := range there {
			back <- v
		}
	}()
	for i := range n {
		there <- uint64(i)
		<-back
	}
	close(there)
}

// paddedCounter is an atomic on its own cache lines.
type paddedCounter struct {
	v atomic.Uint64
	_ [120]byte
}

// atomicPingPong is the hardware floor of a hop: two goroutines spinning on
// one atomic each way (one cache line transfer per hop, no data, no
// capacity check); meaningful only with two free cores.
func atomicPingPong(n int) {
	var there, back paddedCounter
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := uint64(1); i <= uint64(n); i++ {
			for j := 0; there.v.Load() != i; j++ {
				if j%4096 == 4095 {
					runtime.Gosched()
				}
			}
			back.v.Store(i)
		}
	}()
	for i := uint64(1); i <= uint64(n); i++ {
		there.v.Store(i)
		for j := 0; back.v.Load() != i; j++ {
			if j%4096 == 4095 {
				runtime.Gosched()
			}
		}
	}
	<-done
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
