package sim

import (
	"testing"
	"time"
)

// BenchmarkMillionFirings simulates 10^6 firings: a four-stage chain on two
// processors joined by a link with L, S, B and F, 250000 iterations.
func BenchmarkMillionFirings(b *testing.B) {
	g := chain(b, stage{name: "A", cost: 1, out: 1, tokenSize: 64}, stage{name: "B", cost: 2, in: 1, out: 1},
		stage{name: "C", cost: 1.5, in: 1, out: 1}, stage{name: "D", cost: 1, in: 1})
	m := twoProcs(1, 1, 16, 1)
	p, err := Build(g, place("A", "p0", "B", "p1", "C", "p0", "D", "p1"), m, nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		r, err := Run(p, Config{Iterations: 250000})
		if err != nil {
			b.Fatal(err)
		}
		var n int64
		for _, f := range r.Firings {
			n += f
		}
		if n != 1000000 {
			b.Fatalf("%d firings", n)
		}
		b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(n), "ns/firing")
	}
}
