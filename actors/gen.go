package actors

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Generators (gen.const, gen.ramp, gen.random, gen.sine) have no input and
// one output of any real numeric type, vector or complex type. Each computes
// its tokens from the firing index alone, so none keeps state: they are safe
// to replicate, and gen.random is reproducible whatever the scheduling.

// genOutput checks a generator's ports and returns its output layout.
func genOutput(a *graph.Actor, complexOK bool) (tokenInfo, error) {
	if err := checkPorts(a, 0, 0, 1); err != nil {
		return tokenInfo{}, err
	}
	p := a.Outputs[0]
	if err := staticRate(p); err != nil {
		return tokenInfo{}, err
	}
	accepted := realTypes
	if complexOK {
		accepted = append(append([]string(nil), realTypes...), "c64", "c128")
	}
	if err := wantTypes(p, accepted...); err != nil {
		return tokenInfo{}, err
	}
	ti, _ := parseToken(p.Type)
	return ti, nil
}

// genFire wraps a fill function with the count limit.
func genFire(count int64, fill func(f *runtime.Firing)) runtime.FireFunc {
	return func(f *runtime.Firing) error {
		if count > 0 && f.Index() >= count {
			return runtime.ErrEndOfStream
		}
		fill(f)
		return nil
	}
}

// newConst: gen.const.
func newConst(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("value", "count"); err != nil {
		return nil, err
	}
	ti, err := genOutput(a, true)
	if err != nil {
		return nil, err
	}
	r := paramReader{p: p}
	v, count := r.float("value", 0), r.count(0)
	if r.err != nil {
		return nil, r.err
	}
	// One token's bytes, repeated over the window.
	tok := make([]byte, ti.size*ti.width)
	for i := 0; i < ti.width; i++ {
		if ti.complex && i%2 == 1 {
			continue // imaginary part 0
		}
		putElem(tok[i*ti.size:], ti.elem, v)
	}
	return genFire(count, func(f *runtime.Firing) {
		fillPattern(f.Out(0), tok)
	}), nil
}

// fillPattern fills b with copies of pat (len(b) is a multiple of len(pat)).
func fillPattern(b, pat []byte) {
	if len(b) == 0 {
		return
	}
	n := copy(b, pat)
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}

// newRamp: gen.ramp.
func newRamp(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("start", "step", "count"); err != nil {
		return nil, err
	}
	ti, err := genOutput(a, true)
	if err != nil {
		return nil, err
	}
	r := paramReader{p: p}
	start, step, count := r.float("start", 0), r.float("step", 1), r.count(0)
	if r.err != nil {
		return nil, r.err
	}
	rate := a.Outputs[0].Rate
	return kernelsFor(ti.elem).ramp(count, rate, start, step, ti.width, ti.complex), nil
}

// rampFire: token n (counted over the whole stream) is start + n·step, on
// every component of a vector token, on the real part of a complex one.
// Integer types saturate.
func rampFire[T number](count int64, rate graph.Rate, start, step float64, width int, cplx bool) runtime.FireFunc {
	return genFire(count, func(f *runtime.Firing) {
		out := runtime.Output[T](f, 0)
		n0 := rate.TokensBefore(f.Index())
		if width == 1 {
			for i := range out {
				out[i] = fromFloat[T](start + step*float64(n0+int64(i)))
			}
			return
		}
		for t := 0; t*width < len(out); t++ {
			v := fromFloat[T](start + step*float64(n0+int64(t)))
			tok := out[t*width : (t+1)*width]
			for i := range tok {
				if cplx && i%2 == 1 {
					tok[i] = 0
				} else {
					tok[i] = v
				}
			}
		}
	})
}

// splitmix64 is a bijective mixer, used to derive a per-firing PCG stream.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// newRandom: gen.random.
func newRandom(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("seed", "min", "max", "count"); err != nil {
		return nil, err
	}
	ti, err := genOutput(a, true)
	if err != nil {
		return nil, err
	}
	seed, err := p.Int("seed", 1)
	if err != nil {
		return nil, err
	}
	defMax := 1.0
	if !ti.isFloat() {
		defMax = intMax(ti.elem)
	}
	r := paramReader{p: p}
	lo, hi := r.float("min", 0), r.float("max", defMax)
	if r.err != nil {
		return nil, r.err
	}
	if !(hi > lo) {
		return nil, fmt.Errorf("parameters min %g and max %g: expected min < max", lo, hi)
	}
	count, err := countParam(p, 0)
	if err != nil {
		return nil, err
	}
	return kernelsFor(ti.elem).random(count, uint64(seed), lo, hi, !ti.isFloat()), nil
}

