package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/mapping"
	"github.com/sluicehq/sluice/sim"
)

// Save writes a sweep into dir so that Replay can predict it again with
// another model, without measuring: report.json, kernels.profile.yaml
// (the kernel times' run, when there are kernel actors) and per candidate
// NAME.mapping.yaml and NAME.profile.yaml (the picked mapping as
// "picked").
func Save(dir string, rep *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if rep.kern != nil {
		if err := os.WriteFile(filepath.Join(dir, "kernels.profile.yaml"), rep.kern, 0o644); err != nil {
			return err
		}
	}
	for gv, b := range rep.kernAt {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("kernels-G%d.profile.yaml", gv)), b, 0o644); err != nil {
			return err
		}
	}
	for _, c := range append(rep.Candidates, rep.Picked) {
		if c.m == nil || c.raw == nil {
			continue // not run
		}
		var m bytes.Buffer
		m.WriteString("kind: mapping\n")
		if err := mapping.WriteMapping(&m, c.m, "candidate "+c.Name+" of bench/mapsweep"); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".mapping.yaml"), m.Bytes(), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".profile.yaml"), c.raw, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Replayed is one saved candidate predicted again: its measured
// throughput, the prediction the sweep made and the new one (from its own
// profile, and from the cost table).
type Replayed struct {
	Name      string  `json:"name"`
	Mapping   string  `json:"mapping"`
	Measured  float64 `json:"measured_iter_per_s"`
	Before    float64 `json:"predicted_before_iter_per_s"`
	Predicted float64 `json:"predicted_iter_per_s"`
	ErrorPct  float64 `json:"error_pct"`
	Model     float64 `json:"model_iter_per_s"`
	Err       string  `json:"error,omitempty"`
}

// Replay predicts every candidate a sweep saved in dir (Save) again on
// mach, each from its run's profile (kernel actors' times from the saved
// kernel run) and from the sweep's cost table, and runs sluice map's
// search on mach: which mapping it picks now, its predicted throughput and,
// when the sweep measured that mapping, its measured throughput.
func Replay(ctx context.Context, dir string, mach *machine.Machine, cfg Config, w io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "report.json"), err)
	}
	var kern *sim.Profile
	if kf := filepath.Join(dir, "kernels.profile.yaml"); exists(kf) {
		if kern, err = sim.LoadProfileFull(kf); err != nil {
			return err
		}
	}
	kr, err := loadKernelRuns(dir, kern)
	if err != nil {
		return err
	}
	graphFile := cfg.Graph
	if graphFile == "" {
		graphFile = rep.Graph
	}
	costs := toCosts(rep.Costs, kern)
	costs.AtG = atGProfiles(rep.CostsAtG, kr.at)
	byMapping := map[string]float64{}
	var out []Replayed
	for _, c := range append(rep.Candidates, rep.Picked) {
		r := Replayed{Name: c.Name, Mapping: c.Mapping, Measured: c.Measured, Before: c.Predicted}
		if c.Err != "" {
			continue
		}
		byMapping[c.Mapping] = max(byMapping[c.Mapping], c.Measured)
		m, err := driver.LoadMapping(filepath.Join(dir, c.Name+".mapping.yaml"))
		if err != nil {
			r.Err = err.Error()
			out = append(out, r)
			continue
		}
		prof, err := sim.LoadProfileFull(filepath.Join(dir, c.Name+".profile.yaml"))
		if err != nil {
			r.Err = err.Error()
			out = append(out, r)
			continue
		}
		capacity := c.Capacity
		if p, err := predict(graphFile, m, mach, withKernelTimes(prof, kr), capacity, c.Iterations); err == nil {
			r.Predicted, r.ErrorPct = p.steady, pct(p.steady, c.Measured)
		} else {
			r.Err = err.Error()
		}
		if p, err := predict(graphFile, m, mach, costs, capacity, c.Iterations); err == nil {
			r.Model = p.steady
		}
		out = append(out, r)
	}
	printReplay(w, out)
	g, err := load(graphFile)
	if err != nil {
		return err
	}
	res, err := mapping.Map(ctx, mapping.Input{Graph: g, Machine: mach, Costs: costs}, mapping.MapOptions{Strategy: "all", Seed: 1,
		Evaluations: cfg.Evaluations, Iterations: cfg.SearchIterations, WorkGroups: cfg.G, WorkItems: cfg.WorkItems, Settings: cfg.Default})
	if err != nil {
		return err
	}
	pick := describe(res.Runnable)
	fmt.Fprintf(w, "sluice map's pick on this model (%s, predicted %.0f it/s): %s\n", res.Best.Strategy, res.Best.Throughput, pick)
	if v, ok := byMapping[pick]; ok {
		fmt.Fprintf(w, "measured in the sweep: %.0f it/s, %.3f of the best (%s, %.0f it/s)\n", v, v/rep.BestIterS, rep.Best, rep.BestIterS)
	} else {
		fmt.Fprintf(w, "not measured in the sweep (best %s, %.0f it/s)\n", rep.Best, rep.BestIterS)
	}
	return nil
}

func printReplay(w io.Writer, rs []Replayed) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "candidate\tmeasured\tbefore\tpredicted\terror\tmodel\t mapping\t")
	for _, r := range rs {
		if r.Err != "" {
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t-\t-\t-\t %s: %s\t\n", r.Name, r.Measured, r.Before, r.Mapping, r.Err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%+.1f%%\t%.0f\t %s\t\n", r.Name, r.Measured, r.Before, r.Predicted, r.ErrorPct, r.Model, r.Mapping)
	}
	tw.Flush()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// loadKernelRuns reads the kernel times a sweep saved at each G
// (kernels-G<G>.profile.yaml); def is the default G's.
func loadKernelRuns(dir string, def *sim.Profile) (kernelRuns, error) {
	kr := kernelRuns{def: def, at: map[int]*sim.Profile{}}
	files, err := filepath.Glob(filepath.Join(dir, "kernels-G*.profile.yaml"))
	if err != nil {
		return kr, err
	}
	for _, f := range files {
		var gv int
		if _, err := fmt.Sscanf(filepath.Base(f), "kernels-G%d.profile.yaml", &gv); err != nil {
			continue
		}
		p, err := sim.LoadProfileFull(f)
		if err != nil {
			return kr, err
		}
		kr.at[gv] = p
	}
	return kr, nil
}
