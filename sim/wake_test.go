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
