package motion

import (
	"math"
	"sort"
	"testing"
)

// directFlow is Flow written as the kernels compute it: the 7×7 window
// summed directly at every pixel.
func directFlow(gx, gy []int16, cur, prev []uint8, out [][2]float32) {
	for py := 0; py < H; py++ {
		for px := 0; px < W; px++ {
			var a, b, c, p, q int64
			for dy := -Radius; dy <= Radius; dy++ {
				row := clampi(py+dy, 0, H-1) * W
				for dx := -Radius; dx <= Radius; dx++ {
					k := row + clampi(px+dx, 0, W-1)
					ix, iy := int64(gx[k]), int64(gy[k])
					it := int64(cur[k]) - int64(prev[k])
					a += ix * ix
					b += ix * iy
					c += iy * iy
					p += ix * it
					q += iy * it
				}
			}
			out[py*W+px][0], out[py*W+px][1] = Solve(a, b, c, p, q)
		}
	}
}

// pipeline runs blur → sobel → flow on two frames.
func pipeline(f0, f1 []uint8, flow func(gx, gy []int16, cur, prev []uint8, out [][2]float32)) [][2]float32 {
	b0, b1 := make([]uint8, Pixels), make([]uint8, Pixels)
	Blur(f0, b0)
	Blur(f1, b1)
	gx, gy := make([]int16, Pixels), make([]int16, Pixels)
	Sobel(b1, gx, gy)
	out := make([][2]float32, Pixels)
	flow(gx, gy, b1, b0, out)
	return out
}

func medianOf(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

// The flow recovers a known sub-pixel translation of the scene: the median
// flow of the pixels with an estimate is within 0.1 px of the shift, most
// pixels get an estimate, and the running-sum Flow equals the direct
// window sums bit for bit.
func TestFlowRecoversTranslation(t *testing.T) {
	s := NewScene()
	f0, f1 := make([]uint8, Pixels), make([]uint8, Pixels)
	for _, shift := range [][2]float64{{0.5, 0}, {0, -0.75}, {-0.6, 0.25}, {1.2, 0.8}} {
		s.RenderShift(0, 0, -1, f0)
		s.RenderShift(shift[0], shift[1], -1, f1)
		got := pipeline(f0, f1, Flow)
		ref := pipeline(f0, f1, directFlow)
		var us, vs []float64
		for i, f := range got {
			if math.Float32bits(f[0]) != math.Float32bits(ref[i][0]) || math.Float32bits(f[1]) != math.Float32bits(ref[i][1]) {
				t.Fatalf("shift %v, pixel %d: Flow %v, direct sums %v", shift, i, f, ref[i])
			}
			x, y := i%W, i/W
			if f[0] == f[0] && x >= 8 && x < W-8 && y >= 8 && y < H-8 {
				us = append(us, float64(f[0]))
				vs = append(vs, float64(f[1]))
			}
		}
		inner := (W - 16) * (H - 16)
		mu, mv := medianOf(us), medianOf(vs)
		t.Logf("shift %+v: flow estimated at %.0f%% of inner pixels, median (%+.3f, %+.3f)", shift, 100*float64(len(us))/float64(inner), mu, mv)
		if len(us) < inner/2 {
			t.Errorf("shift %v: an estimate at only %d of %d inner pixels", shift, len(us), inner)
		}
		if math.Abs(mu-shift[0]) > 0.1 || math.Abs(mv-shift[1]) > 0.1 {
			t.Errorf("shift %v: median flow (%.3f, %.3f), expected within 0.1 px", shift, mu, mv)
		}
	}
}

// A flat frame has no texture: no pixel gets a flow estimate.
func TestFlowFlat(t *testing.T) {
	f := make([]uint8, Pixels)
	for i := range f {
		f[i] = 100
	}
	for i, v := range pipeline(f, f, Flow) {
		if v[0] == v[0] || v[1] == v[1] {
			t.Fatalf("pixel %d of a flat frame: flow %v, expected NaN", i, v)
		}
	}
}

// Analyse finds the global motion and the pixels moving against it.
func TestAnalyse(t *testing.T) {
	flow := make([][2]float32, Pixels)
	nan := float32(math.NaN())
	for i := range flow {
		switch {
		case i < 1000:
			flow[i] = [2]float32{nan, nan}
		case i < 1500:
			flow[i] = [2]float32{3, -1} // an object
		default:
			flow[i] = [2]float32{-0.5, 0.25} // the pan
		}
	}
	mask := make([]uint8, Pixels)
	st := Analyse(flow, mask)
	if st[StatValid] != Pixels-1000 || st[StatMoving] != 500 {
		t.Errorf("valid %v moving %v, expected %d and 500", st[StatValid], st[StatMoving], Pixels-1000)
	}
	if math.Abs(st[StatGlobalU]+0.5) > 1.0/32 || math.Abs(st[StatGlobalV]-0.25) > 1.0/32 {
		t.Errorf("global motion (%v, %v), expected (-0.5, 0.25)", st[StatGlobalU], st[StatGlobalV])
	}
	if st[StatMovingU] != 3 || st[StatMovingV] != -1 {
		t.Errorf("moving pixels' flow (%v, %v), expected (3, -1)", st[StatMovingU], st[StatMovingV])
	}
	for i, m := range mask {
		if want := uint8(0); i >= 1000 && i < 1500 {
			if m != 255 {
				t.Fatalf("mask[%d] = %d, expected 255", i, m)
			}
		} else if m != want {
			t.Fatalf("mask[%d] = %d, expected 0", i, m)
		}
	}
}

// BenchmarkFilters times the Go filters on one frame pair.
func BenchmarkFilters(b *testing.B) {
	s := NewScene()
	f0, f1 := make([]uint8, Pixels), make([]uint8, Pixels)
	s.Render(0, f0)
	s.Render(1, f1)
	b0, b1 := make([]uint8, Pixels), make([]uint8, Pixels)
	gx, gy := make([]int16, Pixels), make([]int16, Pixels)
	out := make([][2]float32, Pixels)
	mask := make([]uint8, Pixels)
	Blur(f0, b0)
	b.Run("blur", func(b *testing.B) {
		for b.Loop() {
			Blur(f1, b1)
		}
	})
	b.Run("sobel", func(b *testing.B) {
		for b.Loop() {
			Sobel(b1, gx, gy)
		}
	})
	b.Run("flow", func(b *testing.B) {
		for b.Loop() {
			Flow(gx, gy, b1, b0, out)
		}
	})
	b.Run("stats", func(b *testing.B) {
		for b.Loop() {
			Analyse(out, mask)
		}
	})
}
