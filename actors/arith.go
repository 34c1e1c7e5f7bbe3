package actors

import (
	"fmt"
	"math"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Element-wise kernels (scale, add, multiply, saxpy, threshold, magnitude,
// limit) keep no state: their FireFuncs only read the windows and constants
// fixed by the factory, so concurrent calls (replicas) are safe. Windows are
// viewed as flat slices of elements, so a vector token [4]f32 is 4 elements
// and a complex token c64 is 2 (re, im): a real gain or offset applies to
// every element.

// elementwise checks ports for an element-wise float kernel with 1 or
// maxIn inputs and one output of the same type and rate.
func elementwise(a *graph.Actor, maxIn int, types []string) (tokenInfo, error) {
	if err := checkPorts(a, 1, maxIn, 1); err != nil {
		return tokenInfo{}, err
	}
	if err := wantTypes(a.Inputs[0], types...); err != nil {
		return tokenInfo{}, err
	}
	ps := append(append([]*graph.Port(nil), a.Inputs...), a.Outputs...)
	if err := sameType(ps...); err != nil {
		return tokenInfo{}, err
	}
	for _, in := range a.Inputs {
		if err := sameRate(in, a.Outputs[0]); err != nil {
			return tokenInfo{}, err
		}
	}
	ti, _ := parseToken(a.Inputs[0].Type)
	return ti, nil
}

// newScale: scale.
func newScale(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("gain"); err != nil {
		return nil, err
	}
	ti, err := elementwise(a, 1, floatTypes)
	if err != nil {
		return nil, err
	}
	g, err := p.Float("gain", 1)
	if err != nil {
		return nil, err
	}
	return scaleFor(ti, g), nil
}

// scaleFor returns the scale kernel for the element type of ti.
func scaleFor(ti tokenInfo, g float64) runtime.FireFunc {
	if ti.elem == "f32" {
		return scaleFire[float32](float32(g))
	}
	return scaleFire[float64](g)
}

func scaleFire[T float](g T) runtime.FireFunc {
	return func(f *runtime.Firing) error {
		scaleK(runtime.Output[T](f, 0), runtime.Input[T](f, 0), g)
		return nil
	}
}

// scaleK sets y = g·x.
func scaleK[T float](y, x []T, g T) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = g * v
	}
}

// newAdd: add.
func newAdd(a *graph.Actor, p runtime.Params) (any, error) {
	ti, v, err := valueKernel(a, p)
	if err != nil {
		return nil, err
	}
	two := len(a.Inputs) == 2
	if ti.elem == "f32" {
		return addFire[float32](two, float32(v), ti.complex), nil
	}
	return addFire[float64](two, v, ti.complex), nil
}

// valueKernel checks the ports and the "value" parameter of add and
// multiply, which take a second input or that constant.
func valueKernel(a *graph.Actor, p runtime.Params) (tokenInfo, float64, error) {
	if err := p.Only("value"); err != nil {
		return tokenInfo{}, 0, err
	}
	ti, err := elementwise(a, 2, floatTypes)
	if err != nil {
		return tokenInfo{}, 0, err
	}
	v, err := constOrSecond(a, p, "value")
	return ti, v, err
}

// constOrSecond returns the constant parameter of a kernel that takes either
// a second input or that constant, and checks that exactly one is given.
func constOrSecond(a *graph.Actor, p runtime.Params, name string) (float64, error) {
	if len(a.Inputs) == 2 {
		if p.Has(name) {
			return 0, fmt.Errorf("parameter %q and a second input port (%s) are both given: expected one of them", name, a.Inputs[1].Name)
		}
		return 0, nil
	}
	if !p.Has(name) {
		return 0, fmt.Errorf("one input port (%s) and no parameter %q: expected a second input port or the parameter", a.Inputs[0].Name, name)
	}
	return p.Float(name, 0)
}

func addFire[T float](two bool, v T, cplx bool) runtime.FireFunc {
	if two {
		return func(f *runtime.Firing) error {
			addK(runtime.Output[T](f, 0), runtime.Input[T](f, 0), runtime.Input[T](f, 1))
			return nil
		}
	}
	if cplx { // a real constant adds to the real parts only
		return func(f *runtime.Firing) error {
			x, y := runtime.Input[T](f, 0), runtime.Output[T](f, 0)
			y = y[:len(x)]
			for i := 0; i+1 < len(x); i += 2 {
				y[i], y[i+1] = x[i]+v, x[i+1]
			}
			return nil
		}
	}
	return func(f *runtime.Firing) error {
		addConstK(runtime.Output[T](f, 0), runtime.Input[T](f, 0), v)
		return nil
	}
}

