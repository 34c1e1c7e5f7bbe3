package actors

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// tokenInfo describes a numeric token type: its element (scalar component)
// type, the element's size, and how many elements one token holds. A complex
// token counts as two elements of its real type (c64 = 2×f32), so that
// element-wise kernels can view any window as a flat slice of elements.
type tokenInfo struct {
	elem    string // u8 i8 u16 i16 u32 i32 u64 i64 f32 f64
	size    int    // bytes per element
	width   int    // elements per token
	complex bool   // the token is (or is a vector of) complex numbers
}

// elemSize is the bytes of an element type (graph.ScalarSize).
func elemSize(elem string) int {
	s, _ := graph.ScalarSize(elem)
	return s
}

// parseToken returns the numeric layout of a token type; ok is false for
// opaque bytesN tokens and unknown names.
func parseToken(t graph.TokenType) (tokenInfo, bool) {
	name := t.Name
	n := 1
	if strings.HasPrefix(name, "[") {
		i := strings.Index(name, "]")
		if i < 0 {
			return tokenInfo{}, false
		}
		v, err := strconv.Atoi(name[1:i])
		if err != nil || v <= 0 {
			return tokenInfo{}, false
		}
		n, name = v, name[i+1:]
	}
	switch name {
	case "c64":
		return tokenInfo{elem: "f32", size: 4, width: 2 * n, complex: true}, true
	case "c128":
		return tokenInfo{elem: "f64", size: 8, width: 2 * n, complex: true}, true
	}
	s, ok := graph.ScalarSize(name) // c64 and c128 are handled above
	if !ok {
		return tokenInfo{}, false
	}
	return tokenInfo{elem: name, size: s, width: n}, true
}

func (ti tokenInfo) isFloat() bool { return ti.elem == "f32" || ti.elem == "f64" }

