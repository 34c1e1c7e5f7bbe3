package spec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/spec"
)

// The fuzz targets parse with names inside examples/, so that the seeds'
// kernel and composite files resolve.
var examplesDir = filepath.Join("..", "examples")

func addFiles(f *testing.F, names ...string) {
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(examplesDir, n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzParseGraph(f *testing.F) {
	addFiles(f, "cd2dat.yaml", "feedback.yaml", "feedback-deadlock.yaml", "kmeans-quantize.yaml",
		"fft-filter.yaml", "fft-pass.yaml", "eth/graph.yaml")
	f.Add([]byte(base))
	f.Add([]byte("a: &a [x]\nb: &b [*a, *a]\nactors: {A: {use: u, with: {x: *b}}}\n"))
	f.Add([]byte("actors:\n  A: {out: {o: {type: c64, rate: [1, 2]}}}\nchannels:\n  - {from: A.o, to: A.o, values: [[1, 2], \"3+4i\"]}\n"))
	name := filepath.Join(examplesDir, "fuzz.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := spec.ParseGraph(name, data)
		if (g == nil) == (err == nil) {
			t.Fatalf("graph %v and error %v", g, err)
		}
		if err != nil {
			_ = err.Error()
		}
	})
}

func FuzzParseMapping(f *testing.F) {
	addFiles(f, "eth/mapping.yaml")
	f.Add([]byte("mapping:\n  w: {device: cpu, impl: go, replicas: 2, affinity: [0, 1], distribution: {o: consecutive}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := spec.ParseMapping("fuzz.yaml", data)
		if (m == nil) == (err == nil) {
			t.Fatalf("mapping %v and error %v", m, err)
		}
	})
}

func FuzzImportETHGraph(f *testing.F) {
	addFiles(f, "eth/graph.xml")
	name := filepath.Join(examplesDir, "eth", "fuzz.xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := spec.ImportETHGraph(name, data)
		if (g == nil) == (err == nil) {
			t.Fatalf("graph %v and error %v", g, err)
		}
	})
}

func FuzzImportETHMapping(f *testing.F) {
	addFiles(f, "eth/mapping.xml")
	f.Add([]byte(`<mapping><binding><actor name="a"/><device name="d"/></binding></mapping>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := spec.ImportETHMapping("fuzz.xml", data)
		if (m == nil) == (err == nil) {
			t.Fatalf("mapping %v and error %v", m, err)
		}
	})
}
