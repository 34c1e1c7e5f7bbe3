package driver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
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
