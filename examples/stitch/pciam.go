package stitch

import (
	"math"
	"sync"

	"github.com/sluicehq/sluice/actors"
)

// Translation is the result of aligning one pair of tiles: tile B's origin
// minus tile A's origin, in pixels, and the normalised cross-correlation
// of the two tiles over their overlap at that translation (−1 to 1). Valid
// is false for a pair that does not exist (a tile of the first column has
// no west neighbour, one of the first row no north neighbour).
type Translation struct {
	DX, DY int
	NCC    float64
	Valid  bool
}

// Token layout of a translation: [4]f64 = dx, dy, ncc, valid (0 or 1).

// Encode writes t as a [4]f64 token.
func (t Translation) Encode(dst *[4]float64) {
	v := 0.0
	if t.Valid {
		v = 1
	}
	*dst = [4]float64{float64(t.DX), float64(t.DY), t.NCC, v}
}

// DecodeTranslation reads a [4]f64 token.
func DecodeTranslation(v [4]float64) Translation {
	return Translation{DX: int(v[0]), DY: int(v[1]), NCC: v[2], Valid: v[3] != 0}
}

// minOverlap is the smallest overlap, in pixels along each axis, at which
// an interpretation of a peak is scored: thinner strips give meaningless
// correlations.
const minOverlap = 4

// scratchPools holds reusable buffers by length (a tile, a row), so that
// firings allocate nothing in the steady state.
var scratchPools sync.Map // int → *sync.Pool of *[]complex64

func getScratch(n int) *[]complex64 {
	p, _ := scratchPools.LoadOrStore(n, &sync.Pool{New: func() any { s := make([]complex64, n); return &s }})
	return p.(*sync.Pool).Get().(*[]complex64)
}

func putScratch(s *[]complex64) {
	if p, ok := scratchPools.Load(len(*s)); ok {
		p.(*sync.Pool).Put(s)
	}
}

// smoothTables are the per-size constants of the periodic-plus-smooth
// decomposition: eu[u] = 1 − e^{2πiu/w}, ev[v] = 1 − e^{2πiv/h} and
// 1/(2cos(2πu/w) + 2cos(2πv/h) − 4) through cu, cv.
type smoothTables struct {
	eu, ev []complex64
	cu, cv []float32
}

var smoothCache sync.Map // [2]int → *smoothTables

func smoothFor(w, h int) *smoothTables {
	if t, ok := smoothCache.Load([2]int{w, h}); ok {
		return t.(*smoothTables)
	}
	t := &smoothTables{eu: make([]complex64, w), ev: make([]complex64, h), cu: make([]float32, w), cv: make([]float32, h)}
	for u := range t.eu {
		s, c := math.Sincos(2 * math.Pi * float64(u) / float64(w))
		t.eu[u], t.cu[u] = complex(float32(1-c), float32(-s)), float32(2*c)
	}
	for v := range t.ev {
		s, c := math.Sincos(2 * math.Pi * float64(v) / float64(h))
		t.ev[v], t.cv[v] = complex(float32(1-c), float32(-s)), float32(2*c)
	}
	q, _ := smoothCache.LoadOrStore([2]int{w, h}, t)
	return q.(*smoothTables)
}

// borders returns the 1-D DFTs of a tile's jumps across its opposite
// borders: T(u) of bottom row − top row, L(v) of right column − left
// column. The tile's smooth component (Moisan's periodic-plus-smooth
// decomposition) has the transform
// S(u, v) = (T(u)·(1 − e^{2πiv/h}) + L(v)·(1 − e^{2πiu/w})) / (2cos(2πu/w) + 2cos(2πv/h) − 4),
// S(0, 0) = 0. It is what makes a tile non-periodic; left in, its cross
// of high values along the spectrum's axes puts a false phase-correlation
// peak next to (0, 0) that can outrank the true one.
func borders(t []uint16, w, h int) (T, L []complex64) {
	T, L = make([]complex64, w), make([]complex64, h)
	for x := 0; x < w; x++ {
		T[x] = complex(float32(t[(h-1)*w+x])-float32(t[x]), 0)
	}
	for y := 0; y < h; y++ {
		L[y] = complex(float32(t[y*w+w-1])-float32(t[y*w]), 0)
	}
	actors.FFT(T)
	actors.FFT(L)
	return T, L
}

// PCM writes into out (w·h values) the phase-correlation matrix of tiles A
// and B, scaled by w·h, from their transforms fa and fb: its real part
// peaks at B's translation from A, modulo the tile size. Each transform
// first loses its tile's smooth component (see borders), so only the
// periodic components are correlated. The matrix is the inverse FFT of the
// normalised cross-power spectrum PA·conj(PB)/|PA·PB|, computed as the
// forward FFT of its conjugate (the real part is the same).
func PCM(a, b []uint16, fa, fb, out []complex64, w, h int) {
	PCMWith(nil, a, b, fa, fb, out, w, h) // the Go FFT never fails
}

