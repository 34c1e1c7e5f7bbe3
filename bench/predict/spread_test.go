package main

import (
	"strings"
	"testing"
)

// TestSpreads gathers three invocations' results by graph and checks the
// lowest, highest and spread of the errors, the worst |error|, the
// declared costs' errors and the table's lines.
func TestSpreads(t *testing.T) {
	t.Parallel()
	inv := func(mr, cd, cdDecl float64) []Result {
		return []Result{
			{Graph: "predict-multirate", File: "examples/predict/multirate.yaml", Figures: Figures{ErrorPct: mr, SameRunErrorPct: mr / 2}, Availability: 0.9},
			{Graph: "cd2dat", File: "examples/cd2dat.yaml", Figures: Figures{ErrorPct: cd, Declared: 1, DeclaredErrorPct: cdDecl}, Availability: 1},
		}
	}
	s := Spreads([][]Result{inv(12, -3, 5), inv(-14, 4, 6), inv(2, 1, 20)})
	if len(s) != 2 || s[0].Graph != "predict-multirate" || s[1].Graph != "cd2dat" {
		t.Fatalf("spreads %+v: expected multirate then cd2dat", s)
	}
	mr := s[0]
	if mr.Min != -14 || mr.Max != 12 || mr.Spread != 26 || mr.Worst != 14 || len(mr.Runs) != 3 || len(mr.DeclaredErrors) != 0 {
		t.Errorf("multirate: min %g, max %g, spread %g, worst %g, %d runs, declared %v: expected -14, 12, 26, 14, 3 runs and no declared errors",
			mr.Min, mr.Max, mr.Spread, mr.Worst, len(mr.Runs), mr.DeclaredErrors)
	}
	if got := mr.SameRunErrors; len(got) != 3 || got[1] != -7 {
		t.Errorf("multirate same-run errors %v: expected [6 -7 1]", got)
	}
	if cd := s[1]; cd.Worst != 4 || len(cd.DeclaredErrors) != 3 || cd.DeclaredErrors[2] != 20 {
		t.Errorf("cd2dat: worst %g, declared %v: expected 4 and [5 6 20]", cd.Worst, cd.DeclaredErrors)
	}
	table := FormatSpreads(s)
	for _, want := range []string{"+12.0 (+6.0), -14.0 (-7.0), +2.0 (+1.0)", "26.0%", "declared costs", "0.90, 0.90, 0.90"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
