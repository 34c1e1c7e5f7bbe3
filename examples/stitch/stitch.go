// Package stitch holds the Go side of stitch.yaml, microscopy image
// stitching as NIST's MIST does it (PCIAM, the phase-correlation image
// alignment method): a grid of overlapping tiles → the FFT of every tile,
// once → for each pair of neighbours, the normalised cross-power spectrum,
// its inverse FFT (the phase-correlation matrix), its highest peaks, each
// peak's four interpretations scored by the normalised cross-correlation
// of the tiles' overlap → pairwise translations → global positions (the
// maximum spanning tree over the correlations) → a mosaic.
//
// Importing it registers the actors under the names the graph uses:
//
//   - stitch.source: firing i emits tile i (row-major) as Width×Height u16
//     pixels, cut from a reproducible synthetic scene (Scene) at a known
//     origin with stage jitter and camera noise, on every output (the
//     graph delays the copies differently); after the last tile, end of
//     stream. Stateless: a mapping may give it replicas.
//   - stitch.fft: a tile's 2-D FFT (c64, Width×Height), radix-2 (FFT2),
//     on every output. Stateless.
//   - stitch.west, stitch.north: PCIAM (Align) on tile i and its west
//     (i−1) or north (i−Cols) neighbour, from both tiles and both
//     transforms; a [4]f64 token (Translation.Encode) out, invalid for a
//     tile of the first column (west) or row (north). Stateless.
//   - stitch.solve: stateful sink; after the last tile, solves the
//     positions, compares them with the known ones, writes the mosaic and
//     prints a summary (Finish); the result is kept for Last.
//
// The actors read the data set from their attributes (ParseConfig); the
// graph gives every actor the same ones with a YAML anchor. With the
// attribute fft: cufft, the Go actors' FFTs (the tiles' and the pairs'
// inverse ones) run on GPU 0 with cuFFT, loaded at run time (cufft.go);
// the rest stays on the CPU.
package stitch

import (
	"fmt"
	"os"
	"sync"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

func init() {
	runtime.RegisterFunc("stitch.source", runtime.FireFunc(fireSource))
	runtime.RegisterFunc("stitch.fft", runtime.FireFunc(fireFFT))
	runtime.RegisterFunc("stitch.west", runtime.FireFunc(func(f *runtime.Firing) error { return fireAlign(f, false) }))
	runtime.RegisterFunc("stitch.north", runtime.FireFunc(func(f *runtime.Firing) error { return fireAlign(f, true) }))
	runtime.RegisterFunc("stitch.solve", runtime.FireFunc(fireSolve))
}

var configs sync.Map // *graph.Actor → Config

// ActorConfig returns the configuration in a's attributes, checking that
// its u16 and c64 ports carry one tile (Width×Height tokens) per firing.
func ActorConfig(a *graph.Actor) (Config, error) {
	if c, ok := configs.Load(a); ok {
		return c.(Config), nil
	}
	c, err := ParseConfig(a.Attrs)
	if err != nil {
		return c, fmt.Errorf("actor %s: %w", a.Name, err)
	}
	for _, p := range append(append([]*graph.Port(nil), a.Inputs...), a.Outputs...) {
		switch p.Type.String() {
		case "u16", "c64":
			if p.Rate.IsDynamic() || p.Rate.IsCSDF() || p.Rate.At(0) != c.Pixels() {
				return c, fmt.Errorf("port %s: rate %v: expected one %d×%d tile, %d tokens per firing (attribute tile)", p.FullName(), p.Rate, c.Width, c.Height, c.Pixels())
			}
		}
	}
	configs.Store(a, c)
	return c, nil
}

func fireSource(f *runtime.Firing) error {
	c, err := ActorConfig(f.Actor())
	if err != nil {
		return err
	}
	i := int(f.Index())
	if i >= c.Tiles() {
		return runtime.ErrEndOfStream
	}
	t := runtime.Output[uint16](f, 0)
	c.Tile(SceneFor(c), c.Known(), i, t)
	for o := 1; o < f.NumOut(); o++ { // the delayed copies
		copy(runtime.Output[uint16](f, o), t)
	}
	return nil
}

func fireFFT(f *runtime.Firing) error {
	c, err := ActorConfig(f.Actor())
	if err != nil {
		return err
	}
	e, err := EngineFor(c)
	if err != nil {
		return fmt.Errorf("actor %s: %w", f.Actor().Name, err)
	}
	z := runtime.Output[complex64](f, 0)
	if err := TransformWith(e, runtime.Input[uint16](f, 0), z, c.Width, c.Height); err != nil {
		return fmt.Errorf("actor %s: %w", f.Actor().Name, err)
	}
	for o := 1; o < f.NumOut(); o++ { // the delayed copies
		copy(runtime.Output[complex64](f, o), z)
	}
	return nil
}

// fireAlign: inputs (tile B, transform B, tile A, transform A), B the
// current tile and A its neighbour, delayed by one tile (west) or one row
// (north) in the channels.
func fireAlign(f *runtime.Firing, north bool) error {
	c, err := ActorConfig(f.Actor())
	if err != nil {
		return err
	}
	i := int(f.Index())
	var t Translation
	if (north && i >= c.Cols) || (!north && i%c.Cols > 0) {
		e, err := EngineFor(c)
		if err != nil {
			return fmt.Errorf("actor %s: %w", f.Actor().Name, err)
		}
		t, err = AlignWith(e, runtime.Input[uint16](f, 2), runtime.Input[uint16](f, 0),
			runtime.Input[complex64](f, 3), runtime.Input[complex64](f, 1), c.Width, c.Height, c.Peaks)
		if err != nil {
			return fmt.Errorf("actor %s: %w", f.Actor().Name, err)
		}
	}
	t.Encode(&runtime.Output[[4]float64](f, 0)[0])
	return nil
}

// The solver's state: one run's pairs (the actor is stateful, so its
// firings come one at a time and in order).
var (
	solveMu    sync.Mutex
	solveWest  []Translation
	solveNorth []Translation
	last       *Result
)

func fireSolve(f *runtime.Firing) error {
	c, err := ActorConfig(f.Actor())
	if err != nil {
		return err
	}
	i := int(f.Index())
	solveMu.Lock()
	defer solveMu.Unlock()
	if i == 0 {
		solveWest, solveNorth = make([]Translation, c.Tiles()), make([]Translation, c.Tiles())
	}
	if i >= c.Tiles() || solveWest == nil {
		return fmt.Errorf("actor %s: firing %d: expected firings 0 to %d, one per tile, from the first", f.Actor().Name, i, c.Tiles()-1)
	}
	solveWest[i] = DecodeTranslation(runtime.Input[[4]float64](f, 0)[0])
	solveNorth[i] = DecodeTranslation(runtime.Input[[4]float64](f, 1)[0])
	if i < c.Tiles()-1 {
		return nil
	}
	r, err := Finish(c, solveWest, solveNorth)
	solveWest, solveNorth = nil, nil
	if err != nil {
		return fmt.Errorf("actor %s: %w", f.Actor().Name, err)
	}
	last = &r
	r.Report(os.Stdout)
	return nil
}

// Last returns the result of the last graph run that reached its last
// tile, and forgets it (nil when none did since the previous call).
func Last() *Result {
	solveMu.Lock()
	defer solveMu.Unlock()
	r := last
	last = nil
	return r
}