// checkPorts checks the number of input and output ports.
func checkPorts(a *graph.Actor, minIn, maxIn, nOut int) error {
	nin, nout := len(a.Inputs), len(a.Outputs)
	if nin < minIn || nin > maxIn {
		want := fmt.Sprintf("%d input port%s", minIn, plural(minIn))
		if maxIn != minIn {
			want = fmt.Sprintf("%d or %d input ports", minIn, maxIn)
		}
		return fmt.Errorf("expected %s, found %d%s", want, nin, portNames(a.Inputs))
	}
	if nout != nOut {
		return fmt.Errorf("expected %d output port%s, found %d%s", nOut, plural(nOut), nout, portNames(a.Outputs))
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func portNames(ps []*graph.Port) string {
	if len(ps) == 0 {
		return ""
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// sdfRate returns the port's fixed rate, or an error if it is cyclo-static,
// dynamic or zero.
func sdfRate(p *graph.Port) (int, error) {
	r := p.Rate
	if r.IsDynamic() || r.IsCSDF() || r.IsZero() || r.At(0) <= 0 {
		return 0, fmt.Errorf("port %s: rate %s: expected a fixed (SDF) rate of at least 1 token", p.FullName(), r)
	}
	return r.At(0), nil
}

// staticRate checks that a port's rate is SDF or CSDF (not dynamic, not unset).
func staticRate(p *graph.Port) error {
	if p.Rate.IsDynamic() || p.Rate.IsZero() {
		return fmt.Errorf("port %s: rate %s: expected a fixed or cyclo-static rate", p.FullName(), rateName(p.Rate))
	}
	return nil
}

func rateName(r graph.Rate) string {
	if r.IsZero() {
		return "unset"
	}
	return r.String()
}

// sameRate checks that two ports move as many tokens per firing.
func sameRate(in, out *graph.Port) error {
	if err := staticRate(in); err != nil {
		return err
	}
	if err := staticRate(out); err != nil {
		return err
	}
	if !in.Rate.Equal(out.Rate) {
		return fmt.Errorf("port %s has rate %s but port %s has rate %s: expected equal rates", in.FullName(), in.Rate, out.FullName(), out.Rate)
	}
	return nil
}

// sameType checks that every port has the token type of the first.
func sameType(ps ...*graph.Port) error {
	for _, p := range ps[1:] {
		if p.Type != ps[0].Type {
			return fmt.Errorf("port %s has token type %s but port %s has %s: expected the same token type", p.FullName(), p.Type, ps[0].FullName(), ps[0].Type)
		}
	}
	return nil
}

// wantTypes checks a port's token type against a list of accepted ones; an
// entry "[N]f32" accepts any vector of f32, "c64" the complex type.
func wantTypes(p *graph.Port, accepted ...string) error {
	ti, ok := parseToken(p.Type)
	for _, a := range accepted {
		switch {
		case a == p.Type.Name:
			return nil
		case ok && a == "[N]"+ti.elem && !ti.complex:
			return nil
		}
	}
	return fmt.Errorf("port %s: token type %s is not supported: expected %s", p.FullName(), p.Type, strings.Join(accepted, ", "))
}

// realOrComplexFloat accepts f32, f64, their vectors and c64/c128: the types
// element-wise float kernels handle.
var floatTypes = []string{"f32", "f64", "[N]f32", "[N]f64", "c64", "c128"}

// realTypes are the real numeric scalars (and their vectors).
var realTypes = []string{"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64",
	"[N]u8", "[N]i8", "[N]u16", "[N]i16", "[N]u32", "[N]i32", "[N]u64", "[N]i64", "[N]f32", "[N]f64"}

// countParam reads the optional "count" parameter: the number of firings
// before end of stream, 0 meaning no limit.
func countParam(p runtime.Params, def int) (int64, error) {
	n, err := p.Int("count", def)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("parameter \"count\": expected a number of firings ≥ 0 (0: no limit), found %d", n)
	}
	return int64(n), nil
}

// paramReader reads parameters in turn and keeps the first error: a
// factory reads them all and checks err once. After an error it reads no
// more, so the error is the one the first bad parameter gives.
type paramReader struct {
	p   runtime.Params
	err error
}

// float reads a float parameter (see runtime.Params.Float).
func (r *paramReader) float(name string, def float64) float64 {
	if r.err != nil {
		return 0
	}
	v, err := r.p.Float(name, def)
	r.err = err
	return v
}

// count reads the "count" parameter (see countParam).
func (r *paramReader) count(def int) int64 {
	if r.err != nil {
		return 0
	}
	n, err := countParam(r.p, def)
	r.err = err
	return n
}

// errReplicated is returned by the firing of a built-in that keeps state
// across firings when the runtime runs it with several replicas.
var errReplicated = errors.New("this built-in keeps state across firings and cannot be replicated: mark the actor stateful: true")

// solo returns an error when the firing runs on one of several replicas:
// for built-ins with side effects (files), which no team may share.
func solo(f *runtime.Firing) error {
	if f.Replicas() > 1 {
		return fmt.Errorf("%w (found %d replicas)", errReplicated, f.Replicas())
	}
	return nil
}

// soloState is solo for built-ins whose only state is in memory: a team with
// replicated state (team: replicate) gives each replica its own instance and
// every firing, so it may run them.
func soloState(f *runtime.Firing) error {
	if f.Team() == graph.TeamReplicate {
		return nil
	}
	return solo(f)
}

// number is the set of real numeric element types.
type number interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64
}

// numKernels holds the per-element-type instances of the generic kernels
// that accept every real numeric type, so a factory picks them by the
// token's element name instead of switching over the types itself.
type numKernels struct {
	ramp      func(count int64, rate graph.Rate, start, step float64, width int, cplx bool) runtime.FireFunc
	random    func(count int64, seed uint64, lo, hi float64, integer bool) runtime.FireFunc
	threshold func(level, below, above float64) runtime.FireFunc
}

func kernelsOf[T number]() numKernels {
	return numKernels{ramp: rampFire[T], random: randomFire[T], threshold: thresholdFire[T]}
}

var kernelsByElem = map[string]numKernels{
	"f32": kernelsOf[float32](), "f64": kernelsOf[float64](),
	"u8": kernelsOf[uint8](), "i8": kernelsOf[int8](),
	"u16": kernelsOf[uint16](), "i16": kernelsOf[int16](),
	"u32": kernelsOf[uint32](), "i32": kernelsOf[int32](),
	"u64": kernelsOf[uint64](), "i64": kernelsOf[int64](),
}

// kernelsFor returns the kernels for an element type name (i64 for any
// other name, as the factories' type checks leave only i64).
func kernelsFor(elem string) numKernels {
	if k, ok := kernelsByElem[elem]; ok {
		return k
	}
	return kernelsByElem["i64"]
}

// float is the set of floating-point element types.
type float interface{ ~float32 | ~float64 }

// fromFloat converts v to T, saturating for integer types (NaN → 0).
func fromFloat[T number](v float64) T {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return T(v)
	}
	lo, hi := rangeOf[T]()
	switch {
	case v != v:
		return 0
	case v <= lo:
		return T(lo)
	case v >= hi:
		return maxOf[T]()
	}
	return T(v)
}

// rangeOf returns the range of an integer type as float64s.
func rangeOf[T number]() (float64, float64) {
	var z T
	switch any(z).(type) {
	case uint8:
		return 0, math.MaxUint8
	case int8:
		return math.MinInt8, math.MaxInt8
	case uint16:
		return 0, math.MaxUint16
	case int16:
		return math.MinInt16, math.MaxInt16
	case uint32:
		return 0, math.MaxUint32
	case int32:
		return math.MinInt32, math.MaxInt32
	case uint64:
		return 0, math.MaxUint64
	case int64:
		return math.MinInt64, math.MaxInt64
	}
	return math.Inf(-1), math.Inf(1)
}

func maxOf[T number]() T {
	var z T
	switch any(z).(type) {
	case uint64:
		m := uint64(math.MaxUint64)
		return T(m)
	case int64:
		m := int64(math.MaxInt64)
		return T(m)
	}
	_, hi := rangeOf[T]()
	return T(hi)
}

// complexAsFloats views complex64s as their interleaved (re, im) float32s.
func complexAsFloats(x []complex64) []float32 {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&x[0])), 2*len(x))
}

// bytesAsFloats views a window's bytes as float32s.
func bytesAsFloats(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}
