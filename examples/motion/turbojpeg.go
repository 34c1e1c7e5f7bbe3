package motion

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libjpeg-turbo's TurboJPEG library decodes a frame several times faster
// than image/jpeg (SIMD Huffman decoding and IDCT). Like cuFFT for the
// stitching example it is loaded at run time with purego, so sluice stays
// one static binary: where libturbojpeg.so.0 is installed (Debian and
// Ubuntu: apt install libturbojpeg0), or named by SLUICE_TURBOJPEG (a path),
// the decoder actor uses it; elsewhere it uses image/jpeg.

// ErrNoTurboJPEG is returned (wrapped) when libturbojpeg cannot be loaded.
var ErrNoTurboJPEG = errors.New("libjpeg-turbo's TurboJPEG library unavailable")

// Decoder names a JPEG decoder: the decode actor's attribute "decoder"
// and bench/motion's -decoder.
type Decoder string

// The decoders.
const (
	// DecoderAuto is TurboJPEG where the library loads, else image/jpeg.
	DecoderAuto Decoder = "auto"
	// DecoderGo is Go's image/jpeg.
	DecoderGo Decoder = "go"
	// DecoderTurbo is libjpeg-turbo's TurboJPEG (an error where it does not
	// load).
	DecoderTurbo Decoder = "turbojpeg"
)

// ParseDecoder reads a decoder's name ("" is auto).
func ParseDecoder(s string) (Decoder, error) {
	switch d := Decoder(s); d {
	case "":
		return DecoderAuto, nil
	case DecoderAuto, DecoderGo, DecoderTurbo:
		return d, nil
	}
	return "", fmt.Errorf("decoder %q: expected auto, go or turbojpeg", s)
}

// Resolve returns the decoder auto stands for on this machine (d itself
// otherwise).
func (d Decoder) Resolve() Decoder {
	if d == DecoderAuto || d == "" {
		if TurboJPEG() == nil {
			return DecoderTurbo
		}
		return DecoderGo
	}
	return d
}

const tjpfGray = 6 // TJPF_GRAY

var turbo struct {
	once                                      sync.Once
	err                                       error
	lib                                       string
	init, header, decompress, errStr, destroy uintptr
	// handles are decompressors not in use; a TurboJPEG handle serves one
	// call at a time. Made on demand, kept for the process's life.
	handles chan uintptr
}

// TurboJPEG loads libturbojpeg once and reports why it cannot be used
// (nil when it can).
func TurboJPEG() error {
	turbo.once.Do(func() { turbo.err = loadTurboJPEG() })
	return turbo.err
}

func loadTurboJPEG() error {
	names := []string{"libturbojpeg.so.0", "libturbojpeg.so"}
	if p := os.Getenv("SLUICE_TURBOJPEG"); p != "" {
		names = []string{p}
	}
	var h uintptr
	for _, n := range names {
		if p, err := purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
			h, turbo.lib = p, n
			break
		}
	}
	if h == 0 {
		return fmt.Errorf("%w: tried %s (install libturbojpeg0, or set SLUICE_TURBOJPEG to its path)", ErrNoTurboJPEG, strings.Join(names, ", "))
	}
	for _, s := range []struct {
		p    *uintptr
		name string
	}{{&turbo.init, "tjInitDecompress"}, {&turbo.header, "tjDecompressHeader3"},
		{&turbo.decompress, "tjDecompress2"}, {&turbo.errStr, "tjGetErrorStr2"}, {&turbo.destroy, "tjDestroy"}} {
		p, err := purego.Dlsym(h, s.name)
		if err != nil || p == 0 {
			return fmt.Errorf("%w: %s lacks %s", ErrNoTurboJPEG, turbo.lib, s.name)
		}
		*s.p = p
	}
	turbo.handles = make(chan uintptr, 4*goruntime.GOMAXPROCS(0))
	return nil
}

// takeHandle returns a free decompressor, making one when none is free.
func takeHandle() (uintptr, error) {
	select {
	case h := <-turbo.handles:
		return h, nil
	default:
	}
	h, _, _ := purego.SyscallN(turbo.init)
	if h == 0 {
		return 0, fmt.Errorf("%w: tjInitDecompress failed", ErrNoTurboJPEG)
	}
	return h, nil
}

// putHandle keeps h for the next call (or drops it when enough are kept).
func putHandle(h uintptr) {
	select {
	case turbo.handles <- h:
	default: // enough kept
		purego.SyscallN(turbo.destroy, h)
	}
}

// DecodeGrayTurbo decodes a JPEG image into a W×H grey frame with
// TurboJPEG: a grey image's pixels, a colour image's luma.
func DecodeGrayTurbo(jpg []byte, out []uint8) error {
	if err := TurboJPEG(); err != nil {
		return err
	}
	if len(jpg) == 0 {
		return errors.New("turbojpeg: an empty JPEG image")
	}
	if len(out) < Pixels {
		return fmt.Errorf("turbojpeg: a frame of %d bytes: expected %d", len(out), Pixels)
	}
	h, err := takeHandle()
	if err != nil {
		return err
	}
	if err := decodeTurbo(h, jpg, out); err != nil {
		// a handle that failed is not trusted again (its next header
		// read may report 0×0): it goes, a new one is made
		purego.SyscallN(turbo.destroy, h)
		return err
	}
	putHandle(h)
	return nil
}

// decodeTurbo decodes jpg into out with handle h.
func decodeTurbo(h uintptr, jpg []byte, out []uint8) error {
	var w, ht, sub, cs int32
	if r := tjCall(turbo.header, h, uintptr(unsafe.Pointer(&jpg[0])), uintptr(len(jpg)),
		uintptr(unsafe.Pointer(&w)), uintptr(unsafe.Pointer(&ht)), uintptr(unsafe.Pointer(&sub)), uintptr(unsafe.Pointer(&cs))); r != 0 {
		return tjError(h, "reading the JPEG header")
	}
	if w != W || ht != H {
		return fmt.Errorf("a %d×%d JPEG image: expected %d×%d", w, ht, W, H)
	}
	if r := tjCall(turbo.decompress, h, uintptr(unsafe.Pointer(&jpg[0])), uintptr(len(jpg)),
		uintptr(unsafe.Pointer(&out[0])), W, W, H, tjpfGray, 0); r != 0 {
		return tjError(h, "decoding")
	}
	goruntime.KeepAlive(jpg)
	goruntime.KeepAlive(out)
	return nil
}

// tjCall calls a TurboJPEG function that returns an int (0: success).
//
//go:uintptrescapes
func tjCall(f uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(f, args...)
	return int32(r)
}

// tjError is the library's message for handle h's last error.
func tjError(h uintptr, what string) error {
	msg := "unknown error"
	if p, _, _ := purego.SyscallN(turbo.errStr, h); p != 0 {
		msg = goString(p)
	}
	return fmt.Errorf("turbojpeg: %s: %s", what, msg)
}

// goString copies the NUL-terminated C string at p, a message of the
// library's (at most 512 bytes). The address is C's, not Go memory: the
// indirection converts it without go vet's unsafeptr warning.
func goString(p uintptr) string {
	b := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), 512)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
