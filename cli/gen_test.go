package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenGo(t *testing.T) {
	out, errs, code := sluice(t, "", "gen", "go", "examples/opencl/saxpy.yaml", "--mapping", "examples/opencl/saxpy-map.yaml", "-n", "5")
	if code != 0 {
		t.Fatalf("gen go: exit %d: %s", code, errs)
	}
	for _, want := range []string{"package main", `flag.Int64("iterations", 5,`, `"axpy": {Device: "opencl", Impl: graph.ImplOpenCL`,
		`_ "github.com/sluicehq/sluice/device/all"`, `Source: "examples/opencl/saxpy.cl"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("gen go: expected %q in the program, found\n%s", want, out)
		}
	}
	file := filepath.Join(t.TempDir(), "p.go")
	if _, errs, code := sluice(t, "", "gen", "go", "examples/cd2dat.yaml", "-o", file); code != 0 {
		t.Fatalf("gen go -o: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "func placeholder(") {
		t.Fatalf("gen go -o: expected the program in %s, found %q", file, b)
	}
	if _, errs, code := sluice(t, "", "gen", "go", "examples/conditional/conditional.yaml"); code == 0 || !strings.Contains(errs, "conditional pattern") {
		t.Fatalf("gen go of a conditional pattern: expected an error naming it, found exit %d: %s", code, errs)
	}
}
