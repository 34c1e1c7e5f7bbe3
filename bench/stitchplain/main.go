// Command stitchplain stitches the seed's 42×59 grid of 1024×1024 tiles
// as a plain Go program, without sluice's runtime: W goroutines each take
// the next tile in row-major order, cut it from the scene, put it on the
// GPU (stitch.GPU.Upload: its phase spectrum computed there) and align
// it with its west and north neighbours there (stitch.GPU.Align), waiting
// for those tiles to be on the GPU; then the positions are solved as the
// graph's solve actor does. It is the hand-written counterpart of
// examples/stitch/stitch-42x59-gpu.yaml, with the same kernels and cuFFT
// plans, and prints one JSON line as examples/stitch/bench does:
//
//	go run ./bench/stitchplain -workers 16
//
// A tile's spectrum is freed by its last pair, and a goroutine finishes
// its tile before it takes the next, so the GPU holds at most a row of
// tiles plus one per goroutine.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/examples/stitch"
)

type result struct {
	Program     string  `json:"program"`
	Grid        string  `json:"grid"`
	Tile        string  `json:"tile"`
	Workers     int     `json:"workers"`
	Seconds     float64 `json:"seconds"`
	TilesPerSec float64 `json:"tiles_per_s"`
	PeakRSSMiB  float64 `json:"peak_rss_mib"`
	Mismatches  int     `json:"mismatches"`
	Tiles       int     `json:"tiles"`
	GPUUsedMiB  float64 `json:"gpu_used_mib"`
	GPUSpectra  int64   `json:"gpu_spectra_peak"`
}

func main() {
	workers := flag.Int("workers", goruntime.NumCPU(), "goroutines (and GOMAXPROCS)")
	rows := flag.Int("rows", 0, "stitch only the first ROWS rows of the grid (0: all)")
	small := flag.Bool("small", false, "the default data set (8×8 tiles of 128×128) instead of the seed's")
	flag.Parse()
	if err := run(context.Background(), *workers, *rows, *small); err != nil {
		fmt.Fprintln(os.Stderr, "stitchplain:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, workers, rows int, small bool) error {
	goruntime.GOMAXPROCS(workers)
	c := stitch.SeedConfig()
	if small {
		c = stitch.DefaultConfig()
	}
	if rows > 0 && rows < c.Rows {
		c.Rows = rows
	}
	e, err := stitch.GPUFor(c.Width, c.Height) // kernels compiled, plans made outside the timing
	if err != nil {
		return err
	}
	scene, known := stitch.SceneFor(c), c.Known()
	start := time.Now()
	west, north, err := align(ctx, c, e, scene, known, workers)
	if err != nil {
		return err
	}
	res, err := stitch.Finish(c, west, north)
	if err != nil {
		return err
	}
	el := time.Since(start)
	res.Report(os.Stderr)
	out := result{Program: "stitchplain", Grid: fmt.Sprintf("%dx%d", c.Rows, c.Cols), Tile: fmt.Sprintf("%dx%d", c.Width, c.Height),
		Workers: workers, Seconds: el.Seconds(), TilesPerSec: float64(c.Tiles()) / el.Seconds(), PeakRSSMiB: stitch.PeakRSS(),
		Mismatches: res.Mismatches, Tiles: c.Tiles(), GPUSpectra: e.PeakHandles()}
	if used, err := e.MemUsed(); err == nil {
		out.GPUUsedMiB = float64(used) / (1 << 20)
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// align computes every west and north translation with workers
// goroutines.
func align(ctx context.Context, c stitch.Config, e *stitch.GPU, scene *stitch.Scene, known []stitch.Pos, workers int) (west, north []stitch.Translation, err error) {
	n := c.Tiles()
	west, north = make([]stitch.Translation, n), make([]stitch.Translation, n)
	handles := make([]uint64, n)
	ready := make([]chan struct{}, n) // closed once handles[i] is set (or the run failed)
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	wait := func(i int) (uint64, error) {
		select {
		case <-ready[i]:
			return handles[i], nil
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tile := make([]uint16, c.Pixels())
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				c.Tile(scene, known, i, tile)
				reads := 0 // the pairs that will read tile i
				for _, ok := range []bool{i%c.Cols > 0, i >= c.Cols, (i+1)%c.Cols > 0 && i+1 < n, i+c.Cols < n} {
					if ok {
						reads++
					}
				}
				h, err := e.Upload(tile, max(reads, 1))
				if err != nil {
					cancel(fmt.Errorf("tile %d: %w", i, err))
					return
				}
				if reads == 0 {
					e.Release(h)
				}
				handles[i] = h
				close(ready[i])
				for _, p := range []struct {
					ok  bool
					a   int
					out []stitch.Translation
				}{{i%c.Cols > 0, i - 1, west}, {i >= c.Cols, i - c.Cols, north}} {
					if !p.ok {
						continue
					}
					ha, err := wait(p.a)
					if err != nil {
						return
					}
					t, err := e.Align(ha, h, c.Peaks)
					if err != nil {
						cancel(fmt.Errorf("pair %d–%d: %w", p.a, i, err))
						return
					}
					p.out[i] = t
					e.Release(ha)
					e.Release(h)
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, nil, err
	}
	return west, north, nil
}
