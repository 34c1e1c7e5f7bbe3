//go:build !amd64

package imagepipe

// frameSums returns the sum of a frame's bytes and the number of bytes ≥
// MovingLevel. Off amd64 it is the SWAR loop.
func frameSums(b []uint8) (sum, moving uint64) {
	return swarSums(b)
}
