package actors

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/runtime"
)

func TestRegistered(t *testing.T) {
	have := map[string]bool{}
	for _, b := range runtime.Builtins() {
		have[b.Name] = b.Doc != ""
	}
	for _, b := range builtins {
		if !have[b.name] {
			t.Errorf("built-in %s is not registered with a doc", b.name)
		}
	}
}

func TestGenConst(t *testing.T) {
	a, impl := build(t, "gen.const", map[string]any{"value": 2.5, "count": 2}, "out y [2]f32 3")
	out := make([]float32, 6)
	for k := int64(0); k < 2; k++ {
		if err := fire(a, impl, k, nil, [][]byte{bytesOf(out)}); err != nil {
			t.Fatal(err)
		}
		for i, v := range out {
			if v != 2.5 {
				t.Fatalf("out[%d] = %v, want 2.5", i, v)
			}
		}
	}
	if err := fire(a, impl, 2, nil, [][]byte{bytesOf(out)}); !errors.Is(err, runtime.ErrEndOfStream) {
		t.Fatalf("firing 2: %v, want end of stream", err)
	}
	a, impl = build(t, "gen.const", map[string]any{"value": 3}, "out y c64 4")
	z := make([]complex64, 4)
	if err := fire(a, impl, 0, nil, [][]byte{bytesOf(z)}); err != nil {
		t.Fatal(err)
	}
	for _, v := range z {
		if v != 3 {
			t.Fatalf("c64 const = %v, want 3+0i", v)
		}
	}
}

func TestGenRamp(t *testing.T) {
	a, impl := build(t, "gen.ramp", map[string]any{"start": 1, "step": 0.5}, "out y f32 4")
	out := make([]float32, 4)
	if err := fire(a, impl, 2, nil, [][]byte{bytesOf(out)}); err != nil {
		t.Fatal(err)
	}
	want := []float32{5, 5.5, 6, 6.5} // tokens 8..11
	for i := range want {
		if out[i] != want[i] {
			t.Fatalf("ramp = %v, want %v", out, want)
		}
	}
	// u8 saturates.
	a, impl = build(t, "gen.ramp", map[string]any{"start": 250, "step": 3}, "out y u8 4")
	u := make([]uint8, 4)
	if err := fire(a, impl, 0, nil, [][]byte{u}); err != nil {
		t.Fatal(err)
	}
	if string(u) != string([]byte{250, 253, 255, 255}) {
		t.Fatalf("u8 ramp = %v", u)
	}
	// CSDF rate: tokens counted over phases [1,3].
	a, impl = build(t, "gen.ramp", nil, "out y i32 [1,3]")
	o := make([]int32, 3)
	if err := fire(a, impl, 3, nil, [][]byte{bytesOf(o)}); err != nil {
		t.Fatal(err)
	}
	if o[0] != 5 || o[2] != 7 {
		t.Fatalf("CSDF ramp firing 3 = %v, want [5 6 7]", o)
	}
}

