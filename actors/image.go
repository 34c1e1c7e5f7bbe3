package actors

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/runtime"
)

// Images travel as one image per firing, row by row from the top left: a
// port of rate width×height. The token type selects the pixel format:
//
//	u8     8-bit gray
//	[3]u8  RGB
//	[4]u8  RGBA, not premultiplied
//	f32    gray in [0, 1]
//
// image.read decodes PNG or JPEG (by content); image.write encodes PNG or
// JPEG (by the file name's extension).

var imageTypes = []string{"u8", "[3]u8", "[4]u8", "f32"}

// imageSource emits the same decoded image at every firing.
type imageSource struct {
	path  string
	root  *fsroot.Root // where path resolves (nil: unconfined)
	ptype string
	count int64
	pix   []byte // one firing's window, ready to copy
}

func newImageRead(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("path", "count"); err != nil {
		return nil, err
	}
	if err := checkPorts(a, 0, 0, 1); err != nil {
		return nil, err
	}
	out := a.Outputs[0]
	if err := wantTypes(out, imageTypes...); err != nil {
		return nil, err
	}
	rate, err := sdfRate(out)
	if err != nil {
		return nil, err
	}
	path, root, err := filePath(p)
	if err != nil {
		return nil, err
	}
	count, err := countParam(p, 1)
	if err != nil {
		return nil, err
	}
	// Check the size now, so that a mismatch is reported before anything runs.
	f, err := root.Open("", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("image %s: %w (expected PNG or JPEG)", path, err)
	}
	if n := cfg.Width * cfg.Height; n != rate {
		return nil, fmt.Errorf("image %s is %d×%d = %d pixels (%s) but port %s has rate %d: expected rate %d (width × height; one image per firing)",
			path, cfg.Width, cfg.Height, n, format, out.FullName(), rate, n)
	}
	return &imageSource{path: path, root: root, ptype: out.Type.Name, count: count}, nil
}

// Start decodes the image into the port's pixel format.
func (s *imageSource) Start(context.Context) error {
	f, err := s.root.Open("", s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	img, _, err := image.Decode(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("image %s: %w", s.path, err)
	}
	s.pix = imagePixels(img, s.ptype)
	return nil
}

// imagePixels converts img to the bytes of one window of the given type.
func imagePixels(img image.Image, ptype string) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	switch ptype {
	case "u8", "f32":
		g, ok := img.(*image.Gray)
		if !ok || g.Stride != w {
			g = image.NewGray(image.Rect(0, 0, w, h))
			draw.Draw(g, g.Bounds(), img, b.Min, draw.Src)
		}
		if ptype == "u8" {
			return append([]byte(nil), g.Pix[:w*h]...)
		}
		out := make([]byte, 4*w*h)
		fs := bytesAsFloats(out)
		for i, v := range g.Pix[:w*h] {
			fs[i] = float32(v) / 255
		}
		return out
	}
	n, ok := img.(*image.NRGBA)
	if !ok || n.Stride != 4*w {
		n = image.NewNRGBA(image.Rect(0, 0, w, h))
		draw.Draw(n, n.Bounds(), img, b.Min, draw.Src)
	}
	if ptype == "[4]u8" {
		return append([]byte(nil), n.Pix[:4*w*h]...)
	}
	out := make([]byte, 3*w*h)
	for i := 0; i < w*h; i++ {
		copy(out[3*i:3*i+3], n.Pix[4*i:4*i+3])
	}
	return out
}

// Fire copies the image into the output window; after count firings (1 by
// default, 0: no limit) it returns end of stream.
func (s *imageSource) Fire(f *runtime.Firing) error {
	if s.count > 0 && f.Index() >= s.count {
		return runtime.ErrEndOfStream
	}
	copy(f.Out(0), s.pix)
	return nil
}

// imageSink encodes the images it receives.
type imageSink struct {
	path      string
	root      *fsroot.Root // where path resolves (nil: unconfined)
	perFiring bool         // path holds a %d verb: one file per firing
	jpeg      bool
	quality   int
	ptype     string
	w, h      int
	img       draw.Image // the last frame
	got       bool
	enc       png.Encoder
}

