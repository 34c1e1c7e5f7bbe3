package motion

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// The default clip: ClipFrames frames of a textured scene that the camera
// pans across at Pan pixels per frame, with two textured objects moving
// over it, encoded as an MJPEG AVI with image/jpeg at ClipQuality.
const (
	ClipFrames  = 96
	ClipFPS     = 25
	ClipQuality = 90
	// ClipName is the default clip's file name in the cache directory
	// (DefaultClip); the version changes when the scene does.
	ClipName = "motion-clip-v1.avi"
)

// Pan is the camera's motion in the default clip: the scene moves by Pan
// pixels per frame in the image (x right, y down).
var Pan = [2]float64{-0.6, 0.25}

// Object is a textured shape moving over the scene at constant velocity.
type Object struct {
	X, Y   float64 // centre in frame 0, pixels
	VX, VY float64 // pixels per frame, in the image
	R      float64 // radius (disc) or half-side (square)
	Square bool
	Seed   uint64 // texture
}

// Objects are the default clip's moving objects.
var Objects = []Object{
	{X: 60, Y: 70, VX: 1.8, VY: 0.4, R: 26, Seed: 7},
	{X: 260, Y: 170, VX: -1.4, VY: -0.6, R: 22, Square: true, Seed: 11},
}

// texture is a periodic fractal value-noise image (grey levels), sampled
// with bilinear interpolation.
type texture struct {
	w, h int
	pix  []float32
}

// newTexture makes a w×h texture of value noise summed over octaves from
// cell size base down to 2 pixels (smoothly interpolated lattices of
// random values, amplitudes halving), with contrast c around mean m.
func newTexture(w, h, base int, seed uint64, m, c float64) *texture {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	acc := make([]float64, w*h)
	amp := 1.0
	for cell := base; cell >= 2; cell /= 2 {
		gw, gh := w/cell+1, h/cell+1
		lat := make([]float64, gw*gh)
		for i := range lat {
			lat[i] = rng.Float64()*2 - 1
		}
		for y := 0; y < h; y++ {
			fy := float64(y) / float64(cell)
			y0 := int(fy)
			ty := smooth(fy - float64(y0))
			y1 := (y0 + 1) % gh
			for x := 0; x < w; x++ {
				fx := float64(x) / float64(cell)
				x0 := int(fx)
				tx := smooth(fx - float64(x0))
				x1 := (x0 + 1) % gw
				a := lat[y0*gw+x0] + (lat[y0*gw+x1]-lat[y0*gw+x0])*tx
				b := lat[y1*gw+x0] + (lat[y1*gw+x1]-lat[y1*gw+x0])*tx
				acc[y*w+x] += amp * (a + (b-a)*ty)
			}
		}
		amp *= 0.75
	}
	t := &texture{w: w, h: h, pix: make([]float32, w*h)}
	for i, v := range acc {
		t.pix[i] = float32(min(max(m+c*v, 0), 255))
	}
	return t
}

func smooth(t float64) float64 { return t * t * (3 - 2*t) }

// at samples the texture at (x, y) bilinearly, wrapping around.
func (t *texture) at(x, y float64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	ix := (int(x0)%t.w + t.w) % t.w
	iy := (int(y0)%t.h + t.h) % t.h
	jx, jy := (ix+1)%t.w, (iy+1)%t.h
	p := t.pix
	a := float64(p[iy*t.w+ix]) + (float64(p[iy*t.w+jx])-float64(p[iy*t.w+ix]))*fx
	b := float64(p[jy*t.w+ix]) + (float64(p[jy*t.w+jx])-float64(p[jy*t.w+ix]))*fx
	return a + (b-a)*fy
}

// Scene is the default clip's world: a large textured landscape (fractal
// noise with a few darker and brighter blocks, like fields and buildings
// seen from above) and the moving objects' textures.
type Scene struct {
	world *texture
	objs  []*texture
}

// NewScene builds the scene (deterministic).
func NewScene() *Scene {
	s := &Scene{world: newTexture(1024, 512, 64, 1, 120, 70)}
	// Blocks with sharp edges, textured like the ground.
	rng := rand.New(rand.NewPCG(2, 3))
	for k := 0; k < 40; k++ {
		x0, y0 := rng.IntN(1024), rng.IntN(512)
		w, h := 12+rng.IntN(60), 12+rng.IntN(40)
		d := float32(rng.IntN(90) - 45)
		for y := y0; y < y0+h; y++ {
			for x := x0; x < x0+w; x++ {
				i := (y%512)*1024 + x%1024
				s.world.pix[i] = min(max(s.world.pix[i]+d, 0), 255)
			}
		}
	}
	for _, o := range Objects {
		s.objs = append(s.objs, newTexture(128, 128, 16, o.Seed, 150, 90))
	}
	return s
}

// Render draws frame t (W×H) into dst: the world seen from a camera at
// −t·Pan, then the objects at their positions in frame t.
func (s *Scene) Render(t int, dst []uint8) {
	s.RenderShift(float64(t)*Pan[0], float64(t)*Pan[1], t, dst)
}

// RenderShift draws the world moved by (dx, dy) pixels and the objects
// as in frame t (no objects when t < 0).
func (s *Scene) RenderShift(dx, dy float64, t int, dst []uint8) {
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			v := s.world.at(float64(x)-dx+300, float64(y)-dy+100)
			if t >= 0 {
				for k, o := range Objects {
					cx, cy := o.X+float64(t)*o.VX, o.Y+float64(t)*o.VY
					ox, oy := float64(x)-cx, float64(y)-cy
					in := ox*ox+oy*oy <= o.R*o.R
					if o.Square {
						in = math.Abs(ox) <= o.R && math.Abs(oy) <= o.R
					}
					if in {
						v = s.objs[k].at(ox+64, oy+64)
					}
				}
			}
			dst[y*W+x] = uint8(math.Round(v))
		}
	}
}

// EncodeGray encodes a W×H grey frame as a JPEG image.
func EncodeGray(frame []uint8, quality int) ([]byte, error) {
	img := &image.Gray{Pix: frame[:Pixels], Stride: W, Rect: image.Rect(0, 0, W, H)}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteClip writes the default clip, as an MJPEG AVI, to path.
func WriteClip(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	aw, err := NewAVIWriter(f, W, H, ClipFPS)
	if err != nil {
		f.Close()
		return err
	}
	s := NewScene()
	frame := make([]uint8, Pixels)
	for t := 0; t < ClipFrames; t++ {
		s.Render(t, frame)
		jpg, err := EncodeGray(frame, ClipQuality)
		if err == nil {
			err = aw.WriteFrame(jpg)
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("writing %s, frame %d: %w", path, t, err)
		}
	}
	if err := aw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DefaultClip returns the path of the default clip, generating it on first
// use in the user's cache directory (os.UserCacheDir()/sluice, or the
// temporary directory when there is none).
func DefaultClip() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "sluice")
	path := filepath.Join(dir, ClipName)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("default clip: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ClipName+".*")
	if err != nil {
		return "", fmt.Errorf("default clip: %w", err)
	}
	tmp.Close()
	if err := WriteClip(tmp.Name()); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("default clip: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("default clip: %w", err)
	}
	return path, nil
}
