package stitch

import (
	"fmt"
	"testing"
)

// BenchmarkTransform times one tile's 2-D FFT (stitch.fft's firing).
func BenchmarkTransform(b *testing.B) {
	for _, n := range []int{128, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := DefaultConfig()
			c.Width, c.Height = n, n
			tile, f := make([]uint16, n*n), make([]complex64, n*n)
			c.Tile(SceneFor(c), c.Known(), 0, tile)
			b.SetBytes(int64(2 * n * n))
			for b.Loop() {
				Transform(tile, f, n, n)
			}
		})
	}
}

// BenchmarkAlign times PCIAM on one pair (a west or north firing).
func BenchmarkAlign(b *testing.B) {
	for _, n := range []int{128, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := DefaultConfig()
			c.Width, c.Height = n, n
			s, k := SceneFor(c), c.Known()
			ta, tb := make([]uint16, n*n), make([]uint16, n*n)
			fa, fb := make([]complex64, n*n), make([]complex64, n*n)
			c.Tile(s, k, 0, ta)
			c.Tile(s, k, 1, tb)
			Transform(ta, fa, n, n)
			Transform(tb, fb, n, n)
			for b.Loop() {
				Align(ta, tb, fa, fb, n, n, c.Peaks)
			}
		})
	}
}

// BenchmarkTile times cutting one tile from the scene (stitch.source).
func BenchmarkTile(b *testing.B) {
	for _, n := range []int{128, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := DefaultConfig()
			c.Width, c.Height = n, n
			s, k := SceneFor(c), c.Known()
			tile := make([]uint16, n*n)
			for b.Loop() {
				c.Tile(s, k, 0, tile)
			}
		})
	}
}
