package stitch

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestFFT2MatchesDFT compares FFT2 with the 2-D DFT's definition.
func TestFFT2MatchesDFT(t *testing.T) {
	w, h := 16, 8
	z := make([]complex64, w*h)
	for i := range z {
		z[i] = complex(float32(math.Sin(float64(i)*0.37)), float32(i%5))
	}
	orig := append([]complex64(nil), z...)
	FFT2(z, w, h)
	for v := 0; v < h; v++ {
		for u := 0; u < w; u++ {
			var s complex128
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					s += complex128(orig[y*w+x]) * cmplx.Exp(complex(0, -2*math.Pi*(float64(u*x)/float64(w)+float64(v*y)/float64(h))))
				}
			}
			if d := cmplx.Abs(s - complex128(z[v*w+u])); d > 1e-4 {
				t.Fatalf("Z[%d][%d] = %v, want %v", v, u, z[v*w+u], s)
			}
		}
	}
}

// TestSequentialRecoversKnownPositions stitches two data sets with the
// sequential version: the default one and a 5×6 grid of 256×256 tiles with
// more jitter and noise.
func TestSequentialRecoversKnownPositions(t *testing.T) {
	other := DefaultConfig()
	other.Rows, other.Cols, other.Width, other.Height, other.Jitter, other.Noise, other.Seed = 5, 6, 256, 256, 12, 80, 11
	for _, c := range []Config{DefaultConfig(), other} {
		r, err := Sequential(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Mismatches != 0 {
			t.Errorf("%d×%d tiles of %d×%d: %d positions differ from the known ones", c.Rows, c.Cols, c.Width, c.Height, r.Mismatches)
		}
		// Most pairs must be right on their own, not only through the tree.
		k, good, pairs := c.Known(), 0, 0
		for i := range r.West {
			for _, p := range []struct {
				t Translation
				a int
			}{{r.West[i], i - 1}, {r.North[i], i - c.Cols}} {
				if !p.t.Valid {
					continue
				}
				pairs++
				if p.t.DX == k[i].X-k[p.a].X && p.t.DY == k[i].Y-k[p.a].Y {
					good++
				}
			}
		}
		if pairs != 2*c.Rows*c.Cols-c.Rows-c.Cols || good*10 < pairs*7 {
			t.Errorf("%d×%d: %d of %d pairs right: want all %d pairs, at least 70%% right", c.Rows, c.Cols, good, pairs, 2*c.Rows*c.Cols-c.Rows-c.Cols)
		}
	}
}

// TestAlignBothWays: swapping the tiles negates the translation.
func TestAlignBothWays(t *testing.T) {
	c := DefaultConfig()
	c.Noise = 0
	s, k := SceneFor(c), c.Known()
	n := c.Width
	a, b := make([]uint16, n*n), make([]uint16, n*n)
	fa, fb := make([]complex64, n*n), make([]complex64, n*n)
	c.Tile(s, k, 9, a)
	c.Tile(s, k, 10, b)
	Transform(a, fa, n, n)
	Transform(b, fb, n, n)
	ab := Align(a, b, fa, fb, n, n, 2)
	ba := Align(b, a, fb, fa, n, n, 2)
	want := Translation{DX: k[10].X - k[9].X, DY: k[10].Y - k[9].Y, Valid: true}
	if ab.DX != want.DX || ab.DY != want.DY || ba.DX != -want.DX || ba.DY != -want.DY || ab.NCC < 0.99 {
		t.Errorf("A→B %+v, B→A %+v: want (%d, %d) and its negation, NCC ≈ 1 without noise", ab, ba, want.DX, want.DY)
	}
}

// TestSolveKeepsTheBestPairs: a wrong pair with a low correlation is left
// out of the spanning tree.
func TestSolveKeepsTheBestPairs(t *testing.T) {
	c := DefaultConfig()
	c.Rows, c.Cols = 2, 2
	ok := func(dx, dy int) Translation { return Translation{DX: dx, DY: dy, NCC: 0.9, Valid: true} }
	west := []Translation{{}, ok(100, 2), {}, ok(101, -1)}
	north := []Translation{{}, {}, ok(-3, 99), {DX: 40, DY: 40, NCC: 0.1, Valid: true}} // wrong, weak
	pos, err := Solve(c, west, north)
	if err != nil {
		t.Fatal(err)
	}
	want := normalise([]Pos{{0, 0}, {100, 2}, {-3, 99}, {98, 98}})
	if fmt.Sprint(pos) != fmt.Sprint(want) {
		t.Errorf("positions %v, want %v", pos, want)
	}
	north[2].Valid = false
	west[3].Valid = false
	if _, err := Solve(c, west, north); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("disconnected tile: error %v, want one saying tile 2 is not connected", err)
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{"grid": "3x4", "tile": "64x32", "jitter": "1", "mosaic": "m.pgm"})
	if err != nil || c.Rows != 3 || c.Cols != 4 || c.Width != 64 || c.Height != 32 || c.Mosaic != "m.pgm" {
		t.Errorf("got %+v, %v", c, err)
	}
	for attrs, want := range map[string]string{
		"grid=8":         `expected two integers as in "8x8"`,
		"tile=100x100":   "expected powers of two",
		"colour=red":     `unknown attribute "colour"`,
		"jitter=40":      "expected 0 to a quarter of the overlap",
		"overlap=0.9":    "expected 0.05 to 0.5",
		"mosaic-scale=0": "expected ≥ 1",
	} {
		k, v, _ := strings.Cut(attrs, "=")
		if _, err := ParseConfig(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", attrs, err, want)
		}
	}
}