func TestGenRandomReproducible(t *testing.T) {
	gen := func(seed int, k int64) []float32 {
		a, impl := build(t, "gen.random", map[string]any{"seed": seed, "min": -2, "max": 3}, "out y f32 1000")
		out := make([]float32, 1000)
		if err := fire(a, impl, k, nil, [][]byte{bytesOf(out)}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a1, a2, b, c := gen(7, 0), gen(7, 0), gen(8, 0), gen(7, 1)
	same := func(x, y []float32) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a1, a2) {
		t.Fatal("same seed and firing gave different values")
	}
	if same(a1, b) || same(a1, c) {
		t.Fatal("different seed or firing gave the same values")
	}
	sum := 0.0
	for _, v := range a1 {
		if v < -2 || v > 3 {
			t.Fatalf("value %v outside [-2, 3]", v)
		}
		sum += float64(v)
	}
	if m := sum / 1000; math.Abs(m-0.5) > 0.2 {
		t.Fatalf("mean %v, want about 0.5", m)
	}
	// Integers: inclusive range, every value reached.
	a, impl := build(t, "gen.random", map[string]any{"min": 1, "max": 3}, "out y i32 300")
	o := make([]int32, 300)
	if err := fire(a, impl, 0, nil, [][]byte{bytesOf(o)}); err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	for _, v := range o {
		seen[v] = true
		if v < 1 || v > 3 {
			t.Fatalf("value %d outside [1, 3]", v)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("values seen %v, want 1, 2 and 3", seen)
	}
}

func TestGenSine(t *testing.T) {
	a, impl := build(t, "gen.sine", map[string]any{"freq": 0.1, "amplitude": 2, "phase": 0.5}, "out y f64 16")
	out := make([]float64, 16)
	if err := fire(a, impl, 3, nil, [][]byte{bytesOf(out)}); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		n := float64(48 + i)
		if want := 2 * math.Sin(2*math.Pi*0.1*n+0.5); math.Abs(v-want) > 1e-9 {
			t.Fatalf("sample %v = %v, want %v", n, v, want)
		}
	}
	a, impl = build(t, "gen.sine", map[string]any{"freq": 0.25}, "out y c64 4")
	z := make([]complex64, 4)
	if err := fire(a, impl, 0, nil, [][]byte{bytesOf(z)}); err != nil {
		t.Fatal(err)
	}
	want := []complex128{1, 1i, -1, -1i}
	for i := range z {
		if cmplx.Abs(complex128(z[i])-want[i]) > 1e-6 {
			t.Fatalf("complex sine = %v, want %v", z, want)
		}
	}
}

// convolve is the reference: y[n] = Σ h[k]·x[n−k], x[n<0] = 0.
func convolve(h, x []float64) []float64 {
	y := make([]float64, len(x))
	for n := range x {
		for k := range h {
			if n-k >= 0 {
				y[n] += h[k] * x[n-k]
			}
		}
	}
	return y
}

func TestFIRHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nt := range []int{1, 3, 4, 7, 33} {
		taps := make([]any, nt)
		h := make([]float64, nt)
		for i := range h {
			h[i] = rng.Float64()*2 - 1
			taps[i] = h[i]
		}
		const rate, firings = 10, 5
		x := make([]float64, rate*firings)
		for i := range x {
			x[i] = rng.Float64()*2 - 1
		}
		want := convolve(h, x)
		// f32
		a, impl := build(t, "fir", map[string]any{"taps": taps}, "in x f32 10", "out y f32 10")
		for k := 0; k < firings; k++ {
			in, out := make([]float32, rate), make([]float32, rate)
			for i := range in {
				in[i] = float32(x[k*rate+i])
			}
			if err := fire(a, impl, int64(k), [][]byte{bytesOf(in)}, [][]byte{bytesOf(out)}); err != nil {
				t.Fatal(err)
			}
			for i, v := range out {
				if d := math.Abs(float64(v) - want[k*rate+i]); d > 1e-5*float64(nt) {
					t.Fatalf("%d taps, firing %d, y[%d] = %v, want %v", nt, k, i, v, want[k*rate+i])
				}
			}
		}
		// f64
		a, impl = build(t, "fir", map[string]any{"taps": taps}, "in x f64 10", "out y f64 10")
		for k := 0; k < firings; k++ {
			in, out := x[k*rate:(k+1)*rate], make([]float64, rate)
			if err := fire(a, impl, int64(k), [][]byte{bytesOf(in)}, [][]byte{bytesOf(out)}); err != nil {
				t.Fatal(err)
			}
			for i, v := range out {
				if d := math.Abs(v - want[k*rate+i]); d > 1e-12 {
					t.Fatalf("f64 %d taps, firing %d, y[%d] = %v, want %v", nt, k, i, v, want[k*rate+i])
				}
			}
		}
	}
}

func TestLowpass(t *testing.T) {
	h := Lowpass(31, 0.1)
	sum := 0.0
	for i, v := range h {
		sum += v
		if math.Abs(v-h[len(h)-1-i]) > 1e-15 {
			t.Fatal("taps are not symmetric")
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("DC gain %v, want 1", sum)
	}
	// Gain at 0.3 cycles/sample is small.
	var re, im float64
	for k, v := range h {
		re += v * math.Cos(2*math.Pi*0.3*float64(k))
		im += v * math.Sin(2*math.Pi*0.3*float64(k))
	}
	if g := math.Hypot(re, im); g > 0.01 {
		t.Fatalf("stop-band gain %v, want < 0.01", g)
	}
	a, impl := build(t, "fir", map[string]any{"cutoff": 0.1, "ntaps": 31}, "in x f32 64", "out y f32 64")
	in, out := make([]float32, 64), make([]float32, 64)
	for i := range in {
		in[i] = 1
	}
	if err := fire(a, impl, 0, [][]byte{bytesOf(in)}, [][]byte{bytesOf(out)}); err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(out[63])-1) > 1e-5 {
		t.Fatalf("step response settles at %v, want 1", out[63])
	}
}

