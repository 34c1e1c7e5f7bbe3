package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// Spread is one graph's errors over consecutive invocations of the whole
// comparison (Invocations), in percent: each invocation's error of the
// profile's prediction against the fresh runs (Result.ErrorPct, from the
// medians of its repetitions), and their lowest, highest and difference.
type Spread struct {
	Graph string `json:"graph"`
	// Errors are the invocations' Result.ErrorPct in order; SameRunErrors
	// their Result.SameRunErrorPct, DeclaredErrors their
	// Result.DeclaredErrorPct (none when the graph declares no costs).
	Errors         []float64 `json:"error_pct"`
	SameRunErrors  []float64 `json:"same_run_error_pct"`
	DeclaredErrors []float64 `json:"declared_error_pct,omitempty"`
	// Min, Max and Spread (Max − Min) are over Errors; Worst is the
	// largest |error|.
	Min    float64 `json:"min_error_pct"`
	Max    float64 `json:"max_error_pct"`
	Spread float64 `json:"spread_pct"`
	Worst  float64 `json:"worst_abs_error_pct"`
	// Availability is each invocation's Result.Availability: the share of
	// the time the workers' goroutines got the CPU while it ran.
	Availability []float64 `json:"availability"`
	// Runs are the invocations' results for the graph.
	Runs []Result `json:"runs"`
}

// Invocations does the comparison of cfg n times in a row, each as one
// invocation of the command would (Compare: a fresh calibration of the
// host unless cfg.Machine is set, then every graph), and returns each
// invocation's results.
func Invocations(ctx context.Context, cfg Config, n int) ([][]Result, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%d invocations: expected at least 1", n)
	}
	var runs [][]Result
	for i := range n {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "invocation %d of %d\n", i+1, n)
		}
		res, err := Compare(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("invocation %d of %d: %w", i+1, n, err)
		}
		runs = append(runs, res)
	}
	return runs, nil
}

// Spreads gathers the invocations' results by graph, in the order the
// graphs first appear, with each graph's errors and their spread.
func Spreads(runs [][]Result) []Spread {
	var out []Spread
	at := map[string]int{}
	for _, res := range runs {
		for _, r := range res {
			i, ok := at[r.File]
			if !ok {
				i = len(out)
				at[r.File] = i
				out = append(out, Spread{Graph: r.Graph})
			}
			s := &out[i]
			s.Errors = append(s.Errors, r.ErrorPct)
			s.SameRunErrors = append(s.SameRunErrors, r.SameRunErrorPct)
			if r.Declared > 0 {
				s.DeclaredErrors = append(s.DeclaredErrors, r.DeclaredErrorPct)
			}
			s.Availability = append(s.Availability, r.Availability)
			s.Runs = append(s.Runs, r)
		}
	}
	for i := range out {
		s := &out[i]
		s.Min, s.Max = slices.Min(s.Errors), slices.Max(s.Errors)
		s.Spread = s.Max - s.Min
		for _, e := range s.Errors {
			s.Worst = max(s.Worst, math.Abs(e))
		}
	}
	return out
}

// runInvocations runs -invocations and prints the spreads.
func runInvocations(cfg Config, n int, asJSON bool, outFile string) {
	runs, err := Invocations(context.Background(), cfg, n)
	if err != nil {
		fail(err)
	}
	spreads := Spreads(runs)
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	for _, s := range spreads {
		if err := enc.Encode(s); err != nil {
			fail(err)
		}
	}
	if outFile != "" {
		if err := os.WriteFile(outFile, lines.Bytes(), 0o644); err != nil {
			fail(err)
		}
	}
	if asJSON {
		os.Stdout.Write(lines.Bytes())
		return
	}
	os.Stdout.WriteString(FormatSpreads(spreads))
}

// FormatSpreads is the spreads as a text table: per graph the error of
// each invocation (profile against fresh runs, the same run's in
// parentheses), the lowest, the highest, the spread and the workers'
// availability in each invocation.
func FormatSpreads(spreads []Spread) string {
	var b strings.Builder
	if len(spreads) > 0 && len(spreads[0].Runs) > 0 {
		r := spreads[0].Runs[0]
		fmt.Fprintf(&b, "host: %s, NumCPU %d, %s, %d workers, %d units; %d invocations, each the medians of %d runs\n",
			r.CPU, r.NumCPU, r.Go, r.Workers, r.Units, len(spreads[0].Runs), r.Reps)
	}
	fmt.Fprintf(&b, "%-18s %-44s %8s %8s %8s  %s\n", "graph", "error per invocation (same run)", "min", "max", "spread", "availability")
	for _, s := range spreads {
		var errs, avs []string
		for i, e := range s.Errors {
			errs = append(errs, fmt.Sprintf("%+.1f (%+.1f)", e, s.SameRunErrors[i]))
		}
		for _, a := range s.Availability {
			avs = append(avs, fmt.Sprintf("%.2f", a))
		}
		fmt.Fprintf(&b, "%-18s %-44s %+7.1f%% %+7.1f%% %7.1f%%  %s\n", s.Graph, strings.Join(errs, ", "), s.Min, s.Max, s.Spread, strings.Join(avs, ", "))
		if len(s.DeclaredErrors) > 0 {
			var d []string
			for _, e := range s.DeclaredErrors {
				d = append(d, fmt.Sprintf("%+.1f", e))
			}
			fmt.Fprintf(&b, "%-18s %-44s %+7.1f%% %+7.1f%% %7.1f%%\n", "  declared costs", strings.Join(d, ", "),
				slices.Min(s.DeclaredErrors), slices.Max(s.DeclaredErrors), slices.Max(s.DeclaredErrors)-slices.Min(s.DeclaredErrors))
		}
	}
	return b.String()
}