// addK sets z = x + y.
func addK[T float](z, x, y []T) {
	y, z = y[:len(x)], z[:len(x)]
	for i, v := range x {
		z[i] = v + y[i]
	}
}

// addConstK sets y = x + c.
func addConstK[T float](y, x []T, c T) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = v + c
	}
}

// newMultiply: multiply.
func newMultiply(a *graph.Actor, p runtime.Params) (any, error) {
	ti, v, err := valueKernel(a, p)
	if err != nil {
		return nil, err
	}
	if len(a.Inputs) == 1 { // a real constant scales every element
		return scaleFor(ti, v), nil
	}
	switch {
	case ti.complex && ti.elem == "f32":
		return mulFire[complex64](), nil
	case ti.complex:
		return mulFire[complex128](), nil
	case ti.elem == "f32":
		return mulFire[float32](), nil
	}
	return mulFire[float64](), nil
}

func mulFire[T float32 | float64 | complex64 | complex128]() runtime.FireFunc {
	return func(f *runtime.Firing) error {
		x, y, z := runtime.Input[T](f, 0), runtime.Input[T](f, 1), runtime.Output[T](f, 0)
		y, z = y[:len(x)], z[:len(x)]
		for i, v := range x {
			z[i] = v * y[i]
		}
		return nil
	}
}

// newSaxpy: saxpy.
func newSaxpy(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("a", "y"); err != nil {
		return nil, err
	}
	ti, err := elementwise(a, 2, floatTypes)
	if err != nil {
		return nil, err
	}
	k, err := p.Float("a", 1)
	if err != nil {
		return nil, err
	}
	var c float64
	if len(a.Inputs) == 1 {
		if c, err = p.Float("y", 0); err != nil {
			return nil, err
		}
	} else if p.Has("y") {
		return nil, fmt.Errorf("parameter \"y\" and a second input port (%s) are both given: expected one of them", a.Inputs[1].Name)
	}
	two := len(a.Inputs) == 2
	if ti.elem == "f32" {
		return saxpyFire[float32](two, float32(k), float32(c), ti.complex), nil
	}
	return saxpyFire[float64](two, k, c, ti.complex), nil
}

func saxpyFire[T float](two bool, k, c T, cplx bool) runtime.FireFunc {
	if two {
		return func(f *runtime.Firing) error {
			saxpyK(runtime.Output[T](f, 0), runtime.Input[T](f, 0), runtime.Input[T](f, 1), k)
			return nil
		}
	}
	if cplx && c != 0 {
		return func(f *runtime.Firing) error {
			x, z := runtime.Input[T](f, 0), runtime.Output[T](f, 0)
			z = z[:len(x)]
			for i := 0; i+1 < len(x); i += 2 {
				z[i], z[i+1] = k*x[i]+c, k*x[i+1]
			}
			return nil
		}
	}
	return func(f *runtime.Firing) error {
		saxpyConstK(runtime.Output[T](f, 0), runtime.Input[T](f, 0), k, c)
		return nil
	}
}

// saxpyK sets z = a·x + y, four elements per iteration.
func saxpyK[T float](z, x, y []T, a T) {
	n := len(x)
	y, z = y[:n], z[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		x4, y4, z4 := x[i:i+4:i+4], y[i:i+4:i+4], z[i:i+4:i+4]
		z4[0] = a*x4[0] + y4[0]
		z4[1] = a*x4[1] + y4[1]
		z4[2] = a*x4[2] + y4[2]
		z4[3] = a*x4[3] + y4[3]
	}
	for ; i < n; i++ {
		z[i] = a*x[i] + y[i]
	}
}

// saxpyConstK sets z = a·x + c.
func saxpyConstK[T float](z, x []T, a, c T) {
	z = z[:len(x)]
	for i, v := range x {
		z[i] = a*v + c
	}
}

