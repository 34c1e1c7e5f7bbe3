package analysis

import (
	"slices"
	"testing"
	"time"
)

// TestCriticalNamesTheBottleneck: the throughput bound names the actors to
// speed up — the one busy for the whole period, or a cycle's actors when a
// loop's latency sets it — with unbounded and throughput-optimal buffers.
func TestCriticalNamesTheBottleneck(t *testing.T) {
	t.Parallel()
	g := cdToDAT()
	for name, c := range map[string]time.Duration{"A": 50, "B": 400, "C": 900, "D": 3000, "E": 2000, "F": 50} {
		g.Actor(name).Cost = c
	}
	rv, err := RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	un, err := ThroughputBound(g, rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, opt, err := ThroughputBuffers(g, rv)
	if err != nil {
		t.Fatal(err)
	}
	// C: 98 firings × 900 ns = 88.2 µs; D 84 µs, E 64 µs, B 58.8 µs.
	for what, th := range map[string]Throughput{"unbounded": un, "throughput-optimal": opt} {
		if th.PeriodNS != 88200 || !slices.Equal(th.Critical, []string{"C"}) {
			t.Errorf("%s buffers: period %v set by %v, want 88200 ns set by [C]", what, th.PeriodNS, th.Critical)
		}
	}

	// A loop of three actors with one token: its latency (1+2+3) sets the
	// period, no single actor is busy all of it; the source outside is not named.
	b := newB("loop")
	b.sdf("src", 1, "x", 1)
	b.sdf("x", 1, "y", 1)
	b.sdf("y", 1, "z", 1)
	b.sdf("z", 1, "x", 1).Initial = 1
	g = b.g
	mustValid(t, g)
	for name, c := range map[string]time.Duration{"src": 1, "x": 1, "y": 2, "z": 3} {
		g.Actor(name).Cost = c
	}
	rv, err = RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	_, opt, err = ThroughputBuffers(g, rv)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(opt.Critical))
	if opt.PeriodNS != 6 || !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Errorf("loop: period %v set by %v, want 6 ns set by the cycle x, y, z", opt.PeriodNS, opt.Critical)
	}
}
