package analysis

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPropertyThroughputBuffers: on random graphs with random costs, the
// capacities ThroughputBuffers answers give the period of unbounded
// channels and complete an iteration, and, when it lowered every channel
// it grew, none of them reaches that period one step smaller (a step is
// gcd(p, c) tokens on an SDF channel, one on a CSDF one): the lowering
// started from the channels' peak occupancies is as tight as the binary
// search from the grown capacities was.
func TestPropertyThroughputBuffers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	shapes := []string{"chain", "tree", "dag", "wdag", "cycle"}
	lowered := 0
	for iter := range 250 {
		shape := shapes[iter%len(shapes)]
		csdf := iter%10 >= 5
		g := randGraph(r, shape, 2+r.IntN(12), csdf)
		for _, a := range g.Actors {
			a.Cost = time.Duration(1+r.IntN(6)) * time.Microsecond
		}
		name := fmt.Sprintf("%d-%s-csdf=%v", iter, shape, csdf)
		rv, err := RepetitionVector(g)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		unbounded, err := ThroughputBound(g, rv, nil)
		if err != nil {
			t.Fatalf("%s: unbounded period: %v", name, err)
		}
		buf, th, err := ThroughputBuffers(g, rv)
		partly := errors.Is(err, ErrPartlyLowered)
		if err != nil && !partly {
			if errors.Is(err, ErrStateBudget) {
				continue
			}
			t.Fatalf("%s: throughput buffers: %v", name, err)
		}
		with, err := ThroughputBound(g, rv, buf)
		if err != nil {
			t.Fatalf("%s: period with %v: %v", name, buf, err)
		}
		if th.PeriodNS != unbounded.PeriodNS || with.PeriodNS != unbounded.PeriodNS {
			t.Fatalf("%s: answered period %v ns, %v ns with the capacities %v: expected the unbounded %v ns", name, th.PeriodNS, with.PeriodNS, buf, unbounded.PeriodNS)
		}
		m, _ := build(g)
		q, _ := m.targets(rv)
		init := m.initOf(nil)
		caps, err := m.capsFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		if !completes(m, q, init, caps) {
			t.Fatalf("%s: capacities %v do not complete an iteration", name, buf)
		}
		if partly {
			continue
		}
		min, err := MinimalBuffers(g, rv)
		if err != nil {
			t.Fatal(err)
		}
		lowered++
		for i, c := range m.chans {
			if caps[i] <= int64(min[c.name]) {
				continue // not grown: the deadlock-free minimum stands
			}
			st := int64(1)
			if c.prod.Phases() == 1 && c.cons.Phases() == 1 {
				st = max(1, gcd64(c.prodMax, c.consMax))
			}
			if caps[i]-st < max(init[i], 1) {
				continue
			}
			caps[i] -= st
			smaller, _, err := m.throughput(q, caps, DefaultStateBudget, time.Time{}, nil)
			if err == nil && smaller.PeriodNS == unbounded.PeriodNS && completes(m, q, init, caps) {
				t.Fatalf("%s: channel %s reaches the period with %d, one step under the %d answered", name, c.name, caps[i], caps[i]+st)
			}
			caps[i] += st
		}
	}
	if lowered < 200 {
		t.Fatalf("%d of 250 graphs lowered whole: expected most", lowered)
	}
	t.Logf("%d of 250 random graphs lowered whole, each channel one step from missing the period", lowered)
}
