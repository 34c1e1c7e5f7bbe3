package dot

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

func patternGraph() *graph.Graph {
	br := func(name string) *graph.Graph {
		b := graph.New(name)
		f := b.AddActor("f")
		h := b.AddActor("h")
		graph.AddInput[float32](f, "in", graph.SDF(1))
		graph.Connect(b, graph.AddOutput[float32](f, "out", graph.SDF(1)), graph.AddInput[float32](h, "in", graph.SDF(1)))
		graph.AddOutput[float32](h, "out", graph.SDF(1))
		b.Expose(graph.In, "x", "f", "in", "")
		b.Expose(graph.Out, "y", "h", "out", "")
		return b
	}
	g := graph.New("cond")
	src, ctl, sink := g.AddActor("src"), g.AddActor("ctl"), g.AddActor("sink")
	p := g.AddIf("route", br("bright"), br("dark"))
	graph.Connect(g, graph.AddOutput[float32](src, "o", graph.SDF(1)), graph.AddInput[float32](p, "x", graph.SDF(1)))
	g.Join(graph.AddOutput[uint8](ctl, "o", graph.SDF(1)).Port(), p.Port(graph.ControlPort))
	graph.Connect(g, graph.AddOutput[float32](p, "y", graph.SDF(1)), graph.AddInput[float32](sink, "i", graph.SDF(1)))
	return g
}

func TestWritePattern(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, patternGraph(), Highlight{Repetitions: map[string]int64{"route": 1}}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`label="route (conditional)"`,
		`"route" [label="route\n×1", shape=diamond];`,
		`label="ctl = 0: dark"`, `label="ctl = 1: bright"`,
		`"route/1/f" [label="f"];`,
		`"route" -> "route/1/f" [style=dotted, label="x (ctl=1)"];`,
		`"route/0/h" -> "route" [style=dotted, label="y"];`,
		`"route/0/f" -> "route/0/h" [label="1 → 1"];`,
		`"ctl" -> "route" [`, `color=blue`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if _, err := exec.LookPath("dot"); err == nil {
		var svg bytes.Buffer
		if err := SVG(context.Background(), buf.Bytes(), &svg); err != nil {
			t.Fatalf("graphviz rejects the output: %v", err)
		}
	}
}
