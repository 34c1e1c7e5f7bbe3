package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFoldsLongLists: check's report of the 256-actor DAG folds the
// repetition vector (every actor fires once) as the workbench does and
// the channels' capacities by their figures, shortens the schedule and
// the actors that set the period, and keeps cd2dat's short lists whole.
func TestCheckFoldsLongLists(t *testing.T) {
	// No time limit on the throughput buffer search: its capacities are
	// part of what is folded, and a loaded machine can take dag256's
	// search (0.4 s when quiet) past the default 2 s.
	out, errs, code := sluice(t, "", "check", "ui/testdata/dag256.yaml", "--budget", "-1s")
	if code != 0 {
		t.Fatalf("check dag256: exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"\n  =1 for all 256 actors (a000 … a255)\n",
		"single-processor schedule of one iteration: a000 a001 a002 a003 a004 a005 a006 a007 a008 a009 a010 a011 … (232 more) a244 ",
		"… (2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check dag256: expected %q in the report, found:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 200 {
			t.Errorf("check dag256: a line of %d characters: expected long lists shortened: %.120s…", len(line), line)
		}
	}
	// Its 350 channels' capacities: a line per group of eight or more
	// alike, a line per channel for the rest.
	if n := strings.Count(out, "\n"); n > 40 || !strings.Contains(out, "\n  =1024 (for maximal throughput: 2048) for ") || !strings.Contains(out, " channels (a000.out0->a015.in0 … ") {
		t.Errorf("check dag256: expected the channels' capacities folded by their figures, found %d lines:\n%s", n, out)
	}
	out, _, _ = sluice(t, "", "check", "examples/cd2dat.yaml", "--budget", "-1s")
	if !strings.Contains(out, "\n  A=147 B=147 C=98 D=28 E=32 F=160\n") || !strings.Contains(out, "schedule of one iteration: 147×A 147×B 98×C 28×D 32×E 160×F\n") ||
		!strings.Contains(out, "\n  D.o->E.i                       14   (for maximal throughput: 23)\n") {
		t.Errorf("check cd2dat: expected its repetition vector, schedule and capacities whole, found:\n%s", out)
	}
}

// TestSimulateGroupsLargePlacements: simulate's report of the 256-actor
// DAG tells its placement a line per processor (how many actors, the
// first and last few), and cd2dat's a line per actor.
func TestSimulateGroupsLargePlacements(t *testing.T) {
	out, errs, code := sluice(t, "", "simulate", "ui/testdata/dag256.yaml", "--machine", "examples/machines/two-cpus.yaml")
	if code != 0 {
		t.Fatalf("simulate dag256: exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if len(lines) > 40 || !strings.Contains(out, "\n  cpu0                 ← ") || !strings.Contains(out, " actors: a000, ") || !strings.Contains(out, " more), ") {
		t.Fatalf("simulate dag256: expected a line per processor naming a few of its actors, found %d lines:\n%s", len(lines), out)
	}
	out, _, _ = sluice(t, "", "simulate", "examples/cd2dat.yaml", "--machine", "examples/machines/two-cpus.yaml")
	if !strings.Contains(out, "\n  A                    → cpu") || !strings.Contains(out, "\n  F                    → cpu") {
		t.Fatalf("simulate cd2dat: expected a line per actor, found:\n%s", out)
	}
}

// TestCheckFoldsCapacities: the capacities of a chain whose channels all
// need the same are one line; --json keeps every channel.
func TestCheckFoldsCapacities(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: chain\nactors:\n")
	for i := range 12 {
		fmt.Fprintf(&b, "  s%02d: {in: {x: {type: f32, rate: 1}}, out: {y: {type: f32, rate: 1}}, cost: 1us}\n", i)
	}
	b.WriteString("channels:\n")
	for i := range 11 {
		fmt.Fprintf(&b, "  - {from: s%02d.y, to: s%02d.x}\n", i, i+1)
	}
	b.WriteString("inputs: {x: s00.x}\noutputs: {y: s11.y}\n")
	dir := t.TempDir()
	file := filepath.Join(dir, "chain.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := sluice(t, "", "check", file)
	if code != 0 {
		t.Fatalf("check: exit %d: %s%s", code, out, errs)
	}
	if !strings.Contains(out, "\n  =1 (for maximal throughput: 2) for all 11 channels (s00.y->s01.x … s10.y->s11.x)\n") {
		t.Errorf("check: expected the 11 channels' capacities on one line, found:\n%s", out)
	}
	out, _, _ = sluice(t, "", "check", "--json", file)
	if n := strings.Count(out, "->s"); n < 11 {
		t.Errorf("check --json: %d channels named, expected all 11 in the buffers", n)
	}
}
