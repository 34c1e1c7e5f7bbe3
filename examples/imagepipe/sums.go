package imagepipe

import (
	"encoding/binary"
	"math/bits"
)

// swarSums returns the sum of a frame's bytes and the number of bytes ≥
// MovingLevel (64: bit 6 or 7 set), eight bytes at a time in a 64-bit
// word (SIMD within a register). It is frameSums in builds without the
// vector version and the vector version's fallback.
func swarSums(b []uint8) (sum, moving uint64) {
	const lo = 0x00ff00ff00ff00ff
	const ones = 0x0101010101010101
	for len(b) >= 8*128 {
		var acc uint64 // four 16-bit lanes: at most 128 · 2 · 255 each
		for i := 0; i < 8*128; i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			acc += w&lo + (w>>8)&lo
			t := w >> 6 & (3 * ones)
			moving += uint64(bits.OnesCount64((t | t>>1) & ones))
		}
		sum += acc&0xffff + acc>>16&0xffff + acc>>32&0xffff + acc>>48
		b = b[8*128:]
	}
	for _, v := range b {
		sum += uint64(v)
		if v >= MovingLevel {
			moving++
		}
	}
	return sum, moving
}
