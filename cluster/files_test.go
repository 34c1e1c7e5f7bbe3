package cluster

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/runtime"
)

// readGraph is file.read(path) on a worker → a local sink.
func readGraph(path string, sink *collector) *graph.Graph {
	g := graph.New("read")
	f32 := graph.MustTokenType("f32")
	src := g.AddActor("src", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "file.read", Params: map[string]any{"path": path}}))
	so := src.AddPort("y", graph.Out, f32, graph.SDF(4), "")
	sk := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(sink.fire)))
	g.Join(so, sk.AddPort("x", graph.In, f32, graph.SDF(4), ""))
	return g
}

// writeGraph is a local ramp → file.write(path) on a worker.
func writeGraph(path string) *graph.Graph {
	g := graph.New("write")
	f32 := graph.MustTokenType("f32")
	src := g.AddActor("src", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "gen.ramp", Params: map[string]any{"count": 4}}))
	so := src.AddPort("y", graph.Out, f32, graph.SDF(4), "")
	sk := g.AddActor("sink", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "file.write", Params: map[string]any{"path": path}}))
	g.Join(so, sk.AddPort("x", graph.In, f32, graph.SDF(4), ""))
	return g
}

// TestWorkerFiles: a worker started with a data directory confines its
// file actors to it: relative paths inside it work; absolute paths, ".."
// above it and symbolic links out of it are refused with the rule, quoting
// nothing of the file. A worker without one refuses file actors with a
// sentence naming --data-dir.
func TestWorkerFiles(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{data, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "TOP-SECRET-CONTENT-0123456789abcdef"
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret", filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	var in []byte
	for i := range 8 {
		in = binary.LittleEndian.AppendUint32(in, math.Float32bits(float32(i)+0.5))
	}
	if err := os.WriteFile(filepath.Join(data, "in.f32"), in, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSolo(t, WorkerOptions{DataDir: data})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w2, err := StartWorker(ctx, WorkerOptions{Broker: s.b.ClientURL(), Name: "w2", Devices: []device.Info{testCPU},
		HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w2.Close)
	for {
		if _, err := s.cl.Worker(ctx, "w2"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	on := func(w, actor string) runtime.Options {
		return runtime.Options{Remote: fastExecutor(s.cl), Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{actor: {Device: "worker:" + w + "/cpu"}}}}
	}

	t.Run("inside", func(t *testing.T) {
		sink := &collector{}
		if _, err := runtime.Run(ctx, readGraph("in.f32", sink), on("w1", "src")); err != nil {
			t.Fatal(err)
		}
		if len(sink.got) != 8 || sink.got[7] != 7.5 {
			t.Fatalf("read %v: expected 0.5 … 7.5", sink.got)
		}
		if _, err := runtime.Run(ctx, writeGraph("sub/../out.f32"), on("w1", "sink")); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(data, "out.f32")); err != nil || len(b) != 16*4 {
			t.Fatalf("written inside the data directory: %d bytes, %v: expected 64", len(b), err)
		}
	})
	for _, c := range []struct{ name, path, rule string }{
		{"absolute", filepath.Join(outside, "secret"), fsroot.RuleAbsolute},
		{"etc passwd", "/etc/passwd", fsroot.RuleAbsolute},
		{"dot dot", "../outside/secret", fsroot.RuleDotDot},
		{"deep dot dot", "../../../../../../../../etc/passwd", fsroot.RuleDotDot},
		{"symlink out", "link", fsroot.RuleSymlink},
	} {
		t.Run("read "+c.name, func(t *testing.T) {
			sink := &collector{}
			_, err := runtime.Run(ctx, readGraph(c.path, sink), on("w1", "src"))
			if err == nil || !strings.Contains(err.Error(), c.rule) {
				t.Fatalf("file.read %s on a worker with --data-dir: %v: expected refused: %s", c.path, err, c.rule)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "root:") || len(sink.got) > 0 {
				t.Fatalf("file.read %s: the refusal quotes the file or tokens came: %v, %d tokens", c.path, err, len(sink.got))
			}
			t.Logf("%v", err)
		})
	}
	t.Run("write out", func(t *testing.T) {
		for _, p := range []string{"../outside/x", "../../../../../../../../" + filepath.Join(outside, "y")[1:], filepath.Join(outside, "z")} {
			_, err := runtime.Run(ctx, writeGraph(p), on("w1", "sink"))
			if err == nil || !strings.Contains(err.Error(), "outside the file root") {
				t.Fatalf("file.write %s: %v: expected refused", p, err)
			}
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Fatalf("the directory outside the data directory holds %d entries: expected the secret only", len(ents))
		}
	})
	t.Run("no data dir", func(t *testing.T) {
		_, err := runtime.Run(ctx, readGraph("in.f32", &collector{}), on("w2", "src"))
		if err == nil || !strings.Contains(err.Error(), "worker w2 lends no files: it was started without --data-dir DIR") {
			t.Fatalf("file.read on a worker without --data-dir: %v: expected refused naming the flag", err)
		}
		t.Logf("%v", err)
		_, err = runtime.Run(ctx, writeGraph("x.f32"), on("w2", "sink"))
		if err == nil || !strings.Contains(err.Error(), "--data-dir") {
			t.Fatalf("file.write on a worker without --data-dir: %v: expected refused naming the flag", err)
		}
	})
}

// TestWorkerRefusesConsoleActors: a worker refuses the built-ins that
// would read its standard input (stdin) or write its standard output
// (stdout), with data directory or without, before anything runs, with a
// sentence naming the actor and what to do instead; the same actor mapped
// to the client runs, and the worker goes on serving.
func TestWorkerRefusesConsoleActors(t *testing.T) {
	t.Parallel()
	s := startSolo(t, WorkerOptions{DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f32 := graph.MustTokenType("f32")
	printer := func() *graph.Graph { // ramp → stdout
		g := graph.New("print")
		src := g.AddActor("src", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "gen.ramp", Params: map[string]any{"count": 2}}))
		out := g.AddActor("out", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "stdout", Params: map[string]any{"format": "binary"}}))
		g.Join(src.AddPort("y", graph.Out, f32, graph.SDF(1), ""), out.AddPort("x", graph.In, f32, graph.SDF(1), ""))
		return g
	}
	reader := func(sink *collector) *graph.Graph { // stdin → sink
		g := graph.New("feed")
		in := g.AddActor("in", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "stdin", Params: map[string]any{"count": 1}}))
		sk := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(sink.fire)))
		g.Join(in.AddPort("y", graph.Out, f32, graph.SDF(1), ""), sk.AddPort("x", graph.In, f32, graph.SDF(1), ""))
		return g
	}
	on := func(actor string) runtime.Options {
		return runtime.Options{Remote: fastExecutor(s.cl), Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{actor: {Device: "worker:w1/cpu"}}}}
	}
	for _, c := range []struct {
		actor, use string
		g          *graph.Graph
		want       []string
	}{
		{"out", "stdout", printer(), []string{`worker w1 refuses actor "out" (use: stdout)`, "standard output", `map "out" to the client`, "--data-dir", "file.write"}},
		{"in", "stdin", reader(&collector{}), []string{`worker w1 refuses actor "in" (use: stdin)`, "standard input", `map "in" to the client`, "--data-dir", "file.read"}},
	} {
		st, err := runtime.Run(ctx, c.g, on(c.actor))
		if err == nil {
			t.Fatalf("%s on the worker: ran (%v), expected a refusal", c.use, st)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s on the worker: %v\nexpected it to say %q", c.use, err, w)
			}
		}
		if st != nil {
			for _, a := range st.Actors {
				if a.Firings != 0 {
					t.Errorf("%s on the worker: actor %s fired %d times before the refusal", c.use, a.Name, a.Firings)
				}
			}
		}
	}
	// The worker goes on serving: a ramp on it feeds a local sink.
	g := graph.New("ramp")
	src := g.AddActor("src", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "gen.ramp", Params: map[string]any{"count": 2}}))
	sink := &collector{}
	sk := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(sink.fire)))
	g.Join(src.AddPort("y", graph.Out, f32, graph.SDF(1), ""), sk.AddPort("x", graph.In, f32, graph.SDF(1), ""))
	if _, err := runtime.Run(ctx, g, on("src")); err != nil || len(sink.got) != 2 {
		t.Fatalf("a ramp on the worker after the refusals: %v tokens, %v: expected 2", sink.got, err)
	}
}
