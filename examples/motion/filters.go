package motion

import (
	"math"
	"sync"

	"github.com/sluicehq/sluice/examples/imagepipe"
)

func clampi(v, lo, hi int) int { return min(max(v, lo), hi) }

// Blur is the 5×5 binomial Gaussian blur of one frame (weights
// [1 4 6 4 1] ⊗ [1 4 6 4 1], sum 256), rounded: (Σ w·p + 128) >> 8, edges
// clamped — the image pipeline's (examples/imagepipe), whose frames have
// the same geometry; the integer is the same as the 25-tap sum of blur.cl
// and blur.cu.
func Blur(in, out []uint8) { imagepipe.Blur(in, out) }

// Sobel writes the 3×3 Sobel gradients of one frame, gx (left to right)
// and gy (top to bottom), edges clamped. They are 8 times the derivative
// (|g| ≤ 1020).
func Sobel(in []uint8, gx, gy []int16) {
	in, gx, gy = in[:Pixels], gx[:Pixels], gy[:Pixels]
	for y := 0; y < H; y++ {
		ra := in[clampi(y-1, 0, H-1)*W:][:W]
		rb := in[y*W:][:W]
		rc := in[clampi(y+1, 0, H-1)*W:][:W]
		ox, oy := gx[y*W:][:W], gy[y*W:][:W]
		for x := 0; x < W; x++ {
			xm, xp := max(x-1, 0), min(x+1, W-1)
			a00, a01, a02 := int32(ra[xm]), int32(ra[x]), int32(ra[xp])
			a10, a12 := int32(rb[xm]), int32(rb[xp])
			a20, a21, a22 := int32(rc[xm]), int32(rc[x]), int32(rc[xp])
			ox[x] = int16((a02 + 2*a12 + a22) - (a00 + 2*a10 + a20))
			oy[x] = int16((a20 + 2*a21 + a22) - (a00 + 2*a01 + a02))
		}
	}
}

// Lucas–Kanade parameters (the kernels flow.cl and flow.cu use the same).
const (
	// Radius is the half-width of the (2·Radius+1)² window whose
	// gradients are summed for each pixel's flow.
	Radius = 3
	// MinEigen is the least smaller eigenvalue of the window's structure
	// tensor Σ[gx² gxgy; gxgy gy²] (in Sobel units, 64× the derivative's
	// square) for which a pixel gets a flow estimate; flatter windows, or
	// windows with one edge direction only (the aperture problem), get NaN.
	MinEigen = 49 * 64 * 2
)

// Solve is Lucas–Kanade's 2×2 solve for one window, given the integer
// sums a = Σgx², b = Σgx·gy, c = Σgy², p = Σgx·It, q = Σgy·It (gx, gy
// Sobel gradients of this frame, It = this frame − the previous one). It
// returns the flow (u, v) in pixels per frame, or NaNs when the smaller
// eigenvalue of [a b; b c] is below MinEigen. The test is exact integer
// arithmetic; only the final division is in float32, as in the kernels.
func Solve(a, b, c, p, q int64) (float32, float32) {
	t := a + c - 2*MinEigen
	if t < 0 || t*t < (a-c)*(a-c)+4*b*b {
		nan := float32(math.NaN())
		return nan, nan
	}
	det := a*c - b*b
	// Sobel gradients are 8× the derivative: u = −8·A⁻¹·[p q].
	u := float32(-8*(c*p-b*q)) / float32(det)
	v := float32(-8*(a*q-b*p)) / float32(det)
	return u, v
}

// flowScratch is one Flow call's working memory.
type flowScratch struct {
	p   [5][Pixels]int32 // per pixel: gx², gx·gy, gy², gx·It, gy·It
	col [5][W]int32      // the window's column sums for one row
}

var flowPool = sync.Pool{New: func() any { return new(flowScratch) }}

