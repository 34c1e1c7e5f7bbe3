// Package imagepipe holds the Go side of the image pipeline in
// imagepipe.yaml: the frame source, the Go (CPU) implementations of the
// three kernel actors (blur, sobel, motion), per-frame statistics and a
// checksumming sink.
// Importing it registers them with the runtime under the names the graph
// uses (imagepipe.source, imagepipe.blur, imagepipe.sobel, imagepipe.motion,
// imagepipe.stats, imagepipe.sink).
//
// Frames are 320×240 grey u8 images, one per firing. All arithmetic is on
// integers, so the OpenCL and CUDA kernels (blur.cl/.cu, sobel.cl/.cu,
// motion.cl/.cu) give bit-identical results:
//
//   - blur: 5×5 binomial Gaussian (weights [1 4 6 4 1] ⊗ [1 4 6 4 1], sum
//     256), rounded: (Σ w·p + 128) >> 8, edges clamped;
//   - sobel: gx, gy of the 3×3 Sobel operator, magnitude
//     min(255, ⌊√(gx² + gy²)⌋ >> 2) (the integer square root is exact);
//   - motion: frame differencing of the Sobel magnitudes of this frame and
//     the previous one (a channel with one initial, all-zero frame): the
//     sum of absolute differences over the 3×3 neighbourhood,
//     min(255, SAD >> 3).
//
// The stats actor's per-frame sums (the bytes' sum and the count of bytes
// ≥ MovingLevel) are, on amd64 CPUs with AVX2, an AVX2 loop in assembly
// (sums_asm_amd64.s) in a default build, and a SWAR loop (eight bytes in a
// 64-bit word) elsewhere. Built with GOEXPERIMENT=simd on amd64 they use
// the experimental simd/archsimd package instead: 64-byte AVX-512 vectors
// where the CPU has them, else 32-byte AVX2 vectors (chosen at start-up).
// The vector loops move about ten times the SWAR loop's bytes per second;
// the results are the same. The image pipeline
// benchmark (bench/imagepipe) is built that way for the GPU machine:
// there the host cores' per-frame work bounds the frame rate, and the
// hand-written reference (bench/imagepipe/reference) compiles the same
// loop with -march=native, which gcc vectorises.
package imagepipe

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sluicehq/sluice/runtime"
)

// Frame geometry.
const (
	W      = 320   // width in pixels
	H      = 240   // height in pixels
	Pixels = W * H // tokens per frame (one u8 per pixel)
	// Period is the number of distinct frames: frame t equals frame
	// t mod Period (the objects' paths repeat).
	Period = 80
	// MovingLevel is the motion value from which the sink counts a pixel
	// as moving.
	MovingLevel = 64
)

func init() {
	runtime.RegisterFunc("imagepipe.source", runtime.FireFunc(Source))
	runtime.RegisterFunc("imagepipe.blur", runtime.FireFunc(func(f *runtime.Firing) error {
		Blur(runtime.Input[uint8](f, 0), runtime.Output[uint8](f, 0))
		return nil
	}))
	runtime.RegisterFunc("imagepipe.sobel", runtime.FireFunc(func(f *runtime.Firing) error {
		y := runtime.Output[uint8](f, 0)
		Sobel(runtime.Input[uint8](f, 0), y)
		copy(runtime.Output[uint8](f, 1), y)
		return nil
	}))
	runtime.RegisterFunc("imagepipe.motion", runtime.FireFunc(func(f *runtime.Firing) error {
		Motion(runtime.Input[uint8](f, 0), runtime.Input[uint8](f, 1), runtime.Output[uint8](f, 0))
		return nil
	}))
	runtime.RegisterFunc("imagepipe.stats", runtime.FireFunc(Stats))
	runtime.RegisterFunc("imagepipe.sink", &Sink{})
}

