package stitch

import (
	"fmt"
	"math"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
)

// Config describes a tile grid and how to stitch it. The graph passes it
// to the Go actors as string attributes (see ParseConfig); the zero values
// of the optional fields take the defaults of DefaultConfig.
type Config struct {
	Rows, Cols    int     // grid size in tiles
	Width, Height int     // tile size in pixels; powers of two (the FFT is radix-2)
	Overlap       float64 // nominal overlap of neighbouring tiles, a fraction of the tile size
	Jitter        int     // stage error: each tile is off its nominal place by up to ±Jitter pixels in x and y
	Noise         float64 // camera noise amplitude in grey levels (triangular, ±Noise)
	Seed          uint64  // the data set: scene and jitter
	Peaks         int     // phase-correlation peaks refined by cross-correlation per pair
	Mosaic        string  // output file (.png or .pgm); "" writes none
	MosaicScale   int     // the mosaic keeps every MosaicScale-th pixel in x and y
	FFT           string  // the Go actors' 2-D FFTs: "go" (FFT2) or "cufft" (cuFFT on GPU 0)
}

// DefaultConfig is the default data set: 8×8 tiles of 128×128 pixels.
func DefaultConfig() Config {
	return Config{Rows: 8, Cols: 8, Width: 128, Height: 128, Overlap: 0.2, Jitter: 6, Noise: 40, Seed: 3, Peaks: 2, MosaicScale: 1, FFT: "go"}
}

// SeedConfig is the seed's scale (42×59 tiles); its tiles are 1024×1024
// 16-bit pixels (2 MiB, 8 MiB per transform).
func SeedConfig() Config {
	c := DefaultConfig()
	c.Rows, c.Cols, c.Width, c.Height, c.Jitter, c.MosaicScale = 42, 59, 1024, 1024, 30, 16
	return c
}

// Tiles is the number of tiles.
func (c Config) Tiles() int { return c.Rows * c.Cols }

// Pixels is the number of pixels of a tile.
func (c Config) Pixels() int { return c.Width * c.Height }

// Step is the nominal distance between neighbouring tiles' origins.
func (c Config) Step() (x, y int) {
	return int(math.Round(float64(c.Width) * (1 - c.Overlap))), int(math.Round(float64(c.Height) * (1 - c.Overlap)))
}

// Validate reports the first field out of range.
func (c Config) Validate() error {
	pow2 := func(n int) bool { return n >= 16 && n&(n-1) == 0 }
	switch {
	case c.Rows < 1 || c.Cols < 1:
		return fmt.Errorf("stitch: grid %d×%d: expected at least one row and one column", c.Rows, c.Cols)
	case !pow2(c.Width) || !pow2(c.Height):
		return fmt.Errorf("stitch: tile %d×%d: expected powers of two of at least 16", c.Width, c.Height)
	case c.Overlap < 0.05 || c.Overlap > 0.5:
		return fmt.Errorf("stitch: overlap %g: expected 0.05 to 0.5", c.Overlap)
	case c.Jitter < 0 || 4*c.Jitter > int(c.Overlap*float64(min(c.Width, c.Height))):
		return fmt.Errorf("stitch: jitter %d: expected 0 to a quarter of the overlap (%d pixels)", c.Jitter, int(c.Overlap*float64(min(c.Width, c.Height)))/4)
	case c.Peaks < 1 || c.Peaks > 16:
		return fmt.Errorf("stitch: peaks %d: expected 1 to 16", c.Peaks)
	case c.MosaicScale < 1:
		return fmt.Errorf("stitch: mosaic scale %d: expected ≥ 1", c.MosaicScale)
	case c.FFT != "go" && c.FFT != "cufft":
		return fmt.Errorf("stitch: fft %q: expected go or cufft", c.FFT)
	}
	return nil
}

