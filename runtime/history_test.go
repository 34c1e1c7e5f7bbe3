package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// TestHistory: a 3-tap moving sum with history 2 on a rate-4 input sees
// the two previous tokens before its window (zeros before the start).
func TestHistory(t *testing.T) {
	t.Parallel()
	g := graph.New("hist")
	src := addSource(g, "src", 4, 40)
	a := g.AddActor("sum3", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		in, out := Input[int64](f, 0), Output[int64](f, 0)
		if len(in) != 6 {
			t.Errorf("window of %d tokens, want 2 + 4", len(in))
		}
		for i := range out {
			out[i] = in[i] + in[i+1] + in[i+2]
		}
		return nil
	})))
	in := graph.AddInput[int64](a, "in", graph.SDF(4))
	in.Port().History = 2
	graph.Connect(g, src, in)
	si, sink := addSink(g, "sink", graph.SDF(4))
	graph.Connect(g, graph.AddOutput[int64](a, "out", graph.SDF(4)), si)
	if _, err := Run(context.Background(), g, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	got := sink.values()
	for i, v := range got {
		want := int64(0)
		for k := int64(i) - 2; k <= int64(i); k++ {
			want += max(k, 0)
		}
		if v != want {
			t.Fatalf("token %d = %d, want %d", i, v, want)
		}
	}
	if len(got) != 40 {
		t.Fatalf("%d tokens, want 40", len(got))
	}
	a.Stateful = false
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "port sum3.in: history 2 needs firings in order: expected a stateful actor") {
		t.Fatalf("validate: %v", err)
	}
}
