// Package motion holds the Go side of the Motion-JPEG motion detector in
// motion.yaml (seed 002, §VIII-D, Fig. 11): a reader of MJPEG files (AVI
// or multipart JPEG streams), a JPEG decoder actor, the Go (CPU) versions
// of the three filters — 5×5 Gaussian blur, Sobel gradients, Lucas–Kanade
// optical flow — a statistics actor that finds the global (camera) motion
// and the pixels moving against it, and a sink. Importing it registers
// them with the runtime under the names the graph uses (motion.read,
// motion.decode, motion.blur, motion.sobel, motion.flow, motion.stats,
// motion.sink); blur.cl/.cu, sobel.cl/.cu and flow.cl/.cu are the
// filters' OpenCL C and CUDA C versions.
//
// Frames are 320×240 grey (a colour JPEG's luma plane). The compressed
// frames travel as fixed-size tokens of MaxJPEG+4 bytes: a little-endian
// u32 length, then the JPEG image. The reader is the stateful part; the
// decoder is stateless, so a mapping gives it replicas that decode several
// frames at once.
//
// The filters' arithmetic is on integers up to the flow's final division,
// so the Go, OpenCL and CUDA versions give bit-identical blurred frames and
// gradients, the same set of pixels with a flow estimate, and flows that
// differ by at most a few float32 rounding steps (FlowTolerance).
//
// The input is the file named by the environment variable
// SLUICE_MOTION_INPUT, else a clip generated on first use (DefaultClip).
// SLUICE_MOTION_OUTPUT, when set, names an AVI file that the sink writes
// the motion mask video to.
package motion

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/sluicehq/sluice/examples/imagepipe"
	"github.com/sluicehq/sluice/runtime"
)

// Frame geometry and the compressed-frame token.
const (
	W      = imagepipe.W // width in pixels (320, the image pipeline's)
	H      = imagepipe.H // height in pixels (240)
	Pixels = W * H       // tokens per frame (one u8 per pixel)
	// MaxJPEG is the largest compressed frame a token holds. The token
	// type is bytes131072: a u32 length and up to MaxJPEG bytes.
	MaxJPEG   = 131072 - 4
	TokenSize = MaxJPEG + 4
	// FlowTolerance bounds the difference between two implementations'
	// flows at a pixel, in pixels per frame (float32 division rounding).
	FlowTolerance = 1e-4
)

// Environment variables read by the reader and the sink.
const (
	EnvInput  = "SLUICE_MOTION_INPUT"
	EnvOutput = "SLUICE_MOTION_OUTPUT"
)

func init() {
	runtime.RegisterFunc("motion.read", &Reader{})
	runtime.RegisterFunc("motion.decode", runtime.FireFunc(Decode))
	runtime.RegisterFunc("motion.blur", runtime.FireFunc(func(f *runtime.Firing) error {
		y := runtime.Output[uint8](f, 0)
		Blur(runtime.Input[uint8](f, 0), y)
		copy(runtime.Output[uint8](f, 1), y)
		copy(runtime.Output[uint8](f, 2), y)
		return nil
	}))
	runtime.RegisterFunc("motion.sobel", runtime.FireFunc(func(f *runtime.Firing) error {
		Sobel(runtime.Input[uint8](f, 0), runtime.Output[int16](f, 0), runtime.Output[int16](f, 1))
		return nil
	}))
	runtime.RegisterFunc("motion.flow", runtime.FireFunc(func(f *runtime.Firing) error {
		Flow(runtime.Input[int16](f, 0), runtime.Input[int16](f, 1), runtime.Input[uint8](f, 2),
			runtime.Input[uint8](f, 3), runtime.Output[[2]float32](f, 0))
		return nil
	}))
	runtime.RegisterFunc("motion.stats", runtime.FireFunc(Stats))
	runtime.RegisterFunc("motion.sink", &Sink{Out: os.Stdout})
}

// Reader is the source actor (stateful): firing n emits compressed frame
// n of the input file in one token. At the end of the file it ends the
// stream, or with Loop starts the file again. Path "" means the
// environment variable SLUICE_MOTION_INPUT, else the default clip.
type Reader struct {
	Path string
	Loop bool
	r    FrameReader
	c    io.Closer
	path string
	n    int64
}

// Start opens the input.
func (r *Reader) Start(ctx context.Context) error {
	r.n = 0
	r.path = r.Path
	if r.path == "" {
		r.path = os.Getenv(EnvInput)
	}
	if r.path == "" {
		p, err := DefaultClip()
		if err != nil {
			return err
		}
		r.path = p
	}
	return r.open()
}

func (r *Reader) open() error {
	fr, c, err := OpenStream(r.path)
	if err != nil {
		return fmt.Errorf("motion.read: %w", err)
	}
	r.r, r.c = fr, c
	return nil
}

// Fire emits the next frame.
func (r *Reader) Fire(f *runtime.Firing) error {
	jpg, err := r.r.Next()
	if err == io.EOF && r.Loop && r.n > 0 {
		r.c.Close()
		if err := r.open(); err != nil {
			return err
		}
		jpg, err = r.r.Next()
	}
	if err == io.EOF {
		return runtime.ErrEndOfStream
	}
	if err != nil {
		return fmt.Errorf("motion.read: %w", err)
	}
	r.n++
	return PutToken(runtime.Output[byte](f, 0), jpg)
}

// Stop closes the input.
func (r *Reader) Stop() error {
	if r.c != nil {
		return r.c.Close()
	}
	return nil
}

// PutToken writes a compressed frame into a token: its length, then the
// bytes.
func PutToken(tok, jpg []byte) error {
	if len(jpg) > len(tok)-4 {
		return fmt.Errorf("motion: a JPEG frame of %d bytes: expected at most %d (the token's size)", len(jpg), len(tok)-4)
	}
	binary.LittleEndian.PutUint32(tok, uint32(len(jpg)))
	copy(tok[4:], jpg)
	return nil
}

// TokenJPEG returns the compressed frame in a token.
func TokenJPEG(tok []byte) ([]byte, error) {
	n := binary.LittleEndian.Uint32(tok)
	if int64(n) > int64(len(tok)-4) {
		return nil, fmt.Errorf("motion: token says %d bytes of JPEG: expected at most %d", n, len(tok)-4)
	}
	return tok[4 : 4+n], nil
}

// Decode is the decoder actor's firing (stateless): one compressed frame
// in, one 320×240 grey frame out, decoded by the decoder its attribute
// "decoder" names (auto, go or turbojpeg; auto when absent).
func Decode(f *runtime.Firing) error {
	d, err := ParseDecoder(f.Actor().Attrs["decoder"])
	if err != nil {
		return fmt.Errorf("motion.decode: attribute %w", err)
	}
	jpg, err := TokenJPEG(runtime.Input[byte](f, 0))
	if err == nil {
		err = DecodeWith(d, jpg, runtime.Output[uint8](f, 0))
	}
	if err != nil {
		return fmt.Errorf("motion.decode: frame %d: %w", f.Index(), err)
	}
	return nil
}

// Stats is the stats actor's firing (stateless): one flow field in, the
// frame's statistics ([6]f64, see Analyse) and its motion mask out.
func Stats(f *runtime.Firing) error {
	st := Analyse(runtime.Input[[2]float32](f, 0), runtime.Output[uint8](f, 1))
	runtime.Output[[NumStats]float64](f, 0)[0] = st
	return nil
}
