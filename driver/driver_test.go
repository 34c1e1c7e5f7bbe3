package driver

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

// TestLoadRefusals: a missing file, a directory and a binary file are one
// sentence at the file (binary data at its line and column).
func TestLoadRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(bin, []byte("kind: graph\nname: \x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "none.yaml"): "none.yaml: no such file: expected a graph",
		dir + "/":                       "is a directory: expected a graph",
		bin:                             "b.yaml:2:7: binary data",
	} {
		_, err := Load(context.Background(), path, Options{})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", path, err, want)
		}
	}
}

// TestLoadRefusesOtherKinds: a file of another kind, with a kind: key or
// told by its top-level keys, is refused by Load and Parse as one sentence
// naming what it is, before any of its keys is read as a graph's; a
// misspelt kind: value is the graph reader's error, at its position.
func TestLoadRefusesOtherKinds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"m.yaml":    {"kind: mapping\nmapping:\n  A: {device: cpu}\n", "m.yaml: a mapping"},
		"mach.yaml": {"processors:\n  cpu: {kind: cpu, clock: 1GHz}\n", "mach.yaml: a machine model"},
		"k.yaml":    {"kind: grpah\nname: x\n", "k.yaml:1:7: kind: this file is read as a graph, but it says kind: grpah"},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(context.Background(), path, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Load %s: got %v, want one line with %q", name, err, c.want)
		}
		_, err = Parse(context.Background(), path, []byte(c.text), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse %s: got %v, want one line with %q", name, err, c.want)
		}
	}
}

// TestPlaceRefusesAnotherMachine: a mapping made for a machine model whose
// processors are no devices here is refused, naming the machine and the
// actor; the same mapping without a machine is left to the mapping check.
func TestPlaceRefusesAnotherMachine(t *testing.T) {
	t.Parallel()
	l, err := Load(context.Background(), "../examples/cd2dat.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(context.Background(), l, PrepareOptions{Run: true})
	if err != nil {
		t.Fatal(err)
	}
	m := &graph.Mapping{Name: "m", Machine: "two-cpus", Origin: "m.yaml", Actors: map[string]*graph.Placement{"A": {Device: "cpu0"}}}
	_, err = Place(context.Background(), p, PlaceOptions{Mapping: m})
	var me *MachineError
	if !errors.As(err, &me) || me.Actor != "A" || !strings.Contains(err.Error(), "written for machine two-cpus") {
		t.Fatalf("got %v, want a MachineError for actor A", err)
	}
	m.Actors["A"].Device = "cpu"
	if _, err := Place(context.Background(), p, PlaceOptions{Mapping: m}); err != nil {
		t.Fatalf("a mapping onto the CPU: %v", err)
	}
}

// TestLoadETHUnderRoot: Load gives its file root to the ETH XML reader, so
// a <src location> that climbs out of the root is refused with fsroot's
// rule, and without a root it reads.
func TestLoadETHUnderRoot(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	dir := filepath.Join(top, "served")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, "k.c"), []byte("SECRETCONTENT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(dir, "g.xml")
	if err := os.WriteFile(g, []byte(`<graph name="g">
  <actor name="a"><port type="out" name="o" rate="1"/><src type="c" location="../k.c"/></actor>
  <actor name="b"><port type="in" name="i" rate="1"/></actor>
  <channel tokensize="4"><sender actor="a" port="o"/><receiver actor="b" port="i"/></channel>
</graph>`), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = Load(context.Background(), g, Options{Root: root})
	if err == nil || !strings.Contains(err.Error(), "g.xml:2:") || !strings.Contains(err.Error(), fsroot.RuleDotDot) || strings.Contains(err.Error(), "SECRETCONTENT") {
		t.Fatalf("an ETH source outside the root: %v: expected fsroot's rule at the <src>, nothing of the file", err)
	}
	if _, err := Load(context.Background(), g, Options{}); err != nil {
		t.Fatalf("without a root: %v", err)
	}
}

// TestPredictEstimatesDynamicPorts: a graph with processes (dynamic ports)
// is predicted as mapping.StaticEstimate's graph, as sluice map searches
// it, and the prediction says what it assumed, first among its notes.
func TestPredictEstimatesDynamicPorts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := Load(ctx, "../examples/conditional/switch-select.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(ctx, l, PrepareOptions{NoCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := CPUMachine(2)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Predict(ctx, p, PredictOptions{Machine: m})
	if err != nil {
		t.Fatalf("expected a prediction under the static estimate, got %v", err)
	}
	if len(pr.Assumptions) != 2 || !strings.HasPrefix(pr.Assumptions[0], "actor sw has dynamic (KPN) ports") {
		t.Fatalf("expected the assumptions for sw and se, found %q", pr.Assumptions)
	}
	if n := pr.Result.Notes; len(n) < 2 || n[0] != "assumed: "+pr.Assumptions[0] || n[1] != "assumed: "+pr.Assumptions[1] {
		t.Fatalf("expected the assumptions first among the notes, found %q", n)
	}
	if !(pr.Result.Iterations > 0) {
		t.Fatalf("expected simulated iterations, found %d", pr.Result.Iterations)
	}
}

// TestKind: a file's kind from its kind: key or its keys; malformed YAML
// is of no kind (its reader reports the error with its position), a
// kind: value that names none is an error at its position.
func TestKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		text, want, err string
	}{
		{"kind: machine\nname: m\n", "machine", ""},
		{"actors:\n  a: {out: {o: {type: f32, rate: 1}}}\n", "graph", ""},
		{"a: [\n", "", ""},
		{"kind: nonsense\n", "", "k.yaml:1:7: kind: expected one of"},
	}
	for i, c := range cases {
		p := filepath.Join(dir, "k.yaml")
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		k, err := Kind(p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("case %d: error %v, expected one containing %q", i, err, c.err)
			}
			continue
		}
		if err != nil || string(k) != c.want {
			t.Errorf("case %d: kind %q, error %v: expected %q and none", i, k, err, c.want)
		}
	}
}
