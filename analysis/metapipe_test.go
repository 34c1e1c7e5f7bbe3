package analysis

import (
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// ring: a → b → a with graph input a.x and output b.y; the loop b.fb → a.fb
// holds init initial tokens.
func ring(init int) *graph.Pipeline {
	g := graph.New("ring")
	f32 := graph.TokenType{Name: "f32", Size: 4}
	a := g.AddActor("a")
	a.AddPort("x", graph.In, f32, graph.SDF(2), "")
	a.AddPort("fb", graph.In, f32, graph.SDF(2), "")
	a.AddPort("y", graph.Out, f32, graph.SDF(2), "")
	b := g.AddActor("b")
	b.AddPort("x", graph.In, f32, graph.SDF(1), "")
	b.AddPort("y", graph.Out, f32, graph.SDF(1), "")
	b.AddPort("fb", graph.Out, f32, graph.SDF(1), "")
	g.JoinNames("a.y", "b.x")
	g.JoinNames("b.fb", "a.fb", graph.Initial(init))
	g.Expose(graph.In, "x", "a", "x", "")
	g.Expose(graph.Out, "y", "b", "y", "")
	return graph.NewPipeline(g)
}

func TestCheckPipelineNeedsInitOnce(t *testing.T) {
	r := CheckPipeline(ring(0))
	if !r.Valid {
		t.Fatal(r.Errors)
	}
	if r.NeedInitOnce["a.fb"] != 2 {
		t.Errorf("NeedInitOnce = %v, want a.fb: 2", r.NeedInitOnce)
	}
	if r := CheckPipeline(ring(2)); len(r.NeedInitOnce) != 0 {
		t.Errorf("with 2 initial tokens NeedInitOnce = %v, want none", r.NeedInitOnce)
	}
}

func TestCheckPipelineRates(t *testing.T) {
	pl := ring(2)
	pl.SetRole("a.fb", graph.InitOnce, 0, "")
	pl.SetRole("b.y", graph.Exit, 4, "")
	r := CheckPipeline(pl)
	if !r.Valid || len(r.Entrance) != 1 || len(r.Exit) != 1 || len(r.InitOnce) != 1 {
		t.Fatalf("%+v", r)
	}
	want := map[string]PortRate{
		"a.x":  {Port: "a.x", Role: "entrance", Every: 1, Firings: 1, Exchanges: 1, Tokens: 2},
		"a.fb": {Port: "a.fb", Role: "initonce", Every: 0, Firings: 1, Exchanges: 0, Tokens: 2},
		"b.y":  {Port: "b.y", Role: "exit", Every: 4, Firings: 2, Exchanges: 0.5, Tokens: 1},
	}
	for _, pr := range r.Rates {
		if pr != want[pr.Port] {
			t.Errorf("rate %+v, want %+v", pr, want[pr.Port])
		}
	}
	if bad := CheckPipeline(graph.NewPipeline(graph.New("empty"))); bad.Valid || len(bad.Errors) == 0 {
		t.Errorf("empty pipeline: %+v", bad)
	}
}