// Draw writes frame t of the synthetic scene into dst (Pixels bytes): a
// checkerboard of 16-pixel squares over a diagonal ramp, a bright disc
// moving right and up and down, and a square moving left. The same
// function is in reference/imagepipe.cu.
func Draw(t int, dst []byte) {
	p := t % Period
	if p < 0 {
		p += Period
	}
	tri := p
	if p >= Period/2 {
		tri = Period - p
	}
	cx, cy := 40+3*p, 80+2*tri // disc centre, radius 24
	sx, sy := 270-3*p, 170     // square corner, side 32
	for y := 0; y < H; y++ {
		row := dst[y*W : y*W+W]
		for x := range row {
			v := 40 + ((x>>4^y>>4)&1)*50 + (x+y)>>4
			if dx, dy := x-cx, y-cy; dx*dx+dy*dy <= 24*24 {
				v = 230
			} else if x >= sx && x < sx+32 && y >= sy && y < sy+32 {
				v = 180
			}
			row[x] = byte(v)
		}
	}
}

var (
	framesOnce sync.Once
	frames     []byte
)

// Frames returns the Period distinct frames, one after another.
func Frames() []byte {
	framesOnce.Do(func() {
		frames = make([]byte, Period*Pixels)
		for t := 0; t < Period; t++ {
			Draw(t, frames[t*Pixels:(t+1)*Pixels])
		}
	})
	return frames
}

// Source is the frame source's firing: firing n emits frame n (a copy of
// a precomputed frame, like the reference program's pinned table).
func Source(f *runtime.Firing) error {
	t := int(f.Index() % Period)
	copy(runtime.Output[uint8](f, 0), Frames()[t*Pixels:(t+1)*Pixels])
	return nil
}

func clampi(v, lo, hi int) int { return min(max(v, lo), hi) }

// Blur is the 5×5 binomial blur of one frame (separable here; the sum is
// the same integer as the 25-tap form of the kernels).
func Blur(in, out []uint8) {
	in, out = in[:Pixels], out[:Pixels]
	var v [W]uint16
	for y := 0; y < H; y++ {
		r0 := in[clampi(y-2, 0, H-1)*W:][:W]
		r1 := in[clampi(y-1, 0, H-1)*W:][:W]
		r2 := in[y*W:][:W]
		r3 := in[clampi(y+1, 0, H-1)*W:][:W]
		r4 := in[clampi(y+2, 0, H-1)*W:][:W]
		for x := range v {
			v[x] = uint16(r0[x]) + 4*uint16(r1[x]) + 6*uint16(r2[x]) + 4*uint16(r3[x]) + uint16(r4[x])
		}
		o := out[y*W:][:W]
		o[0] = blurH(v[0], v[0], v[0], v[1], v[2])
		o[1] = blurH(v[0], v[0], v[1], v[2], v[3])
		for x := 2; x < W-2; x++ {
			o[x] = blurH(v[x-2], v[x-1], v[x], v[x+1], v[x+2])
		}
		o[W-2] = blurH(v[W-4], v[W-3], v[W-2], v[W-1], v[W-1])
		o[W-1] = blurH(v[W-3], v[W-2], v[W-1], v[W-1], v[W-1])
	}
}

func blurH(a, b, c, d, e uint16) uint8 {
	s := uint32(a) + 4*uint32(b) + 6*uint32(c) + 4*uint32(d) + uint32(e)
	return uint8((s + 128) >> 8)
}

// ISqrt is ⌊√s⌋ for 0 ≤ s < 2²⁴, computed as the kernels do (a float
// square root, then corrected to the exact integer).
func ISqrt(s int32) int32 {
	r := int32(math.Sqrt(float64(float32(s))))
	for r*r > s {
		r--
	}
	for (r+1)*(r+1) <= s {
		r++
	}
	return r
}

// Sobel is the Sobel gradient magnitude of one frame.
func Sobel(in, out []uint8) {
	in, out = in[:Pixels], out[:Pixels]
	for y := 0; y < H; y++ {
		ra := in[clampi(y-1, 0, H-1)*W:][:W]
		rb := in[y*W:][:W]
		rc := in[clampi(y+1, 0, H-1)*W:][:W]
		o := out[y*W:][:W]
		for x := 0; x < W; x++ {
			xm, xp := max(x-1, 0), min(x+1, W-1)
			a00, a01, a02 := int32(ra[xm]), int32(ra[x]), int32(ra[xp])
			a10, a12 := int32(rb[xm]), int32(rb[xp])
			a20, a21, a22 := int32(rc[xm]), int32(rc[x]), int32(rc[xp])
			gx := (a02 + 2*a12 + a22) - (a00 + 2*a10 + a20)
			gy := (a20 + 2*a21 + a22) - (a00 + 2*a01 + a02)
			o[x] = uint8(min(ISqrt(gx*gx+gy*gy)>>2, 255))
		}
	}
}

