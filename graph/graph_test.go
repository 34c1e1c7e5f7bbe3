package graph

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTokenType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		size int
		err  string
	}{
		{"f32", "f32", 4, ""},
		{"c64", "c64", 8, ""},
		{"u8", "u8", 1, ""},
		{"[4]f32", "[4]f32", 16, ""},
		{"[3]u8", "[3]u8", 3, ""},
		{"bytes12", "bytes12", 12, ""},
		{"float", "", 0, "expected one of"},
		{"[0]f32", "", 0, "N > 0"},
		{"[4]float", "", 0, "scalar one of"},
		{"bytes0", "", 0, "positive"},
		{"[4611686018427387905]f32", "", 0, "N > 0"},
		{"bytes9999999999999", "", 0, "positive integer up to"},
	} {
		got, err := ParseTokenType(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTokenType(%q) error = %v, want it to mention %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got.Name != tc.name || got.Size != tc.size {
			t.Errorf("ParseTokenType(%q) = %v/%d, %v; want %s/%d", tc.in, got, got.Size, err, tc.name, tc.size)
		}
	}
}

func TestTypeOf(t *testing.T) {
	type pair struct{ A, B int16 }
	for _, tc := range []struct {
		got  TokenType
		want string
		size int
	}{
		{TypeOf[float32](), "f32", 4},
		{TypeOf[int32](), "i32", 4},
		{TypeOf[complex64](), "c64", 8},
		{TypeOf[[4]float32](), "[4]f32", 16},
		{TypeOf[pair](), "bytes4", 4},
	} {
		if tc.got.Name != tc.want || tc.got.Size != tc.size {
			t.Errorf("TypeOf = %v (%d bytes), want %s (%d)", tc.got, tc.got.Size, tc.want, tc.size)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("TypeOf[string] did not panic")
		}
	}()
	TypeOf[string]()
}

func TestRate(t *testing.T) {
	r, err := ParseRate("[1, 2,1]")
	if err != nil || !r.IsCSDF() || r.Sum() != 4 || r.At(4) != 2 || r.String() != "[1,2,1]" {
		t.Fatalf("ParseRate CSDF = %v (sum %d), %v", r, r.Sum(), err)
	}
	if r, _ := ParseRate("dynamic"); !r.IsDynamic() || r.String() != "dynamic" {
		t.Errorf("dynamic rate = %v", r)
	}
	if _, err := ParseRate("-1"); err == nil {
		t.Error("negative rate accepted")
	}
	if !SDF(3).Equal(CSDF(3)) || SDF(3).Equal(CSDF(3, 3)) {
		t.Error("Rate.Equal is wrong")
	}
}

// chain builds a → b with the typed builder.
func chain() (*Graph, *Actor, *Actor) {
	g := New("chain")
	a := g.AddActor("a")
	b := g.AddActor("b", Stateful())
	out := AddOutput[float32](a, "y", SDF(4), BlockSize(2))
	in := AddInput[float32](b, "x", SDF(2))
	Connect(g, out, in, Capacity(8), Initial(2))
	return g, a, b
}

func TestBuilderValid(t *testing.T) {
	g, a, b := chain()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	c := g.Channels[0]
	if c.Name != "a.y->b.x" || c.Capacity != 8 || c.Initial != 2 || c.From.Actor != a || c.To.Actor != b {
		t.Errorf("channel = %+v", c)
	}
	if !b.Stateful || a.Port("y").Block != 2 || g.Actor("b") != b {
		t.Error("builder lost attributes")
	}
}

