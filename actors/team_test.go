package actors

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// firChain builds gen.random → fir → collecting sink, and runs it with the
// FIR mapped as given; it returns what the sink saw.
func firChain(t *testing.T, pl *graph.Placement) ([]float32, error) {
	t.Helper()
	const rate, count = 64, 40
	g := graph.New("fir-team")
	src := g.AddActor("src", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "gen.random", Params: map[string]any{"seed": 7, "count": count}}))
	fir := g.AddActor("fir", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "fir", Params: map[string]any{"taps": []any{0.5, 0.25, 0.125, 0.0625}}}))
	var mu sync.Mutex
	var got []float32
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		mu.Lock()
		got = append(got, runtime.Input[float32](f, 0)...)
		mu.Unlock()
		return nil
	})))
	graph.Connect(g, graph.AddOutput[float32](src, "y", graph.SDF(rate)), graph.AddInput[float32](fir, "x", graph.SDF(rate)))
	graph.Connect(g, graph.AddOutput[float32](fir, "y", graph.SDF(rate)), graph.AddInput[float32](sink, "x", graph.SDF(rate)))
	var m *graph.Mapping
	if pl != nil {
		m = &graph.Mapping{Actors: map[string]*graph.Placement{"fir": pl}}
	}
	_, err := runtime.Run(context.Background(), g, runtime.Options{Mapping: m})
	return got, err
}

func TestFIRInReplicateTeam(t *testing.T) {
	want, err := firChain(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := firChain(t, &graph.Placement{Replicas: 3, Team: graph.TeamReplicate})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample %d = %v, want %v: each replica must keep the filter's history", i, got[i], want[i])
		}
	}
	// Split replicas would lose the history: the runtime refuses them for
	// a stateful actor.
	if _, err := firChain(t, &graph.Placement{Replicas: 2}); err == nil || !strings.Contains(err.Error(), "stateful") {
		t.Fatalf("split replicas of a stateful FIR: err = %v", err)
	}
}
