package vca

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/sluicehq/sluice/graph"
)

// Params describes the synthetic hyperspectral stream and the unmixing
// problem. The graph's actors read them from their `attrs` (the same
// YAML anchor on every actor), so the port rates and the attributes must
// agree; each actor checks its windows against them.
type Params struct {
	Bands      int     // L: spectral bands per pixel (attr bands)
	Width      int     // image width in pixels (attr width)
	Height     int     // image height in pixels (attr height)
	BlockPx    int     // pixels per block, one source firing (attr block)
	Endmembers int     // p: materials in every cube (attr endmembers)
	Cubes      int     // cubes in the stream; 0 = no end (attr cubes)
	Distinct   int     // distinct cubes: cube n is cube n mod Distinct (attr distinct)
	Seed       uint64  // seed of the generator (attr seed)
	SNRLow     float64 // dB, the even cubes' noise level (attr snr-low)
	SNRHigh    float64 // dB, the odd cubes' noise level (attr snr-high)
}

// Small is the default problem of vca.yaml: 64 bands, 32×32 pixels in 4
// blocks, 5 endmembers, 8 cubes.
var Small = Params{Bands: 64, Width: 32, Height: 32, BlockPx: 256, Endmembers: 5,
	Cubes: 8, Distinct: 8, Seed: 1, SNRLow: 15, SNRHigh: 40}

// Seed is the problem size of the seed's experiment (vca-seed.yaml): 224
// bands, 128×128 pixels in 16 blocks, 5 endmembers, 200 cubes.
var Seed = Params{Bands: 224, Width: 128, Height: 128, BlockPx: 1024, Endmembers: 5,
	Cubes: 200, Distinct: 8, Seed: 1, SNRLow: 15, SNRHigh: 40}

// Pixels is the number of pixels of a cube (N).
func (p Params) Pixels() int { return p.Width * p.Height }

// Blocks is the number of blocks of a cube (B, the per-block actors'
// repetitions per cube).
func (p Params) Blocks() int { return p.Pixels() / p.BlockPx }

// CubeTokens is the number of f32 samples of a cube.
func (p Params) CubeTokens() int { return p.Pixels() * p.Bands }

// Check reports whether the parameters are usable.
func (p Params) Check() error {
	switch {
	case p.Bands < 2 || p.Width < 1 || p.Height < 1 || p.BlockPx < 1:
		return fmt.Errorf("vca: bands %d, width %d, height %d, block %d: expected bands ≥ 2 and positive sizes", p.Bands, p.Width, p.Height, p.BlockPx)
	case p.Pixels()%p.BlockPx != 0:
		return fmt.Errorf("vca: block %d pixels does not divide the %d×%d = %d pixels of a cube", p.BlockPx, p.Width, p.Height, p.Pixels())
	case p.Endmembers < 2 || p.Endmembers >= p.Bands || p.Endmembers > 8:
		return fmt.Errorf("vca: endmembers %d: expected 2 ≤ endmembers ≤ 8 and < bands (%d)", p.Endmembers, p.Bands)
	case p.Pixels() < 2*p.Endmembers:
		return fmt.Errorf("vca: %d pixels for %d endmembers: expected at least two pixels per endmember", p.Pixels(), p.Endmembers)
	case p.Distinct < 1 || p.Cubes < 0:
		return fmt.Errorf("vca: distinct %d, cubes %d: expected distinct ≥ 1 and cubes ≥ 0", p.Distinct, p.Cubes)
	}
	return nil
}

// ParseParams reads Params from an actor's attributes; missing keys take
// Small's values.
func ParseParams(attrs map[string]string) (Params, error) {
	p := Small
	ints := map[string]*int{"bands": &p.Bands, "width": &p.Width, "height": &p.Height, "block": &p.BlockPx,
		"endmembers": &p.Endmembers, "cubes": &p.Cubes, "distinct": &p.Distinct}
	for k, dst := range ints {
		if s, ok := attrs[k]; ok {
			v, err := strconv.Atoi(s)
			if err != nil {
				return p, fmt.Errorf("vca: attr %s: expected an integer, found %q", k, s)
			}
			*dst = v
		}
	}
	if s, ok := attrs["seed"]; ok {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return p, fmt.Errorf("vca: attr seed: expected an unsigned integer, found %q", s)
		}
		p.Seed = v
	}
	for k, dst := range map[string]*float64{"snr-low": &p.SNRLow, "snr-high": &p.SNRHigh} {
		if s, ok := attrs[k]; ok {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return p, fmt.Errorf("vca: attr %s: expected a number of dB, found %q", k, s)
			}
			*dst = v
		}
	}
	return p, p.Check()
}

var paramsCache sync.Map // *graph.Actor → Params or error

// actorParams returns the Params of actor a's attributes, parsed once.
func actorParams(a *graph.Actor) (Params, error) {
	if v, ok := paramsCache.Load(a); ok {
		if err, bad := v.(error); bad {
			return Params{}, err
		}
		return v.(Params), nil
	}
	p, err := ParseParams(a.Attrs)
	if err != nil {
		err = fmt.Errorf("actor %s: %w", a.Name, err)
		paramsCache.Store(a, err)
		return Params{}, err
	}
	paramsCache.Store(a, p)
	return p, nil
}

