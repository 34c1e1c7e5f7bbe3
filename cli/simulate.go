package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/namelist"
	"github.com/sluicehq/sluice/sim"
)

// simInputs are the files simulate and map share, read through the
// driver: the prepared graph, the machine model, the costs and the
// mapping given.
type simInputs struct {
	prepared *driver.Prepared
	machine  *driver.Machine
	costs    *sim.Costs
	mapping  *graph.Mapping
}

// loadSimInputs reads simulate's and map's inputs (verb names the command
// in a refusal). Without machineFile the model is this host's calibrated
// one.
func loadSimInputs(cmd *cobra.Command, verb, graphFile, machineFile, mapFile, costsFile string, profileFiles []string) (*simInputs, error) {
	ctx := cmd.Context()
	l, err := driver.Load(ctx, graphFile, loadOptions(cmd))
	if err != nil {
		return nil, err
	}
	in := &simInputs{}
	if in.prepared, err = driver.Prepare(ctx, l, driver.PrepareOptions{}); err != nil {
		return nil, refusal(cmd, verb, err)
	}
	if in.machine, err = driver.MachineOrHost(ctx, machineFile, func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), s) }); err != nil {
		return nil, err
	}
	if in.costs, err = driver.LoadCosts(costsFile, profileFiles); err != nil {
		return nil, err
	}
	if mapFile != "" {
		if in.mapping, err = loadMapping(mapFile); err != nil {
			return nil, err
		}
		if err := in.mapping.Check(l.Graph); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func newSimulate() *cobra.Command {
	var (
		machineFile, mapFile, costsFile, controlsFile string
		traceFile, paraverFile                        string
		profileFiles                                  []string
		iterations, traceLimit                        int64
		seed                                          uint64
		asJSON, noFuse                                bool
		capacity                                      map[string]int
	)
	cmd := &cobra.Command{
		Use:   "simulate GRAPH [--machine MACHINE]",
		Short: "Predict throughput, latency and utilization of a mapped graph on a machine model",
		Long: `simulate runs the cost-model simulator: the graph, mapped onto the processors of an
Abstract Streaming Machine (--machine; without it, this host's model measured by
sluice calibrate), with per-firing costs from the graph's cost: keys,
a cost file (--costs) or a profile written by sluice run --profile (--profile); with a
profile and declared costs, both predictions are printed. Several --profile files,
taken with the kernel actors at different G, cost each CPU actor as it ran beside
kernel actors of the G nearest the mapping's.
Without --mapping, actors are mapped by HEFT. Control variables of conditional actors
(attrs: {if: c} or {while: n}) come from a control file (--controls, trace-driven mode)
or from the cost file's probabilities and loops (statistical mode, --seed).
Times are reported in seconds. See docs/simulate.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := loadSimInputs(cmd, "simulate", args[0], machineFile, mapFile, costsFile, profileFiles)
			if err != nil {
				return err
			}
			po := driver.PredictOptions{Machine: in.machine, Mapping: in.mapping, Costs: in.costs, Iterations: iterations,
				Exact: cmd.Flags().Changed("iterations"), Seed: seed, Capacity: capacity, NoFuseCPU: noFuse,
				Trace: traceFile != "" || paraverFile != ""}
			if po.TraceLimit, err = traceLimitOption(traceLimit, "spans"); err != nil {
				return err
			}
			if controlsFile != "" {
				if po.Controls, err = sim.LoadControls(controlsFile); err != nil {
					return err
				}
			}
			pr, err := driver.Predict(cmd.Context(), in.prepared, po)
			if err != nil {
				return err
			}
			res := pr.Result
			how := "file " + mapFile
			if in.mapping == nil {
				how = "heft (no --mapping given)"
			}
			if traceFile != "" {
				if err := res.WriteChromeFile(traceFile); err != nil {
					return err
				}
			}
			if paraverFile != "" {
				if err := res.WriteParaverFiles(paraverFile); err != nil {
					return err
				}
			}
			declared := math.NaN()
			if len(profileFiles) > 0 {
				// Both predictions: from the profile and from the declared costs.
				if declared, err = pr.DeclaredThroughput(in.prepared, po); err != nil {
					return err
				}
			}
			placement := pr.Placement
			if asJSON {
				return writeSimJSON(cmd.OutOrStdout(), in, res, placement, declared)
			}
			writeSimText(cmd.OutOrStdout(), in, res, placement, how, declared)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&machineFile, "machine", "", "machine description (YAML; default: this host's model from sluice calibrate)")
	f.StringVar(&mapFile, "mapping", "", "mapping file (default: HEFT's mapping)")
	alias(f, "map", "mapping")
	f.StringVar(&costsFile, "costs", "", "cost file: per-actor, per-processor firing costs, control nodes, probabilities")
	f.StringArrayVar(&profileFiles, "profile", nil, "profile written by sluice run --profile (actor → mean_ns); repeat it with profiles taken at other G of the kernel actors and each CPU actor costs what it took beside the nearest G")
	f.BoolVar(&noFuse, "no-fuse-cpu", false, "simulate every CPU actor alone, as sluice run --no-fuse-cpu runs them (default: the chains the runtime fuses are one replicated unit)")
	f.StringVar(&controlsFile, "controls", "", "control variables for the trace-driven mode (YAML: name → list of outcomes)")
	f.Int64VarP(&iterations, "iterations", "n", 100, "graph iterations to simulate (by default more on a pool processor: 20 of its longest rounds; and 4 times more, up to 65 536, while the run ends before a steady state)")
	f.Uint64Var(&seed, "seed", 1, "seed of the statistical model")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringToIntVar(&capacity, "capacity", nil, "channel capacities in tokens overriding the graph's, e.g. 'a.o->b.i=16,b.o->c.i=8' (as sluice map suggests)")
	f.StringVar(&traceFile, "trace", "", "write the timeline as Chrome Trace Event JSON (opens in Perfetto)")
	f.StringVar(&paraverFile, "paraver", "", "write the timeline as a Paraver trace (.prv, with .pcf and .row beside it)")
	f.Int64Var(&traceLimit, "trace-limit", sim.DefaultTraceLimit, "the most spans --trace and --paraver keep, the simulation's first (0: no limit)")
	return cmd
}

// finite returns v, or nil for an infinite or NaN value (JSON has none).
func finite(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return v
}

func writeSimJSON(w io.Writer, in *simInputs, r *sim.Result, placement map[string]string, declared float64) error {
	util := map[string]float64{}
	for k, v := range r.Utilization {
		util[k] = v
	}
	out := map[string]any{
		"graph": in.prepared.Graph.Name, "machine": in.machine.Name, "mapping": placement,
		"iterations": r.Iterations, "time_unit": "s",
		"throughput": finite(r.Throughput), "period": r.Period, "latency": r.Latency, "makespan": r.Makespan,
		"utilization": util, "firings": r.Firings, "messages": r.Messages, "events": r.Events,
	}
	if len(r.Notes) > 0 {
		out["notes"] = r.Notes
	}
	if !math.IsNaN(declared) {
		out["declared_throughput"] = finite(declared)
	}
	if in.machine.Host {
		out["machine_from"] = in.machine.From
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// maxPlacementLines is the most actors simulate's report places a line
// each; a larger graph's placement is told a line per processor.
const maxPlacementLines = 24

// writePlacementGroups writes a line per processor: how many actors it
// runs and their names, the first and last few in the graph's order (the
// JSON output has every actor).
func writePlacementGroups(w io.Writer, g *graph.Graph, names []string, placement map[string]string) {
	order := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, a := range g.Actors {
		if _, ok := placement[a.Name]; ok && !seen[a.Name] {
			order, seen[a.Name] = append(order, a.Name), true
		}
	}
	for _, n := range names {
		if !seen[n] {
			order = append(order, n)
		}
	}
	var procs []string
	byProc := map[string][]string{}
	for _, n := range order {
		p := placement[n]
		if byProc[p] == nil {
			procs = append(procs, p)
		}
		byProc[p] = append(byProc[p], n)
	}
	sort.Strings(procs)
	for _, p := range procs {
		fmt.Fprintf(w, "  %-20s ← %d actors: %s\n", p, len(byProc[p]), namelist.Short(byProc[p]))
	}
}

func writeSimText(w io.Writer, in *simInputs, r *sim.Result, placement map[string]string, how string, declared float64) {
	fmt.Fprintf(w, "%s on %s, mapping: %s\n", in.prepared.Graph.Name, in.machine.Name, how)
	if in.machine.Host {
		fmt.Fprintf(w, "machine: %s\n", in.machine.From)
	}
	names := make([]string, 0, len(placement))
	for n := range placement {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) <= maxPlacementLines {
		for _, n := range names {
			fmt.Fprintf(w, "  %-20s → %s\n", n, placement[n])
		}
	} else {
		writePlacementGroups(w, in.prepared.Graph, names, placement)
	}
	fmt.Fprintf(w, "%d iterations simulated (%d events, %d messages)\n", r.Iterations, r.Events, r.Messages)
	if math.IsInf(r.Throughput, 1) {
		fmt.Fprintf(w, "  throughput  unbounded (period 0: every cost is zero)\n")
	} else {
		fmt.Fprintf(w, "  throughput  %.6g iterations/s\n", r.Throughput)
	}
	if !math.IsNaN(declared) {
		fmt.Fprintf(w, "  throughput  %.6g iterations/s from the declared costs (the line above: from the profile)\n", declared)
	}
	fmt.Fprintf(w, "  period      %.6g s\n  latency     %.6g s (first iteration)\n  makespan    %.6g s\n", r.Period, r.Latency, r.Makespan)
	fmt.Fprintln(w, "utilization:")
	for _, n := range append(append([]string(nil), r.Processors...), r.Interconnects...) {
		fmt.Fprintf(w, "  %-20s %5.1f%%\n", n, 100*r.Utilization[n])
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", strings.TrimSpace(n))
	}
}
