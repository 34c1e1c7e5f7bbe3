package vca_test

import (
	"testing"

	"github.com/sluicehq/sluice/examples/vca"
)

// BenchmarkStats is the statistics of one seed-size block (224 bands ×
// 1024 pixels), the graph's dominant step.
func BenchmarkStats(b *testing.B) {
	p := vca.Seed
	p.Distinct = 1
	L := p.Bands
	y := p.CubeAt(0).Y[:p.BlockPx*L]
	part := make([]float32, vca.StatsLen(L))
	b.SetBytes(int64(len(y) * 4))
	for b.Loop() {
		vca.Stats(y, L, part)
	}
}

// BenchmarkSequential unmixes one small (vca.yaml) cube per iteration.
func BenchmarkSequential(b *testing.B) {
	p := vca.Small
	p.Distinct = 1
	p.CubeAt(0)
	for b.Loop() {
		if _, err := vca.Sequential(p, 1); err != nil {
			b.Fatal(err)
		}
	}
}
