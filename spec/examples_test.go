package spec_test

import (
	"path/filepath"
	"testing"

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
