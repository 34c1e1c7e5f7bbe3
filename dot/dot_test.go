package dot

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

func cycle() *graph.Graph {
	g := graph.New("loop")
	a, b := g.AddActor("a"), g.AddActor("b", graph.Stateful())
	graph.Connect(g, graph.AddOutput[float32](a, "y", graph.SDF(2)), graph.AddInput[float32](b, "x", graph.SDF(1)), graph.Capacity(4))
	graph.Connect(g, graph.AddOutput[float32](b, "y", graph.SDF(1)), graph.AddInput[float32](a, "x", graph.SDF(2)), graph.Initial(2))
	return g
}

func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	h := Highlight{
		Repetitions: map[string]int64{"a": 1, "b": 2},
		Cycles:      [][]string{{"a.y->b.x", "b.y->a.x"}},
		Initialize:  map[string]int{"a.y->b.x": 3},
	}
	if err := Write(&buf, cycle(), h); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`digraph "loop" {`,
		`"a" [label="a\n×1"];`,
		`"b" [label="b\n×2", peripheries=2];`,
		`"a" -> "b" [label="2 → 1\ncap 4\n+3 initial"`, `penwidth=3`,
		`"b" -> "a" [label="1 → 2\n●2"`, `style=dashed`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("DOT lacks %q:\n%s", want, out)
		}
	}
}

func TestSVG(t *testing.T) {
	var buf bytes.Buffer
	err := SVG(context.Background(), []byte("digraph{a->b}"), &buf)
	if _, lookErr := exec.LookPath("dot"); lookErr != nil {
		if !errors.Is(err, ErrNoGraphviz) {
			t.Fatalf("without Graphviz, SVG() = %v, want ErrNoGraphviz", err)
		}
		t.Skip("Graphviz not installed: checked the clear error only")
	}
	if err != nil || !strings.Contains(buf.String(), "<svg") {
		t.Fatalf("SVG() = %v, output %q", err, buf.String())
	}
}
