package analysis

import (
	"math/rand/v2"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

// bigChain is a 10,000-actor SDF chain with mixed rates (2:3, 3:2, 1:1, ...).
func bigChain(n int) *graph.Graph {
	b := newB("chain")
	rates := [][2]int{{2, 3}, {3, 2}, {1, 1}, {4, 4}, {5, 5}}
	for i := 1; i < n; i++ {
		p := rates[i%len(rates)]
		b.sdf(name(i-1), p[0], name(i), p[1])
	}
	return b.g
}

func name(i int) string { return "a" + itoa(i) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var buf [20]byte
	k := len(buf)
	for i > 0 {
		k--
		buf[k] = byte('0' + i%10)
		i /= 10
	}
	return string(buf[k:])
}

func benchAll(b *testing.B, g *graph.Graph) {
	b.ReportAllocs()
	for b.Loop() {
		rv, err := RepetitionVector(g)
		if err != nil {
			b.Fatal(err)
		}
		d, err := Deadlock(g, rv)
		if err != nil || d.Deadlock {
			b.Fatal(err, d)
		}
		if _, err := MinimalBuffers(g, rv); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChain10k: RepetitionVector + Deadlock + MinimalBuffers on a
// 10,000-actor chain.
func BenchmarkChain10k(b *testing.B) { benchAll(b, bigChain(10000)) }

// BenchmarkDAG10k: the same on a random 10,000-actor DAG with reconvergent
// paths within windows of 8 actors (about 1.5 channels per actor), SDF and
// CSDF actors mixed.
func BenchmarkDAG10k(b *testing.B) {
	benchAll(b, randGraph(rand.New(rand.NewPCG(7, 7)), "wdag", 10000, true))
}

// BenchmarkDAG10kAnalysisOnly: RepetitionVector + Deadlock only on a
// uniform random 10,000-actor DAG (reconvergent paths spanning the graph).
func BenchmarkDAG10kAnalysisOnly(b *testing.B) {
	g := randGraph(rand.New(rand.NewPCG(7, 7)), "dag", 10000, true)
	b.ReportAllocs()
	for b.Loop() {
		rv, err := RepetitionVector(g)
		if err != nil {
			b.Fatal(err)
		}
		if d, err := Deadlock(g, rv); err != nil || d.Deadlock {
			b.Fatal(err, d)
		}
	}
}

// BenchmarkDAG1kUniform: RepetitionVector + Deadlock + MinimalBuffers on a
// uniform random 1,000-actor DAG, where buffer minimisation is hardest.
func BenchmarkDAG1kUniform(b *testing.B) {
	benchAll(b, randGraph(rand.New(rand.NewPCG(7, 7)), "dag", 1000, true))
}

// BenchmarkThroughputBoundCD2DAT is one state-space exploration of cd2dat
// with its minimal buffers (the step ThroughputBuffers repeats).
func BenchmarkThroughputBoundCD2DAT(b *testing.B) {
	g := cdToDAT()
	rv, _ := RepetitionVector(g)
	min, _ := MinimalBuffers(g, rv)
	for b.Loop() {
		if _, err := ThroughputBound(g, rv, min); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThroughputBuffersDAG256 is the whole throughput-buffer search
// on the workbench's 256-actor DAG (ui/testdata/dag256.yaml: 347 channels
// enlarged), which must lower every one of them within its evaluations.
func BenchmarkThroughputBuffersDAG256(b *testing.B) {
	g, err := spec.Load("../ui/testdata/dag256.yaml")
	if err != nil {
		b.Fatal(err)
	}
	rv, err := RepetitionVector(g)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, err := ThroughputBuffers(g, rv); err != nil {
			b.Fatal(err)
		}
	}
}
