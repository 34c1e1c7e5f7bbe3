package spec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
)

// TestRootRefusesEscapes: under a file root, a composite graph file, a
// kernel source and a flow-model file outside it are refused at the
// field that names them with fsroot's rule, quoting nothing of the file
// outside.
func TestRootRefusesEscapes(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	dir := filepath.Join(top, "served")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := "kind: graph\nname: SECRETCONTENT\nactors: {}\n"
	if err := os.WriteFile(filepath.Join(top, "outside.yaml"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	resolved := 0
	fm := func(ctx context.Context, a *graph.Actor, ref FlowModelRef) error { resolved++; return nil }
	for _, c := range []struct{ name, yaml, rule string }{
		{"composite", "kind: graph\nname: g\nactors:\n  A: {graph: ../outside.yaml}\n", fsroot.RuleDotDot},
		{"absolute", "kind: graph\nname: g\nactors:\n  A: {graph: " + filepath.Join(top, "outside.yaml") + "}\n", fsroot.RuleAbsolute},
		{"kernel", "kind: graph\nname: g\nactors:\n  A: {out: {o: {type: f32, rate: 1}}, kernel: {opencl: ../outside.yaml}}\n  B: {in: {i: {type: f32, rate: 1}}, use: discard}\nchannels: [{from: A.o, to: B.i}]\n", fsroot.RuleDotDot},
		{"flowmodel", "kind: graph\nname: g\nactors:\n  A: {flowmodel: ../outside.yaml}\n", fsroot.RuleDotDot},
	} {
		_, err := ParseGraphWith(context.Background(), filepath.Join(dir, "g.yaml"), []byte(c.yaml), Options{Root: root, FlowModels: fm})
		var el ErrorList
		if !errors.As(err, &el) || len(el) == 0 {
			t.Fatalf("%s: got %v, want a positioned refusal", c.name, err)
		}
		e := el[0]
		if e.Line != 4 || e.Col == 0 || !strings.Contains(e.Msg, c.rule) || !strings.Contains(e.Msg, "outside the file root") {
			t.Errorf("%s: got %q, want line 4 with the rule %q", c.name, e.Error(), c.rule)
		}
		if strings.Contains(err.Error(), "SECRETCONTENT") {
			t.Errorf("%s: the error quotes the file outside the root: %v", c.name, err)
		}
	}
	if resolved != 0 {
		t.Errorf("the resolver was called %d times for references outside the root", resolved)
	}
	// Inside the root the same composite reads.
	if err := os.WriteFile(filepath.Join(dir, "inside.yaml"), []byte("kind: graph\nname: in\nactors:\n  X: {out: {o: {type: f32, rate: 1}}}\n  Y: {in: {i: {type: f32, rate: 1}}}\nchannels: [{from: X.o, to: Y.i}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseGraphWith(context.Background(), filepath.Join(dir, "g.yaml"), []byte("kind: graph\nname: g\nactors:\n  A: {graph: inside.yaml}\n"), Options{Root: root}); err != nil {
		t.Fatalf("a composite inside the root: %v", err)
	}
}

// TestNoResolverRefusesFlowModels: a parse-only load names the reference
// and says how to resolve it.
func TestNoResolverRefusesFlowModels(t *testing.T) {
	t.Parallel()
	_, err := ParseGraph("g.yaml", []byte("kind: graph\nname: g\nactors:\n  A: {flowmodel: m.yaml}\n"))
	if err == nil || !strings.Contains(err.Error(), "g.yaml:4:") || !strings.Contains(err.Error(), "resolves no flow-models") {
		t.Fatalf("got %v", err)
	}
}

// TestETHRootRefusesEscapes: under a file root, an ETH XML graph's <src
// location> is read through it as a YAML kernel: source is: an absolute
// path, a .. that climbs above it and a symbolic link that leads out of it
// are refused at the <src> element with fsroot's rule, quoting nothing of
// the file outside; a source inside the root is taken.
func TestETHRootRefusesEscapes(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	dir := filepath.Join(top, "served")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(top, "outside.c")
	if err := os.WriteFile(outside, []byte("SECRETCONTENT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.c")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inside.c"), []byte("void f(void) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	xmlWith := func(loc string) []byte {
		return []byte(`<graph name="g">
  <actor name="a">
    <port type="out" name="o" rate="1"/>
    <src type="c" location="` + loc + `"/>
  </actor>
  <actor name="b">
    <port type="in" name="i" rate="1"/>
  </actor>
  <channel tokensize="4"><sender actor="a" port="o"/><receiver actor="b" port="i"/></channel>
</graph>`)
	}
	name := filepath.Join(dir, "g.xml")
	for _, c := range []struct{ name, loc, rule string }{
		{"dot dot", "../outside.c", fsroot.RuleDotDot},
		{"absolute", outside, fsroot.RuleAbsolute},
		{"symbolic link", "link.c", fsroot.RuleSymlink},
	} {
		_, err := ImportETHGraphWith(name, xmlWith(c.loc), Options{Root: root})
		var el ErrorList
		if !errors.As(err, &el) || len(el) != 1 {
			t.Fatalf("%s: got %v, want one positioned refusal", c.name, err)
		}
		e := el[0]
		if e.Line != 4 || e.Col != 5 || !strings.Contains(e.Msg, "<src> location") || !strings.Contains(e.Msg, c.rule) || !strings.Contains(e.Msg, "outside the file root") {
			t.Errorf("%s: got %q, want line 4 col 5 with the rule %q", c.name, e.Error(), c.rule)
		}
		if strings.Contains(err.Error(), "SECRETCONTENT") {
			t.Errorf("%s: the error quotes the file outside the root: %v", c.name, err)
		}
		// LoadWith (what reads an .xml file by its name) confines it too.
		if err := os.WriteFile(name, xmlWith(c.loc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadWith(context.Background(), name, Options{Root: root}); err == nil || !strings.Contains(err.Error(), c.rule) {
			t.Errorf("%s: LoadWith: got %v, want the rule %q", c.name, err, c.rule)
		}
	}
	g, err := ImportETHGraphWith(name, xmlWith("inside.c"), Options{Root: root})
	if err != nil {
		t.Fatalf("a source inside the root: %v", err)
	}
	if impls := g.Actor("a").Impls; len(impls) != 1 || impls[0].Source != filepath.Join(dir, "inside.c") {
		t.Fatalf("a source inside the root: impls %+v, want %s", impls, filepath.Join(dir, "inside.c"))
	}
	// Without a root (sluice run on one's own files) the same paths read.
	if _, err := ImportETHGraph(name, xmlWith("../outside.c")); err != nil {
		t.Fatalf("no root: %v", err)
	}
}
