package sim

import (
	"testing"

	"github.com/sluicehq/sluice/machine"
)

// pool is one processor of two units at 1 Hz (one cycle = one second)
// with the given wake latency.
func pool(wake int64) *machine.Machine {
	return &machine.Machine{Name: "pool",
		Processors:    []*machine.Processor{{Name: "cpu", Kind: "cpu", ClockHz: 1, Units: 2, HasIO: true, WakeLatency: wake}},
		Memories:      []*machine.Memory{{Name: "ram", ClockHz: 1}},
		Interconnects: []*machine.Interconnect{{Name: "bus", ClockHz: 1, Elements: []string{"cpu", "ram"}, Channels: 1, Multiplexable: true}}}
}

// TestWakeLatency: a two-stage pipeline of 1 s stages on a pool of two
// units runs at period 1 without wake latency; with a wake latency longer
// than the run, the second unit never wakes once it has parked (at the
// start nothing is ready for it), so the period is the sum of the stages.
func TestWakeLatency(t *testing.T) {
	for _, tc := range []struct {
		wake   int64
		period float64
	}{{0, 1}, {1 << 40, 2}} {
		g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 1})
		r := simulate(t, g, nil, pool(tc.wake), Config{Iterations: 40})
		if !near(r.Period, tc.period) {
			t.Errorf("wake %d: period %g, want %g", tc.wake, r.Period, tc.period)
		}
	}
}

// TestWakeCost: the pool unit whose commit readies work for a parked unit
// pays the pool's wake cost before its next round. A (1 s a firing, one
// token out) → B (1 s a firing, two tokens in: a decimator) on two units,
// capacity 4, so A fires rounds of 2 and B rounds of 1; A keeps its unit
// (a time slice longer than the run). Without spinning the second unit
// parks after each firing of B, and each round of A wakes it: the period
// per iteration (a round of A) is 2 s plus the wake cost,
// which is what the model's throughput loses to it. With units that poll
// longer than a round of A nobody is woken, and the wake cost changes
// nothing.
func TestWakeCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spin, cost int64 // cycles of 0.1 s
		period     float64
	}{{0, 0, 2}, {0, 5, 2.5}, {0, 10, 3}, {100, 10, 2}} {
		g := chain(t, stage{name: "A", cost: 1, out: 1}, stage{name: "B", cost: 1, in: 2})
		mach := runtimePool(2, 0, 0, tc.spin, 1000, 0)
		mach.Processors[0].WakeCost = tc.cost
		p, r := simulateCap(t, g, mach, map[string]int{"A.out->B.in": 4}, 64)
		if p.Tasks[0].RoundLimit != 2 || p.Tasks[1].RoundLimit != 1 {
			t.Fatalf("round limits %d and %d: want 2 (A) and 1 (B)", p.Tasks[0].RoundLimit, p.Tasks[1].RoundLimit)
		}
		if !near(r.Period, tc.period) {
			t.Errorf("spin %d, wake cost %d cycles: period %g s, want %g", tc.spin, tc.cost, r.Period, tc.period)
		}
	}
}