func problems(t *testing.T, g *Graph) []string {
	t.Helper()
	err := g.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate() = %v, want a *ValidationError", err)
	}
	var out []string
	for _, p := range ve.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestValidateReportsEverythingAtOnce(t *testing.T) {
	g := New("bad")
	a := g.AddActor("a")
	g.AddActor("a") // duplicate
	b := g.AddActor("b")
	c := g.AddActor("c")
	ay := a.AddPort("y", Out, MustTokenType("f32"), SDF(3), "g.yaml:3:5")
	ay.Block = 2                                               // does not divide 3
	bx := b.AddPort("x", In, MustTokenType("i32"), SDF(1), "") // type mismatch with a.y
	b.AddPort("unused", Out, MustTokenType("f32"), SDF(1), "") // unconnected
	cx := c.AddPort("x", In, MustTokenType("f64"), SDF(1), "") // size mismatch
	g.Join(ay, bx)
	g.Join(ay, bx) // input connected twice (and duplicate channel name)
	g.Join(ay, cx, Capacity(1), Initial(2))
	g.JoinNames("a.y", "nope.x")
	g.JoinNames("a.y", "b.xx")
	got := strings.Join(problems(t, g), "\n")
	for _, want := range []string{
		`duplicate actor name "a"`,
		`g.yaml:3:5: port a.y: block size 2 does not divide rate 3`,
		`token type mismatch on a.y->b.x: a.y gives f32, b.x expects i32`,
		`token size mismatch on a.y->c.x: a.y gives f32 (4 bytes), c.x expects f64 (8 bytes)`,
		`input b.x is connected twice`,
		`output port b.unused is not connected`,
		`holds 2 initial tokens but has capacity 1`,
		`unknown actor "nope"`,
		`unknown port "xx" on actor "b" (did you mean "x"?)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not mention %q; got:\n%s", want, got)
		}
	}
}

func TestCompositeAndFlatten(t *testing.T) {
	sub := New("inner")
	p := sub.AddActor("p")
	q := sub.AddActor("q")
	Connect(sub, AddOutput[float32](p, "y", SDF(2)), AddInput[float32](q, "x", SDF(1)))
	AddInput[float32](p, "x", SDF(1))
	AddOutput[float32](q, "y", SDF(1))
	sub.Expose(In, "in", "p", "x", "")
	sub.Expose(Out, "out", "q", "y", "")

	g := New("outer")
	src := g.AddActor("src")
	comp := g.AddActor("comp", Composite(sub))
	snk := g.AddActor("snk")
	Connect(g, AddOutput[float32](src, "y", SDF(1)), AddInput[float32](comp, "in", SDF(1)))
	Connect(g, AddOutput[float32](comp, "out", SDF(2)), AddInput[float32](snk, "x", SDF(2)))
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	f, err := g.Flatten()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Fatalf("flattened graph invalid: %v", err)
	}
	var names []string
	for _, c := range f.Channels {
		names = append(names, c.Name)
	}
	want := "comp/p.y->comp/q.x src.y->comp/p.x comp/q.y->snk.x"
	if strings.Join(names, " ") != want {
		t.Errorf("flattened channels = %v, want %s", names, want)
	}
	if len(f.Actors) != 4 || f.Actor("comp/p") == nil || f.HasComposites() {
		t.Errorf("flattened actors wrong: %d", len(f.Actors))
	}

	// An unbound composite port is reported.
	AddInput[float32](comp, "extra", SDF(1))
	got := strings.Join(problems(t, g), "\n")
	if !strings.Contains(got, "composite port comp.extra is not bound") {
		t.Errorf("unbound composite port not reported:\n%s", got)
	}
}

func TestMappingCheck(t *testing.T) {
	g, _, _ := chain()
	m := &Mapping{Actors: map[string]*Placement{
		"a":  {Device: "cpu", Distribution: map[string]Distribution{"y": "diagonal"}},
		"b":  {Replicas: 2},
		"zz": {},
	}}
	err := m.Check(g)
	if err == nil {
		t.Fatal("bad mapping accepted")
	}
	for _, want := range []string{`unknown actor "zz"`, `distribution "diagonal"`, `b asks for replicas but the actor is stateful`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("mapping error does not mention %q: %v", want, err)
		}
	}
}

// TestTypedConnectMismatchDoesNotCompile builds a program joining a float32
// output to an int32 input and expects the Go compiler to refuse it.
func TestTypedConnectMismatchDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program; skipped with -short")
	}
	root, err := filepath.Abs("..") // the module's root (tests run in their package's directory)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prog := `package main
import "github.com/sluicehq/sluice/graph"
func main() {
	g := graph.New("x")
	a, b := g.AddActor("a"), g.AddActor("b")
	graph.Connect(g, graph.AddOutput[float32](a, "y", graph.SDF(1)), graph.AddInput[int32](b, "x", graph.SDF(1)))
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", filepath.Join(dir, "main.go"))
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("joining a float32 output to an int32 input compiled")
	}
	if !strings.Contains(string(out), "int32") {
		t.Errorf("compiler error does not name the mismatched type:\n%s", out)
	}
}
