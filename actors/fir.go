package actors

import (
	"fmt"
	"math"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Lowpass returns the taps of a linear-phase low-pass FIR filter: a
// Hamming-windowed sinc with n taps (n ≥ 1) and cutoff frequency in cycles
// per sample (0 < cutoff < 0.5), normalised to unit gain at DC. The fir and
// decimate built-ins use it when given "cutoff" instead of "taps".
func Lowpass(n int, cutoff float64) []float64 {
	h := make([]float64, n)
	sum := 0.0
	m := float64(n-1) / 2
	for i := range h {
		t := float64(i) - m
		v := 2 * cutoff
		if t != 0 {
			v = math.Sin(2*math.Pi*cutoff*t) / (math.Pi * t)
		}
		if n > 1 {
			v *= 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/float64(n-1))
		}
		h[i] = v
		sum += v
	}
	for i := range h {
		h[i] /= sum
	}
	return h
}

// tapsParam reads "taps" (a list) or "cutoff" with "ntaps" (a designed
// low-pass). required says whether one of them must be given; nil taps
// means none was.
func tapsParam(p runtime.Params, required bool) ([]float64, error) {
	if p.Has("taps") && p.Has("cutoff") {
		return nil, fmt.Errorf("parameters \"taps\" and \"cutoff\" are both given: expected one of them")
	}
	if p.Has("cutoff") {
		c, err := p.Float("cutoff", 0)
		if err != nil {
			return nil, err
		}
		if !(c > 0 && c < 0.5) {
			return nil, fmt.Errorf("parameter \"cutoff\": expected a frequency in cycles per sample, 0 < cutoff < 0.5, found %g", c)
		}
		n, err := p.Int("ntaps", 31)
		if err != nil {
			return nil, err
		}
		if n < 1 || n > 1<<16 {
			return nil, fmt.Errorf("parameter \"ntaps\": expected 1 to 65536 taps, found %d", n)
		}
		return Lowpass(n, c), nil
	}
	if p.Has("ntaps") {
		return nil, fmt.Errorf("parameter \"ntaps\" without \"cutoff\": expected both, or \"taps\"")
	}
	if !p.Has("taps") {
		if required {
			return nil, fmt.Errorf("parameter \"taps\" is missing: expected a list of filter coefficients, or \"cutoff\" (and \"ntaps\") for a low-pass")
		}
		return nil, nil
	}
	taps, err := p.Floats("taps", nil)
	if err != nil {
		return nil, err
	}
	if len(taps) == 0 {
		return nil, fmt.Errorf("parameter \"taps\": expected at least one coefficient, found an empty list")
	}
	return taps, nil
}

// firState is a FIR filter's history and work buffer: buf holds the last
// len(taps)-1 inputs followed by the current window, so every output is one
// dot product of the reversed taps with a contiguous slice of buf.
type firState[T float] struct {
	hr  []T // taps reversed: hr[j] = h[len(h)-1-j]
	buf []T
	// decimation factor: output m is the filter output at input m·step.
	step int
}

func newFIRState[T float](taps []float64, maxIn, step int) *firState[T] {
	hr := make([]T, len(taps))
	for j := range hr {
		hr[j] = T(taps[len(taps)-1-j])
	}
	return &firState[T]{hr: hr, buf: make([]T, len(taps)-1+maxIn), step: step}
}

// fire filters x into y: y[m] = Σ_k h[k]·x[m·step − k], where x before the
// first firing is zero and earlier firings' inputs are remembered.
func (s *firState[T]) fire(y, x []T) {
	nt := len(s.hr)
	h := nt - 1
	buf := s.buf[:h+len(x)]
	copy(buf[h:], x)
	for m := range y {
		y[m] = dot(s.hr, buf[m*s.step:m*s.step+nt])
	}
	copy(buf, buf[len(x):])
}

