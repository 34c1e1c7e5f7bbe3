package runtime

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// A traced run with a kernel actor whose channels are copied shows the
// device's link: a lane per direction, one slice per copy, the copies'
// bytes adding up to the channels' tokens, each lane's slices in order and
// inside the run.
func TestTraceDeviceLinks(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		const iters = 300
		g, s := chain()
		var buf bytes.Buffer
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"a1": kernelAt(devs[0], 4, 8)}}
		st, err := Run(context.Background(), g, Options{Iterations: iters, Mapping: m, Trace: &buf, tune: tuning{noMapped: true}})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.got) != iters*rate {
			t.Fatalf("sink got %d tokens, want %d", len(s.got), iters*rate)
		}
		events, lane := readTrace(t, buf.Bytes())
		type laneSum struct {
			bytes, n int64
			end      float64
		}
		sums := map[string]*laneSum{}
		runUs := float64(st.Elapsed.Microseconds()) + 1000
		for _, e := range events {
			if e.Ph != "X" || e.Cat != "copy" {
				continue
			}
			name := lane[e.Tid]
			if !strings.HasPrefix(name, "link ") || e.Name != "a1" {
				t.Fatalf("a copy %q on lane %q: want the kernel actor a1 on a link lane", e.Name, name)
			}
			ls := sums[name]
			if ls == nil {
				ls = &laneSum{}
				sums[name] = ls
			}
			if e.Ts < ls.end-1 || e.Dur < 0 || e.Ts+e.Dur > runUs {
				t.Fatalf("copy on %s at %.3f µs for %.3f µs: the previous one ended at %.3f, the run took %.0f µs", name, e.Ts, e.Dur, ls.end, runUs)
			}
			ls.end = e.Ts + e.Dur
			ls.bytes += e.Args.Bytes
			ls.n++
		}
		want := int64(iters * rate * 4)
		for _, dir := range []string{"link to ", "link from "} {
			var ls *laneSum
			for name, v := range sums {
				if strings.HasPrefix(name, dir) {
					ls = v
				}
			}
			if ls == nil {
				t.Fatalf("no %q lane in the trace: lanes %v", dir, lane)
			}
			if ls.bytes != want {
				t.Errorf("%s…: copies moved %d bytes in %d copies, want %d", dir, ls.bytes, ls.n, want)
			}
		}
	})
}