// ParseConfig reads a Config from actor attributes, over DefaultConfig:
// grid ("ROWSxCOLS"), tile ("WIDTHxHEIGHT"), overlap, jitter, noise, seed,
// peaks, mosaic, mosaic-scale, fft. Unknown keys are errors.
func ParseConfig(attrs map[string]string) (Config, error) {
	c := DefaultConfig()
	pair := func(k, v string) (int, int, error) {
		a, b, ok := strings.Cut(v, "x")
		x, e1 := strconv.Atoi(a)
		y, e2 := strconv.Atoi(b)
		if !ok || e1 != nil || e2 != nil {
			return 0, 0, fmt.Errorf("stitch: attribute %s %q: expected two integers as in \"8x8\"", k, v)
		}
		return x, y, nil
	}
	for k, v := range attrs {
		var err error
		switch k {
		case "grid":
			c.Rows, c.Cols, err = pair(k, v)
		case "tile":
			c.Width, c.Height, err = pair(k, v)
		case "overlap":
			c.Overlap, err = strconv.ParseFloat(v, 64)
		case "jitter":
			c.Jitter, err = strconv.Atoi(v)
		case "noise":
			c.Noise, err = strconv.ParseFloat(v, 64)
		case "seed":
			c.Seed, err = strconv.ParseUint(v, 10, 64)
		case "peaks":
			c.Peaks, err = strconv.Atoi(v)
		case "mosaic":
			c.Mosaic = v
		case "mosaic-scale":
			c.MosaicScale, err = strconv.Atoi(v)
		case "fft":
			c.FFT = v
		default:
			err = fmt.Errorf("unknown attribute %q: expected grid, tile, overlap, jitter, noise, seed, peaks, mosaic, mosaic-scale or fft", k)
		}
		if err != nil {
			return c, fmt.Errorf("stitch: attribute %s: %w", k, err)
		}
	}
	return c, c.Validate()
}

// Pos is a tile's origin in mosaic pixels.
type Pos struct{ X, Y int }

