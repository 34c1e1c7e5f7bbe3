// Package conditional holds the Go side of conditional.yaml: an image
// pipeline that measures each frame's mean brightness and routes the frame,
// through a GSLD conditional pattern, to one of two filters — frames at
// least half bright are darkened (y = x²), the others brightened (y = √x) —
// whose outputs come out merged in frame order.
//
// Importing it registers the actors under the names the graph uses
// (conditional.source, conditional.measure, conditional.darken,
// conditional.brighten, conditional.sink).
package conditional

import (
	"math"
	"sync"

	"github.com/sluicehq/sluice/runtime"
)

// Frame geometry: W×H grey f32 pixels in [0, 1], one frame per firing.
const (
	W      = 64
	H      = 64
	Pixels = W * H
)

func init() {
	runtime.RegisterFunc("conditional.source", runtime.FireFunc(Source))
	runtime.RegisterFunc("conditional.measure", runtime.FireFunc(Measure))
	runtime.RegisterFunc("conditional.darken", runtime.FireFunc(func(f *runtime.Firing) error {
		Darken(runtime.Input[float32](f, 0), runtime.Output[float32](f, 0))
		return nil
	}))
	runtime.RegisterFunc("conditional.brighten", runtime.FireFunc(func(f *runtime.Firing) error {
		Brighten(runtime.Input[float32](f, 0), runtime.Output[float32](f, 0))
		return nil
	}))
	runtime.RegisterFunc("conditional.sink", runtime.FireFunc(DefaultSink.Fire))
}

// Level is frame t's brightness level in [0, 1): it walks through 17
// values so that both branches are taken.
func Level(t int64) float32 { return float32(t*7%17) / 17 }

// Frame fills px with frame t: a horizontal gradient around Level(t).
func Frame(t int64, px []float32) {
	l := Level(t)
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			v := l + (float32(x)/W-0.5)*0.2
			px[y*W+x] = min(1, max(0, v))
		}
	}
}

// Source writes frame number f.Index().
func Source(f *runtime.Firing) error {
	Frame(f.Index(), runtime.Output[float32](f, 0))
	return nil
}

// Mean is the mean of the pixels.
func Mean(px []float32) float32 {
	var s float64
	for _, v := range px {
		s += float64(v)
	}
	return float32(s / float64(len(px)))
}

// Bright reports whether a frame goes to the darkening branch.
func Bright(px []float32) bool { return Mean(px) >= 0.5 }

// Measure writes the control token: 1 for a bright frame, else 0.
func Measure(f *runtime.Firing) error {
	var c uint8
	if Bright(runtime.Input[float32](f, 0)) {
		c = 1
	}
	runtime.Output[uint8](f, 0)[0] = c
	return nil
}

// Darken is the bright frames' filter: y = x².
func Darken(in, out []float32) {
	for i, v := range in {
		out[i] = v * v
	}
}

// Brighten is the dark frames' filter: y = √x.
func Brighten(in, out []float32) {
	for i, v := range in {
		out[i] = float32(math.Sqrt(float64(v)))
	}
}

// Sink records the mean of every output frame, in arrival order.
type Sink struct {
	mu    sync.Mutex
	means []float32
}

// DefaultSink is the sink registered as conditional.sink.
var DefaultSink = &Sink{}

// Fire records one frame.
func (s *Sink) Fire(f *runtime.Firing) error {
	m := Mean(runtime.Input[float32](f, 0))
	s.mu.Lock()
	s.means = append(s.means, m)
	s.mu.Unlock()
	return nil
}

// Take returns the recorded means and forgets them.
func (s *Sink) Take() []float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.means
	s.means = nil
	return m
}

// Want is the output frame expected for frame t: the filter its
// brightness selects, applied to it.
func Want(t int64) []float32 {
	in := make([]float32, Pixels)
	out := make([]float32, Pixels)
	Frame(t, in)
	if Bright(in) {
		Darken(in, out)
	} else {
		Brighten(in, out)
	}
	return out
}
