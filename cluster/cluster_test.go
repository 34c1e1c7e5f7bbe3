package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

func runPipe(t *testing.T, ex runtime.RemoteExecutor, mp *graph.Mapping, iters int64) ([]float32, *runtime.Stats, error) {
	t.Helper()
	sink := &collector{}
	g := pipeline(200, 64, sink)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := runtime.Options{Mapping: mp, Iterations: iters}
	if ex != nil {
		opts.Remote = ex
	}
	st, err := runtime.Run(ctx, g, opts)
	return sink.got, st, err
}

func connect(t *testing.T, url string, c Credentials) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := Connect(ctx, url, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestRemoteMatchesLocal(t *testing.T) {
	tr := startTree(t, nil, Credentials{}, Limits{})
	want, _, err := runPipe(t, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 200*64 {
		t.Fatalf("local run: %d tokens, want %d", len(want), 200*64)
	}
	cl := connect(t, tr.root.ClientURL(), Credentials{})
	mp := &graph.Mapping{Name: "remote", Actors: map[string]*graph.Placement{
		"scale": {Device: "worker:w1/cpu"},
		"fir":   {Device: "worker:w2/cpu"},
	}}
	for _, iters := range []int64{0, 150} {
		ex := NewExecutor(cl, ExecutorOptions{Chunk: 4096, HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second})
		got, st, err := runPipe(t, ex, mp, iters)
		if err != nil {
			t.Fatalf("iterations %d: %v", iters, err)
		}
		w := want
		if iters > 0 {
			w = want[:iters*64]
		}
		if !slices.Equal(got, w) {
			t.Fatalf("iterations %d: remote run gave %d tokens, local %d; first difference at %d", iters, len(got), len(w), firstDiff(got, w))
		}
		for _, a := range st.Actors {
			if (a.Name == "scale" || a.Name == "fir") && a.Firings != int64(len(w)/64) {
				t.Errorf("iterations %d: remote actor %s reports %d firings, want %d", iters, a.Name, a.Firings, len(w)/64)
			}
		}
	}
}

func firstDiff(a, b []float32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestDevicesAcrossTree(t *testing.T) {
	tr := startTree(t, nil, Credentials{}, Limits{MaxStream: 1 << 20})
	cl := connect(t, tr.child.ClientURL(), Credentials{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ds, err := cl.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	for _, d := range ds {
		paths[d.Worker] = d.Path
		if d.Limits.MaxStream != 1<<20 || d.ComputeUnits != 2 || d.Backend != "cpu" {
			t.Errorf("device %+v: expected the worker's limits and device fields", d)
		}
	}
	if paths["w1"] != "root" || paths["w2"] != "root/child" {
		t.Fatalf("paths %v: want w1 at root, w2 at root/child", paths)
	}
	q, err := cl.Query(ctx, "backend=cpu,units>=2,worker=w2")
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 1 || q[0].Worker != "w2" {
		t.Fatalf("query: %+v, want w2's cpu", q)
	}
	if q, _ := cl.Query(ctx, "memory>=2GiB"); len(q) != 0 {
		t.Fatalf("query memory>=2GiB: %+v, want none", q)
	}
	if _, err := cl.Query(ctx, "colour=blue"); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("bad query: %v", err)
	}
}

func TestRemoteTraceAndStats(t *testing.T) {
	tr := startTree(t, nil, Credentials{}, Limits{})
	cl := connect(t, tr.root.ClientURL(), Credentials{})
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"fir": {Device: "worker:w1/cpu"}, "scale": {Device: "worker:w2/cpu"}}}
	sink := &collector{}
	var trace bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := runtime.Run(ctx, pipeline(0, 64, sink), runtime.Options{Iterations: 50, Mapping: mp, Remote: fastExecutor(cl), Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	var tj struct {
		Events []struct {
			Name, Cat string
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(trace.Bytes(), &tj); err != nil {
		t.Fatalf("trace: %v", err)
	}
	n := map[string]int{}
	for _, e := range tj.Events {
		if e.Cat == "firing" {
			n[e.Name]++
		}
	}
	if n["fir"] != 50 || n["scale"] != 50 {
		t.Fatalf("trace has %d firings of fir and %d of scale, want 50 each (remote firings come back)", n["fir"], n["scale"])
	}
	for _, a := range st.Actors {
		if a.Name == "fir" && (a.Firings != 50 || a.Mean <= 0 || a.Busy <= 0) {
			t.Fatalf("stats of remote fir: %+v: expected 50 firings with times", a)
		}
	}
}

// TestRemoteEndsEarly: a remote actor that ends its stream before its
// input does (limit) ends the run cleanly, the endless source included.
func TestRemoteEndsEarly(t *testing.T) {
	for _, w := range []string{"w1", "w2"} { // direct TCP, NATS
		tr := startTree(t, nil, Credentials{}, Limits{})
		cl := connect(t, tr.root.ClientURL(), Credentials{})
		g := graph.New("early")
		f32 := graph.MustTokenType("f32")
		src := g.AddActor("src", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "gen.ramp"}))
		lim := g.AddActor("lim", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "limit", Params: map[string]any{"count": 10}}))
		sink := &collector{}
		sk := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(sink.fire)))
		g.Join(src.AddPort("y", graph.Out, f32, graph.SDF(8), ""), lim.AddPort("x", graph.In, f32, graph.SDF(8), ""))
		g.Join(lim.AddPort("y", graph.Out, f32, graph.SDF(8), ""), sk.AddPort("x", graph.In, f32, graph.SDF(8), ""))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		mp := &graph.Mapping{Actors: map[string]*graph.Placement{"lim": {Device: "worker:" + w + "/cpu"}}}
		_, err := runtime.Run(ctx, g, runtime.Options{Mapping: mp, Remote: fastExecutor(cl)})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if len(sink.got) != 80 || sink.got[79] != 79 {
			t.Fatalf("%s: sink got %d tokens, want 80 (0..79)", w, len(sink.got))
		}
	}
}

// TestChooseAsksAMissedWorker: a worker the tree's listing missed (its
// answer came after the listing's quiet period, as on a loaded host) is
// asked directly before a placement on it is refused; a worker that is
// not there is still refused, naming it.
func TestChooseAsksAMissedWorker(t *testing.T) {
	t.Parallel()
	tr := startTree(t, nil, Credentials{}, Limits{})
	cl := connect(t, tr.root.ClientURL(), Credentials{})
	ex := NewExecutor(cl, ExecutorOptions{})
	ex.queried = true // a listing that found no worker
	ctx := context.Background()
	p, err := ex.choose(ctx, &runtime.RemoteActor{Placement: &graph.Placement{Device: "worker:w2/cpu"}})
	if err != nil || p.Worker != "w2" || p.Device != "cpu" {
		t.Fatalf("expected w2/cpu found by asking w2, got %+v, %v", p, err)
	}
	for _, name := range []string{"w9", "*", ">", "w1.info"} {
		_, err = ex.choose(ctx, &runtime.RemoteActor{Placement: &graph.Placement{Device: "worker:" + name + "/cpu"}})
		if err == nil || !strings.Contains(err.Error(), `no worker "`+name+`" in the tree`) {
			t.Fatalf("expected %s refused by name, got %v", name, err)
		}
	}
	if _, err := cl.Worker(ctx, "*"); err == nil || !strings.Contains(err.Error(), "expected no dots") {
		t.Fatalf("Worker(*): expected a refused name, got %v", err)
	}
}