func newImageWrite(a *graph.Actor, p runtime.Params) (any, error) {
	if err := p.Only("path", "width", "quality"); err != nil {
		return nil, err
	}
	if err := checkPorts(a, 1, 1, 0); err != nil {
		return nil, err
	}
	in := a.Inputs[0]
	if err := wantTypes(in, imageTypes...); err != nil {
		return nil, err
	}
	rate, err := sdfRate(in)
	if err != nil {
		return nil, err
	}
	path, root, err := filePath(p)
	if err != nil {
		return nil, err
	}
	s := &imageSink{path: path, root: root, ptype: in.Type.Name, perFiring: strings.Contains(path, "%")}
	if s.perFiring && (strings.Count(path, "%") != 1 || !strings.Contains(path, "%d") && !strings.Contains(path, "%0")) {
		return nil, fmt.Errorf("parameter \"path\" %q: expected at most one %%d (or %%05d …) verb for the firing number", path)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png":
	case ".jpg", ".jpeg":
		s.jpeg = true
	default:
		return nil, fmt.Errorf("parameter \"path\" %q: extension %q: expected .png, .jpg or .jpeg", path, ext)
	}
	if s.quality, err = p.Int("quality", 90); err != nil {
		return nil, err
	}
	if s.quality < 1 || s.quality > 100 {
		return nil, fmt.Errorf("parameter \"quality\": expected 1 to 100, found %d", s.quality)
	}
	if !p.Has("width") {
		r := int(math.Sqrt(float64(rate)) + 0.5)
		if r*r != rate {
			return nil, fmt.Errorf("parameter \"width\" is missing and port %s has rate %d, not a square: expected the image width (rate = width × height)", in.FullName(), rate)
		}
		s.w, s.h = r, r
	} else {
		if s.w, err = p.Int("width", 0); err != nil {
			return nil, err
		}
		if s.w <= 0 || rate%s.w != 0 {
			return nil, fmt.Errorf("parameter \"width\" is %d but port %s has rate %d: expected a width that divides the rate (rate = width × height)", s.w, in.FullName(), rate)
		}
		s.h = rate / s.w
	}
	r := image.Rect(0, 0, s.w, s.h)
	if s.ptype == "u8" || s.ptype == "f32" {
		s.img = image.NewGray(r)
	} else {
		s.img = image.NewNRGBA(r)
	}
	s.enc.BufferPool = &pngPool{}
	return s, nil
}

// Fire stores the window as the current frame and, when the path has a
// firing-number verb, writes it to its own file.
func (s *imageSink) Fire(f *runtime.Firing) error {
	if err := solo(f); err != nil {
		return err
	}
	in := f.In(0)
	switch s.ptype {
	case "u8":
		copy(s.img.(*image.Gray).Pix, in)
	case "f32":
		pix := s.img.(*image.Gray).Pix
		for i, v := range bytesAsFloats(in) {
			pix[i] = unitToByte(v)
		}
	case "[4]u8":
		copy(s.img.(*image.NRGBA).Pix, in)
	case "[3]u8":
		pix := s.img.(*image.NRGBA).Pix
		for i := 0; 3*i+2 < len(in); i++ {
			pix[4*i], pix[4*i+1], pix[4*i+2], pix[4*i+3] = in[3*i], in[3*i+1], in[3*i+2], 255
		}
	}
	s.got = true
	if s.perFiring {
		return s.write(fmt.Sprintf(s.path, f.Index()))
	}
	return nil
}

// unitToByte maps [0, 1] to [0, 255], clamping (NaN → 0).
func unitToByte(v float32) byte {
	switch {
	case !(v > 0):
		return 0
	case v >= 1:
		return 255
	}
	return byte(v*255 + 0.5)
}

func (s *imageSink) write(path string) error {
	f, err := s.root.Create("", path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	if s.jpeg {
		err = jpeg.Encode(w, s.img, &jpeg.Options{Quality: s.quality})
	} else {
		err = s.enc.Encode(w, s.img)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write image %s: %w", path, err)
	}
	return nil
}

// Stop writes the last frame (when the path has no firing-number verb).
func (s *imageSink) Stop() error {
	if s.perFiring || !s.got {
		return nil
	}
	s.got = false
	return s.write(s.path)
}

// pngPool keeps one PNG encoder buffer between images.
type pngPool struct{ b *png.EncoderBuffer }

func (p *pngPool) Get() *png.EncoderBuffer  { b := p.b; p.b = nil; return b }
func (p *pngPool) Put(b *png.EncoderBuffer) { p.b = b }