// Motion is the 3×3 sum of absolute differences between the Sobel
// magnitudes of this frame (cur) and the previous one (prev), / 8, capped.
func Motion(cur, prev, out []uint8) {
	cur, prev, out = cur[:Pixels], prev[:Pixels], out[:Pixels]
	var col [W]int32
	for y := 0; y < H; y++ {
		for x := range col {
			col[x] = 0
		}
		for _, r := range [3]int{clampi(y-1, 0, H-1), y, clampi(y+1, 0, H-1)} {
			c, p := cur[r*W:][:W], prev[r*W:][:W]
			for x := range col {
				d := int32(c[x]) - int32(p[x])
				if d < 0 {
					d = -d
				}
				col[x] += d
			}
		}
		o := out[y*W:][:W]
		for x := 0; x < W; x++ {
			s := col[max(x-1, 0)] + col[x] + col[min(x+1, W-1)]
			o[x] = uint8(min(s>>3, 255))
		}
	}
}

// Checksum summarises a stream of motion frames; equal streams give equal
// checksums (the reference program computes the same).
type Checksum struct {
	Frames int64  `json:"frames"`
	Sum    uint64 `json:"sum"`    // all bytes
	Moving uint64 `json:"moving"` // pixels ≥ MovingLevel
	Hash   uint64 `json:"hash"`   // FNV-1a-style over the frames' sums, in order
}

// Add accounts one frame.
func (c *Checksum) Add(frame []uint8) {
	fs, mv := frameSums(frame)
	c.AddSums(fs, mv)
}

// Stats is the stats actor's firing (stateless, so it may have
// replicas): one motion frame in, one [2]u64 token out, the sum of the
// frame's bytes and the number of moving pixels.
func Stats(f *runtime.Firing) error {
	out := runtime.Output[[2]uint64](f, 0)
	out[0][0], out[0][1] = frameSums(runtime.Input[uint8](f, 0))
	return nil
}

// AddSums accounts one frame given its sums (from Stats).
func (c *Checksum) AddSums(sum, moving uint64) {
	if c.Frames == 0 {
		c.Hash = 14695981039346656037
	}
	c.Frames++
	c.Sum += sum
	c.Moving += moving
	c.Hash = (c.Hash ^ sum) * 1099511628211
}

// Sink folds the frames' sums into a Checksum (a runtime.Actor; stateful).
// It records when frame Warm and the last frame arrived, for frame rates
// without start-up costs.
type Sink struct {
	Warm  int64
	Sum   Checksum
	first time.Time // arrival of frame Warm
	last  time.Time
}

// Fire accounts one frame's sums.
func (s *Sink) Fire(f *runtime.Firing) error {
	in := runtime.Input[[2]uint64](f, 0)
	s.Sum.AddSums(in[0][0], in[0][1])
	now := time.Now()
	if f.Index() == s.Warm {
		s.first = now
	}
	s.last = now
	return nil
}

// Snapshot returns the checksum so far (runtime.Checkpointer: a run with
// checkpoints resumes with it).
func (s *Sink) Snapshot() ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(s.Sum.Frames))
	for _, v := range []uint64{s.Sum.Sum, s.Sum.Moving, s.Sum.Hash} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b, nil
}

// Restore sets the checksum to a snapshot's.
func (s *Sink) Restore(b []byte) error {
	if len(b) != 32 {
		return fmt.Errorf("imagepipe sink: a snapshot of %d bytes: expected 32", len(b))
	}
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	s.Sum = Checksum{Frames: int64(u(0)), Sum: u(1), Moving: u(2), Hash: u(3)}
	return nil
}

// Rate returns the frames per second between the arrival of frame Warm
// and of the last frame (0 when too few frames arrived).
func (s *Sink) Rate() float64 {
	n := s.Sum.Frames - 1 - s.Warm
	if n <= 0 || !s.last.After(s.first) {
		return 0
	}
	return float64(n) / s.last.Sub(s.first).Seconds()
}