// newThreshold: threshold.
func newThreshold(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("level", "below", "above"); err != nil {
		return nil, err
	}
	ti, err := elementwise(a, 1, realTypes)
	if err != nil {
		return nil, err
	}
	defAbove := 1.0
	if ti.elem == "u8" {
		defAbove = 255
	}
	r := paramReader{p: p}
	level, below, above := r.float("level", 0), r.float("below", 0), r.float("above", defAbove)
	if r.err != nil {
		return nil, r.err
	}
	return kernelsFor(ti.elem).threshold(level, below, above), nil
}

// thresholdFire: elements ≥ level become above, the others below. For an
// integer type a fractional level rounds up (x ≥ 127.5 ⇔ x ≥ 128).
func thresholdFire[T number](level, below, above float64) runtime.FireFunc {
	lo, hi := fromFloat[T](below), fromFloat[T](above)
	var z T
	_, isFloat := any(z).(float32)
	_, isF64 := any(z).(float64)
	isFloat = isFloat || isF64
	if !isFloat {
		level = math.Ceil(level)
	}
	tmin, tmax := rangeOf[T]()
	switch {
	case !isFloat && level <= tmin: // every element is at or above the level
		return func(f *runtime.Firing) error {
			fillK(runtime.Output[T](f, 0)[:len(runtime.Input[T](f, 0))], hi)
			return nil
		}
	case !isFloat && level > tmax: // every element is below
		return func(f *runtime.Firing) error {
			fillK(runtime.Output[T](f, 0)[:len(runtime.Input[T](f, 0))], lo)
			return nil
		}
	}
	lv := T(level)
	if _, ok := any(z).(uint8); ok { // a 256-entry table: no branches
		var lut [256]T
		for i := range lut {
			if T(i) >= lv {
				lut[i] = hi
			} else {
				lut[i] = lo
			}
		}
		return func(f *runtime.Firing) error {
			x, y := runtime.Input[uint8](f, 0), runtime.Output[T](f, 0)
			y = y[:len(x)]
			for i, v := range x {
				y[i] = lut[v]
			}
			return nil
		}
	}
	return func(f *runtime.Firing) error {
		x, y := runtime.Input[T](f, 0), runtime.Output[T](f, 0)
		y = y[:len(x)]
		for i, v := range x {
			if v >= lv {
				y[i] = hi
			} else {
				y[i] = lo
			}
		}
		return nil
	}
}

func fillK[T any](y []T, v T) {
	for i := range y {
		y[i] = v
	}
}

// newMagnitude: magnitude.
func newMagnitude(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("db"); err != nil {
		return nil, err
	}
	if err := checkPorts(a, 1, 1, 1); err != nil {
		return nil, err
	}
	in, out := a.Inputs[0], a.Outputs[0]
	if err := wantTypes(in, "c64"); err != nil {
		return nil, err
	}
	if err := wantTypes(out, "f32"); err != nil {
		return nil, err
	}
	if err := sameRate(in, out); err != nil {
		return nil, err
	}
	db, err := p.Bool("db", false)
	if err != nil {
		return nil, err
	}
	return func(f *runtime.Firing) error {
		x, y := runtime.Input[complex64](f, 0), runtime.Output[float32](f, 0)
		y = y[:len(x)]
		if db {
			for i, v := range x {
				re, im := float64(real(v)), float64(imag(v))
				// 10·log10(power), floored at -300 dB for an exact zero.
				y[i] = float32(10 * math.Log10(re*re+im*im+1e-30))
			}
			return nil
		}
		for i, v := range x {
			re, im := real(v), imag(v)
			y[i] = float32(math.Sqrt(float64(re*re + im*im)))
		}
		return nil
	}, nil
}

// newLimit: limit.
func newLimit(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("count"); err != nil {
		return nil, err
	}
	if err := checkPorts(a, 1, 1, 1); err != nil {
		return nil, err
	}
	in, out := a.Inputs[0], a.Outputs[0]
	if err := sameType(in, out); err != nil {
		return nil, err
	}
	if err := sameRate(in, out); err != nil {
		return nil, err
	}
	if !p.Has("count") {
		return nil, fmt.Errorf("parameter \"count\" is missing: expected the number of firings to pass")
	}
	count, err := countParam(p, 0)
	if err != nil {
		return nil, err
	}
	return func(f *runtime.Firing) error {
		if count > 0 && f.Index() >= count {
			return runtime.ErrEndOfStream
		}
		copy(f.Out(0), f.In(0))
		return nil
	}, nil
}
