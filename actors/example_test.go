package actors_test

import (
	"context"
	"fmt"

	_ "github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// A ramp, scaled by one half, printed as text: three firings of two tokens.
func Example() {
	builtin := func(use string, params map[string]any) graph.ActorOption {
		return graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: use, Params: params})
	}
	g := graph.New("ramp-scale")
	src := g.AddActor("src", builtin("gen.ramp", map[string]any{"start": 1, "count": 3}))
	half := g.AddActor("half", builtin("scale", map[string]any{"gain": 0.5}))
	out := g.AddActor("out", builtin("stdout", nil), graph.Stateful(), graph.IO())
	graph.Connect(g, graph.AddOutput[float32](src, "y", graph.SDF(2)), graph.AddInput[float32](half, "x", graph.SDF(2)))
	graph.Connect(g, graph.AddOutput[float32](half, "y", graph.SDF(2)), graph.AddInput[float32](out, "x", graph.SDF(2)))
	if _, err := runtime.Run(context.Background(), g, runtime.Options{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 0.5
	// 1
	// 1.5
	// 2
	// 2.5
	// 3
}
