package actors

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// The fft and ifft built-ins use this package's own radix-2 FFT on
// complex64, in place in the output window. gonum's dsp/fourier was measured
// against it (see docs/actors.md): gonum works in complex128, so every firing
// would need two conversions and a scratch buffer per concurrent caller,
// while this one transforms the output window directly, allocates nothing,
// and needs no scratch, so replicas can share one plan.

// fftPlan holds the read-only tables of an n-point transform.
type fftPlan struct {
	n     int
	swaps []int32     // bit-reversal permutation as (i, j) pairs, i < j
	tw    []complex64 // forward twiddles of every stage: tw[h-1+j] = e^{-iπj/h}, j < h
	itw   []complex64 // inverse twiddles (conjugates)
}

var (
	plansMu sync.Mutex
	plans   = map[int]*fftPlan{}
)

// planFor returns the shared plan of an n-point FFT (n a power of two).
func planFor(n int) *fftPlan {
	plansMu.Lock()
	defer plansMu.Unlock()
	if p := plans[n]; p != nil {
		return p
	}
	p := &fftPlan{n: n}
	if n > 1 {
		shift := 64 - bits.TrailingZeros(uint(n))
		for i := 0; i < n; i++ {
			j := int(bits.Reverse64(uint64(i)) >> shift)
			if i < j {
				p.swaps = append(p.swaps, int32(i), int32(j))
			}
		}
	}
	p.tw = make([]complex64, max(n-1, 0))
	p.itw = make([]complex64, max(n-1, 0))
	for h := 1; h < n; h <<= 1 {
		for j := 0; j < h; j++ {
			s, c := math.Sincos(-math.Pi * float64(j) / float64(h))
			p.tw[h-1+j] = complex(float32(c), float32(s))
			p.itw[h-1+j] = complex(float32(c), float32(-s))
		}
	}
	plans[n] = p
	return p
}

// transform computes, in place, X[k] = Σ_n x[n]·e^{∓2πikn/N} (− forward,
// + inverse, unscaled) of len(x) = p.n points.
func (p *fftPlan) transform(x []complex64, inverse bool) {
	n := p.n
	x = x[:n]
	if n < 2 {
		return
	}
	sw := p.swaps
	for k := 0; k+1 < len(sw); k += 2 {
		i, j := sw[k], sw[k+1]
		x[i], x[j] = x[j], x[i]
	}
	// Stage of size 2: twiddle 1.
	for i := 0; i+1 < n; i += 2 {
		a, b := x[i], x[i+1]
		x[i], x[i+1] = a+b, a-b
	}
	if n == 2 {
		return
	}
	// Stage of size 4: twiddles 1 and ∓i, without multiplications.
	for i := 0; i+3 < n; i += 4 {
		q := x[i : i+4 : i+4]
		a0, a1, b0, b1 := q[0], q[1], q[2], q[3]
		if inverse {
			b1 = complex(-imag(b1), real(b1)) // ·i
		} else {
			b1 = complex(imag(b1), -real(b1)) // ·(−i)
		}
		q[0], q[2] = a0+b0, a0-b0
		q[1], q[3] = a1+b1, a1-b1
	}
	tw := p.tw
	if inverse {
		tw = p.itw
	}
	for h := 4; h < n; h *= 2 {
		radix2(x, tw, h)
	}
}

// radix2 runs the stage that merges transforms of size h into size 2h.
// (A radix-4 pass, 3 multiplications per 4 points, measured slower with
// Go's complex64 code generation, so stages stay radix-2.)
func radix2(x, tw []complex64, h int) {
	w := tw[h-1 : 2*h-1 : 2*h-1]
	for s := 0; s < len(x); s += 2 * h {
		lo := x[s : s+h : s+h][:len(w)]
		hi := x[s+h : s+2*h : s+2*h][:len(w)]
		for j, wj := range w {
			t := hi[j] * wj
			u := lo[j]
			lo[j] = u + t
			hi[j] = u - t
		}
	}
}