func TestDecimate(t *testing.T) {
	a, impl := build(t, "decimate", map[string]any{"factor": 3}, "in x f32 12", "out y f32 4")
	in := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	out := make([]float32, 4)
	if err := fire(a, impl, 0, [][]byte{bytesOf(in)}, [][]byte{bytesOf(out)}); err != nil {
		t.Fatal(err)
	}
	if out[0] != 0 || out[1] != 3 || out[2] != 6 || out[3] != 9 {
		t.Fatalf("decimate = %v, want [0 3 6 9]", out)
	}
	// [3]u8 tokens (generic path).
	a, impl = build(t, "decimate", map[string]any{"factor": 2}, "in x [3]u8 4", "out y [3]u8 2")
	bin, bout := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, make([]byte, 6)
	if err := fire(a, impl, 0, [][]byte{bin}, [][]byte{bout}); err != nil {
		t.Fatal(err)
	}
	if string(bout) != string([]byte{1, 2, 3, 7, 8, 9}) {
		t.Fatalf("decimate [3]u8 = %v", bout)
	}
	// With taps: the filter output at every factor-th input, across firings.
	h := []float64{0.2, 0.5, 0.3, -0.1}
	x := make([]float64, 24)
	for i := range x {
		x[i] = math.Sin(float64(i))
	}
	ref := convolve(h, x)
	a, impl = build(t, "decimate", map[string]any{"factor": 4, "taps": []any{0.2, 0.5, 0.3, -0.1}}, "in x f64 8", "out y f64 2")
	for k := 0; k < 3; k++ {
		o := make([]float64, 2)
		if err := fire(a, impl, int64(k), [][]byte{bytesOf(x[8*k : 8*k+8])}, [][]byte{bytesOf(o)}); err != nil {
			t.Fatal(err)
		}
		for m, v := range o {
			if want := ref[8*k+4*m]; math.Abs(v-want) > 1e-12 {
				t.Fatalf("firing %d y[%d] = %v, want %v", k, m, v, want)
			}
		}
	}
}

func TestInterpolate(t *testing.T) {
	in := []float32{1, 2}
	for _, tc := range []struct {
		mode string
		want []float32
	}{{"zero", []float32{1, 0, 0, 2, 0, 0}}, {"hold", []float32{1, 1, 1, 2, 2, 2}}} {
		a, impl := build(t, "interpolate", map[string]any{"factor": 3, "mode": tc.mode}, "in x f32 2", "out y f32 6")
		out := make([]float32, 6)
		for i := range out {
			out[i] = -1
		}
		if err := fire(a, impl, 0, [][]byte{bytesOf(in)}, [][]byte{bytesOf(out)}); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			if out[i] != tc.want[i] {
				t.Fatalf("%s: %v, want %v", tc.mode, out, tc.want)
			}
		}
	}
}

// dft is the naive reference transform.
func dft(x []complex64, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	out := make([]complex128, n)
	for k := range out {
		var s complex128
		for j, v := range x {
			s += complex128(v) * cmplx.Rect(1, sign*2*math.Pi*float64(k*j%n)/float64(n))
		}
		out[k] = s
	}
	return out
}

func TestFFTvsDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 4, 8, 16, 64, 256, 1024} {
		x := make([]complex64, n)
		for i := range x {
			x[i] = complex(float32(rng.NormFloat64()), float32(rng.NormFloat64()))
		}
		rn := itoa(n)
		for _, inverse := range []bool{false, true} {
			use := "fft"
			if inverse {
				use = "ifft"
			}
			a, impl := build(t, use, nil, "in x c64 "+rn, "out y c64 "+rn)
			y := make([]complex64, n)
			if err := fire(a, impl, 0, [][]byte{bytesOf(x)}, [][]byte{bytesOf(y)}); err != nil {
				t.Fatal(err)
			}
			want := dft(x, inverse)
			tol := 1e-5 * math.Sqrt(float64(n)) * math.Log2(float64(2*n))
			for k := range y {
				w := want[k]
				if inverse {
					w /= complex(float64(n), 0)
				}
				if d := cmplx.Abs(complex128(y[k]) - w); d > tol*math.Max(1, cmplx.Abs(w)) {
					t.Fatalf("%s n=%d: X[%d] = %v, want %v (|diff| %g)", use, n, k, y[k], w, d)
				}
			}
		}
	}
}