func TestWriteMosaic(t *testing.T) {
	c := DefaultConfig()
	c.Rows, c.Cols, c.MosaicScale = 2, 2, 2
	img := Compose(c, c.Known())
	dir := t.TempDir()
	pgm := filepath.Join(dir, "m.pgm")
	if err := WriteMosaic(pgm, img); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pgm)
	head := fmt.Sprintf("P5\n%d %d\n65535\n", img.Bounds().Dx(), img.Bounds().Dy())
	if !bytes.HasPrefix(b, []byte(head)) || len(b) != len(head)+len(img.Pix) {
		t.Errorf("PGM: %d bytes starting %q, want header %q and %d bytes of pixels", len(b), b[:min(len(b), 20)], head, len(img.Pix))
	}
	// Compose keeps every second pixel: the mosaic's (0, 0) is tile 0's
	// pixel at the known origin's parity offset.
	if img.Bounds().Dx() < (c.Width+90)/2 {
		t.Errorf("mosaic width %d: too small for two tiles", img.Bounds().Dx())
	}
	if err := WriteMosaic(filepath.Join(dir, "m.tif"), img); err == nil || !strings.Contains(err.Error(), "expected .png or .pgm") {
		t.Errorf("TIFF: error %v, want one naming the allowed extensions", err)
	}
}

// TestHermitianPCM: the half-spectrum correlation (PCMWith(nil, …))
// equals the full one (PCMWith(GoFFT, …)).
func TestHermitianPCM(t *testing.T) {
	for _, n := range []int{32, 128} {
		c := DefaultConfig()
		c.Width, c.Height, c.Jitter = n, n, 1
		s, k := SceneFor(c), c.Known()
		a, b := make([]uint16, n*n), make([]uint16, n*n)
		c.Tile(s, k, 0, a)
		c.Tile(s, k, 1, b)
		fa, fb := make([]complex64, n*n), make([]complex64, n*n)
		Transform(a, fa, n, n)
		Transform(b, fb, n, n)
		full, half := make([]complex64, n*n), make([]complex64, n*n)
		if err := PCMWith(GoFFT, a, b, fa, fb, full, n, n); err != nil {
			t.Fatal(err)
		}
		if err := PCMWith(nil, a, b, fa, fb, half, n, n); err != nil {
			t.Fatal(err)
		}
		var peak, diff float64
		for i := range full {
			peak = max(peak, math.Abs(float64(real(full[i]))))
			diff = max(diff, math.Abs(float64(real(full[i])-real(half[i]))))
			if imag(half[i]) != 0 {
				t.Fatalf("%d×%d: value %d has imaginary part %g, want 0", n, n, i, imag(half[i]))
			}
		}
		if diff > 1e-4*peak {
			t.Errorf("%d×%d: largest difference %.3g of the peak %.3g", n, n, diff, peak)
		}
	}
}