// Cube is one generated hyperspectral cube with its ground truth.
type Cube struct {
	// Y holds the samples pixel by pixel (band-interleaved by pixel):
	// sample (pixel i, band b) is Y[i*Bands+b].
	Y []float32
	// E holds the true endmembers, endmember k's spectrum at E[k*Bands:].
	E []float64
	// A holds the true abundances, pixel i's at A[i*Endmembers:].
	A []float64
	// SNR is the cube's nominal signal-to-noise ratio in dB.
	SNR float64
}

type cubeKey struct {
	p Params
	c int
}

var (
	cubeMu    sync.Mutex
	cubeCache = map[cubeKey]*cubeEntry{}
)

type cubeEntry struct {
	once sync.Once
	cube *Cube
}

// CubeAt returns cube n of the stream (cube n mod Distinct), generating it
// on first use; concurrent callers share one generation.
func (p Params) CubeAt(n int64) *Cube {
	c := int(n % int64(p.Distinct))
	cubeMu.Lock()
	e := cubeCache[cubeKey{p, c}]
	if e == nil {
		e = &cubeEntry{}
		cubeCache[cubeKey{p, c}] = e
	}
	cubeMu.Unlock()
	e.once.Do(func() { e.cube = p.Generate(c) })
	return e.cube
}

// Warm generates the Distinct cubes in parallel (a benchmark calls it so
// that generation is not timed).
func (p Params) Warm() {
	var wg sync.WaitGroup
	for c := range p.Distinct {
		wg.Add(1)
		go func() { defer wg.Done(); p.CubeAt(int64(c)) }()
	}
	wg.Wait()
}

// Spectrum fills e (one value per band) with a smooth random reflectance
// spectrum in (0, 1]: a baseline plus four Gaussian absorption/reflection
// bumps.
func Spectrum(r *rand.Rand, e []float64) {
	base := 0.05 + 0.25*r.Float64()
	var mu, sig, amp [4]float64
	for j := range mu {
		mu[j] = r.Float64()
		sig[j] = 0.04 + 0.15*r.Float64()
		amp[j] = (r.Float64()*2 - 0.6) * 0.5
	}
	hi := 0.0
	for b := range e {
		x := float64(b) / float64(len(e)-1)
		v := base
		for j := range mu {
			d := (x - mu[j]) / sig[j]
			v += amp[j] * math.Exp(-0.5*d*d)
		}
		e[b] = max(v, 0.01)
		hi = max(hi, e[b])
	}
	scale := (0.4 + 0.6*r.Float64()) / hi
	for b := range e {
		e[b] *= scale
	}
}

// PurePixel is the pixel of a cube that holds endmember k alone.
func (p Params) PurePixel(k int) int {
	n := p.Pixels()
	return ((2*k+1)*n/(2*p.Endmembers) + 7*k) % n
}

// Generate builds distinct cube c: Endmembers smooth random spectra,
// Dirichlet(1, …, 1) abundances (one pure pixel per endmember) and white
// Gaussian noise at SNRLow dB for even c, SNRHigh dB for odd c, where
// SNR = 10·log10(mean signal power per sample / noise variance).
func (p Params) Generate(c int) *Cube {
	L, m, n := p.Bands, p.Endmembers, p.Pixels()
	cu := &Cube{Y: make([]float32, n*L), E: make([]float64, m*L), A: make([]float64, n*m), SNR: p.SNRLow}
	if c%2 == 1 {
		cu.SNR = p.SNRHigh
	}
	r := rand.New(rand.NewPCG(p.Seed, uint64(c)<<32|0xe))
	for k := range m {
		Spectrum(r, cu.E[k*L:(k+1)*L])
	}
	pure := make(map[int]int, m)
	for k := range m {
		pure[p.PurePixel(k)] = k
	}
	x := make([]float64, L)
	var power float64
	for i := range n {
		a := cu.A[i*m : (i+1)*m]
		if k, ok := pure[i]; ok {
			a[k] = 1
		} else {
			ri := rand.New(rand.NewPCG(p.Seed^uint64(c+1)*0x9e3779b97f4a7c15, uint64(i)))
			var s float64
			for k := range a {
				a[k] = -math.Log(1 - ri.Float64())
				s += a[k]
			}
			for k := range a {
				a[k] /= s
			}
		}
		clear(x)
		for k, ak := range a {
			for b, e := range cu.E[k*L : (k+1)*L] {
				x[b] += ak * e
			}
		}
		for b, v := range x {
			cu.Y[i*L+b] = float32(v)
			power += v * v
		}
	}
	sigma := math.Sqrt(power / float64(n*L) / math.Pow(10, cu.SNR/10))
	for i := range n {
		ri := rand.New(rand.NewPCG(p.Seed^uint64(c+1)*0xbf58476d1ce4e5b9, uint64(i)))
		for b := range L {
			cu.Y[i*L+b] += float32(sigma * ri.NormFloat64())
		}
	}
	return cu
}
