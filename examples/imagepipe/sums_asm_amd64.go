//go:build !goexperiment.simd

package imagepipe

import "golang.org/x/sys/cpu"

// frameSums returns the sum of a frame's bytes and the number of bytes ≥
// MovingLevel. In a default build on amd64 it is the AVX2 loop in
// assembly (sums_asm_amd64.s) where the CPU has AVX2, else the SWAR loop:
// the default build's host work per frame then needs no GOEXPERIMENT.
func frameSums(b []uint8) (sum, moving uint64) {
	return sumsImpl(b)
}

// sumsImpl is the implementation chosen for this CPU at start-up.
var sumsImpl = pickSums()

// pickSums returns the AVX2 loop where the CPU has AVX2, else the SWAR
// loop.
func pickSums() func([]uint8) (uint64, uint64) {
	if cpu.X86.HasAVX2 {
		return sumsAVX2
	}
	return swarSums
}

// sumsAVX2Asm sums the first len(b)/64*64 bytes of b and counts those ≥
// MovingLevel (64), with AVX2 (sums_asm_amd64.s).
//
//go:noescape
func sumsAVX2Asm(b []byte) (sum, moving uint64)

// sumsAVX2 is sumsAVX2Asm over whole 64-byte steps and the SWAR loop over
// the tail.
func sumsAVX2(b []uint8) (sum, moving uint64) {
	n := len(b) &^ 63
	sum, moving = sumsAVX2Asm(b[:n])
	s, m := swarSums(b[n:])
	return sum + s, moving + m
}
