package ui

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/spec"
)

var update = flag.Bool("update", false, "rewrite ui/testdata's generated graph files")

// dagYAML writes the random DAG of bench/scale (n actors, seed; the first
// eight are sources, every other actor reads one or two of the 32 before
// it; 1024 tokens per port and firing, 2 µs per firing, 8 batches of
// buffering per channel) as a graph file.
func dagYAML(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	preds, succs := make([][]int, n), make([][]int, n)
	for i := min(8, n); i < n; i++ {
		k := 1 + rng.IntN(2)
		lo := max(0, i-32)
		seen := map[int]bool{}
		for range k {
			p := lo + rng.IntN(i-lo)
			if !seen[p] {
				seen[p] = true
				preds[i] = append(preds[i], p)
				succs[p] = append(succs[p], i)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The %d-actor random DAG of bench/scale (seed %d), written out as a graph\n# file for the workbench's scale test. Regenerate: go test ./ui -run DAGFiles -update\nkind: graph\nname: dag%d\nactors:\n", n, seed, n)
	for i := range n {
		fmt.Fprintf(&b, "  a%03d:\n", i)
		if len(preds[i]) == 0 {
			b.WriteString("    stateful: true\n")
		}
		writePorts(&b, "in", len(preds[i]))
		writePorts(&b, "out", len(succs[i]))
		b.WriteString("    cost: 2us\n")
	}
	b.WriteString("channels:\n")
	next := make([]int, n)
	for i := range n {
		for p, src := range preds[i] {
			fmt.Fprintf(&b, "  - {from: a%03d.out%d, to: a%03d.in%d, capacity: 8192}\n", src, next[src], i, p)
			next[src]++
		}
	}
	return b.String()
}

// writePorts writes n ports named dir0, dir1, … of 1024 f32 tokens.
func writePorts(b *strings.Builder, dir string, n int) {
	if n == 0 {
		return
	}
	var ps []string
	for p := range n {
		ps = append(ps, fmt.Sprintf("%s%d: {type: f32, rate: 1024}", dir, p))
	}
	fmt.Fprintf(b, "    %s: {%s}\n", dir, strings.Join(ps, ", "))
}

// TestDAGFiles: ui/testdata's DAG files are bench/scale's DAGs (256 and
// 64 actors) and load as valid graphs.
func TestDAGFiles(t *testing.T) {
	for _, n := range []int{64, 256} {
		file := fmt.Sprintf("testdata/dag%d.yaml", n)
		want := dagYAML(n, 1)
		if *update {
			if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(file)
		if err != nil || string(got) != want {
			t.Fatalf("%s: expected bench/scale's DAG of %d actors (go test ./ui -run DAGFiles -update), found it different or missing (%v)", file, n, err)
		}
		g, err := spec.Load(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(g.Actors) != n {
			t.Fatalf("%s: expected %d actors, found %d", file, n, len(g.Actors))
		}
	}
}
