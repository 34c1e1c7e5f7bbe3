// Command metapipe runs the pipeline-model of fig15.yaml from the
// application side (Caravela's Fig. 17): it gives the initonce port its
// block, sends blocks to the entrance port and receives every third
// output from the exit port.
//
//	go run ./examples/metapipe -n 9
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/metapipe"
	"github.com/sluicehq/sluice/runtime"
)

func init() {
	runtime.RegisterFunc("fig15.add", runtime.FireFunc(func(f *runtime.Firing) error {
		x, fb, y := runtime.Input[float32](f, 0), runtime.Input[float32](f, 1), runtime.Output[float32](f, 0)
		for i := range y {
			y[i] = x[i] + fb[i]
		}
		return nil
	}))
	runtime.RegisterFunc("fig15.double", runtime.FireFunc(func(f *runtime.Firing) error {
		x, y := runtime.Input[float32](f, 0), runtime.Output[float32](f, 0)
		for i := range y {
			y[i] = 2 * x[i]
		}
		return nil
	}))
	runtime.RegisterFunc("fig15.tee", runtime.FireFunc(func(f *runtime.Firing) error {
		copy(f.Out(0), f.In(0))
		copy(f.Out(1), f.In(0))
		return nil
	}))
}

func main() {
	n := flag.Int("n", 9, "blocks to send to the entrance port")
	flag.Parse()
	outs, err := run(context.Background(), fig15Path(), *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "metapipe:", err)
		os.Exit(1)
	}
	for i, o := range outs {
		fmt.Printf("exit block %d: %v\n", i, o)
	}
}

// fig15Path finds fig15.yaml next to this source file or in the working
// directory.
func fig15Path() string {
	if _, err := os.Stat("fig15.yaml"); err == nil {
		return "fig15.yaml"
	}
	if _, file, _, ok := goruntime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(file), "fig15.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	// Built with -trimpath (no source paths): from the repository's root.
	return filepath.Join("examples", "metapipe", "fig15.yaml")
}

// run drives the pipeline: block k of the entrance holds k+1 in every
// token, each (re-)initialisation of the loop 100·(r+1), where r counts
// the initialisations. It returns the exit's blocks.
func run(ctx context.Context, path string, n int) ([][]float32, error) {
	l, err := driver.Load(ctx, path, driver.Options{})
	if err != nil {
		return nil, err
	}
	pl := l.Pipeline
	if pl == nil {
		return nil, fmt.Errorf("%s: expected a pipeline-model (a graph with a pipeline: section), found a graph without one", path)
	}
	p, err := metapipe.Start(ctx, pl, metapipe.Options{})
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	every := pl.RoleOf(pl.Graph.Actor("fm0").Port("fb")).Every
	var outs [][]float32
	for k := 0; k < n; k++ {
		if k%every == 0 {
			if err := p.Init(ctx, "fm0.fb", block(float32(100*(k/every+1)))); err != nil {
				return nil, err
			}
		}
		if err := p.Send(ctx, "x", block(float32(k+1))); err != nil {
			return nil, err
		}
		if (k+1)%3 == 0 { // the exit's iteration limit
			b, err := p.Recv(ctx, "y")
			if err != nil {
				return nil, err
			}
			outs = append(outs, floats(b))
		}
	}
	p.CloseSend()
	if _, err := p.Recv(ctx, "y"); err != runtime.ErrEndOfStream {
		return nil, fmt.Errorf("after the last block: got %v, expected the end of the stream", err)
	}
	if _, err := p.Wait(); err != nil {
		return nil, err
	}
	return outs, nil
}

func block(v float32) []byte {
	b := make([]byte, 16)
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
