package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/driver"
	_ "github.com/sluicehq/sluice/examples/imagepipe" // the image pipeline's Go actors
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
)

// TestFusedChainsMatchRuntime runs every example graph that runs on the
// CPU (no mapping, two workers, a few iterations) and holds the chains the
// runtime fused (ActorStats.Fused) against sim.FusedChains for the same
// graph on a pool processor: the simulator must model the same fused
// units. Graphs that do not run here (Go actors of other packages, input
// files, devices) are skipped; at least five must run, one with a chain.
func TestFusedChainsMatchRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example graphs: skipped with -short")
	}
	files, err := exampleGraphs(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // graphs that write files write them here
	mach := &machine.Machine{Name: "pool", Processors: []*machine.Processor{{Name: "cpu", Kind: "cpu", ClockHz: 1e9, Units: 2, HasIO: true, Pool: true}}}
	compared, withChain := 0, 0
	for _, f := range files {
		got, ran := runtimeChains(t, f)
		if !ran {
			continue
		}
		g, err := driver.LoadGraph(context.Background(), f, driver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g.HasComposites() {
			if g, err = g.Flatten(); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string][]string{}
		for _, c := range sim.FusedChains(g, nil, mach, nil, false) {
			want[sim.FusedName(c)] = c
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the runtime fused %v, the simulator %v", f, got, want)
		}
		compared++
		if len(got) > 0 {
			withChain++
		}
	}
	t.Logf("%d example graphs compared, %d with fused chains", compared, withChain)
	if compared < 5 || withChain < 1 {
		t.Errorf("%d graphs ran (%d with a fused chain): expected at least 5 and 1", compared, withChain)
	}
}

// exampleGraphs lists the graph files (kind: graph) under dir, as
// absolute paths.
func exampleGraphs(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "\nkind: graph") || strings.HasPrefix(string(b), "kind: graph") {
			abs, err := filepath.Abs(p)
			if err != nil {
				return err
			}
			out = append(out, abs)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// runtimeChains runs file on the CPU and returns its fused chains (name
// → stages in graph order, which is chain order for the runtime's
// chains); ran is false when the graph does not run here.
func runtimeChains(t *testing.T, file string) (map[string][]string, bool) {
	g, err := driver.LoadGraph(context.Background(), file, driver.Options{})
	if err != nil {
		t.Logf("%s: skipped: %v", file, err)
		return nil, false
	}
	actors.Synthesize(g)
	capCosts(g)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := runtime.Run(ctx, g, runtime.Options{Iterations: 3, Workers: 2})
	if err != nil {
		t.Logf("%s: skipped: %v", file, err)
		return nil, false
	}
	chains := map[string][]string{}
	for _, a := range st.Actors {
		if a.Fused != "" {
			chains[a.Fused] = append(chains[a.Fused], a.Name)
		}
	}
	return chains, true
}

// capCosts shortens every declared cost of g (composites' actors
// included) longer than fuseLongCost to it: a synthetic actor burns its
// cost at each firing (examples/pipeline2.yaml declares seconds), while
// fusion only asks whether a cost reaches fuseLongCost, the threshold of
// runtime/fuse.go and sim/fuse.go, which the capped cost still does.
func capCosts(g *graph.Graph) {
	for _, a := range g.Actors {
		if a.Sub != nil {
			capCosts(a.Sub)
		}
		a.Cost = min(a.Cost, fuseLongCost)
	}
}

// fuseLongCost is the declared cost from which neither the runtime nor
// the simulator fuses an actor into a chain.
const fuseLongCost = 200 * time.Microsecond
