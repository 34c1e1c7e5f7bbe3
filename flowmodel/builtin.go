package flowmodel

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluicehq/sluice/internal/registry"
)

// BuiltinFunc is a Go built-in kernel: one firing reads the input streams'
// bytes and writes the output streams' bytes (both in declaration order),
// with the constant parameters by name.
type BuiltinFunc func(params map[string]float64, in, out [][]byte) error

// builtins holds the Go kernels (internal/registry's rule: a name is
// registered once; a second registration panics naming both places).
var builtins = registry.New[BuiltinFunc]("flow-model Go built-in", 1)

// RegisterBuiltin makes fn available to flow-models as kernel builtin:
// name. It panics when the name is taken, naming both registrations.
func RegisterBuiltin(name string, fn BuiltinFunc) { builtins.Register(name, fn) }

// builtin returns the Go kernel registered under name.
func builtin(name string) (BuiltinFunc, bool) { return builtins.Lookup(name) }

// builtinNames lists the registered Go kernels, sorted.
func builtinNames() []string { return builtins.Names() }

func init() {
	RegisterBuiltin("saxpy_f32", saxpy)
	RegisterBuiltin("matmul_f32", matmul)
}

// f32s views little-endian bytes as float32 values.
func getF32(b []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
}
func putF32(b []byte, i int, v float32) {
	binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
}

// saxpy: y = a*x + y0 over f32 streams (in: x, y0; out: y; param a).
func saxpy(p map[string]float64, in, out [][]byte) error {
	if len(in) != 2 || len(out) != 1 {
		return fmt.Errorf("saxpy_f32: expected inputs x, y0 and output y, found %d inputs and %d outputs", len(in), len(out))
	}
	a := float32(p["a"])
	for i := 0; i < len(out[0])/4; i++ {
		putF32(out[0], i, a*getF32(in[0], i)+getF32(in[1], i))
	}
	return nil
}

// matmul: C = A×B for row-major f32 matrices (in: a (n×k), b (k×m); out:
// c (n×m); params n, k, m). Each call adds into nothing: c is overwritten.
func matmul(p map[string]float64, in, out [][]byte) error {
	n, k, m := int(p["n"]), int(p["k"]), int(p["m"])
	if len(in) != 2 || len(out) != 1 || len(in[0]) < 4*n*k || len(in[1]) < 4*k*m || len(out[0]) < 4*n*m {
		return fmt.Errorf("matmul_f32: expected a (%dx%d), b (%dx%d) and c (%dx%d) f32 streams", n, k, k, m, n, m)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			var s float32
			for l := 0; l < k; l++ {
				s += getF32(in[0], i*k+l) * getF32(in[1], l*m+j)
			}
			putF32(out[0], i*m+j, s)
		}
	}
	return nil
}
