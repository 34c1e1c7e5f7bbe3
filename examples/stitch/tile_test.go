package stitch

import "testing"

// TestTileMatchesAt: Tile, which steps the textures' columns, writes the
// same pixels as the scene's At plus the same noise.
func TestTileMatchesAt(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{DefaultConfig(), SeedConfig()} {
		s, k := SceneFor(c), c.Known()
		dst := make([]uint16, c.Pixels())
		for _, i := range []int{0, 1, c.Cols + 3, c.Tiles() - 1} {
			c.Tile(s, k, i, dst)
			p := k[i]
			base := mix(c.Seed ^ uint64(i+1)<<40)
			for y := 0; y < c.Height; y++ {
				h := mix(base + uint64(y))
				for x := 0; x < c.Width; x++ {
					h = h*6364136223846793005 + 1442695040888963407
					n := (float32(h>>40&0xffff)+float32(h>>24&0xffff))/65536 - 1
					v := s.At(p.X+x, p.Y+y) + float32(c.Noise)*n
					if want := uint16(min(max(v, 0), 65535)); dst[y*c.Width+x] != want {
						t.Fatalf("%d×%d tile %d pixel (%d, %d): %d, want %d", c.Width, c.Height, i, x, y, dst[y*c.Width+x], want)
					}
				}
			}
		}
	}
}
