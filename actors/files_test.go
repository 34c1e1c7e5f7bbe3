package actors

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/runtime"
)

// copyGraph is use(src) → use(dst) on f32 tokens, 4 per firing (16 for
// images: 4×4).
func copyGraph(src, dst string, sp, dp map[string]any) *graph.Graph {
	g := graph.New("copy")
	f32 := graph.MustTokenType("f32")
	r := graph.SDF(16)
	a := g.AddActor("src", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: src, Params: sp}))
	b := g.AddActor("dst", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: dst, Params: dp}))
	g.Join(a.AddPort("y", graph.Out, f32, r, ""), b.AddPort("x", graph.In, f32, r, ""))
	return g
}

// TestFileAccess: the file, CSV and image actors resolve their paths in
// the run's runtime.FileAccess: inside a root, refused out of it, refused
// altogether with Refused, unconfined without either.
func TestFileAccess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.csv"), []byte("topsecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := fsroot.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	run := func(g *graph.Graph, fa runtime.FileAccess) error {
		_, err := runtime.Run(context.Background(), g, runtime.Options{Files: fa})
		return err
	}
	ramp := map[string]any{"count": 2}
	confined := runtime.FileAccess{Root: root}
	// Inside the root: written there, read back.
	for _, c := range []struct{ w, r, path string }{{"csv.write", "csv.read", "a.csv"}, {"file.write", "file.read", "a.f32"}, {"image.write", "image.read", "a.png"}} {
		if err := run(copyGraph("gen.ramp", c.w, ramp, map[string]any{"path": c.path}), confined); err != nil {
			t.Fatalf("%s %s under a root: %v", c.w, c.path, err)
		}
		if _, err := os.Stat(filepath.Join(data, c.path)); err != nil {
			t.Fatalf("%s %s: not written inside the root: %v", c.w, c.path, err)
		}
		if err := run(copyGraph(c.r, "csv.write", map[string]any{"path": c.path}, map[string]any{"path": "back-" + c.path + ".csv"}), confined); err != nil {
			t.Fatalf("%s %s under a root: %v", c.r, c.path, err)
		}
		if b, err := os.ReadFile(filepath.Join(data, "back-"+c.path+".csv")); err != nil || len(b) == 0 {
			t.Fatalf("%s %s: read back nothing: %v", c.r, c.path, err)
		}
	}
	for _, c := range []struct{ use, path, rule string }{
		{"csv.read", "../secret.csv", fsroot.RuleDotDot},
		{"csv.read", filepath.Join(dir, "secret.csv"), fsroot.RuleAbsolute},
		{"file.read", "../secret.csv", fsroot.RuleDotDot},
		{"image.read", "../secret.csv", fsroot.RuleDotDot},
	} {
		err := run(copyGraph(c.use, "csv.write", map[string]any{"path": c.path}, map[string]any{"path": "out.csv"}), confined)
		if err == nil || !strings.Contains(err.Error(), c.rule) || strings.Contains(err.Error(), "topsecret") {
			t.Fatalf("%s %s under a root: %v: expected refused: %s, quoting nothing", c.use, c.path, err, c.rule)
		}
	}
	for _, c := range []struct{ use, path string }{{"csv.write", "../out.csv"}, {"file.write", "/tmp/out.f32"}, {"image.write", "../out-%d.png"}} {
		err := run(copyGraph("gen.ramp", c.use, ramp, map[string]any{"path": c.path}), confined)
		if err == nil || !strings.Contains(err.Error(), "outside the file root") {
			t.Fatalf("%s %s under a root: %v: expected refused", c.use, c.path, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("%d entries beside the root: expected only the root and the secret", len(ents))
	}
	refused := runtime.FileAccess{Refused: "no files here: start with --data-dir DIR"}
	if err := run(copyGraph("gen.ramp", "csv.write", ramp, map[string]any{"path": "a.csv"}), refused); err == nil || !strings.Contains(err.Error(), "no files here: start with --data-dir DIR") {
		t.Fatalf("csv.write with files refused: %v", err)
	}
	// Unconfined (sluice run): an absolute path is the user's to name.
	abs := filepath.Join(dir, "free.csv")
	if err := run(copyGraph("gen.ramp", "csv.write", ramp, map[string]any{"path": abs}), runtime.FileAccess{}); err != nil {
		t.Fatalf("csv.write %s unconfined: %v", abs, err)
	}
}
