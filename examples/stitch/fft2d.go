package stitch

import (
	"math"
	"math/bits"
	"sync"

	"github.com/sluicehq/sluice/actors"
)

// The 2-D FFT runs the project's radix-2 FFT (actors.FFT) over the rows,
// then the columns' radix-2 stages on whole rows at a time: a butterfly of
// rows a and b is a loop over contiguous memory, so the column pass needs
// no transposition and no scratch. (Running the column stages on strips of
// 32 columns, to keep a strip in the core's cache through every stage,
// measured no faster on 1024×1024 tiles, which fit the shared cache.)

type colPlan struct {
	h     int
	swaps []int32     // bit-reversal of the row order as (i, j) pairs, i < j
	tw    []complex64 // tw[h2-1+j] = e^{-iπj/h2}, j < h2, for the stage merging size h2 into 2·h2
}

var colPlans sync.Map // int → *colPlan

func colPlanFor(h int) *colPlan {
	if p, ok := colPlans.Load(h); ok {
		return p.(*colPlan)
	}
	p := &colPlan{h: h, tw: make([]complex64, h)}
	shift := 64 - bits.TrailingZeros(uint(h))
	for i := 0; i < h; i++ {
		if j := int(bits.Reverse64(uint64(i)) >> shift); i < j {
			p.swaps = append(p.swaps, int32(i), int32(j))
		}
	}
	for h2 := 1; h2 < h; h2 <<= 1 {
		for j := 0; j < h2; j++ {
			s, c := math.Sincos(-math.Pi * float64(j) / float64(h2))
			p.tw[h2-1+j] = complex(float32(c), float32(s))
		}
	}
	q, _ := colPlans.LoadOrStore(h, p)
	return q.(*colPlan)
}

// FFT2 computes in place the unscaled forward 2-D DFT of the w×h image z
// (row-major; w and h powers of two):
// Z[v][u] = Σ_y Σ_x z[y][x]·e^{−2πi(ux/w + vy/h)}.
func FFT2(z []complex64, w, h int) {
	z = z[:w*h]
	for y := 0; y < h; y++ {
		actors.FFT(z[y*w : y*w+w])
	}
	p := colPlanFor(h)
	for k := 0; k+1 < len(p.swaps); k += 2 {
		a, b := int(p.swaps[k])*w, int(p.swaps[k+1])*w
		ra, rb := z[a:a+w:a+w], z[b:b+w:b+w]
		for x := range ra {
			ra[x], rb[x] = rb[x], ra[x]
		}
	}
	colStages(z, w, h, w, p)
}

// colStages runs the column stages of FFT2 on columns [0, n) of the w×h
// image z, whose rows are already in bit-reversed order.
func colStages(z []complex64, w, h, n int, p *colPlan) {
	for h2 := 1; h2 < h; h2 <<= 1 {
		for s := 0; s < h; s += 2 * h2 {
			for j := 0; j < h2; j++ {
				wj := p.tw[h2-1+j]
				lo := z[(s+j)*w : (s+j)*w+n : (s+j)*w+n]
				hi := z[(s+j+h2)*w : (s+j+h2)*w+n : (s+j+h2)*w+n][:len(lo)]
				if j == 0 {
					for x, u := range lo {
						t := hi[x]
						lo[x], hi[x] = u+t, u-t
					}
					continue
				}
				for x, u := range lo {
					t := hi[x] * wj
					lo[x], hi[x] = u+t, u-t
				}
			}
		}
	}
}

// hermitianFFT2 computes the forward 2-D DFT of a Hermitian w×h image
// (z[v][u] = conj(z[−v][−u]), as the cross-power spectrum of two real
// images), which is real, from columns [0, w/2] of z only, in about half
// FFT2's work: the column stages on those columns (the others would be
// their conjugates), then the rows two at a time, row y as the real part
// and row y+1 as the imaginary part of one complex FFT, each row's other
// half rebuilt by symmetry. z then holds the real result (imaginary parts
// 0); row is scratch of w values.
func hermitianFFT2(z, row []complex64, w, h int) {
	z, row = z[:w*h], row[:w]
	p := colPlanFor(h)
	half := w/2 + 1
	for k := 0; k+1 < len(p.swaps); k += 2 {
		a, b := int(p.swaps[k])*w, int(p.swaps[k+1])*w
		ra, rb := z[a:a+half:a+half], z[b:b+half:b+half]
		for x := range ra {
			ra[x], rb[x] = rb[x], ra[x]
		}
	}
	colStages(z, w, h, half, p)
	for y := 0; y < h; y += 2 {
		r0, r1 := z[y*w:y*w+w], z[(y+1)*w:(y+1)*w+w]
		for u := 0; u < half; u++ {
			a, b := r0[u], r1[u]
			row[u] = complex(real(a)-imag(b), imag(a)+real(b)) // a + i·b
		}
		for u := half; u < w; u++ {
			a, b := r0[w-u], r1[w-u]                            // conjugates of the missing values
			row[u] = complex(real(a)+imag(b), -imag(a)+real(b)) // conj(a) + i·conj(b)
		}
		actors.FFT(row)
		for x, v := range row {
			r0[x], r1[x] = complex(real(v), 0), complex(imag(v), 0)
		}
	}
}

// Engine computes in place the unscaled forward 2-D DFT of a w×h image.
type Engine func(z []complex64, w, h int) error

// GoFFT is FFT2 as an Engine.
func GoFFT(z []complex64, w, h int) error {
	FFT2(z, w, h)
	return nil
}

// EngineFor returns the engine a configuration names: nil for the Go FFT
// (which TransformWith, PCMWith and AlignWith take as FFT2, or for the
// correlation as its Hermitian half), or cuFFT on GPU 0 (an error saying
// why when it cannot be loaded).
func EngineFor(c Config) (Engine, error) {
	if c.FFT != "cufft" {
		return nil, nil
	}
	e, err := CUFFTFor(c.Width, c.Height)
	if err != nil {
		return nil, err
	}
	return func(z []complex64, _, _ int) error { return e.Forward(z) }, nil
}

// Transform writes the 2-D FFT of a w×h tile, less its mean, into f (w·h
// values); fft2d.cl is the same on OpenCL devices.
func Transform(tile []uint16, f []complex64, w, h int) {
	TransformWith(GoFFT, tile, f, w, h) // GoFFT never fails
}

// TransformWith is Transform with the FFTs of engine e (nil: FFT2).
func TransformWith(e Engine, tile []uint16, f []complex64, w, h int) error {
	if e == nil {
		e = GoFFT
	}
	f = f[:w*h]
	var sum uint64
	for _, v := range tile[:w*h] {
		sum += uint64(v)
	}
	mean := float32(float64(sum) / float64(w*h))
	for i, v := range tile[:w*h] {
		f[i] = complex(float32(v)-mean, 0)
	}
	if err := e(f, w, h); err != nil {
		return err
	}
	f[0] = 0 // exactly: the sum of the tile minus its mean
	return nil
}
