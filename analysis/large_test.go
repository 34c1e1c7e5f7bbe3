package analysis

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestThroughputBuffersRunOutWhileLowering: when the search reaches the
// unbounded period and then runs out of its 500 evaluations while
// lowering the channels it grew (300 parallel channels here, a few
// evaluations each), it answers with the capacities it has, which still
// give that period, and says they were lowered only in part (it used to
// fail, and the workbench's 256-actor DAG got there once the search was
// fast enough).
func TestThroughputBuffersRunOutWhileLowering(t *testing.T) {
	t.Parallel()
	b := newB("wide")
	b.actor("A").Cost = time.Microsecond
	b.actor("B").Cost = time.Microsecond
	for range 300 {
		b.sdf("A", 3, "B", 2)
	}
	mustValid(t, b.g)
	rv, err := RepetitionVector(b.g)
	if err != nil {
		t.Fatal(err)
	}
	unbounded, err := ThroughputBound(b.g, rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	min, err := MinimalBuffers(b.g, rv)
	if err != nil {
		t.Fatal(err)
	}
	if slow, err := ThroughputBound(b.g, rv, min); err != nil || slow.PeriodNS <= unbounded.PeriodNS {
		t.Fatalf("minimal buffers: period %v (%v), unbounded %v: expected a graph whose minimal buffers slow it", slow.PeriodNS, err, unbounded.PeriodNS)
	}
	caps, th, err := ThroughputBuffers(b.g, rv)
	if !errors.Is(err, ErrPartlyLowered) || !errors.Is(err, ErrStateBudget) || caps == nil {
		t.Fatalf("throughput buffers: %v, %d capacities: expected the grown capacities and an error saying they were lowered only in part", err, len(caps))
	}
	with, err := ThroughputBound(b.g, rv, caps)
	if err != nil {
		t.Fatal(err)
	}
	if th.PeriodNS != unbounded.PeriodNS || with.PeriodNS != unbounded.PeriodNS {
		t.Fatalf("period %v ns answered, %v ns with the %d capacities: expected the unbounded %v ns", th.PeriodNS, with.PeriodNS, len(caps), unbounded.PeriodNS)
	}
	r := Check(b.g, CheckOptions{ThroughputBudget: -1})
	if len(r.ThroughputBuffers) != len(caps) || !strings.Contains(strings.Join(r.Warnings, "\n"), "lowered only in part within the search's 500 evaluations") {
		t.Fatalf("check: %d throughput buffers, warnings %q: expected the capacities and a warning that they were lowered only in part", len(r.ThroughputBuffers), r.Warnings)
	}
}
