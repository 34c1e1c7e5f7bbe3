package gogen

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/all" // to see whether an OpenCL device is there
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/doccmd"
	"github.com/sluicehq/sluice/spec"
)

// build compiles the main package in src (a file name inside the module,
// so that it imports this module's packages) or the package path pkg into
// dir/name and returns the binary's path.
func build(t *testing.T, dir, name, target string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// -trimpath: the packages compiled for the documented commands' sluice
	// serve here too, in any clone of the repository. -w: no DWARF, a
	// third less linking.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-w", "-o", out, target)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", target, err, msg)
	}
	return out
}

// runBin runs bin with args and returns its standard output.
func runBin(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// sluice is the sluice the documented commands run (built once per run
// of the suite, in the user's cache).
func sluice(t *testing.T, _ string) string {
	t.Helper()
	return filepath.Join(doccmd.Sluice(t, ".."), "sluice")
}

// moduleTemp is a temporary directory inside the module (ignored by
// ./... patterns: its name starts with a dot), where a generated program
// resolves this module's packages.
func moduleTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("..", ".gogen-test-")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(abs) })
	return abs
}

// TestGeneratedProgramsRun writes the Go program of each graph, compiles
// and runs it, and compares its standard output with `sluice run` of the
// YAML: a chain of built-ins, a graph with a composite, and OpenCL kernels
// placed by a mapping (run when an OpenCL device is there, PoCL included).
func TestGeneratedProgramsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles programs: not in -short")
	}
	cases := []struct{ name, file, mapping string }{
		{"built-ins", "../examples/run/tone-filter.yaml", ""},
		{"composite", "testdata/composite.yaml", ""},
		{"opencl kernels", "../examples/opencl/saxpy.yaml", "../examples/opencl/saxpy-map.yaml"},
	}
	dir := moduleTemp(t)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := spec.Load(c.file)
			if err != nil {
				t.Fatal(err)
			}
			var m *graph.Mapping
			args := []string{"run", c.file, "--progress", "off"}
			if c.mapping != "" {
				if !hasOpenCL() {
					t.Skip("no OpenCL device (install PoCL: scripts/install-pocl.sh)")
				}
				if m, err = spec.LoadMapping(c.mapping); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--mapping", c.mapping)
			}
			src, err := Generate(g, m, Options{Source: c.file})
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "prog"+string(rune('0'+i))+".go")
			if err := os.WriteFile(file, src, 0o644); err != nil {
				t.Fatal(err)
			}
			prog := build(t, dir, "prog"+string(rune('0'+i)), file)
			got := runBin(t, prog)
			want := runBin(t, sluice(t, dir), args...)
			if want == "" {
				t.Fatalf("sluice run %s printed nothing: the comparison would prove nothing", c.file)
			}
			if got != want {
				t.Fatalf("the generated program printed\n%s\nexpected (sluice run)\n%s\nprogram:\n%s", head(got), head(want), src)
			}
		})
	}
}

func hasOpenCL() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, d := range device.Devices(ctx) {
		if d.Backend == "opencl" {
			return true
		}
	}
	return false
}

func head(s string) string {
	if lines := strings.SplitN(s, "\n", 12); len(lines) == 12 {
		return strings.Join(lines[:11], "\n") + "\n…"
	}
	return s
}

// A graph still being designed (cd2dat: rates and costs, no code) gives a
// program whose actors fire a placeholder; it compiles and runs the
// iterations asked.
func TestDesignOnlyGraphProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program: not in -short")
	}
	g, err := spec.Load("../examples/cd2dat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src, err := Generate(g, nil, Options{Iterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "graph.WithFunc(runtime.FireFunc(placeholder))"); n != 6 {
		t.Fatalf("expected the 6 actors to fire the placeholder, found %d in\n%s", n, src)
	}
	dir := moduleTemp(t)
	file := filepath.Join(dir, "cd2dat.go")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	runBin(t, build(t, dir, "cd2dat", file), "-iterations", "3")
}

func TestUnsupported(t *testing.T) {
	g, err := spec.Load("../examples/conditional/conditional.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(g, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "actor conditional.route: a conditional pattern") {
		t.Fatalf("expected the conditional pattern route reported, found %v", err)
	}
}

// Parameters keep their Go types through the literal: an integral float
// stays a float64, an int an int.
func TestValueLit(t *testing.T) {
	for v, want := range map[any]string{1.0: "float64(1)", 0.25: "0.25", 3: "3", "a\"b": `"a\"b"`, true: "true"} {
		if got := valueLit(v); got != want {
			t.Errorf("valueLit(%#v) = %s, expected %s", v, got, want)
		}
	}
	if got := valueLit(map[string]any{"b": []any{1, 2.5}, "a": nil}); got != `map[string]any{"a": nil, "b": []any{1, 2.5}}` {
		t.Errorf("valueLit(map) = %s", got)
	}
}