func TestFFTReal(t *testing.T) {
	// f32 in → c64 out, two transforms of size 8 per firing.
	a, impl := build(t, "fft", map[string]any{"size": 8}, "in x f32 16", "out y c64 16")
	x := make([]float32, 16)
	for i := range x {
		x[i] = float32(math.Cos(2 * math.Pi * float64(i%8) / 8))
	}
	y := make([]complex64, 16)
	if err := fire(a, impl, 0, [][]byte{bytesOf(x)}, [][]byte{bytesOf(y)}); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 2; b++ {
		for k := 0; k < 8; k++ {
			want := 0.0
			if k == 1 || k == 7 {
				want = 4
			}
			if cmplx.Abs(complex128(y[8*b+k])-complex(want, 0)) > 1e-5 {
				t.Fatalf("block %d bin %d = %v, want %v", b, k, y[8*b+k], want)
			}
		}
	}
	// ifft c64 → f32 gives the signal back.
	a, impl = build(t, "ifft", map[string]any{"size": 8}, "in x c64 16", "out y f32 16")
	back := make([]float32, 16)
	if err := fire(a, impl, 0, [][]byte{bytesOf(y)}, [][]byte{bytesOf(back)}); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if math.Abs(float64(back[i]-x[i])) > 1e-6 {
			t.Fatalf("ifft(fft(x))[%d] = %v, want %v", i, back[i], x[i])
		}
	}
	// Exported helpers.
	z := []complex64{1, 2, 3, 4}
	FFT(z)
	IFFT(z)
	for i, v := range z {
		if cmplx.Abs(complex128(v)-complex(float64(i+1), 0)) > 1e-6 {
			t.Fatalf("IFFT(FFT) = %v", z)
		}
	}
}

func TestElementwise(t *testing.T) {
	x := []float32{1, -2, 3, 0.5}
	y := []float32{10, 20, 30, 40}
	run := func(use string, params map[string]any, nin int) []float32 {
		t.Helper()
		ports := []string{"in x f32 4"}
		ins := [][]byte{bytesOf(x)}
		if nin == 2 {
			ports = append(ports, "in y f32 4")
			ins = append(ins, bytesOf(y))
		}
		a, impl := build(t, use, params, append(ports, "out z f32 4")...)
		out := make([]float32, 4)
		if err := fire(a, impl, 0, ins, [][]byte{bytesOf(out)}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		use    string
		params map[string]any
		nin    int
		want   []float32
	}{
		{"scale", map[string]any{"gain": 2}, 1, []float32{2, -4, 6, 1}},
		{"add", nil, 2, []float32{11, 18, 33, 40.5}},
		{"add", map[string]any{"value": 1}, 1, []float32{2, -1, 4, 1.5}},
		{"multiply", nil, 2, []float32{10, -40, 90, 20}},
		{"multiply", map[string]any{"value": -1}, 1, []float32{-1, 2, -3, -0.5}},
		{"saxpy", map[string]any{"a": 2}, 2, []float32{12, 16, 36, 41}},
		{"saxpy", map[string]any{"a": 2, "y": 1}, 1, []float32{3, -3, 7, 2}},
		{"threshold", map[string]any{"level": 0.5, "below": -1, "above": 5}, 1, []float32{5, -1, 5, 5}},
	} {
		got := run(tc.use, tc.params, tc.nin)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s %v: %v, want %v", tc.use, tc.params, got, tc.want)
				break
			}
		}
	}
}

