package analysis

import (
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// builder makes small graphs tersely: actors get ports on demand.
type builder struct {
	g *graph.Graph
	n int
}

func newB(name string) *builder { return &builder{g: graph.New(name)} }

func (b *builder) actor(name string) *graph.Actor {
	if a := b.g.Actor(name); a != nil {
		return a
	}
	return b.g.AddActor(name)
}

// edge joins from→to with the given rates; opts set capacity/initial.
func (b *builder) edge(from string, p graph.Rate, to string, c graph.Rate, opts ...graph.ChannelOption) *graph.Channel {
	b.n++
	fa, ta := b.actor(from), b.actor(to)
	op := fa.AddPort(fmt.Sprintf("o%d", b.n), graph.Out, f32, p, "")
	ip := ta.AddPort(fmt.Sprintf("i%d", b.n), graph.In, f32, c, "")
	opts = append([]graph.ChannelOption{graph.Named(fmt.Sprintf("%s->%s#%d", from, to, b.n))}, opts...)
	return b.g.Join(op, ip, opts...)
}

func (b *builder) sdf(from string, p int, to string, c int, opts ...graph.ChannelOption) *graph.Channel {
	return b.edge(from, graph.SDF(p), to, graph.SDF(c), opts...)
}

func mustValid(t testing.TB, g *graph.Graph) {
	t.Helper()
	if err := g.Validate(); err != nil {
		t.Fatalf("invalid test graph: %v", err)
	}
}

func cdToDAT() *graph.Graph {
	b := newB("cd2dat")
	b.sdf("A", 1, "B", 1)
	b.sdf("B", 2, "C", 3)
	b.sdf("C", 2, "D", 7)
	b.sdf("D", 8, "E", 7)
	b.sdf("E", 5, "F", 1)
	return b.g
}

var f32 = graph.TokenType{Name: "f32", Size: 4}
