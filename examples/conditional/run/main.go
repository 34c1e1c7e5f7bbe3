// Command run runs examples/conditional/conditional.yaml for a number of
// frames and prints how many took each branch and the first output means:
//
//	go run ./examples/conditional/run -frames 100
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"github.com/sluicehq/sluice/examples/conditional"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

func main() {
	frames := flag.Int64("frames", 100, "frames to run")
	file := flag.String("graph", defaultGraph(), "the graph file")
	flag.Parse()
	if err := run(*file, *frames); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}

// defaultGraph is conditional.yaml beside this command's package, or, in
// a program built with -trimpath (no source paths), the repository's
// examples/conditional/conditional.yaml from the working directory.
func defaultGraph() string {
	if _, src, _, ok := goruntime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(src), "..", "conditional.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "examples/conditional/conditional.yaml"
}

func run(file string, frames int64) error {
	g, err := spec.LoadGraph(file)
	if err != nil {
		return err
	}
	st, err := runtime.Run(context.Background(), g, runtime.Options{Iterations: frames, CheckEmpty: true})
	if err != nil {
		return err
	}
	if route := st.Actor("route"); route != nil && len(route.Branches) == 2 {
		b := route.Branches
		fmt.Printf("%d frames in %v: %d brightened (control 0), %d darkened (control 1)\n", frames, st.Elapsed, b[0], b[1])
	} else {
		// A graph routing with switch and select processes (kernel.yaml)
		// has no conditional pattern counting the branches.
		fmt.Printf("%d frames in %v\n", frames, st.Elapsed)
	}
	means := conditional.DefaultSink.Take()
	for t := 0; t < len(means) && t < 8; t++ {
		fmt.Printf("frame %d: level %.3f → mean %.3f\n", t, conditional.Level(int64(t)), means[t])
	}
	return nil
}
