package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/mapping"
	"github.com/sluicehq/sluice/sim"
	"github.com/sluicehq/sluice/spec"
)

// simInputs are the files simulate and map share.
type simInputs struct {
	graph   *graph.Graph
	machine *machine.Machine
	costs   *sim.Costs
	mapping *graph.Mapping
}

func loadSimInputs(graphFile, machineFile, mapFile, costsFile, profileFile string) (*simInputs, error) {
	in := &simInputs{}
	var err error
	if in.graph, err = spec.Load(graphFile); err != nil {
		return nil, err
	}
	if machineFile == "" {
		return nil, fmt.Errorf("--machine is required: a machine description such as examples/machines/two-cpus.yaml")
	}
	if in.machine, err = machine.Load(machineFile); err != nil {
		return nil, err
	}
	if costsFile != "" {
		if in.costs, err = sim.LoadCosts(costsFile); err != nil {
			return nil, err
		}
	}
	if profileFile != "" {
		prof, err := sim.LoadProfile(profileFile)
		if err != nil {
			return nil, err
		}
		if in.costs == nil {
			in.costs = &sim.Costs{}
		}
		in.costs.Profile = prof
	}
	if mapFile != "" {
		if in.mapping, err = spec.LoadMapping(mapFile); err != nil {
			return nil, err
		}
		if err := in.mapping.Check(in.graph); err != nil {
			return nil, err
		}
	}
	return in, nil
}

func newSimulate() *cobra.Command {
	var (
		machineFile, mapFile, costsFile, profileFile, controlsFile string
		traceFile, paraverFile                                     string
		iterations                                                 int64
		seed                                                       uint64
		asJSON                                                     bool
		capacity                                                   map[string]int
	)
	cmd := &cobra.Command{
		Use:   "simulate GRAPH --machine MACHINE",
		Short: "Predict throughput, latency and utilization of a mapped graph on a machine model",
		Long: `simulate runs the cost-model simulator: the graph, mapped onto the processors of an
Abstract Streaming Machine (--machine), with per-firing costs from the graph's cost: keys,
a cost file (--costs) or a profile written by sluice run --profile (--profile).
Without --mapping, actors are mapped by HEFT. Control variables of conditional actors
(attrs: {if: c} or {while: n}) come from a control file (--controls, trace-driven mode)
or from the cost file's probabilities and loops (statistical mode, --seed).
Times are reported in seconds. See docs/simulate.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := loadSimInputs(args[0], machineFile, mapFile, costsFile, profileFile)
			if err != nil {
				return err
			}
			how := "file " + mapFile
			if in.mapping == nil {
				in.mapping, _, err = mapping.HEFTMapping(mapping.Input{Graph: in.graph, Machine: in.machine, Costs: in.costs})
				if err != nil {
					return err
				}
				how = "heft (no --mapping given)"
			}
			prog, err := sim.Build(in.graph, in.mapping, in.machine, in.costs, sim.Options{Capacity: capacity})
			if err != nil {
				return err
			}
			cfg := sim.Config{Iterations: iterations, Seed: seed, Trace: traceFile != "" || paraverFile != ""}
			if in.costs != nil {
				cfg.Probabilities, cfg.Loops = in.costs.Probabilities, in.costs.Loops
			}
			if controlsFile != "" {
				cfg.Mode = sim.TraceDriven
				if cfg.Controls, err = sim.LoadControls(controlsFile); err != nil {
					return err
				}
			}
			res, err := sim.Run(prog, cfg)
			if err != nil {
				return err
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
			placement := map[string]string{}
			for _, t := range prog.Tasks {
				placement[t.Name] = in.machine.Processors[t.Processor].Name
			}
			if asJSON {
				return writeSimJSON(cmd.OutOrStdout(), in, res, placement)
			}
			writeSimText(cmd.OutOrStdout(), in, res, placement, how)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&machineFile, "machine", "", "machine description (YAML, required)")
	f.StringVar(&mapFile, "mapping", "", "mapping file (default: HEFT's mapping)")
	alias(f, "map", "mapping")
	f.StringVar(&costsFile, "costs", "", "cost file: per-actor, per-processor firing costs, control nodes, probabilities")
	f.StringVar(&profileFile, "profile", "", "profile written by sluice run --profile (actor → mean_ns)")
	f.StringVar(&controlsFile, "controls", "", "control variables for the trace-driven mode (YAML: name → list of outcomes)")
	f.Int64Var(&iterations, "iterations", 100, "graph iterations to simulate")
	f.Uint64Var(&seed, "seed", 1, "seed of the statistical model")
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringToIntVar(&capacity, "capacity", nil, "channel capacities in tokens overriding the graph's, e.g. 'a.o->b.i=16,b.o->c.i=8' (as sluice map suggests)")
	f.StringVar(&traceFile, "trace", "", "write the timeline as Chrome Trace Event JSON (opens in Perfetto)")
	f.StringVar(&paraverFile, "paraver", "", "write the timeline as a Paraver trace (.prv, with .pcf and .row beside it)")
	return cmd
}

// finite returns v, or nil for an infinite or NaN value (JSON has none).
func finite(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return v
}

func writeSimJSON(w io.Writer, in *simInputs, r *sim.Result, placement map[string]string) error {
	util := map[string]float64{}
	for k, v := range r.Utilization {
		util[k] = v
	}
	out := map[string]any{
		"graph": in.graph.Name, "machine": in.machine.Name, "mapping": placement,
		"iterations": r.Iterations, "time_unit": "s",
		"throughput": finite(r.Throughput), "period": r.Period, "latency": r.Latency, "makespan": r.Makespan,
		"utilization": util, "firings": r.Firings, "messages": r.Messages, "events": r.Events,
	}
	if len(r.Notes) > 0 {
		out["notes"] = r.Notes
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeSimText(w io.Writer, in *simInputs, r *sim.Result, placement map[string]string, how string) {
	fmt.Fprintf(w, "%s on %s, mapping: %s\n", in.graph.Name, in.machine.Name, how)
	names := make([]string, 0, len(placement))
	for n := range placement {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-20s → %s\n", n, placement[n])
	}
	fmt.Fprintf(w, "%d iterations simulated (%d events, %d messages)\n", r.Iterations, r.Events, r.Messages)
	if math.IsInf(r.Throughput, 1) {
		fmt.Fprintf(w, "  throughput  unbounded (period 0: every cost is zero)\n")
	} else {
		fmt.Fprintf(w, "  throughput  %.6g iterations/s\n", r.Throughput)
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
