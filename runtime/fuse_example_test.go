package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	_ "github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/examples/conditional"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// runCapturingStdout runs the graph file with os.Stdout sent to a file and
// returns what the run printed and its statistics.
func runCapturingStdout(t *testing.T, path string, opts runtime.Options) ([]byte, *runtime.Stats) {
	t.Helper()
	g, err := spec.LoadGraph(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	old := os.Stdout
	os.Stdout = out
	st, err := runtime.Run(context.Background(), g, opts)
	os.Stdout = old
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return b, st
}

// The tone filter (built-ins) prints the same spectrum fused and unfused;
// its stateless tail (decimate, fft, magnitude) runs as one fused unit.
func TestFusedToneFilterSameOutput(t *testing.T) {
	t.Parallel()
	path := "../examples/run/tone-filter.yaml"
	for _, workers := range []int{1, 2, 4} {
		fused, st := runCapturingStdout(t, path, runtime.Options{Iterations: 300, Workers: workers})
		plain, _ := runCapturingStdout(t, path, runtime.Options{Iterations: 300, Workers: workers, NoFuseCPU: true})
		if len(fused) == 0 || !slices.Equal(fused, plain) {
			t.Fatalf("workers %d: fused run printed %d bytes, unfused %d: outputs differ", workers, len(fused), len(plain))
		}
		for _, n := range []string{"down", "fft", "db"} {
			if got := st.Actor(n).Fused; got != "fused(down..db)" {
				t.Errorf("workers %d: %s fused as %q, want fused(down..db)", workers, n, got)
			}
		}
		for _, n := range []string{"tone", "noise", "mix", "lowpass", "print"} {
			if got := st.Actor(n).Fused; got != "" {
				t.Errorf("workers %d: %s fused as %q, want not fused", workers, n, got)
			}
		}
	}
}

// The conditional examples give the same frames fused and unfused (their
// actors sit next to KPN processes, broadcasts and a conditional pattern,
// so nothing in them fuses: the run must not change).
func TestFusedConditionalExamplesSameOutput(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"conditional.yaml", "kernel.yaml"} {
		path := filepath.Join("..", "examples", "conditional", file)
		var outs [2][]float32
		for i, no := range []bool{false, true} {
			g, err := spec.LoadGraph(path)
			if err != nil {
				t.Fatal(err)
			}
			conditional.DefaultSink.Take()
			if _, err := runtime.Run(context.Background(), g, runtime.Options{Iterations: 40, Workers: 2, NoFuseCPU: no}); err != nil {
				t.Fatalf("%s (NoFuseCPU %v): %v", file, no, err)
			}
			outs[i] = conditional.DefaultSink.Take()
		}
		if len(outs[0]) == 0 || !slices.Equal(outs[0], outs[1]) {
			t.Errorf("%s: fused run gave %d values, unfused %d: outputs differ", file, len(outs[0]), len(outs[1]))
		}
	}
}
