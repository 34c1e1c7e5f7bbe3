package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/spec"
)

// TestMappingSaveKeepsTheFile edits the placements of a mapping loaded
// from a file and saves them: the file keeps its comments and the keys the
// page does not edit, drops the placement removed, and loads as a mapping.
func TestMappingSaveKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	graphFile := filepath.Join(dir, "cd2dat.yaml")
	if err := os.WriteFile(graphFile, []byte(exampleText(t, example)), 0o644); err != nil {
		t.Fatal(err)
	}
	mapFile := filepath.Join(dir, "placed.yaml")
	const orig = `# where cd2dat runs
name: placed
mapping:
  A: {device: cpu, priority: 3} # the source first
  B: {device: cpu, replicas: 2}
`
	if err := os.WriteFile(mapFile, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := spec.LoadMapping(mapFile)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{File: graphFile, Mapping: m}
	h := s.Handler()
	for _, body := range []string{`{"actor": "C", "device": "cpu", "replicas": 3}`, `{"actor": "B"}`, `{"actor": "A", "device": "cpu", "replicas": 2}`} {
		if rec, v := do(t, h, "POST", "/api/mapping", body); rec.Code != 200 {
			t.Fatalf("POST /api/mapping %s: %d %v", body, rec.Code, v)
		}
	}
	rec, v := do(t, h, "POST", "/api/mapping/save", "")
	if rec.Code != 200 || v["path"] != mapFile {
		t.Fatalf("POST /api/mapping/save: %d %v; expected 200 and path %s", rec.Code, v, mapFile)
	}
	data, _ := os.ReadFile(mapFile)
	for _, want := range []string{"# where cd2dat runs", "# the source first", "priority: 3"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("saved mapping lost %q:\n%s", want, data)
		}
	}
	got, err := spec.LoadMapping(mapFile)
	if err != nil {
		t.Fatalf("the saved mapping does not load: %v\n%s", err, data)
	}
	if p := got.Actors["A"]; p == nil || p.Device != "cpu" || p.Replicas != 2 || p.Priority != 3 {
		t.Errorf("A: expected cpu ×2 with priority 3, found %+v", p)
	}
	if p := got.Actors["C"]; p == nil || p.Device != "cpu" || p.Replicas != 3 {
		t.Errorf("C: expected cpu ×3, found %+v", p)
	}
	if p, ok := got.Actors["B"]; ok {
		t.Errorf("B's placement was removed on the page but is still in the file: %+v", p)
	}
}

// TestMappingSaveNewFile saves placements made on the page without
// --mapping: they go to FILE-map.yaml; with no placement at all, and with
// neither FILE nor a mapping, there is nothing to save.
func TestMappingSaveNewFile(t *testing.T) {
	dir := t.TempDir()
	graphFile := filepath.Join(dir, "cd2dat.yaml")
	if err := os.WriteFile(graphFile, []byte(exampleText(t, example)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{File: graphFile}
	h := s.Handler()
	if rec, _ := do(t, h, "POST", "/api/mapping/save", ""); rec.Code != 404 {
		t.Fatalf("save without a mapping: expected 404, found %d", rec.Code)
	}
	do(t, h, "POST", "/api/mapping", `{"actor": "D", "device": "cpu", "replicas": 2}`)
	rec, v := do(t, h, "POST", "/api/mapping/save", "")
	want := filepath.Join(dir, "cd2dat-map.yaml")
	if rec.Code != 200 || v["path"] != want {
		t.Fatalf("POST /api/mapping/save: %d %v; expected 200 and path %s", rec.Code, v, want)
	}
	got, err := spec.LoadMapping(want)
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Actors["D"]; p == nil || p.Device != "cpu" || p.Replicas != 2 {
		t.Errorf("D: expected cpu ×2, found %+v", p)
	}
	if rec, _ := do(t, (&Server{}).Handler(), "POST", "/api/mapping/save", ""); rec.Code != 404 {
		t.Errorf("save with neither FILE nor a mapping: expected 404, found %d", rec.Code)
	}
}
