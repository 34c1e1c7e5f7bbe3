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

// sumsAVX2 sums 32 bytes a step: VPSADBW against zero adds each group of
// eight bytes into a 64-bit lane; bytes ≥ MovingLevel (min(v, 64) == 64)
// are counted in byte counters, which are folded into 64-bit lanes (again
// by VPSADBW) before they can wrap. The tail of fewer than 32 bytes goes
// to the SWAR loop.
func sumsAVX2(b []uint8) (sum, moving uint64) {
	const size = 32
	var zero archsimd.Uint8x32
	level := archsimd.BroadcastUint8x32(MovingLevel)
	var sums, counts archsimd.Uint64x4
	for len(b) >= size {
		n := min(len(b)/size, 255) // steps before a byte counter could wrap
		var c archsimd.Uint8x32
		for i := range n {
			v := archsimd.LoadUint8x32((*[size]uint8)(b[i*size:]))
			sums = sums.Add(v.SumAbsDiff(zero).AsUint64x4())
			// The mask is −1 in the lanes that count: subtracting adds one.
			c = c.Sub(v.Min(level).Equal(level).ToInt8x32().AsUint8x32())
		}
		counts = counts.Add(c.SumAbsDiff(zero).AsUint64x4())
		b = b[n*size:]
	}
	sum, moving = sum4(sums), sum4(counts)
	archsimd.ClearAVXUpperBits()
	s, m := swarSums(b)
	return sum + s, moving + m
}

// sumsAVX512 sums 64 bytes a step: VPSADBW against zero into eight 64-bit
// lanes, and an unsigned compare with MovingLevel into a 64-bit mask whose
// ones are counted (POPCNT). The tail of fewer than 64 bytes goes to the
// SWAR loop.
func sumsAVX512(b []uint8) (sum, moving uint64) {
	const size = 64
	var zero archsimd.Uint8x64
	level := archsimd.BroadcastUint8x64(MovingLevel)
	var sums archsimd.Uint64x8
	for len(b) >= size {
		v := archsimd.LoadUint8x64((*[size]uint8)(b))
		sums = sums.Add(v.SumAbsDiff(zero).AsUint64x8())
		moving += uint64(bits.OnesCount64(v.GreaterEqual(level).ToBits()))
		b = b[size:]
	}
	sum = sum4(sums.GetLo().Add(sums.GetHi()))
	archsimd.ClearAVXUpperBits()
	s, m := swarSums(b)
	return sum + s, moving + m
}

// sum4 adds the four lanes of x.
func sum4(x archsimd.Uint64x4) uint64 {
	y := x.GetLo().Add(x.GetHi())
	return y.GetElem(0) + y.GetElem(1)
}
