package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// Final is one finalist of a sweep measured again: the picked mapping (as
// written, and with the search's channel capacities) or one of the best
// candidates; each of its runs (the sweep's first) and their median in
// iterations per second.
type Final struct {
	Name   string    `json:"name"`
	Runs   []float64 `json:"measured_runs_iter_per_s"`
	Median float64   `json:"median_iter_per_s"`
}

// finalists returns the picked mapping, the same mapping with the channel
// capacities the search assumed ("picked-capacity", when it raised any:
// not yet measured) and the cfg.Finalists candidates the sweep measured
// fastest (but the pick's twin).
func (cfg *Config) finalists(rep *Report) []Candidate {
	cs := slices.Clone(rep.Candidates)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Measured > cs[j].Measured })
	out := []Candidate{rep.Picked}
	if len(rep.Capacity) > 0 {
		out = append(out, Candidate{Name: "picked-capacity", Mapping: rep.Picked.Mapping, Capacity: rep.Capacity, m: rep.Picked.m})
	}
	n := len(out) + cfg.Finalists
	for _, c := range cs {
		if len(out) == n {
			break
		}
		if c.Err == "" && c.m != nil && c.Mapping != rep.Picked.Mapping {
			out = append(out, c)
		}
	}
	return out
}

// remeasure measures the finalists (Config.finalists) until each has
// cfg.Rounds runs (the sweep's run the first), in turn, each round
// starting one later so that no mapping always runs first, and holds the
// pick's median against the best median: consecutive runs of one mapping
// on a shared host differ by more than the 10 % a pick may miss the best
// by, and one run each cannot tell them apart.
func (cfg *Config) remeasure(ctx context.Context, rep *Report) error {
	if cfg.Rounds <= 1 {
		return nil
	}
	fin := cfg.finalists(rep)
	runs := make([][]float64, len(fin))
	for i, c := range fin {
		if c.Measured > 0 {
			runs[i] = []float64{c.Measured}
		}
	}
	for round := range cfg.Rounds {
		for k := range fin {
			i := (k + round) % len(fin)
			if len(runs[i]) > round {
				continue
			}
			c := fin[i]
			r, err := measure(ctx, cfg.Graph, c.m, c.Capacity, cfg.Workers, cfg.Warmup, cfg.Iterations, cfg.MinTime, "")
			if err != nil {
				return fmt.Errorf("round %d of %d, finalist %s: %w", round+1, cfg.Rounds, c.Name, err)
			}
			runs[i] = append(runs[i], r.steady)
			cfg.logf("round %d/%d: %s measured %.0f it/s", round+1, cfg.Rounds, c.Name, r.steady)
		}
	}
	rep.Finals = make([]Final, len(fin))
	best := 0.0
	for i, c := range fin {
		rep.Finals[i] = Final{Name: c.Name, Runs: runs[i], Median: median(runs[i])}
		if m := rep.Finals[i].Median; m > best && c.Name != "picked-capacity" {
			best, rep.FinalBest = m, c.Name
		}
	}
	rep.RatioRounds = rep.Finals[0].Median / best
	return nil
}

// median of v (v is not empty).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