// mix is splitmix64's finaliser: a well-spread hash of v.
func mix(v uint64) uint64 {
	v += 0x9e3779b97f4a7c15
	v = (v ^ v>>30) * 0xbf58476d1ce4e5b9
	v = (v ^ v>>27) * 0x94d049bb133111eb
	return v ^ v>>31
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// Known returns the true origin of every tile, row by row: the nominal
// grid plus a reproducible stage error of up to ±Jitter pixels, shifted
// so that tile (0, 0) is at (Jitter, Jitter).
func (c Config) Known() []Pos {
	sx, sy := c.Step()
	p := make([]Pos, c.Tiles())
	for r := 0; r < c.Rows; r++ {
		for col := 0; col < c.Cols; col++ {
			h := mix(c.Seed*0x51_7cc1_b727_220a + uint64(r*c.Cols+col))
			jx := int(mix(h)%uint64(2*c.Jitter+1)) - c.Jitter
			jy := int(mix(h+1)%uint64(2*c.Jitter+1)) - c.Jitter
			p[r*c.Cols+col] = Pos{col*sx + jx + c.Jitter, r*sy + jy + c.Jitter}
		}
	}
	return p
}

// Scene is the large image the tiles are cut from, defined everywhere by
// periodic textures whose periods are coprime, so the image repeats only
// after hundreds of tiles: a fine fractal texture (value noise, five
// octaves) and "cells", bright smooth-edged blobs where the sum of two
// low-frequency noises of different periods is high, over a dark
// background, as in a fluorescence image.
type Scene struct {
	fine, ca, cb []float32
	pf, pa, pb   int // periods (texture sizes)
}

var (
	scenesMu sync.Mutex
	scenes   = map[[3]uint64]*Scene{}
)

// SceneFor returns the (shared, read-only) scene of a configuration.
func SceneFor(c Config) *Scene {
	key := [3]uint64{c.Seed, uint64(c.Width), uint64(c.Height)}
	scenesMu.Lock()
	defer scenesMu.Unlock()
	if s := scenes[key]; s != nil {
		return s
	}
	pf := 2 * max(c.Width, c.Height) // power of two
	pa := pf - pf/8 + 3              // odd: coprime with pf
	pb := pf + pf/4 + 1              // odd, coprime with pa
	s := &Scene{pf: pf, pa: pa, pb: pb}
	s.fine = valueNoise(pf, []int{pf / 32, pf / 16, pf / 8, pf / 4, pf / 2}, []float32{0.3, 0.25, 0.2, 0.15, 0.1}, c.Seed)
	// The cells' lattices have about one value per 40 pixels.
	s.ca = valueNoise(pa, []int{max(pa/40, 2), max(pa/20, 4)}, []float32{0.7, 0.3}, c.Seed+1)
	s.cb = valueNoise(pb, []int{max(pb/40, 2), max(pb/20, 4)}, []float32{0.7, 0.3}, c.Seed+2)
	scenes[key] = s
	return s
}

// valueNoise is periodic fractal value noise on an n×n torus: for each
// octave, a lattice of cells[i]×cells[i] random values interpolated with
// smoothstep weights, summed with the given amplitudes. Rows are computed
// on all CPUs at once; each pixel adds its octaves in order, so the values
// do not depend on how the rows are shared.
func valueNoise(n int, cells []int, amp []float32, seed uint64) []float32 {
	return valueNoiseOn(n, cells, amp, seed, goruntime.GOMAXPROCS(0))
}

// valueNoiseOn is valueNoise with its rows shared by workers goroutines.
func valueNoiseOn(n int, cells []int, amp []float32, seed uint64, workers int) []float32 {
	lats := make([][]float32, len(cells))
	for o, k := range cells {
		lats[o] = make([]float32, k*k)
		for i := range lats[o] {
			lats[o][i] = float32(unit(mix(seed<<32 ^ uint64(o)<<24 ^ uint64(i))))
		}
	}
	out := make([]float32, n*n)
	rows := func(y0, y1 int) {
		for y := y0; y < y1; y++ {
			for o, k := range cells {
				noiseRow(out[y*n:(y+1)*n], y, n, k, lats[o], amp[o])
			}
		}
	}
	workers = min(max(workers, 1), n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows(w*n/workers, (w+1)*n/workers)
		}()
	}
	wg.Wait()
	return out
}

// noiseRow adds row y of one octave (lattice lat of k×k values, amplitude
// a) to row.
func noiseRow(row []float32, y, n, k int, lat []float32, a float32) {
	fy := float64(y) * float64(k) / float64(n)
	y0 := int(fy)
	ty := float32(fy - float64(y0))
	ty = ty * ty * (3 - 2*ty)
	y1 := (y0 + 1) % k
	for x := range row {
		fx := float64(x) * float64(k) / float64(n)
		x0 := int(fx)
		tx := float32(fx - float64(x0))
		tx = tx * tx * (3 - 2*tx)
		x1 := (x0 + 1) % k
		p := lat[y0*k+x0] + (lat[y0*k+x1]-lat[y0*k+x0])*tx
		q := lat[y1*k+x0] + (lat[y1*k+x1]-lat[y1*k+x0])*tx
		row[x] += a * (p + (q-p)*ty)
	}
}

// At is the scene's noise-free grey level at (x, y) (x, y ≥ 0).
func (s *Scene) At(x, y int) float32 {
	return level(s.fine[(y%s.pf)*s.pf+x%s.pf], s.ca[(y%s.pa)*s.pa+x%s.pa], s.cb[(y%s.pb)*s.pb+x%s.pb])
}

// level is the grey level from the fine texture f and the two cell
// noises a and b.
func level(f, a, b float32) float32 {
	v := a + b // mean 1
	t := min(max((v-1.02)/0.1, 0), 1)
	c := t * t * (3 - 2*t) // smoothstep: the cells' soft edges
	return 600 + 1600*f + 1800*c*(0.5+f)
}

