package runtime

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// A Go actor that drives a device itself reports its work (TraceDevice):
// the trace shows it on the device's lanes, named after the actor, the
// copies with their bytes; untraced, Tracing is false and nothing is kept.
func TestTraceDeviceSpans(t *testing.T) {
	t.Parallel()
	build := func(tracing *bool) *graph.Graph {
		g := graph.New("spans")
		src := addSource(g, "src", 1, 50)
		gpu := g.AddActor("gpu", graph.WithFunc(FireFunc(func(f *Firing) error {
			if !f.Tracing() {
				return nil
			}
			*tracing = true
			t0 := time.Now()
			f.TraceDevice(
				DeviceSpan{Device: "fake:0", Copy: true, ToDevice: true, Bytes: 100, Start: t0, End: t0.Add(time.Microsecond)},
				DeviceSpan{Device: "fake:0", Start: t0.Add(time.Microsecond), End: t0.Add(3 * time.Microsecond)},
				DeviceSpan{Device: "fake:0", Copy: true, Bytes: 8, Start: t0.Add(3 * time.Microsecond), End: t0.Add(4 * time.Microsecond)})
			return nil
		})))
		graph.Connect(g, src, graph.AddInput[int64](gpu, "in", graph.SDF(1)))
		return g
	}
	var traced bool
	if _, err := Run(context.Background(), build(&traced), Options{}); err != nil || traced {
		t.Fatalf("untraced run: err %v, Tracing() %v: want no error and false", err, traced)
	}
	var buf bytes.Buffer
	st, err := Run(context.Background(), build(&traced), Options{Trace: &buf, Workers: 2})
	if err != nil || !traced {
		t.Fatalf("traced run: err %v, Tracing() %v: want no error and true", err, traced)
	}
	events, lanes := readTrace(t, buf.Bytes())
	type sum struct{ n, bytes int64 }
	got := map[string]sum{}
	for _, e := range events {
		if e.Ph != "X" || e.Name != "gpu" || lanes[e.Tid] == "" || lanes[e.Tid][0] == 'c' {
			continue
		}
		if e.Ts < 0 || e.Ts > float64(st.Elapsed.Microseconds())+1 {
			t.Fatalf("span on %s at %.3f µs: outside the run (%v)", lanes[e.Tid], e.Ts, st.Elapsed)
		}
		s := got[lanes[e.Tid]+" "+e.Cat]
		got[lanes[e.Tid]+" "+e.Cat] = sum{s.n + 1, s.bytes + e.Args.Bytes}
	}
	want := map[string]sum{"link to fake:0 copy": {50, 5000}, "device fake:0 firing": {50, 0}, "link from fake:0 copy": {50, 400}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %d spans of %d bytes, want %d of %d (all: %v)", k, got[k].n, got[k].bytes, w.n, w.bytes, got)
		}
	}
}
