package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// TestPeriodEndsWhereTheDrainStarts: S (2 replicas) → U on one processor
// of 2 units, one second a firing each, the channel holding the whole
// run. The units take the three ready tasks in turn: S fires 4/3 times a
// second, U 2/3 (1.5 s an iteration) until S's last firing (at 3n/4 s,
// n/2 iterations done); then U has a unit to itself (1 s). The period is
// the steady state's (1.5 s), not the 1.25 s of a middle half that holds
// the drain. With S alone on a processor of its own, fast, and T slow, S
// ends before any iteration completes: the run is Transient.
func TestPeriodEndsWhereTheDrainStarts(t *testing.T) {
	g := chain(t, stage{name: "S", cost: 1, out: 1}, stage{name: "U", cost: 1, in: 1})
	big := map[string]int{g.Channels[0].Name: 1 << 20}
	mach := &machine.Machine{Name: "two-units", Processors: []*machine.Processor{{Name: "p", Kind: "cpu", ClockHz: 1, Units: 2, HasIO: true}}}
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"S": {Device: "p", Replicas: 2}, "U": {Device: "p"}}}
	for _, n := range []int64{64, 400} {
		_, r := simulateWith(t, g, m, mach, Options{Capacity: big, NoFuseCPU: true}, n)
		if r.Transient || math.Abs(r.Period-1.5) > 0.05 {
			t.Errorf("%d iterations: period %g s (transient %v), want the steady 1.5 s", n, r.Period, r.Transient)
		}
	}
	g = chain(t, stage{name: "S", cost: 0.001, out: 1}, stage{name: "T", cost: 1, in: 1})
	for _, c := range []struct {
		capacity  int
		transient bool
	}{{1 << 20, true}, {0, false}} {
		opts := Options{}
		if c.capacity > 0 {
			opts.Capacity = map[string]int{g.Channels[0].Name: c.capacity}
		}
		_, r := simulateWith(t, g, place("S", "p0", "T", "p1"), twoProcs(0, 0, 0, 0), opts, 64)
		if r.Transient != c.transient {
			t.Errorf("capacity %d: transient %v, want %v (period %g s)", c.capacity, r.Transient, c.transient, r.Period)
		}
		if noted := strings.Contains(strings.Join(r.Notes, "\n"), "simulate more iterations"); noted != c.transient {
			t.Errorf("capacity %d: notes %q: want a note to simulate more iterations only when transient", c.capacity, r.Notes)
		}
	}
}

// TestRunUntilSteady: a fast source whose channel holds 1 000 tokens
// ends a run of 100 iterations before any completes; RunUntilSteady
// simulates 4 times as many until it does not (6 400).
func TestRunUntilSteady(t *testing.T) {
	g := chain(t, stage{name: "S", cost: 0.001, out: 1}, stage{name: "T", cost: 1, in: 1})
	p, err := Build(g, place("S", "p0", "T", "p1"), twoProcs(0, 0, 0, 0), nil, Options{Capacity: map[string]int{g.Channels[0].Name: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := RunUntilSteady(p, Config{Iterations: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.Transient || r.Iterations != 6400 || math.Abs(r.Period-1) > 1e-9 {
		t.Errorf("%d iterations, transient %v, period %g s: want 6 400, steady, 1 s", r.Iterations, r.Transient, r.Period)
	}
}
