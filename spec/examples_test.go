package spec_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/spec"
)

var exampleGraphs = []string{
	"cd2dat.yaml", "feedback-deadlock.yaml", "feedback.yaml", "kmeans-quantize.yaml",
	"fft-filter.yaml", "fft-pass.yaml", "eth/graph.yaml", "eth/graph.xml",
}

func TestExamplesLoad(t *testing.T) {
	for _, name := range exampleGraphs {
		t.Run(name, func(t *testing.T) {
			g, err := spec.Load(filepath.Join("..", "examples", name))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if err := g.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
		})
	}
}

func TestExamplesAnalysis(t *testing.T) {
	for _, name := range exampleGraphs {
		t.Run(name, func(t *testing.T) {
			g, err := spec.Load(filepath.Join("..", "examples", name))
			if err != nil {
				t.Fatal(err)
			}
			if g.HasComposites() {
				if g, err = g.Flatten(); err != nil {
					t.Fatal(err)
				}
			}
			rv, err := analysis.RepetitionVector(g)
			if err != nil {
				t.Fatalf("repetition vector: %v", err)
			}
			if name == "cd2dat.yaml" {
				want := map[string]int64{"A": 147, "B": 147, "C": 98, "D": 28, "E": 32, "F": 160}
				if !reflect.DeepEqual(rv.Firings, want) {
					t.Errorf("repetition vector %v, want %v", rv.Firings, want)
				}
			}
			res, err := analysis.Deadlock(g, rv)
			if err != nil {
				t.Fatalf("deadlock analysis: %v", err)
			}
			want := name == "feedback-deadlock.yaml"
			if res.Deadlock != want {
				t.Fatalf("deadlock = %v, want %v: %+v", res.Deadlock, want, res)
			}
			if want {
				t.Logf("initialize: %v", res.Initialize)
			}
		})
	}
}