// TestTileSampleMatchesTile: the sampled pixels are Tile's, bit for bit,
// for every start and several steps (the noise's jump ahead included).
func TestTileSampleMatchesTile(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	scene, known := SceneFor(c), c.Known()
	full := make([]uint16, c.Pixels())
	for _, i := range []int{0, 3} {
		c.Tile(scene, known, i, full)
		for _, step := range []int{1, 3, 16} {
			for _, x0 := range []int{0, 1, step - 1} {
				n := 0
				c.TileSample(scene, known, i, x0, x0, step, func(x, y int, v uint16) {
					n++
					if w := full[y*c.Width+x]; v != w {
						t.Fatalf("tile %d, step %d, start %d: pixel (%d, %d) = %d, Tile has %d", i, step, x0, x, y, v, w)
					}
				})
				if want := ((c.Width - x0 + step - 1) / step) * ((c.Height - x0 + step - 1) / step); n != want {
					t.Fatalf("tile %d, step %d, start %d: %d pixels sampled, expected %d", i, step, x0, n, want)
				}
			}
		}
	}
}

// TestComposeMatchesFullTiles: the mosaic from sampled pixels is the one
// from whole tiles, laid in the same order.
func TestComposeMatchesFullTiles(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.Rows, c.Cols, c.MosaicScale = 3, 3, 5
	pos := c.Known()
	got := Compose(c, pos)
	pos = normalise(pos)
	want := image.NewGray16(got.Bounds())
	scene, known := SceneFor(c), c.Known()
	tile := make([]uint16, c.Pixels())
	s := c.MosaicScale
	for i, p := range pos {
		c.Tile(scene, known, i, tile)
		for y := (s - p.Y%s) % s; y < c.Height; y += s {
			for x := (s - p.X%s) % s; x < c.Width; x += s {
				want.SetGray16((p.X+x)/s, (p.Y+y)/s, color.Gray16{Y: tile[y*c.Width+x]})
			}
		}
	}
	if !bytes.Equal(got.Pix, want.Pix) {
		t.Fatal("the mosaic composed from sampled pixels differs from the one composed from whole tiles")
	}
}

// The scene's textures are the same however many goroutines share their
// rows.
func TestValueNoiseWorkers(t *testing.T) {
	t.Parallel()
	cells, amp := []int{4, 8, 16}, []float32{0.5, 0.3, 0.2}
	one := valueNoiseOn(96, cells, amp, 7, 1)
	for _, w := range []int{2, 7, 200} {
		got := valueNoiseOn(96, cells, amp, 7, w)
		for i := range one {
			if got[i] != one[i] {
				t.Fatalf("%d workers, value %d: %v, one worker %v", w, i, got[i], one[i])
			}
		}
	}
}

// BenchmarkValueNoise times the scene's fine texture for 1024×1024 tiles
// (2048² values, five octaves) on one goroutine and on every CPU.
func BenchmarkValueNoise(b *testing.B) {
	const pf = 2048
	cells, amp := []int{pf / 32, pf / 16, pf / 8, pf / 4, pf / 2}, []float32{0.3, 0.25, 0.2, 0.15, 0.1}
	for _, w := range []int{1, goruntime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			for b.Loop() {
				valueNoiseOn(pf, cells, amp, 1, w)
			}
		})
	}
}
