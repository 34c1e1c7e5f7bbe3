package conditional_test

import (
	"context"
	"math"
	"testing"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/examples/conditional"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

func TestConditionalExample(t *testing.T) {
	g, err := spec.LoadGraph("conditional.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := analysis.Check(g, analysis.CheckOptions{})
	if len(r.Errors) > 0 || r.Deadlock || r.Repetitions["route"] != 1 {
		t.Fatalf("check: errors %v, deadlock %v, repetitions %v", r.Errors, r.Deadlock, r.Repetitions)
	}
	const frames = 51
	conditional.DefaultSink.Take()
	st, err := runtime.Run(context.Background(), g, runtime.Options{Iterations: frames, CheckEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	means := conditional.DefaultSink.Take()
	if len(means) != frames {
		t.Fatalf("%d frames out, want %d", len(means), frames)
	}
	var bright int64
	for f := int64(0); f < frames; f++ {
		want := conditional.Mean(conditional.Want(f))
		if math.Abs(float64(means[f]-want)) > 1e-6 {
			t.Errorf("frame %d: mean %g, want %g (frames out of order or wrong branch)", f, means[f], want)
		}
		in := make([]float32, conditional.Pixels)
		conditional.Frame(f, in)
		if conditional.Bright(in) {
			bright++
		}
	}
	b := st.Actor("route").Branches
	if b[1] != bright || b[0] != frames-bright || bright == 0 || bright == frames {
		t.Errorf("branch counts %v, want [%d %d] with both branches taken", b, frames-bright, bright)
	}
}

func TestSwitchSelectYAMLLoads(t *testing.T) {
	g, err := spec.LoadGraph("switch-select.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sw", "se"} {
		if _, err := runtime.Resolve(g.Actor(n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if r := analysis.Check(g, analysis.CheckOptions{}); len(r.Errors) > 0 {
		t.Errorf("check: %v", r.Errors)
	}
}
