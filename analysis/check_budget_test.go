package analysis

import (
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
