// Package actors holds sluice's built-in actors: sources and sinks for raw
// binary files, CSV, PNG/JPEG images and stdin/stdout; generators (constant,
// ramp, seeded random, sine); and common signal-processing kernels (FIR,
// decimate, interpolate, FFT, scale, add, multiply, saxpy, threshold,
// magnitude, limit).
//
// Importing the package (for its side effects) registers every built-in with
// runtime.RegisterBuiltin; spec files then name them with `use: <name>` and
// give their parameters with `with: {...}`:
//
//	import _ "github.com/sluicehq/sluice/actors"
//
// Each factory checks the actor's declared ports (how many, their token
// types, their rate relations) and its parameters, and returns an error that
// names the port or parameter and says what was expected. Input and output
// ports are taken in declaration order (for saxpy, the first input is x).
//
// # State and replicas
//
// Built-ins that keep state across firings (fir, decimate with taps, the
// file, CSV, image-writing and stdin/stdout actors) must be declared
// stateful: true; if the runtime nevertheless runs one with several
// replicas, its firing fails with an error saying so. All the others —
// generators, which derive their output from the firing index, element-wise
// kernels, fft/ifft, interpolate, decimate without taps, image.read, limit —
// keep no mutable state and their firings may run concurrently.
//
// # Performance
//
// Kernels work on whole windows as typed slices (no per-token interface
// calls) and allocate nothing per firing: state is allocated by the factory.
// See docs/actors.md for the table of built-ins and benchmark figures.
package actors

import "github.com/sluicehq/sluice/runtime"

func init() {
	for _, b := range builtins {
		runtime.RegisterBuiltin(b.name, b.doc, b.factory)
	}
}

// builtins lists every built-in with its one-line doc: ports, parameters
// (with defaults) and whether it needs stateful: true.
var builtins = []struct {
	name, doc string
	factory   runtime.Factory
}{
	// Sources and sinks.
	{"file.read", "raw tokens from a file; out: 1 port, any type and rate; params: path, loop=false (restart at end), count=0 (firings, 0: until end of file); last window zero-padded; needs stateful: true", newFileRead},
	{"file.write", "raw tokens to a file; in: 1 port, any type and rate; params: path, append=false; needs stateful: true", newFileWrite},
	{"csv.read", "tokens from CSV text, one line per token, one column per element (c64: re,im); out: 1 numeric port; params: path, header=false (skip first line), count=0; last window zero-padded; needs stateful: true", newCSVRead},
	{"csv.write", "tokens as CSV text, one line per token, one column per element; in: 1 numeric port; params: path, header=\"\" (first line); needs stateful: true", newCSVWrite},
	{"image.read", "PNG or JPEG image, one per firing; out: 1 port u8 (gray), [3]u8 (RGB), [4]u8 (RGBA) or f32 (gray 0..1), rate = width×height; params: path, count=1 (firings, 0: forever); stateless", newImageRead},
	{"image.write", "PNG or JPEG (by extension) image; in: 1 port u8, [3]u8, [4]u8 or f32, rate = width×height; params: path (a %d verb: one file per firing; else the last image), width=√rate, quality=90 (JPEG); needs stateful: true", newImageWrite},
	{"stdin", "tokens from standard input; out: 1 port; params: format=text (CSV lines, numeric types) or binary (raw, any type), header=false, count=0; needs stateful: true", newStdin},
	{"stdout", "tokens to standard output, flushed every firing; in: 1 port; params: format=text (CSV lines, numeric types) or binary (raw, any type), header=\"\"; needs stateful: true", newStdout},
	// Generators.
	{"gen.const", "constant tokens; out: 1 numeric port (vectors: every element, complex: real part); params: value=0, count=0 (firings, 0: forever); stateless", newConst},
	{"gen.ramp", "token n = start + n·step; out: 1 numeric port; params: start=0, step=1, count=0; stateless", newRamp},
	{"gen.random", "uniform random elements, reproducible (math/rand/v2 PCG per firing from seed and firing index); out: 1 numeric port; params: seed=1, min=0, max=1 (integer types: inclusive, default max the type's maximum, 2³¹−1 for 64-bit), count=0; stateless", newRandom},
	{"gen.sine", "offset + amplitude·sin(2π·freq·n + phase) (complex: ·e^{i…}); out: 1 port f32, f64, c64 or c128; params: freq=0.01 (cycles/sample), amplitude=1, phase=0 (radians), offset=0, count=0; stateless", newSine},
	// Kernels.
	{"fir", "FIR filter y[n] = Σ taps[k]·x[n−k], history kept across firings; in x, out y: f32 or f64, equal rates; params: taps (list) or cutoff (cycles/sample, low-pass) with ntaps=31; needs stateful: true (unless 1 tap)", newFIR},
	{"decimate", "keeps the first token of every factor tokens, optionally low-pass filtered first; in, out: same type (f32 or f64 with taps, any without), in rate = factor × out rate; params: factor, taps or cutoff+ntaps (optional); stateless without taps, needs stateful: true with taps", newDecimate},
	{"interpolate", "inserts factor−1 tokens after each input token: zeros or copies; in, out: same (any) type, out rate = factor × in rate; params: factor, mode=zero|hold; stateless", newInterpolate},
	{"fft", "forward FFT, unscaled, of each block of size tokens; in: c64 or f32, out: c64, equal rates; params: size=rate (a power of two dividing the rate); stateless", newFFT(false)},
	{"ifft", "inverse FFT scaled by 1/size; in: c64, out: c64 or f32 (real part), equal rates; params: size=rate (a power of two dividing the rate); stateless", newFFT(true)},
	{"scale", "y = gain·x element-wise; in, out: f32, f64, their vectors, c64 or c128, equal rates; params: gain=1; stateless", newScale},
	{"add", "z = x + y (two inputs) or x + value (one input; complex: real part); f32, f64, vectors, c64, c128, equal rates; params: value; stateless", newAdd},
	{"multiply", "z = x·y (two inputs; complex product for c64/c128) or value·x (one input); f32, f64, vectors, c64, c128, equal rates; params: value; stateless", newMultiply},
	{"saxpy", "z = a·x + y with inputs x, y, or a·x + y with one input and a constant y; f32, f64, vectors, c64, c128, equal rates; params: a=1, y=0; stateless", newSaxpy},
	{"threshold", "y = above if x ≥ level else below, element-wise; in, out: same real numeric type (u8 … f64, vectors), equal rates; params: level=0, below=0, above=1 (u8: 255); stateless", newThreshold},
	{"magnitude", "|x| (or 20·log10|x| with db) of complex tokens; in: c64, out: f32, equal rates; params: db=false; stateless", newMagnitude},
	{"limit", "passes its input through for count firings, then ends the stream; in, out: same type and rate; params: count; stateless", newLimit},
}