func intMax(elem string) float64 {
	switch elem {
	case "u8":
		return math.MaxUint8
	case "i8":
		return math.MaxInt8
	case "u16":
		return math.MaxUint16
	case "i16":
		return math.MaxInt16
	case "u32":
		return math.MaxUint32
	case "i32":
		return math.MaxInt32
	}
	return math.MaxInt32 // 64-bit integers: a range float64 can count exactly
}

// randomFire fills each element with a uniform value in [lo, hi) (floats)
// or an integer in [lo, hi] (integer types). Firing k draws from a PCG
// seeded with (seed, splitmix64(seed ^ splitmix64(k))), so the stream
// depends only on seed and the port's rate.
func randomFire[T number](count int64, seed uint64, lo, hi float64, integer bool) runtime.FireFunc {
	span := hi - lo
	if integer {
		lo, span = math.Ceil(lo), math.Floor(hi)-math.Ceil(lo)+1
	}
	top := T(hi)
	below := T(math.Nextafter(hi, math.Inf(-1))) // the largest T under max
	if below >= top {                            // T is float32
		below = T(math.Nextafter32(float32(hi), float32(math.Inf(-1))))
	}
	return genFire(count, func(f *runtime.Firing) {
		out := runtime.Output[T](f, 0)
		var g rand.PCG
		g.Seed(seed, splitmix64(seed^splitmix64(uint64(f.Index()))))
		if integer {
			for i := range out {
				out[i] = fromFloat[T](lo + math.Floor(unit(g.Uint64())*span))
			}
			return
		}
		for i := range out {
			v := T(lo + unit(g.Uint64())*span)
			if v >= top { // rounding reached max: keep [min, max)
				v = below
			}
			out[i] = v
		}
	})
}

// unit maps 64 random bits to a float64 in [0, 1).
func unit(x uint64) float64 { return float64(x>>11) * 0x1p-53 }

// newSine: gen.sine.
func newSine(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("freq", "amplitude", "phase", "offset", "count"); err != nil {
		return nil, err
	}
	ti, err := genOutput(a, true)
	if err != nil {
		return nil, err
	}
	if !ti.isFloat() || ti.width != 1 && !(ti.complex && ti.width == 2) {
		return nil, fmt.Errorf("port %s: token type %s is not supported: expected f32, f64, c64 or c128", a.Outputs[0].FullName(), a.Outputs[0].Type)
	}
	r := paramReader{p: p}
	freq, amp := r.float("freq", 0.01), r.float("amplitude", 1)
	phase, offset := r.float("phase", 0), r.float("offset", 0)
	count := r.count(0)
	if r.err != nil {
		return nil, r.err
	}
	rate := a.Outputs[0].Rate
	if ti.elem == "f32" {
		return sineFire[float32](count, rate, freq, amp, phase, offset, ti.complex), nil
	}
	return sineFire[float64](count, rate, freq, amp, phase, offset, ti.complex), nil
}

// sineFire: sample n is offset + amplitude·sin(2π·freq·n + phase), or for
// complex tokens offset + amplitude·e^{i(2π·freq·n + phase)}. The phase is
// reduced modulo one cycle in float64, so long runs keep their precision.
func sineFire[T float](count int64, rate graph.Rate, freq, amp, phase, offset float64, cplx bool) runtime.FireFunc {
	return genFire(count, func(f *runtime.Firing) {
		out := runtime.Output[T](f, 0)
		n0 := rate.TokensBefore(f.Index())
		_, base := math.Modf(freq * float64(n0)) // cycles before this firing, mod 1
		if !cplx {
			for i := range out {
				out[i] = T(offset + amp*math.Sin(2*math.Pi*(base+freq*float64(i))+phase))
			}
			return
		}
		for i := 0; 2*i+1 < len(out); i++ {
			s, c := math.Sincos(2*math.Pi*(base+freq*float64(i)) + phase)
			out[2*i] = T(offset + amp*c)
			out[2*i+1] = T(amp * s)
		}
	})
}