// dot returns Σ a[i]·b[i] (len(b) ≥ len(a)), four partial sums at a time.
func dot[T float](a, b []T) T {
	b = b[:len(a)]
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= len(a); i += 4 {
		a4, b4 := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += a4[0] * b4[0]
		s1 += a4[1] * b4[1]
		s2 += a4[2] * b4[2]
		s3 += a4[3] * b4[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// newFIR: fir.
func newFIR(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("taps", "cutoff", "ntaps"); err != nil {
		return nil, err
	}
	if err := checkPorts(a, 1, 1, 1); err != nil {
		return nil, err
	}
	in, out := a.Inputs[0], a.Outputs[0]
	if err := wantTypes(in, "f32", "f64"); err != nil {
		return nil, err
	}
	if err := sameType(in, out); err != nil {
		return nil, err
	}
	if err := sameRate(in, out); err != nil {
		return nil, err
	}
	taps, err := tapsParam(p, true)
	if err != nil {
		return nil, err
	}
	if in.Type.Name == "f32" {
		return firFire(newFIRState[float32](taps, in.Rate.Max(), 1)), nil
	}
	return firFire(newFIRState[float64](taps, in.Rate.Max(), 1)), nil
}

// firFire returns the FIR actor over s: its firings filter, and its
// delay line is its checkpoint (checkpoint.go).
func firFire[T float](s *firState[T]) *firActor[T] { return &firActor[T]{s: s} }

// firActor is a FIR filter (or a decimator with anti-alias taps).
type firActor[T float] struct{ s *firState[T] }

// Fire filters the input window into the output window.
func (a *firActor[T]) Fire(f *runtime.Firing) error {
	s := a.s
	if len(s.hr) > 1 {
		if err := soloState(f); err != nil {
			return err
		}
	}
	x := runtime.Input[T](f, 0)
	y := runtime.Output[T](f, 0)
	s.fire(y[:len(x)/s.step], x)
	return nil
}

// ratio checks out = in·num/den phase by phase (SDF or CSDF with as many
// phases) and returns an error naming both ports otherwise.
func ratio(in, out *graph.Port, inMul, outMul int, what string) error {
	if err := staticRate(in); err != nil {
		return err
	}
	if err := staticRate(out); err != nil {
		return err
	}
	ok := in.Rate.Phases() == out.Rate.Phases()
	for k := 0; ok && k < in.Rate.Phases(); k++ {
		ok = in.Rate.At(k)*inMul == out.Rate.At(k)*outMul && in.Rate.At(k) > 0
	}
	if ok {
		return nil
	}
	return fmt.Errorf("port %s has rate %s and port %s has rate %s: expected %s", in.FullName(), in.Rate, out.FullName(), out.Rate, what)
}

// newDecimate: decimate.
func newDecimate(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("factor", "taps", "cutoff", "ntaps"); err != nil {
		return nil, err
	}
	if err := checkPorts(a, 1, 1, 1); err != nil {
		return nil, err
	}
	in, out := a.Inputs[0], a.Outputs[0]
	if err := sameType(in, out); err != nil {
		return nil, err
	}
	factor, err := factorParam(p)
	if err != nil {
		return nil, err
	}
	if err := ratio(in, out, 1, factor, fmt.Sprintf("input rate = factor (%d) × output rate, e.g. %s rate %d", factor, out.FullName(), in.Rate.Max()/factor)); err != nil {
		return nil, err
	}
	taps, err := tapsParam(p, false)
	if err != nil {
		return nil, err
	}
	if taps != nil {
		if in.Type.Name != "f32" && in.Type.Name != "f64" {
			return nil, fmt.Errorf("port %s: token type %s: anti-alias taps need f32 or f64 tokens (without taps any type is accepted)", in.FullName(), in.Type)
		}
		if in.Type.Name == "f32" {
			return firFire(newFIRState[float32](taps, in.Rate.Max(), factor)), nil
		}
		return firFire(newFIRState[float64](taps, in.Rate.Max(), factor)), nil
	}
	// Plain down-sampling: keep the first token of every factor tokens.
	tsize := in.Type.Size
	switch tsize {
	case 4:
		return decimFire[uint32](factor), nil
	case 8:
		return decimFire[uint64](factor), nil
	}
	return runtime.FireFunc(func(f *runtime.Firing) error {
		x, y := f.In(0), f.Out(0)
		for m := 0; (m+1)*tsize <= len(y); m++ {
			copy(y[m*tsize:(m+1)*tsize], x[m*factor*tsize:])
		}
		return nil
	}), nil
}

func decimFire[T any](factor int) runtime.FireFunc {
	return func(f *runtime.Firing) error {
		x, y := runtime.Input[T](f, 0), runtime.Output[T](f, 0)
		for m := range y {
			y[m] = x[m*factor]
		}
		return nil
	}
}

func factorParam(p runtime.Params) (int, error) {
	if !p.Has("factor") {
		return 0, fmt.Errorf("parameter \"factor\" is missing: expected an integer ≥ 1")
	}
	n, err := p.Int("factor", 1)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return 0, fmt.Errorf("parameter \"factor\": expected an integer ≥ 1, found %d", n)
	}
	return n, nil
}

// newInterpolate: interpolate.
func newInterpolate(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("factor", "mode"); err != nil {
		return nil, err
	}
	if err := checkPorts(a, 1, 1, 1); err != nil {
		return nil, err
	}
	in, out := a.Inputs[0], a.Outputs[0]
	if err := sameType(in, out); err != nil {
		return nil, err
	}
	factor, err := factorParam(p)
	if err != nil {
		return nil, err
	}
	if err := ratio(in, out, factor, 1, fmt.Sprintf("output rate = factor (%d) × input rate, e.g. %s rate %d", factor, out.FullName(), in.Rate.Max()*factor)); err != nil {
		return nil, err
	}
	mode, err := p.String("mode", "zero")
	if err != nil {
		return nil, err
	}
	if mode != "zero" && mode != "hold" {
		return nil, fmt.Errorf("parameter \"mode\": expected zero or hold, found %q", mode)
	}
	hold := mode == "hold"
	ts := in.Type.Size
	return runtime.FireFunc(func(f *runtime.Firing) error {
		x, y := f.In(0), f.Out(0)
		for i := 0; (i+1)*ts <= len(x); i++ {
			tok := x[i*ts : (i+1)*ts]
			o := y[i*factor*ts : (i+1)*factor*ts]
			copy(o, tok)
			if hold {
				fillPattern(o, tok)
			} else {
				clear(o[ts:])
			}
		}
		return nil
	}), nil
}
