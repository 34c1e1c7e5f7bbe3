package stitch

import (
	"bufio"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Solve turns the pairwise translations into tile origins: the maximum
// spanning tree of the grid graph weighted by the pairs' correlations
// (Kruskal), walked from tile 0, each tile placed at its tree parent's
// origin plus the pair's translation; the origins are then shifted so that
// the smallest x and y are 0. west[i] and north[i] are tile i's pairs with
// tiles i−1 and i−Cols (tile i is B, its neighbour A).
func Solve(c Config, west, north []Translation) ([]Pos, error) {
	n := c.Tiles()
	if len(west) != n || len(north) != n {
		return nil, fmt.Errorf("stitch: solve: %d west and %d north translations: expected %d each", len(west), len(north), n)
	}
	type edge struct {
		a, b int
		t    Translation
	}
	var edges []edge
	for i := 0; i < n; i++ {
		if west[i].Valid {
			edges = append(edges, edge{i - 1, i, west[i]})
		}
		if north[i].Valid {
			edges = append(edges, edge{i - c.Cols, i, north[i]})
		}
	}
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].t.NCC > edges[j].t.NCC })
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	adj := make([][]edge, n)
	for _, e := range edges {
		if ra, rb := find(e.a), find(e.b); ra != rb {
			parent[ra] = rb
			adj[e.a] = append(adj[e.a], e)
			adj[e.b] = append(adj[e.b], e)
		}
	}
	pos := make([]Pos, n)
	seen := make([]bool, n)
	seen[0] = true
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range adj[i] {
			switch {
			case e.a == i && !seen[e.b]:
				pos[e.b] = Pos{pos[i].X + e.t.DX, pos[i].Y + e.t.DY}
				seen[e.b] = true
				stack = append(stack, e.b)
			case e.b == i && !seen[e.a]:
				pos[e.a] = Pos{pos[i].X - e.t.DX, pos[i].Y - e.t.DY}
				seen[e.a] = true
				stack = append(stack, e.a)
			}
		}
	}
	for i, s := range seen {
		if !s {
			return nil, fmt.Errorf("stitch: solve: tile %d (row %d, column %d) is not connected to tile 0: expected a valid pair to a neighbour", i, i/c.Cols, i%c.Cols)
		}
	}
	return normalise(pos), nil
}

func normalise(pos []Pos) []Pos {
	mx, my := pos[0].X, pos[0].Y
	for _, p := range pos {
		mx, my = min(mx, p.X), min(my, p.Y)
	}
	out := make([]Pos, len(pos))
	for i, p := range pos {
		out[i] = Pos{p.X - mx, p.Y - my}
	}
	return out
}

// Mismatches counts the tiles whose solved origin differs from the known
// one (both taken relative to their smallest x and y).
func Mismatches(c Config, got []Pos) int {
	want := normalise(c.Known())
	got = normalise(got)
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			bad++
		}
	}
	return bad
}

// Compose builds the mosaic, every MosaicScale-th pixel in x and y: the
// tiles, read again (regenerated: only the pixels the mosaic keeps, see
// Config.TileSample) one at a time, are laid at their origins in row-major
// order, later tiles over earlier ones.
func Compose(c Config, pos []Pos) *image.Gray16 {
	pos = normalise(pos)
	mx, my := 0, 0
	for _, p := range pos {
		mx, my = max(mx, p.X+c.Width), max(my, p.Y+c.Height)
	}
	s := c.MosaicScale
	img := image.NewGray16(image.Rect(0, 0, (mx+s-1)/s, (my+s-1)/s))
	scene, known := SceneFor(c), c.Known()
	for i, p := range pos {
		c.TileSample(scene, known, i, (s-p.X%s)%s, (s-p.Y%s)%s, s, func(x, y int, v uint16) {
			o := ((p.Y+y)/s)*img.Stride + (p.X+x)/s*2
			img.Pix[o], img.Pix[o+1] = byte(v>>8), byte(v)
		})
	}
	return img
}

// WriteMosaic writes img to path: for .png an 8-bit grey PNG, the grey
// levels stretched from the mosaic's darkest to its brightest pixel (for
// viewing); for .pgm the 16-bit samples as they are (binary PGM, P5).
func WriteMosaic(path string, img *image.Gray16) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("stitch: mosaic: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, stretch(img))
	case ".pgm":
		b := img.Bounds()
		if _, err = fmt.Fprintf(w, "P5\n%d %d\n65535\n", b.Dx(), b.Dy()); err == nil {
			_, err = w.Write(img.Pix) // big-endian 16-bit samples, as PGM wants
		}
	default:
		err = fmt.Errorf("extension %q: expected .png or .pgm", filepath.Ext(path))
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stitch: mosaic %s: %w", path, err)
	}
	return nil
}

// stretch maps img's grey levels linearly onto 0–255, darkest to brightest.
func stretch(img *image.Gray16) *image.Gray {
	lo, hi := uint16(65535), uint16(0)
	for i := 0; i+1 < len(img.Pix); i += 2 {
		v := uint16(img.Pix[i])<<8 | uint16(img.Pix[i+1])
		lo, hi = min(lo, v), max(hi, v)
	}
	out := image.NewGray(img.Bounds())
	span := max(int(hi)-int(lo), 1)
	for i := range out.Pix {
		v := uint16(img.Pix[2*i])<<8 | uint16(img.Pix[2*i+1])
		out.Pix[i] = uint8((int(v) - int(lo)) * 255 / span)
	}
	return out
}
