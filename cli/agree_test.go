package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/driver"
	_ "github.com/sluicehq/sluice/examples/conditional" // registers the conditional examples' Go actors
	_ "github.com/sluicehq/sluice/examples/imagepipe"   // registers the image pipeline's Go actors
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// agree runs g as sluice run --no-check would (bounded iterations) and
// checks the runtime's verdict against the analysis: a consistent,
// deadlock-free graph completes; a deadlocking one is stopped by the
// watchdog, which names every channel of the blocked cycles the analysis
// found.
func agree(t *testing.T, name string, g *graph.Graph) {
	t.Helper()
	rep := analysis.Check(g, analysis.CheckOptions{NoThroughput: true, NoSchedule: true})
	if !rep.Valid || !rep.Consistent {
		return // run refuses these too; nothing to compare
	}
	p, err := driver.Prepare(context.Background(), &driver.Loaded{Path: name, Graph: g}, driver.PrepareOptions{NoCheck: true})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	pl, err := driver.Place(context.Background(), p, driver.PlaceOptions{})
	if err != nil {
		t.Logf("%s: not run here: %v", name, err)
		return
	}
	shortenCosts(pl.Graph)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = driver.Run(ctx, pl, runtime.Options{Iterations: 2, Watchdog: 300 * time.Millisecond})
	switch {
	case !rep.Deadlock && err != nil:
		t.Errorf("%s: check says deadlock-free, but the run failed: %v", name, err)
	case rep.Deadlock && !errors.Is(err, runtime.ErrDeadlock):
		t.Errorf("%s: check says deadlock (cycles %v), but the run ended with %v", name, rep.Cycles, err)
	case rep.Deadlock:
		named := map[string]bool{}
		for _, m := range regexp.MustCompile(`channel (\S+) \(`).FindAllStringSubmatch(err.Error(), -1) {
			named[m[1]] = true
		}
		for _, cyc := range rep.Cycles {
			if !slices.ContainsFunc(cyc, func(c string) bool { return named[c] }) {
				t.Errorf("%s: check's blocked cycle %v: the watchdog names none of its channels: %v", name, cyc, err)
			}
		}
	}
}

// shortenCosts makes every declared cost of g (composites' actors
// included) at most a millisecond: synthetic actors burn their cost at
// each firing (examples/pipeline2.yaml declares seconds), and whether a
// graph deadlocks does not depend on how long its firings take.
func shortenCosts(g *graph.Graph) {
	for _, a := range g.Actors {
		if a.Sub != nil {
			shortenCosts(a.Sub)
		}
		a.Cost = min(a.Cost, time.Millisecond)
	}
}

// TestCheckRunAgreeExamples holds check and run to one verdict on every
// example graph this machine can run.
func TestCheckRunAgreeExamples(t *testing.T) {
	// Built-in actors' paths are relative to the repository root: run in a
	// directory that sees the examples there, so outputs stay out of the tree.
	root, _ := filepath.Abs("..")
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	files, _ := filepath.Glob("examples/*.yaml")
	more, _ := filepath.Glob("examples/*/*.yaml")
	n := 0
	for _, f := range append(files, more...) {
		if k, _ := driver.Kind(f); k != "graph" {
			continue
		}
		l, err := driver.Load(context.Background(), f, driver.Options{})
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		g := l.Graph
		if driver.Open(g) != "" || len(driver.UnregisteredGo(g)) > 0 || strings.Contains(f, "/eth/") {
			continue // refused by run with its reason (open graph; ETH's C actors keep program-scope state)
		}
		n++
		agree(t, f, g)
	}
	if n < 12 {
		t.Fatalf("compared %d example graphs: expected the examples tree", n)
	}
}

// TestCheckRunAgreeRandom does the same on random graphs: rings and
// chains of 2–6 actors with rates 1–3 and random initial tokens on the
// back edges, so that some deadlock and some do not.
func TestCheckRunAgreeRandom(t *testing.T) {
	t.Parallel() // its deadlocking graphs wait out the watchdog
	rng := rand.New(rand.NewPCG(7, 22))
	dead, live := 0, 0
	for i := range 60 {
		src := randomGraph(rng, i)
		g, err := spec.ParseGraph(fmt.Sprintf("random%d.yaml", i), []byte(src))
		if err != nil {
			t.Fatalf("random graph %d: %v\n%s", i, err, src)
		}
		rep := analysis.Check(g, analysis.CheckOptions{NoThroughput: true, NoSchedule: true})
		if rep.Consistent && rep.Deadlock {
			dead++
		} else if rep.Consistent {
			live++
		}
		agree(t, fmt.Sprintf("random graph %d:\n%s", i, src), g)
	}
	if dead < 5 || live < 5 {
		t.Fatalf("random graphs: %d deadlocking and %d live consistent ones: expected at least 5 of each", dead, live)
	}
}

// randomGraph writes a YAML graph: a chain a0 → … → a(n-1) with random
// rates, a back edge from the last actor to the first carrying random
// initial tokens (enough for an iteration about half the time), and side
// branches to sinks.
func randomGraph(rng *rand.Rand, i int) string {
	n := 2 + rng.IntN(5)
	rates := make([]int, n)
	for a := range rates {
		rates[a] = 1 + rng.IntN(3)
	}
	var acts, chans strings.Builder
	for a := range n {
		in := fmt.Sprintf("i: {type: f32, rate: %d}", rates[a])
		if a == 0 {
			in = fmt.Sprintf("fb: {type: f32, rate: %d}", rates[0])
		}
		out := fmt.Sprintf("o: {type: f32, rate: %d}", rates[a])
		if a > 0 && a < n-1 && rng.IntN(3) == 0 {
			out += fmt.Sprintf(", s: {type: f32, rate: %d}", rates[a])
			fmt.Fprintf(&acts, "  sink%d: {in: {x: {type: f32, rate: 1}}}\n", a)
			fmt.Fprintf(&chans, "  - {from: a%d.s, to: sink%d.x}\n", a, a)
		}
		fmt.Fprintf(&acts, "  a%d: {in: {%s}, out: {%s}}\n", a, in, out)
		if a < n-1 {
			fmt.Fprintf(&chans, "  - {from: a%d.o, to: a%d.i}\n", a, a+1)
		}
	}
	need := rates[n-1] * rates[0] / gcd(rates[n-1], rates[0])
	init := need - 1 - rng.IntN(need)
	if rng.IntN(2) == 0 {
		init = need + rng.IntN(3)
	}
	fmt.Fprintf(&chans, "  - {from: a%d.o, to: a0.fb, initial: %d}\n", n-1, max(init, 0))
	return fmt.Sprintf("kind: graph\nname: random%d\nactors:\n%schannels:\n%s", i, acts.String(), chans.String())
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
