package stitch

import (
	"context"
	"fmt"
	"io"
)

// Result is a stitched grid.
type Result struct {
	Config      Config
	West, North []Translation // per tile: its pair with the west and the north neighbour
	Positions   []Pos         // solved origins, smallest x and y 0
	Mismatches  int           // tiles whose origin differs from the known one
	MosaicW     int           // mosaic size written (0 when none)
	MosaicH     int
}

// Finish solves the positions from the pairs, compares them with the
// known ones, and writes the mosaic when c.Mosaic is set.
func Finish(c Config, west, north []Translation) (Result, error) {
	r := Result{Config: c, West: west, North: north}
	pos, err := Solve(c, west, north)
	if err != nil {
		return r, err
	}
	r.Positions, r.Mismatches = pos, Mismatches(c, pos)
	if c.Mosaic != "" {
		img := Compose(c, pos)
		if err := WriteMosaic(c.Mosaic, img); err != nil {
			return r, err
		}
		r.MosaicW, r.MosaicH = img.Bounds().Dx(), img.Bounds().Dy()
	}
	return r, nil
}

// Report writes a summary of r.
func (r Result) Report(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "stitched %d×%d tiles of %d×%d pixels: %d of %d positions equal the known ones\n",
		c.Rows, c.Cols, c.Width, c.Height, c.Tiles()-r.Mismatches, c.Tiles())
	if r.MosaicW > 0 {
		fmt.Fprintf(w, "mosaic %d×%d (1:%d) written to %s\n", r.MosaicW, r.MosaicH, c.MosaicScale, c.Mosaic)
	}
}

// Sequential stitches the grid in one goroutine, the reference the graph
// is measured against: tiles in row-major order, each transformed once,
// aligned with its west and north neighbours, and dropped when its south
// neighbour is done (Cols+1 tiles and transforms live at a time).
func Sequential(ctx context.Context, c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	fft, err := EngineFor(c)
	if err != nil {
		return Result{}, err
	}
	n, px := c.Tiles(), c.Pixels()
	scene, known := SceneFor(c), c.Known()
	slots := c.Cols + 1
	tiles := make([][]uint16, slots)
	ffts := make([][]complex64, slots)
	for i := range tiles {
		tiles[i], ffts[i] = make([]uint16, px), make([]complex64, px)
	}
	west, north := make([]Translation, n), make([]Translation, n)
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		s := i % slots
		c.Tile(scene, known, i, tiles[s])
		if err := TransformWith(fft, tiles[s], ffts[s], c.Width, c.Height); err != nil {
			return Result{}, err
		}
		if i%c.Cols > 0 {
			a := (i - 1) % slots
			if west[i], err = AlignWith(fft, tiles[a], tiles[s], ffts[a], ffts[s], c.Width, c.Height, c.Peaks); err != nil {
				return Result{}, err
			}
		}
		if i >= c.Cols {
			a := (i - c.Cols) % slots
			if north[i], err = AlignWith(fft, tiles[a], tiles[s], ffts[a], ffts[s], c.Width, c.Height, c.Peaks); err != nil {
				return Result{}, err
			}
		}
	}
	return Finish(c, west, north)
}
