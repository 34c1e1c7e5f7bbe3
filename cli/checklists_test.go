package cli

import (
	"strings"
	"testing"
)

// TestCheckFoldsLongLists: check's report of the 256-actor DAG folds the
// repetition vector (every actor fires once) as the workbench does,
// shortens the schedule and the actors that set the period, and keeps
// cd2dat's short lists whole.
func TestCheckFoldsLongLists(t *testing.T) {
	out, errs, code := sluice(t, "", "check", "ui/testdata/dag256.yaml")
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
	out, _, _ = sluice(t, "", "check", "examples/cd2dat.yaml")
	if !strings.Contains(out, "\n  A=147 B=147 C=98 D=28 E=32 F=160\n") || !strings.Contains(out, "schedule of one iteration: 147×A 147×B 98×C 28×D 32×E 160×F\n") {
		t.Errorf("check cd2dat: expected its repetition vector and schedule whole, found:\n%s", out)
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
