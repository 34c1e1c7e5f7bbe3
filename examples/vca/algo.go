package vca

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Projection modes (the seed's data-dependent branch, Fig. 6.7).
const (
	// Projective: SNR below the threshold; the data are projected on the
	// first p−1 principal components of the covariance, and a constant
	// coordinate is appended (projective projection).
	Projective = 0
	// Subspace: SNR above it; the data are projected on the first p
	// eigenvectors of the correlation matrix and scaled onto the hyperplane
	// uᵀx = 1 (subspace projection).
	Subspace = 1
)

// Header is the number of f32 values before the data of a basis or an
// endmember token: mode, estimated SNR (dB), d, and the cube's pixels.
const Header = 4

// StatsLen is the tokens of one partial-statistics token: an L×L sum of
// outer products y·yᵀ, then the L band sums.
func StatsLen(L int) int { return (L + 1) * L }

// BasisLen is the tokens of one basis token: Header, the mean (L), p rows
// of L (the projection vectors) and u (p).
func BasisLen(L, p int) int { return Header + L + L*p + p }

// ProjLen is the tokens per pixel of the projected data: p coordinates and
// one auxiliary value (projective: ‖x‖ in slot p−1, 0 in slot p; subspace:
// x/(uᵀx) in slots 0…p−1, uᵀx in slot p).
func ProjLen(p int) int { return p + 1 }

// EndmemberLen is the tokens of one endmember token: Header (mode, SNR,
// p, pixels), then p spectra of L values.
func EndmemberLen(L, p int) int { return Header + p*L }

var scratch sync.Pool // *[]float64

func getScratch(n int) *[]float64 {
	s, _ := scratch.Get().(*[]float64)
	if s == nil || cap(*s) < n {
		v := make([]float64, n)
		return &v
	}
	*s = (*s)[:n]
	return s
}

// Stats writes the partial statistics of one block of pixels (y: pixels ×
// L bands, by pixel) into part (StatsLen(L)): Σ y·yᵀ over the block's
// pixels (the L×L matrix, both triangles), then Σ y. The outer-product sum
// is a symmetric rank-k update (BLAS syrk, gonum) in float64.
func Stats(y []float32, L int, part []float32) {
	n := len(y) / L
	buf := getScratch(len(y) + L*L)
	x := (*buf)[:len(y)]
	for i, v := range y {
		x[i] = float64(v)
	}
	s := mat.NewSymDense(L, (*buf)[len(y):])
	for i := range s.RawSymmetric().Data {
		s.RawSymmetric().Data[i] = 0
	}
	s.SymOuterK(1, mat.NewDense(n, L, x).T())
	raw := s.RawSymmetric()
	for i := range L {
		for j := i; j < L; j++ {
			v := float32(raw.Data[i*raw.Stride+j])
			part[i*L+j], part[j*L+i] = v, v
		}
	}
	sums := part[L*L : L*L+L]
	for b := range sums {
		var t float64
		for i := b; i < len(x); i += L {
			t += x[i]
		}
		sums[b] = float32(t)
	}
	scratch.Put(buf)
}

// Basis is the result of the SVD step for one cube.
type Basis struct {
	Mode int       // Projective or Subspace
	SNR  float64   // estimated SNR in dB
	D    int       // projection dimension: p−1 (projective) or p
	N    int       // pixels of the cube
	Mean []float64 // band means r_m (L)
	U    []float64 // D rows of L: the projection vectors (the rest zero up to p rows)
	UM   []float64 // u = Uᵀ·r_m (p, subspace only)
}

// SNRThreshold is the VCA's SNR threshold in dB for p endmembers:
// 15 + 10·log10(p).
func SNRThreshold(p int) float64 { return 15 + 10*math.Log10(float64(p)) }

// top returns the k eigenvectors of s with the largest eigenvalues (rows of
// L values) and the sum of those eigenvalues.
func top(s *mat.SymDense, k int) ([]float64, float64, error) {
	var e mat.EigenSym
	if !e.Factorize(s, true) {
		return nil, 0, fmt.Errorf("vca: eigendecomposition of the %d×%d matrix did not converge", s.SymmetricDim(), s.SymmetricDim())
	}
	L := s.SymmetricDim()
	vals := e.Values(nil)
	var vecs mat.Dense
	e.VectorsTo(&vecs)
	u := make([]float64, k*L)
	var sum float64
	for r := range k {
		c := L - 1 - r // ascending order: the largest last
		sum += vals[c]
		for b := range L {
			u[r*L+b] = vecs.At(b, c)
		}
	}
	return u, sum, nil
}

// SolveBasis sums the partial statistics of a cube's blocks (parts, each
// StatsLen(L)) and computes its basis for p endmembers, as the VCA does:
// the mean, the covariance's first p principal components, the SNR
// estimate, and then either the projective basis (p−1 components of the
// covariance) or the subspace one (p eigenvectors of the correlation).
func SolveBasis(parts []float32, L, p, n int) (*Basis, error) {
	sl := StatsLen(L)
	if len(parts)%sl != 0 || len(parts) == 0 {
		return nil, fmt.Errorf("vca: %d statistics tokens: expected a multiple of (L+1)·L = %d", len(parts), sl)
	}
	corr := make([]float64, L*L)
	mean := make([]float64, L)
	for o := 0; o < len(parts); o += sl {
		for i, v := range parts[o : o+L*L] {
			corr[i] += float64(v)
		}
		for i, v := range parts[o+L*L : o+sl] {
			mean[i] += float64(v)
		}
	}
	fn := float64(n)
	for i := range corr {
		corr[i] /= fn
	}
	for i := range mean {
		mean[i] /= fn
	}
	cov := make([]float64, L*L)
	var py, mm float64
	for i := range L {
		py += corr[i*L+i]
		mm += mean[i] * mean[i]
		for j := range L {
			cov[i*L+j] = corr[i*L+j] - mean[i]*mean[j]
		}
	}
	ucov, lsum, err := top(mat.NewSymDense(L, cov), p)
	if err != nil {
		return nil, err
	}
	px := lsum + mm
	snr := 10 * math.Log10((px-float64(p)/float64(L)*py)/(py-px))
	b := &Basis{SNR: snr, N: n, Mean: mean, U: make([]float64, p*L), UM: make([]float64, p)}
	if math.IsNaN(snr) || snr < SNRThreshold(p) {
		b.Mode, b.D = Projective, p-1
		copy(b.U, ucov[:(p-1)*L])
		return b, nil
	}
	ucorr, _, err := top(mat.NewSymDense(L, corr), p)
	if err != nil {
		return nil, err
	}
	b.Mode, b.D = Subspace, p
	copy(b.U, ucorr)
	for k := range p {
		var t float64
		for i, m := range mean {
			t += ucorr[k*L+i] * m
		}
		b.UM[k] = t
	}
	return b, nil
}

// Encode writes b as a basis token (BasisLen(L, p) values).
func (b *Basis) Encode(dst []float32) {
	dst[0], dst[1], dst[2], dst[3] = float32(b.Mode), float32(b.SNR), float32(b.D), float32(b.N)
	L := len(b.Mean)
	o := Header
	for i, v := range b.Mean {
		dst[o+i] = float32(v)
	}
	o += L
	for i, v := range b.U {
		dst[o+i] = float32(v)
	}
	o += len(b.U)
	for i, v := range b.UM {
		dst[o+i] = float32(v)
	}
}

// DecodeBasis reads a basis token for L bands and p endmembers.
func DecodeBasis(t []float32, L, p int) *Basis {
	b := &Basis{Mode: int(t[0]), SNR: float64(t[1]), D: int(t[2]), N: int(t[3]),
		Mean: make([]float64, L), U: make([]float64, p*L), UM: make([]float64, p)}
	o := Header
	for i := range b.Mean {
		b.Mean[i] = float64(t[o+i])
	}
	o += L
	for i := range b.U {
		b.U[i] = float64(t[o+i])
	}
	o += p * L
	for i := range b.UM {
		b.UM[i] = float64(t[o+i])
	}
	return b
}

// Project projects a block of pixels (y: pixels × L) with a basis token
// (BasisLen(L, p)) into out (pixels × ProjLen(p)); the arithmetic of
// project.cl and project.cu (float, in the token's precision).
func Project(y, basis []float32, L, p int, out []float32) {
	mode, d := int(basis[0]), int(basis[2])
	mean := basis[Header : Header+L]
	u := basis[Header+L : Header+L+p*L]
	um := basis[Header+L+p*L : Header+L+p*L+p]
	n := len(y) / L
	pl := ProjLen(p)
	var x [9]float32
	for i := range n {
		px := y[i*L : (i+1)*L]
		o := out[i*pl : (i+1)*pl]
		if mode == Projective {
			var nrm float32
			for k := range d {
				row := u[k*L : (k+1)*L]
				var t float32
				for b, v := range px {
					t += row[b] * (v - mean[b])
				}
				o[k] = t
				nrm += t * t
			}
			o[d] = float32(math.Sqrt(float64(nrm)))
			o[p] = 0
			continue
		}
		var s float32
		for k := range p {
			row := u[k*L : (k+1)*L]
			var t float32
			for b, v := range px {
				t += row[b] * v
			}
			x[k] = t
			s += um[k] * t
		}
		for k := range p {
			o[k] = x[k] / s
		}
		o[p] = s
	}
}

// Extract runs the VCA iterations on a cube's projected data (n pixels ×
// ProjLen(p)) with its basis, and returns the indices of the pixels it
// selects and the endmembers (p spectra of L values, back in the band
// space: U·x + r_m or U·x). rng draws the VCA's random directions.
func Extract(proj []float32, b *Basis, p int, rng *rand.Rand) ([]int, []float64) {
	pl := ProjLen(p)
	n := len(proj) / pl
	L := len(b.Mean)
	c := float32(0)
	if b.Mode == Projective {
		for i := range n {
			c = max(c, proj[i*pl+p-1])
		}
	}
	col := func(i, k int) float64 {
		if b.Mode == Projective && k == p-1 {
			return float64(c)
		}
		return float64(proj[i*pl+k])
	}
	a := mat.NewDense(p, p, nil)
	a.Set(p-1, 0, 1)
	idx := make([]int, p)
	w := mat.NewVecDense(p, nil)
	f := mat.NewVecDense(p, nil)
	var pr mat.Dense
	for it := range p {
		for k := range p {
			w.SetVec(k, rng.Float64())
		}
		projector(a, &pr)
		f.MulVec(&pr, w)
		f.SubVec(w, f)
		f.ScaleVec(1/mat.Norm(f, 2), f)
		best, bi := -1.0, 0
		for i := range n {
			var v float64
			for k := range p {
				v += f.AtVec(k) * col(i, k)
			}
			if v = math.Abs(v); v > best {
				best, bi = v, i
			}
		}
		idx[it] = bi
		for k := range p {
			a.Set(k, it, col(bi, k))
		}
	}
	e := make([]float64, p*L)
	for k, i := range idx {
		spec := e[k*L : (k+1)*L]
		x := proj[i*pl : (i+1)*pl]
		scale := float64(1)
		if b.Mode == Subspace {
			scale = float64(x[p])
		} else {
			copy(spec, b.Mean)
		}
		for r := range b.D {
			xr := float64(x[r]) * scale
			for j, u := range b.U[r*L : (r+1)*L] {
				spec[j] += u * xr
			}
		}
	}
	return idx, e
}

// projector sets dst to A·pinv(A), the orthogonal projector on the column
// space of a (from its SVD: U_r·U_rᵀ over the non-negligible singular
// values).
func projector(a *mat.Dense, dst *mat.Dense) {
	n, _ := a.Dims()
	var svd mat.SVD
	if dst.IsEmpty() {
		dst.ReuseAs(n, n)
	}
	dst.Zero()
	if !svd.Factorize(a, mat.SVDThin) {
		return
	}
	s := svd.Values(nil)
	var u mat.Dense
	svd.UTo(&u)
	tol := float64(n) * s[0] * 1e-12
	for r, sv := range s {
		if sv <= tol {
			continue
		}
		for i := range n {
			for j := range n {
				dst.Set(i, j, dst.At(i, j)+u.At(i, r)*u.At(j, r))
			}
		}
	}
}

// Unmixer returns the unmixing matrix of endmembers e (p spectra of L):
// the pseudo-inverse (EᵀE)⁻¹Eᵀ as p rows of L, for unconstrained least
// squares.
func Unmixer(e []float64, L, p int) ([]float64, error) {
	em := mat.NewDense(p, L, e) // rows: spectra, so E = emᵀ
	var g mat.Dense
	g.Mul(em, em.T())
	var gi mat.Dense
	if err := gi.Inverse(&g); err != nil {
		return nil, fmt.Errorf("vca: the endmembers' %d×%d Gram matrix is singular: %w", p, p, err)
	}
	var w mat.Dense
	w.Mul(&gi, em)
	return w.RawMatrix().Data, nil
}

// Unmix estimates the abundances of a block of pixels (y: pixels × L)
// with an unmixing matrix w (p rows of L): unconstrained least squares
// a = w·y, then negative abundances clipped to 0 and the rest scaled to
// sum to one (not FCLS). out is pixels × p. The arithmetic of unmix.cl
// and unmix.cu.
func Unmix(y, w []float32, L, p int, out []float32) {
	n := len(y) / L
	for i := range n {
		px := y[i*L : (i+1)*L]
		o := out[i*p : (i+1)*p]
		var s float32
		for k := range p {
			row := w[k*L : (k+1)*L]
			var t float32
			for b, v := range px {
				t += row[b] * v
			}
			t = max(t, 0)
			o[k] = t
			s += t
		}
		if s > 0 {
			for k := range o {
				o[k] /= s
			}
		}
	}
}

// SpectralAngle is the angle in degrees between spectra a and b.
func SpectralAngle(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	c := ab / math.Sqrt(aa*bb)
	return math.Acos(min(1, max(-1, c))) * 180 / math.Pi
}

// Match pairs estimated endmembers with true ones (both p spectra of L):
// perm[k] is the true endmember matched to estimate k, the permutation
// with the smallest total spectral angle, and angles[k] its angle.
func Match(est, truth []float64, L, p int) (perm []int, angles []float64) {
	ang := make([]float64, p*p)
	for i := range p {
		for j := range p {
			ang[i*p+j] = SpectralAngle(est[i*L:(i+1)*L], truth[j*L:(j+1)*L])
		}
	}
	cur := make([]int, p)
	used := make([]bool, p)
	best := math.Inf(1)
	var rec func(i int, sum float64)
	rec = func(i int, sum float64) {
		if sum >= best {
			return
		}
		if i == p {
			best = sum
			perm = append(perm[:0], cur...)
			return
		}
		for j := range p {
			if !used[j] {
				used[j], cur[i] = true, j
				rec(i+1, sum+ang[i*p+j])
				used[j] = false
			}
		}
	}
	rec(0, 0)
	angles = make([]float64, p)
	for i, j := range perm {
		angles[i] = ang[i*p+j]
	}
	return perm, angles
}