// pixel is a tile's pixel: the scene's level from its three textures'
// values f, a, b plus the camera noise drawn from the LCG state h, scaled
// by noise, clamped to 16 bits.
func pixel(h uint64, f, a, b, noise float32) uint16 {
	n := (float32(h>>40&0xffff)+float32(h>>24&0xffff))/65536 - 1
	return uint16(min(max(level(f, a, b)+noise*n, 0), 65535))
}

// Pixel LCG of Tile: h ← h·lcgMul + lcgAdd before each pixel of a row.
const (
	lcgMul = 6364136223846793005
	lcgAdd = 1442695040888963407
)

// lcgJump returns the multiplier and increment of n steps of the pixel
// LCG at once (h ← h·m + a), by squaring: the composition of two affine
// steps (m1, a1) then (m2, a2) is (m1·m2, a1·m2 + a2).
func lcgJump(n int) (m, a uint64) {
	m, a = 1, 0
	sm, sa := uint64(lcgMul), uint64(lcgAdd) // 2^k steps
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			m, a = m*sm, a*sm+sa
		}
		sm, sa = sm*sm, sa*sm+sa
	}
	return m, a
}

// TileSample writes to set the pixels of tile i (as Tile writes them, bit
// for bit) at x = x0, x0+step, … and y = y0, y0+step, … only, without
// computing the others: set(x, y, v) for each, rows in order. Each row's
// noise is jumped ahead to x0 and then step pixels at a time.
func (c Config) TileSample(s *Scene, known []Pos, i, x0, y0, step int, set func(x, y int, v uint16)) {
	p := known[i]
	base := mix(c.Seed ^ uint64(i+1)<<40)
	noise := float32(c.Noise)
	m0, a0 := lcgJump(x0 + 1)
	ms, as := lcgJump(step)
	for y := y0; y < c.Height; y += step {
		h := mix(base+uint64(y))*m0 + a0
		sy := p.Y + y
		fr := s.fine[(sy%s.pf)*s.pf:][:s.pf]
		ar := s.ca[(sy%s.pa)*s.pa:][:s.pa]
		br := s.cb[(sy%s.pb)*s.pb:][:s.pb]
		for x := x0; x < c.Width; x += step {
			sx := p.X + x
			set(x, y, pixel(h, fr[sx%s.pf], ar[sx%s.pa], br[sx%s.pb], noise))
			h = h*ms + as
		}
	}
}

// Tile writes tile i (row-major index) into dst (Width×Height pixels): the
// scene at the tile's true origin plus camera noise that differs from tile
// to tile, so overlaps never match exactly.
func (c Config) Tile(s *Scene, known []Pos, i int, dst []uint16) {
	p := known[i]
	w := c.Width
	base := mix(c.Seed ^ uint64(i+1)<<40)
	noise := float32(c.Noise)
	for y := 0; y < c.Height; y++ {
		row := dst[y*w : y*w+w]
		h := mix(base + uint64(y))
		// s.At(p.X+x, p.Y+y), its three textures' columns stepped
		// instead of divided (the same values, bit for bit)
		sy := p.Y + y
		fr := s.fine[(sy%s.pf)*s.pf:][:s.pf]
		ar := s.ca[(sy%s.pa)*s.pa:][:s.pa]
		br := s.cb[(sy%s.pb)*s.pb:][:s.pb]
		xf, xa, xb := p.X%s.pf, p.X%s.pa, p.X%s.pb
		for x := range row {
			h = h*lcgMul + lcgAdd // LCG step: cheap per-pixel noise
			row[x] = pixel(h, fr[xf], ar[xa], br[xb], noise)
			if xf++; xf == s.pf {
				xf = 0
			}
			if xa++; xa == s.pa {
				xa = 0
			}
			if xb++; xb == s.pb {
				xb = 0
			}
		}
	}
}
