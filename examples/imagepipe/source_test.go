package imagepipe

import "testing"

// BenchmarkSourceCopy times the source's per-frame copy of a precomputed
// frame: into one destination that stays in cache, and into successive
// slots of a ring as large as the CUDA run's pinned FIFO (1784 frames,
// 137 MB), whose writes miss the cache.
func BenchmarkSourceCopy(b *testing.B) {
	frames := Frames()
	for _, c := range []struct {
		name  string
		slots int
	}{{"cached", 1}, {"ring137MB", 1784}} {
		b.Run(c.name, func(b *testing.B) {
			ring := make([]byte, c.slots*Pixels)
			for i := range ring { // fault the pages in before timing
				ring[i] = 1
			}
			b.SetBytes(Pixels)
			n := 0
			for b.Loop() {
				t, s := n%Period, n%c.slots
				copy(ring[s*Pixels:(s+1)*Pixels], frames[t*Pixels:(t+1)*Pixels])
				n++
			}
		})
	}
}
