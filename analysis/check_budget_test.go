package analysis

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// TestCheckThroughputBudget: a search that runs out of time keeps the
// period bound and says so, instead of running on.
func TestCheckThroughputBudget(t *testing.T) {
	g := graph.New("budget")
	var prev graph.OutPort[float32]
	for i := range 12 {
		a := g.AddActor(string(rune('a'+i)), graph.WithCost(time.Duration(1+i%3)*time.Microsecond))
		if i > 0 {
			graph.Connect(g, prev, graph.AddInput[float32](a, "x", graph.SDF(3+i%2)))
		}
		if i < 11 {
			prev = graph.AddOutput[float32](a, "y", graph.SDF(4-i%2))
		}
	}
	r := Check(g, CheckOptions{ThroughputBudget: time.Nanosecond})
	if !r.Valid || !r.Consistent || r.Deadlock {
		t.Fatalf("report: %+v", r)
	}
	if r.PeriodNS <= 0 || r.ThroughputBuffers != nil {
		t.Fatalf("with no time: period %v, throughput buffers %v; want the bound and no buffers", r.PeriodNS, r.ThroughputBuffers)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "not found within") {
		t.Fatalf("warnings do not say the search ran out of time: %q", r.Warnings)
	}
	if r := Check(g, CheckOptions{ThroughputBudget: -1}); r.ThroughputBuffers == nil {
		t.Fatalf("without a limit the search must finish: %q", r.Warnings)
	}
}

// TestThroughputBuffersBudgetOnALargeChain: the time allowed bounds the
// search even where one exploration of the self-timed execution takes
// longer than all of it (a chain of 2 500 actors: 0.2 s each without the
// race detector, 2 s with it). Given a tenth of one exploration's time,
// the search gives up before half of one has passed.
func TestThroughputBuffersBudgetOnALargeChain(t *testing.T) {
	t.Parallel()
	g := graph.New("chain")
	var prev graph.OutPort[float32]
	const n = 2500
	caps := map[string]int{}
	for i := range n {
		a := g.AddActor(fmt.Sprintf("a%04d", i), graph.WithCost(100*time.Nanosecond))
		if i > 0 {
			c := graph.Connect(g, prev, graph.AddInput[float32](a, "x", graph.SDF(1)))
			caps[c.Name] = 1
		}
		if i < n-1 {
			prev = graph.AddOutput[float32](a, "y", graph.SDF(1))
		}
	}
	rv, err := RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := ThroughputBound(g, rv, caps); err != nil { // what the search's first try explores
		t.Fatal(err)
	}
	one := time.Since(start)
	budget := one / 10
	start = time.Now()
	_, _, err = ThroughputBuffersWithin(g, rv, budget)
	took := time.Since(start)
	if !errors.Is(err, ErrTimeBudget) || took > budget+one/2 {
		t.Fatalf("a %d-actor chain's search with %s allowed (one exploration: %s): %v after %s: expected ErrTimeBudget before %s", n, budget, one, err, took, budget+one/2)
	}
}
