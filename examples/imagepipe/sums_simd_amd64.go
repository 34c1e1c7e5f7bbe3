//go:build goexperiment.simd && amd64

package imagepipe

import (
	"math/bits"
	"simd/archsimd"
)

// frameSums returns the sum of a frame's bytes and the number of bytes ≥
// MovingLevel. With GOEXPERIMENT=simd on amd64 it uses 64-byte AVX-512
// vectors where the CPU has them, else 32-byte AVX2 vectors, else the
// SWAR loop.
func frameSums(b []uint8) (sum, moving uint64) {
	return sumsImpl(b)
}

// sumsImpl is the implementation chosen for this CPU at start-up.
var sumsImpl = pickSums()

// pickSums returns the widest implementation the CPU runs.
func pickSums() func([]uint8) (uint64, uint64) {
	switch {
	case archsimd.X86.AVX512():
		return sumsAVX512
	case archsimd.X86.AVX2():
		return sumsAVX2
	}
	return swarSums
}

// sumsAVX2 sums 64 bytes a step in two 32-byte vectors: VPSADBW against
// zero adds each group of eight bytes into a 64-bit lane; bytes ≥
// MovingLevel (min(v, 64) == 64) are counted in byte counters, which are
// folded into 64-bit lanes (again by VPSADBW) before they can wrap. Two
// independent chains per step keep the vector units busy. The tail of
// fewer than 64 bytes goes to the SWAR loop.
func sumsAVX2(b []uint8) (sum, moving uint64) {
	const size = 32
	var zero archsimd.Uint8x32
	level := archsimd.BroadcastUint8x32(MovingLevel)
	var s0, s1, counts archsimd.Uint64x4
	for len(b) >= 2*size {
		// At most 255 steps, so that no byte counter wraps.
		n := min(len(b)/(2*size), 255) * (2 * size)
		var c0, c1 archsimd.Uint8x32
		for i := 0; i < n; i += 2 * size {
			p := (*[2 * size]uint8)(b[i : i+2*size])
			v := archsimd.LoadUint8x32((*[size]uint8)(p[:size]))
			w := archsimd.LoadUint8x32((*[size]uint8)(p[size:]))
			s0 = s0.Add(v.SumAbsDiff(zero).AsUint64x4())
			s1 = s1.Add(w.SumAbsDiff(zero).AsUint64x4())
			// The masks are −1 in the lanes that count: subtracting adds one.
			c0 = c0.Sub(v.Min(level).Equal(level).ToInt8x32().AsUint8x32())
			c1 = c1.Sub(w.Min(level).Equal(level).ToInt8x32().AsUint8x32())
		}
		counts = counts.Add(c0.SumAbsDiff(zero).AsUint64x4())
		counts = counts.Add(c1.SumAbsDiff(zero).AsUint64x4())
		b = b[n:]
	}
	sum, moving = sum4(s0.Add(s1)), sum4(counts)
	archsimd.ClearAVXUpperBits()
	s, m := swarSums(b)
	return sum + s, moving + m
}

// sumsAVX512 sums 128 bytes a step in two 64-byte vectors: VPSADBW
// against zero into eight 64-bit lanes each, and an unsigned compare with
// MovingLevel into a 64-bit mask whose ones are counted (POPCNT). A last
// single vector and then the SWAR loop take the tail.
func sumsAVX512(b []uint8) (sum, moving uint64) {
	const size = 64
	var zero archsimd.Uint8x64
	level := archsimd.BroadcastUint8x64(MovingLevel)
	var s0, s1 archsimd.Uint64x8
	n := len(b) / (2 * size) * (2 * size)
	for i := 0; i < n; i += 2 * size {
		p := (*[2 * size]uint8)(b[i : i+2*size])
		v := archsimd.LoadUint8x64((*[size]uint8)(p[:size]))
		w := archsimd.LoadUint8x64((*[size]uint8)(p[size:]))
		s0 = s0.Add(v.SumAbsDiff(zero).AsUint64x8())
		s1 = s1.Add(w.SumAbsDiff(zero).AsUint64x8())
		moving += uint64(bits.OnesCount64(v.GreaterEqual(level).ToBits()) +
			bits.OnesCount64(w.GreaterEqual(level).ToBits()))
	}
	b = b[n:]
	if len(b) >= size {
		v := archsimd.LoadUint8x64((*[size]uint8)(b[:size]))
		s0 = s0.Add(v.SumAbsDiff(zero).AsUint64x8())
		moving += uint64(bits.OnesCount64(v.GreaterEqual(level).ToBits()))
		b = b[size:]
	}
	s0 = s0.Add(s1)
	sum = sum4(s0.GetLo().Add(s0.GetHi()))
	archsimd.ClearAVXUpperBits()
	s, m := swarSums(b)
	return sum + s, moving + m
}

// sum4 adds the four lanes of x.
func sum4(x archsimd.Uint64x4) uint64 {
	y := x.GetLo().Add(x.GetHi())
	return y.GetElem(0) + y.GetElem(1)
}