// Flow is the Lucas–Kanade optical flow of one frame: for every pixel, the
// least-squares motion (u, v) over the (2·Radius+1)² window around it
// (edges clamped) from the Sobel gradients gx, gy of this frame and the
// difference cur − prev of the blurred frames; NaN where the window lacks
// texture (see Solve). The window sums are running sums here (the kernels
// sum the window directly; the integers are the same: every sum fits in
// 32 bits, |Σgx²| ≤ 49·1020²).
func Flow(gx, gy []int16, cur, prev []uint8, out [][2]float32) {
	gx, gy, cur, prev, out = gx[:Pixels], gy[:Pixels], cur[:Pixels], prev[:Pixels], out[:Pixels]
	s := flowPool.Get().(*flowScratch)
	defer flowPool.Put(s)
	p0, p1, p2, p3, p4 := s.p[0][:], s.p[1][:], s.p[2][:], s.p[3][:], s.p[4][:]
	for i := range p0 {
		ix, iy := int32(gx[i]), int32(gy[i])
		it := int32(cur[i]) - int32(prev[i])
		p0[i], p1[i], p2[i], p3[i], p4[i] = ix*ix, ix*iy, iy*iy, ix*it, iy*it
	}
	for k := range s.col {
		c := s.col[k][:]
		clear(c)
		for dy := -Radius; dy <= Radius; dy++ {
			r := s.p[k][clampi(dy, 0, H-1)*W:][:W]
			for x := range c {
				c[x] += r[x]
			}
		}
	}
	for y := 0; y < H; y++ {
		if y > 0 { // slide the window down: add row y+R, drop row y−1−R
			add, drop := clampi(y+Radius, 0, H-1)*W, clampi(y-1-Radius, 0, H-1)*W
			for k := range s.col {
				c, a, d := s.col[k][:], s.p[k][add:][:W], s.p[k][drop:][:W]
				for x := range c {
					c[x] += a[x] - d[x]
				}
			}
		}
		var sum [5]int32
		for k := range sum {
			for dx := -Radius; dx <= Radius; dx++ {
				sum[k] += s.col[k][clampi(dx, 0, W-1)]
			}
		}
		c0, c1, c2, c3, c4 := &s.col[0], &s.col[1], &s.col[2], &s.col[3], &s.col[4]
		o := out[y*W:][:W]
		for x := 0; x < W; x++ {
			if x > 0 {
				a, d := min(x+Radius, W-1), max(x-1-Radius, 0)
				sum[0] += c0[a] - c0[d]
				sum[1] += c1[a] - c1[d]
				sum[2] += c2[a] - c2[d]
				sum[3] += c3[a] - c3[d]
				sum[4] += c4[a] - c4[d]
			}
			o[x][0], o[x][1] = Solve(int64(sum[0]), int64(sum[1]), int64(sum[2]), int64(sum[3]), int64(sum[4]))
		}
	}
}

// Frame statistics (the stats actor's token, [6]f64).
const (
	StatValid   = iota // pixels with a flow estimate
	StatMoving         // pixels moving against the global motion
	StatGlobalU        // global motion: the median flow, pixels per frame
	StatGlobalV
	StatMovingU // mean flow of the moving pixels
	StatMovingV
	NumStats
)

// MovingFlow is the least distance, in pixels per frame, between a
// pixel's flow and the frame's global motion (the camera's pan) for the
// pixel to count as moving.
const MovingFlow = 0.75

// Histogram for the medians: bins of 1/binsPerPixel over ±maxFlow.
const (
	binsPerPixel = 32
	maxFlow      = 16
	bins         = 2 * maxFlow * binsPerPixel
)

func bin(u float32) int {
	v := (u + maxFlow) * binsPerPixel
	if v <= 0 {
		return 0
	}
	return min(int(v), bins-1)
}

func median(h *[bins]int32, n int32) float64 {
	if n == 0 {
		return 0
	}
	var acc int32
	for i, c := range h {
		acc += c
		if 2*acc >= n {
			return (float64(i)+0.5)/binsPerPixel - maxFlow
		}
	}
	return maxFlow
}

// Analyse computes one frame's statistics from its flow field (see the
// Stat* indices) and writes its motion mask: 255 where a pixel moves
// against the global motion, else 0.
func Analyse(flow [][2]float32, mask []uint8) [NumStats]float64 {
	flow, mask = flow[:Pixels], mask[:Pixels]
	var hu, hv [bins]int32
	var n int32
	for _, f := range flow {
		if f[0] == f[0] && f[1] == f[1] { // not NaN
			hu[bin(f[0])]++
			hv[bin(f[1])]++
			n++
		}
	}
	var st [NumStats]float64
	st[StatValid] = float64(n)
	gu, gv := median(&hu, n), median(&hv, n)
	st[StatGlobalU], st[StatGlobalV] = gu, gv
	var moving int
	var su, sv float64
	for i, f := range flow {
		mask[i] = 0
		if f[0] != f[0] || f[1] != f[1] {
			continue
		}
		du, dv := float64(f[0])-gu, float64(f[1])-gv
		if du*du+dv*dv >= MovingFlow*MovingFlow {
			mask[i] = 255
			moving++
			su += float64(f[0])
			sv += float64(f[1])
		}
	}
	st[StatMoving] = float64(moving)
	if moving > 0 {
		st[StatMovingU], st[StatMovingV] = su/float64(moving), sv/float64(moving)
	}
	return st
}
