package calibrate

import (
	"context"
	"testing"
)

// TestPoolWakeFigures: the gaps between firings and the mean of the
// latencies leave out the first poolWakeSkip firings (the pool starting
// up); a pool of one worker has no parked worker to wake; the model's
// wake latency is the pool's own wake-up, or a bare goroutine's where the
// pool's was not measured.
func TestPoolWakeFigures(t *testing.T) {
	t.Parallel()
	n := poolWakeSkip + 3
	starts, ends, lat := make([]int64, n), make([]int64, n), make([]int64, n)
	for i := range n {
		starts[i] = int64(i) * 1000
		ends[i] = starts[i] + 900 // gaps of 100 ns
		lat[i] = 1_000_000        // the start-up's
	}
	ends[poolWakeSkip] -= 200 // the gap to the next firing: 300 ns
	lat[poolWakeSkip], lat[poolWakeSkip+1], lat[poolWakeSkip+2] = 10, 20, 60
	g := gaps(starts, ends)
	if len(g) != 3 || g[0] != 100 || g[1] != 300 || g[2] != 100 {
		t.Errorf("gaps %v: expected [100 300 100] (from firing %d on)", g, poolWakeSkip)
	}
	if m, k := meanFrom(lat, poolWakeSkip); m != 30 || k != 3 {
		t.Errorf("mean %g over %d: expected 30 over 3", m, k)
	}
	if m, k := meanFrom(lat[:poolWakeSkip], poolWakeSkip); m != 0 || k != 0 {
		t.Errorf("mean of no samples %g over %d: expected 0 over 0", m, k)
	}
	if f, err := PoolWake(context.Background(), 1); err != nil || f != (PoolWakeFigures{}) {
		t.Errorf("PoolWake on 1 worker: %+v, %v: expected no figures", f, err)
	}
	h := &Host{WakeNs: 20_000, PoolWakeNs: 90_000}
	if w := h.PoolWake(); w != 90_000 {
		t.Errorf("PoolWake %g: expected the pool's own 90000", w)
	}
	h.PoolWakeNs = 0
	if w := h.PoolWake(); w != 20_000 {
		t.Errorf("PoolWake %g without the pool's figure: expected the bare goroutine's 20000", w)
	}
}