// FFT computes in place the unscaled forward discrete Fourier transform
// X[k] = Σ_n x[n]·e^{−2πikn/N} of x, whose length must be a power of two.
// It allocates only the first time a length is used (the shared tables).
func FFT(x []complex64) {
	mustPow2(len(x))
	planFor(len(x)).transform(x, false)
}

// IFFT computes in place the inverse transform of x, scaled by 1/N so that
// IFFT(FFT(x)) = x. The length must be a power of two.
func IFFT(x []complex64) {
	mustPow2(len(x))
	planFor(len(x)).transform(x, true)
	scaleK(complexAsFloats(x), complexAsFloats(x), 1/float32(len(x)))
}

func mustPow2(n int) {
	if n <= 0 || n&(n-1) != 0 {
		panic(fmt.Sprintf("actors: FFT length %d: expected a power of two", n))
	}
}

// newFFT returns the factory of fft (inverse false) or ifft.
func newFFT(inverse bool) runtime.Factory {
	return func(a *graph.Actor, p runtime.Params) (any, error) {
		if err := p.Only("size"); err != nil {
			return nil, err
		}
		if err := checkPorts(a, 1, 1, 1); err != nil {
			return nil, err
		}
		in, out := a.Inputs[0], a.Outputs[0]
		if inverse {
			if err := wantTypes(in, "c64"); err != nil {
				return nil, err
			}
			if err := wantTypes(out, "c64", "f32"); err != nil {
				return nil, err
			}
		} else {
			if err := wantTypes(in, "c64", "f32"); err != nil {
				return nil, err
			}
			if err := wantTypes(out, "c64"); err != nil {
				return nil, err
			}
		}
		rate, err := sdfRate(in)
		if err != nil {
			return nil, err
		}
		if err := sameRate(in, out); err != nil {
			return nil, err
		}
		size, err := p.Int("size", rate)
		if err != nil {
			return nil, err
		}
		if size <= 0 || size&(size-1) != 0 {
			what := "parameter \"size\""
			if !p.Has("size") {
				what = fmt.Sprintf("size (the rate of port %s)", in.FullName())
			}
			return nil, fmt.Errorf("%s is %d: expected a power of two (e.g. %d)", what, size, pow2Near(size))
		}
		if rate%size != 0 {
			return nil, fmt.Errorf("port %s has rate %d: expected a multiple of the transform size %d", in.FullName(), rate, size)
		}
		plan := planFor(size)
		realIn, realOut := in.Type.Name == "f32", out.Type.Name == "f32"
		scale := float32(1)
		if inverse {
			scale = 1 / float32(size)
		}
		if realOut {
			return ifftRealFire(plan, scale), nil
		}
		return runtime.FireFunc(func(f *runtime.Firing) error {
			y := runtime.Output[complex64](f, 0)
			if realIn {
				x := runtime.Input[float32](f, 0)
				y = y[:len(x)]
				for i, v := range x {
					y[i] = complex(v, 0)
				}
			} else {
				copy(y, runtime.Input[complex64](f, 0))
			}
			for b := 0; b+size <= len(y); b += size {
				plan.transform(y[b:b+size], inverse)
			}
			if inverse {
				ys := complexAsFloats(y)
				scaleK(ys, ys, scale)
			}
			return nil
		}), nil
	}
}

// ifftRealFire: c64 in, f32 out (the real parts). The transform needs a
// complex scratch window; scratch buffers come from a pool so that
// concurrent firings do not share one, and the steady state allocates nothing.
func ifftRealFire(plan *fftPlan, scale float32) runtime.FireFunc {
	var pool sync.Pool
	return func(f *runtime.Firing) error {
		x, y := runtime.Input[complex64](f, 0), runtime.Output[float32](f, 0)
		size := plan.n
		bp, _ := pool.Get().(*[]complex64)
		if bp == nil {
			b := make([]complex64, size)
			bp = &b
		}
		buf := *bp
		for b := 0; b+size <= len(x); b += size {
			copy(buf, x[b:b+size])
			plan.transform(buf, true)
			o := y[b : b+size]
			for i, v := range buf {
				o[i] = real(v) * scale
			}
		}
		pool.Put(bp)
		return nil
	}
}

func pow2Near(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << (bits.Len(uint(n)) - 1)
}
