package calibrate

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// PoolWakeFigures are what PoolWake measured, in nanoseconds.
type PoolWakeFigures struct {
	// WakeNs is the mean time from the end of a producer's firing to the
	// start of its consumer's firing on a pool worker that was parked: the
	// producer's commit, the pool's wake-up of the parked worker, its
	// steal of the consumer and the consumer's prepare.
	WakeNs float64
	// GapNs is the median time between two consecutive firings of the
	// producer on its worker, which commits the first, wakes the parked
	// worker and prepares the second in between; BaseGapNs is the same
	// with one worker, which has no one to wake.
	GapNs, BaseGapNs float64
	// CostNs is what waking costs the waker: GapNs − BaseGapNs, at least 0.
	CostNs float64
	// Samples is the number of hand-offs WakeNs is the mean of.
	Samples int
}

// Pool wake-up benchmark: the producer's firings last poolWakeFiringNs,
// longer than the pool's spin time, so that the other worker, which ran
// the consumer's last firing in microseconds, has parked when the next one
// is readied.
const (
	poolWakeFiringNs = 200_000
	poolWakeFirings  = 400
	poolWakeSkip     = 10 // the first hand-offs: the pool starting up
	poolWakeRuns     = 3
)

// PoolWake measures the runtime's own park and wake (what WakeLatency, a
// bare goroutine parked on a channel, only approaches): runtime.Run with
// workers pool workers (at least 2) runs src → dst, rate 1, capacity 2
// (rounds of one firing). src's firing burns poolWakeFiringNs (longer
// than the pool's spin time) and writes the time it ends into its token;
// dst's firing, which does nothing else, reads it at its start. After a
// round of src its worker keeps src (still ready) and queues dst; every
// other worker has parked since dst's last firing, so the commit wakes
// one, which steals dst. Over the hand-offs of a run:
//
//   - the wake-up is the mean of dst's start less src's end (a hand-off
//     whose woken worker comes after src's next firing ended, so that
//     src's own worker runs dst, counts what it took);
//   - what waking costs the waker is the median gap between src's
//     firings less the same gap in a run on one worker, where nobody is
//     parked and the commit wakes no one.
//
// Each figure is the median of poolWakeRuns runs. With fewer than 2
// workers no worker is parked while another runs: the figures are zero.
func PoolWake(ctx context.Context, workers int) (PoolWakeFigures, error) {
	if workers < 2 {
		return PoolWakeFigures{}, nil
	}
	var wake, gap, base []float64
	samples := 0
	for range poolWakeRuns {
		starts, ends, lat, err := poolWakeRun(ctx, workers)
		if err != nil {
			return PoolWakeFigures{}, err
		}
		w, n := meanFrom(lat, poolWakeSkip)
		wake, samples = append(wake, w), samples+n
		gap = append(gap, median(gaps(starts, ends)))
		if starts, ends, _, err = poolWakeRun(ctx, 1); err != nil {
			return PoolWakeFigures{}, err
		}
		base = append(base, median(gaps(starts, ends)))
	}
	f := PoolWakeFigures{WakeNs: median(wake), GapNs: median(gap), BaseGapNs: median(base), Samples: samples}
	f.CostNs = max(0, f.GapNs-f.BaseGapNs)
	return f, nil
}

// poolWakeRun runs PoolWake's graph on workers workers and returns src's
// firings' starts and ends and, by firing, dst's start less src's end, in
// ns since the run's graph was made.
func poolWakeRun(ctx context.Context, workers int) (starts, ends, lat []int64, err error) {
	base := time.Now()
	starts = make([]int64, 0, poolWakeFirings)
	ends = make([]int64, 0, poolWakeFirings)
	lat = make([]int64, 0, poolWakeFirings)
	g := graph.New("calibrate-pool-wake")
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		t0 := int64(time.Since(base))
		actors.Burn(poolWakeFiringNs)
		t1 := int64(time.Since(base))
		starts, ends = append(starts, t0), append(ends, t1)
		binary.LittleEndian.PutUint64(f.Out(0), uint64(t1))
		return nil
	})))
	dst := g.AddActor("dst", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		t := int64(time.Since(base))
		lat = append(lat, t-int64(binary.LittleEndian.Uint64(f.In(0))))
		return nil
	})))
	c := graph.Connect(g, graph.AddOutput[int64](src, "o", graph.SDF(1)), graph.AddInput[int64](dst, "i", graph.SDF(1)))
	c.Capacity = 2
	if _, err := runtime.Run(ctx, g, runtime.Options{Iterations: poolWakeFirings, Workers: workers}); err != nil {
		return nil, nil, nil, fmt.Errorf("calibrate: pool wake-up (src → dst on %d workers): %w", workers, err)
	}
	return starts, ends, lat, nil
}

// gaps returns the time between each firing's end and the next one's
// start, past the first poolWakeSkip firings.
func gaps(starts, ends []int64) []float64 {
	var v []float64
	for i := max(1, poolWakeSkip); i < len(starts) && i <= len(ends); i++ {
		v = append(v, float64(starts[i]-ends[i-1]))
	}
	return v
}

// meanFrom returns the mean of v[skip:] and how many values it is over.
func meanFrom(v []int64, skip int) (float64, int) {
	if len(v) <= skip {
		return 0, 0
	}
	var sum float64
	for _, x := range v[skip:] {
		sum += float64(x)
	}
	return sum / float64(len(v)-skip), len(v) - skip
}
