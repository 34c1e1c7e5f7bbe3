package runtime_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
	"github.com/sluicehq/sluice/spec"
)

// Agreement between a run and the simulator's prediction for it.
const (
	// agreeTolerance is the largest relative gap between a run's time
	// and the simulated makespan.
	agreeTolerance = 0.15
	// agreeFloor is an absolute gap always tolerated: starting the run
	// (pools, channels, the watchdog) and ending it take a few
	// milliseconds that no model of the graph holds.
	agreeFloor = 15 * time.Millisecond
	// agreeTarget is about how long each graph's scaled run lasts.
	agreeTarget = 300 * time.Millisecond
	// agreeLeast is the least firing cost after scaling (when the run
	// stays near agreeTarget): firings of a millisecond or more each end
	// their round, so that the runtime pipelines them one by one as the
	// simulator does.
	agreeLeast = time.Millisecond
)

// TestRunTimeMatchesSimulator runs every example graph whose actors all
// run as synthetic actors (declared costs, no implementation, static
// rates) on two workers, its costs scaled so that a run lasts about
// agreeTarget, and holds the run's wall time to the makespan that the
// simulator predicts for the same graph on a pool of two units: within
// agreeTolerance, or agreeFloor for short runs. Each graph gets three
// attempts (the host is shared: another job can take a worker's core for
// a while); it fails when all three miss. An attempt is not made while
// two spinning goroutines get the CPU less than 90 % of the time
// (calibrate.Availability): the test is skipped when no attempt could be.
func TestRunTimeMatchesSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the example graphs for a few seconds: skipped with -short")
	}
	// Not parallel: the runs are timed against the model.
	files := synthGraphs(t, filepath.Join("..", "examples"))
	if len(files) < 3 {
		t.Fatalf("%d example graphs run as synthetic actors: expected at least 3", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			g := loadSynth(t, f)
			n, want := scaleForRun(t, g)
			if n == 0 {
				t.Skip("the simulator does not run this graph")
			}
			actors.Synthesize(g)
			var tries []string
			loaded := 0
			for attempt := range 3 {
				if avail := calibrate.Availability(2, 50*time.Millisecond); avail < 0.9 {
					// Other jobs hold the cores: a worker waiting for
					// one is a delay that no model of the graph has.
					tries = append(tries, fmt.Sprintf("attempt %d: two goroutines got the CPU %.0f%% of the time: not run", attempt+1, 100*avail))
					loaded++
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				start := time.Now()
				_, err := runtime.Run(ctx, g, runtime.Options{Iterations: n, Workers: 2})
				got := time.Since(start)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				gap := math.Abs(float64(got - want))
				line := fmt.Sprintf("attempt %d: %d iterations ran in %v, simulated %v (%+.1f%%)", attempt+1, n, got.Round(time.Millisecond), want.Round(time.Millisecond), 100*float64(got-want)/float64(want))
				tries = append(tries, line)
				if gap <= agreeTolerance*float64(want) || gap <= float64(agreeFloor) {
					t.Log(line)
					return
				}
				if avail := calibrate.Availability(2, 50*time.Millisecond); avail < 0.9 {
					// The cores were taken during the run: no verdict.
					tries[len(tries)-1] += fmt.Sprintf("; after it two goroutines got the CPU %.0f%% of the time: not counted", 100*avail)
					loaded++
				}
			}
			if loaded == len(tries) {
				t.Skipf("the host is too loaded to time two workers:\n%s", strings.Join(tries, "\n"))
			}
			t.Errorf("the run and the simulator disagree by more than %.0f%% (and %v) in every attempt:\n%s", 100*agreeTolerance, agreeFloor, strings.Join(tries, "\n"))
		})
	}
}

// pool2 is a machine of one processor whose two units are a pool, as the
// runtime's two workers: rounds of up to 200 µs, as the runtime's.
var pool2 = &machine.Machine{Name: "pool2", Processors: []*machine.Processor{{
	Name: "cpu", Kind: "cpu", ClockHz: 1e9, Units: 2, HasIO: true, Pool: true, RoundTime: 200_000}}}

// simulate returns the makespan of n iterations of g on pool2.
func simulate(g *graph.Graph, n int64) (time.Duration, error) {
	prog, err := sim.Build(g, nil, pool2, nil, sim.Options{})
	if err != nil {
		return 0, err
	}
	res, err := sim.Run(prog, sim.Config{Iterations: n})
	if err != nil {
		return 0, err
	}
	return time.Duration(res.Makespan * float64(time.Second)), nil
}

// scaleForRun scales g's costs and chooses the iterations of its run: the
// least cost becomes agreeLeast, and the iterations (at least 2) make the
// simulated run last about agreeTarget; when even 2 iterations would last
// much longer, the costs shrink instead. It returns the iterations (0 when
// the simulator refuses g) and the simulated makespan.
func scaleForRun(t *testing.T, g *graph.Graph) (int64, time.Duration) {
	least := time.Duration(math.MaxInt64)
	for _, a := range g.Actors {
		if a.Cost > 0 {
			least = min(least, a.Cost)
		}
	}
	scale := float64(agreeLeast) / float64(least)
	one, err := simulate(g, 1)
	if err != nil {
		t.Logf("simulator: %v", err)
		return 0, 0
	}
	one = time.Duration(float64(one) * scale) // no links: time scales with the costs
	n := int64(max(2, float64(agreeTarget)/float64(one)))
	if span := time.Duration(n) * one; span > 2*agreeTarget {
		scale *= float64(agreeTarget) / float64(span)
	}
	scaleCosts(g, scale)
	want, err := simulate(g, n)
	if err != nil {
		t.Fatal(err)
	}
	return n, want
}

// scaleCosts multiplies every actor's declared cost by s.
func scaleCosts(g *graph.Graph, s float64) {
	for _, a := range g.Actors {
		a.Cost = time.Duration(float64(a.Cost) * s)
	}
}

// loadSynth loads a graph file, flattened.
func loadSynth(t *testing.T, file string) *graph.Graph {
	g, err := spec.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if g.HasComposites() {
		if g, err = g.Flatten(); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// synthGraphs lists the graph files under dir whose actors all declare a
// cost and would all run as synthetic actors, with static rates.
func synthGraphs(t *testing.T, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(string(b), "kind: graph") && !strings.Contains(string(b), "\nkind: graph") {
			return nil
		}
		g, err := spec.Load(p)
		if err != nil {
			return nil // graphs that need more than the file (Go actors, inputs) are others' tests
		}
		if g.HasComposites() {
			if g, err = g.Flatten(); err != nil {
				return nil
			}
		}
		if len(actors.Unimplemented(g)) != len(g.Actors) {
			return nil
		}
		for _, a := range g.Actors {
			if a.Cost <= 0 || a.Dynamic() || a.Pattern != nil {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}