// PCMWith is PCM with the FFT of engine e. A nil e is the Go FFT on the
// spectrum's Hermitian half (hermitianFFT2): half the work of FFT2, same
// result within rounding.
func PCMWith(e Engine, a, b []uint16, fa, fb, out []complex64, w, h int) error {
	n := w * h
	fa, fb, out = fa[:n], fb[:n], out[:n]
	ta, la := borders(a, w, h)
	tb, lb := borders(b, w, h)
	st := smoothFor(w, h)
	cols := w
	if e == nil {
		cols = w/2 + 1
	}
	for v := 0; v < h; v++ {
		ev, cv := st.ev[v], st.cv[v]
		lav, lbv := la[v], lb[v]
		row := out[v*w : v*w+cols]
		ra, rb := fa[v*w:v*w+w], fb[v*w:v*w+w]
		for u := range row {
			pa, pb := ra[u], rb[u]
			if d := st.cu[u] + cv - 4; d != 0 {
				r := 1 / d
				sa := ta[u]*ev + lav*st.eu[u]
				sb := tb[u]*ev + lbv*st.eu[u]
				pa -= complex(real(sa)*r, imag(sa)*r)
				pb -= complex(real(sb)*r, imag(sb)*r)
			}
			// conj(pa)·pb, normalised (no complex division: Go's is slow)
			re := real(pa)*real(pb) + imag(pa)*imag(pb)
			im := real(pa)*imag(pb) - imag(pa)*real(pb)
			m2 := re*re + im*im
			if m2 < 1e-30 {
				row[u] = 0
				continue
			}
			k := float32(1 / math.Sqrt(float64(m2)))
			row[u] = complex(re*k, im*k)
		}
	}
	if e == nil {
		r := getScratch(w)
		hermitianFFT2(out, *r, w, h)
		putScratch(r)
		return nil
	}
	return e(out, w, h)
}

// Peaks returns the indices of the k largest real parts of pcm, largest
// first.
func Peaks(pcm []complex64, k int) []int {
	idx := make([]int, 0, k+1)
	val := make([]float32, 0, k+1)
	for i, c := range pcm {
		v := real(c)
		if len(idx) == k && v <= val[k-1] {
			continue
		}
		j := len(idx)
		if j == k {
			j--
		} else {
			idx, val = append(idx, 0), append(val, 0)
		}
		for j > 0 && val[j-1] < v {
			idx[j], val[j] = idx[j-1], val[j-1]
			j--
		}
		idx[j], val[j] = i, v
	}
	return idx
}

// NCC is the normalised cross-correlation of tiles a and b (w×h) over
// their overlap when b's origin is at (dx, dy) from a's, and the overlap's
// area; an overlap thinner than minOverlap pixels scores −1.
func NCC(a, b []uint16, w, h, dx, dy int) (float64, int) {
	x0, x1 := max(0, dx), min(w, w+dx)
	y0, y1 := max(0, dy), min(h, h+dy)
	if x1-x0 < minOverlap || y1-y0 < minOverlap {
		return -1, 0
	}
	var sa, sb, saa, sbb, sab float64
	for y := y0; y < y1; y++ {
		ra := a[y*w+x0 : y*w+x1]
		rb := b[(y-dy)*w+x0-dx:][:len(ra)]
		var ia, ib, iaa, ibb, iab uint64 // exact: 16-bit values, rows of at most 2¹⁶ pixels
		for x, va := range ra {
			u, v := uint64(va), uint64(rb[x])
			ia += u
			ib += v
			iaa += u * u
			ibb += v * v
			iab += u * v
		}
		sa += float64(ia)
		sb += float64(ib)
		saa += float64(iaa)
		sbb += float64(ibb)
		sab += float64(iab)
	}
	n := (x1 - x0) * (y1 - y0)
	return nccFrom(sa, sb, saa, sbb, sab, float64(n)), n
}

// nccFrom is the normalised cross-correlation from the overlap's sums and
// its area n; −1 where either tile is constant there.
func nccFrom(sa, sb, saa, sbb, sab, n float64) float64 {
	va := saa - sa*sa/n
	vb := sbb - sb*sb/n
	if va <= 0 || vb <= 0 {
		return -1
	}
	return (sab - sa*sb/n) / math.Sqrt(va*vb)
}

// Align is PCIAM on one pair: the phase-correlation matrix of A and B
// (from their transforms), its Peaks largest values, and for each the four
// translations it may stand for ((x or x−w) × (y or y−h)), scored by the
// cross-correlation of the tiles' overlap; the best one wins.
func Align(a, b []uint16, fa, fb []complex64, w, h, peaks int) Translation {
	t, _ := AlignWith(nil, a, b, fa, fb, w, h, peaks) // the Go FFT never fails
	return t
}

// AlignWith is Align with the FFT of engine e (nil: the Go FFT, see
// PCMWith).
func AlignWith(e Engine, a, b []uint16, fa, fb []complex64, w, h, peaks int) (Translation, error) {
	p := getScratch(w * h)
	defer putScratch(p)
	pcm := *p
	if err := PCMWith(e, a, b, fa, fb, pcm, w, h); err != nil {
		return Translation{}, err
	}
	best := Translation{NCC: math.Inf(-1), Valid: true}
	for _, i := range Peaks(pcm, peaks) {
		px, py := i%w, i/w
		for _, dx := range [2]int{px, px - w} {
			for _, dy := range [2]int{py, py - h} {
				if c, _ := NCC(a, b, w, h, dx, dy); c > best.NCC {
					best.DX, best.DY, best.NCC = dx, dy, c
				}
			}
		}
	}
	return best, nil
}