func TestComplexKernels(t *testing.T) {
	x := []complex64{1 + 2i, 3 - 1i}
	y := []complex64{2i, 1 + 1i}
	a, impl := build(t, "multiply", nil, "in x c64 2", "in y c64 2", "out z c64 2")
	z := make([]complex64, 2)
	if err := fire(a, impl, 0, [][]byte{bytesOf(x), bytesOf(y)}, [][]byte{bytesOf(z)}); err != nil {
		t.Fatal(err)
	}
	if z[0] != x[0]*y[0] || z[1] != x[1]*y[1] {
		t.Fatalf("complex multiply = %v", z)
	}
	a, impl = build(t, "add", map[string]any{"value": 1}, "in x c64 2", "out z c64 2")
	if err := fire(a, impl, 0, [][]byte{bytesOf(x)}, [][]byte{bytesOf(z)}); err != nil {
		t.Fatal(err)
	}
	if z[0] != 2+2i || z[1] != 4-1i {
		t.Fatalf("complex add const = %v", z)
	}
	a, impl = build(t, "magnitude", nil, "in x c64 2", "out y f32 2")
	m := make([]float32, 2)
	if err := fire(a, impl, 0, [][]byte{bytesOf([]complex64{3 + 4i, 0})}, [][]byte{bytesOf(m)}); err != nil {
		t.Fatal(err)
	}
	if m[0] != 5 || m[1] != 0 {
		t.Fatalf("magnitude = %v", m)
	}
	a, impl = build(t, "magnitude", map[string]any{"db": true}, "in x c64 1", "out y f32 1")
	if err := fire(a, impl, 0, [][]byte{bytesOf([]complex64{10})}, [][]byte{bytesOf(m[:1])}); err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(m[0])-20) > 1e-4 {
		t.Fatalf("magnitude dB of 10 = %v, want 20", m[0])
	}
}

func TestThresholdU8(t *testing.T) {
	a, impl := build(t, "threshold", map[string]any{"level": 127.5}, "in x u8 4", "out y u8 4")
	out := make([]byte, 4)
	if err := fire(a, impl, 0, [][]byte{{0, 127, 128, 255}}, [][]byte{out}); err != nil {
		t.Fatal(err)
	}
	if string(out) != string([]byte{0, 0, 255, 255}) {
		t.Fatalf("threshold u8 = %v", out)
	}
	a, impl = build(t, "threshold", map[string]any{"level": -5}, "in x u8 2", "out y u8 2")
	if err := fire(a, impl, 0, [][]byte{{0, 9}}, [][]byte{out[:2]}); err != nil {
		t.Fatal(err)
	}
	if out[0] != 255 || out[1] != 255 {
		t.Fatalf("threshold below the type's range = %v", out[:2])
	}
}

func TestLimit(t *testing.T) {
	a, impl := build(t, "limit", map[string]any{"count": 2}, "in x i16 2", "out y i16 2")
	in, out := []int16{7, 8}, make([]int16, 2)
	for k := int64(0); k < 2; k++ {
		if err := fire(a, impl, k, [][]byte{bytesOf(in)}, [][]byte{bytesOf(out)}); err != nil || out[1] != 8 {
			t.Fatalf("firing %d: %v %v", k, out, err)
		}
	}
	if err := fire(a, impl, 2, [][]byte{bytesOf(in)}, [][]byte{bytesOf(out)}); !errors.Is(err, runtime.ErrEndOfStream) {
		t.Fatalf("firing 2: %v, want end of stream", err)
	}
}

// TestConcurrentStateless fires stateless built-ins from several goroutines
// at once (as replicas would); go test -race checks they share nothing
// mutable.
func TestConcurrentStateless(t *testing.T) {
	cases := []struct {
		use    string
		params map[string]any
		ports  []string
	}{
		{"fft", nil, []string{"in x c64 256", "out y c64 256"}},
		{"ifft", nil, []string{"in x c64 256", "out y f32 256"}},
		{"scale", map[string]any{"gain": 3}, []string{"in x f32 256", "out y f32 256"}},
		{"saxpy", map[string]any{"a": 3}, []string{"in x f32 256", "in y f32 256", "out z f32 256"}},
		{"threshold", nil, []string{"in x f32 256", "out y f32 256"}},
		{"gen.random", nil, []string{"out y f32 256"}},
		{"decimate", map[string]any{"factor": 2}, []string{"in x f32 256", "out y f32 128"}},
	}
	for _, tc := range cases {
		a, impl := build(t, tc.use, tc.params, tc.ports...)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < 50; k++ {
					var ins, outs [][]byte
					for _, p := range a.Inputs {
						b := make([]byte, p.Type.Size*p.Rate.At(0))
						for i := range b {
							b[i] = byte(i * g)
						}
						ins = append(ins, b)
					}
					for _, p := range a.Outputs {
						outs = append(outs, make([]byte, p.Type.Size*p.Rate.At(0)))
					}
					if err := fire(a, impl, int64(k), ins, outs); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
}
