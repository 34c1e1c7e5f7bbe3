package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/calibrate"
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
	// machineFrom says where the machine came from when it is not a file
	// given with --machine (the calibrated model of this host).
	machineFrom string
}

// loadSimInputs reads simulate's and map's inputs. The first profile
// gives the profile costs; given several (measured with the graph's
// kernel actors at different G), each also gives the CPU actors' costs
// beside kernel actors of its G (sim.Costs.AtG).
func loadSimInputs(graphFile, machineFile, mapFile, costsFile string, profileFiles []string) (*simInputs, error) {
	in := &simInputs{}
	var err error
	if in.graph, err = spec.Load(graphFile); err != nil {
		return nil, err
	}
	if machineFile == "" {
		m, path, err := calibrate.Cached()
		if err != nil {
			return nil, fmt.Errorf("no --machine given and no calibrated model of this host (%v): give a machine description such as examples/machines/two-cpus.yaml, or run sluice calibrate once", err)
		}
		in.machine, in.machineFrom = m, "calibrated model "+path
	} else if in.machine, err = machine.Load(machineFile); err != nil {
		return nil, err
	}
	if costsFile != "" {
		if in.costs, err = sim.LoadCosts(costsFile); err != nil {
			return nil, err
		}
	}
	for i, file := range profileFiles {
		prof, err := sim.LoadProfileFull(file)
		if err != nil {
			return nil, err
		}
		if in.costs == nil {
			in.costs = &sim.Costs{}
		}
		if i == 0 {
			in.costs.Profile, in.costs.Kernels = prof.Mean, prof.Kernels
		}
		if len(profileFiles) > 1 {
			if prof.G() == 0 {
				return nil, fmt.Errorf("--profile %s: expected kernel actors with their work_groups (G), as sluice run --profile writes them, in each of several profiles: found none", file)
			}
			in.costs.AddAtG(prof)
		}
	}
	if b := calibrate.SyntheticBurn(in.machine, actors.Unimplemented(in.graph)); b != nil {
		// sluice run gives these actors busy loops on the clock, which
		// last longer than their declared costs.
		if in.costs == nil {
			in.costs = &sim.Costs{}
		}
		in.costs.Burn = b
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
		machineFile, mapFile, costsFile, controlsFile string
		traceFile, paraverFile                        string
		profileFiles                                  []string
		iterations                                    int64
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
			in, err := loadSimInputs(args[0], machineFile, mapFile, costsFile, profileFiles)
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
			prog, err := sim.Build(in.graph, in.mapping, in.machine, in.costs, sim.Options{Capacity: capacity, NoFuseCPU: noFuse})
			if err != nil {
				return err
			}
			if n := sim.SteadyIterations(prog); !cmd.Flags().Changed("iterations") && n > iterations {
				// A pool processor's rounds span many iterations: simulate
				// enough of them to reach the steady state.
				iterations = n
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
			run := sim.Run
			if !cmd.Flags().Changed("iterations") && cfg.Mode != sim.TraceDriven {
				run = sim.RunUntilSteady // more iterations until a steady state shows
			}
			res, err := run(prog, cfg)
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
				for _, st := range t.Stages {
					placement[st] = placement[t.Name]
				}
			}
			declared := math.NaN()
			if len(profileFiles) > 0 && declaresCosts(in.graph) {
				// Both predictions: from the profile and from the declared costs.
				dc := &sim.Costs{}
				if in.costs != nil {
					*dc = *in.costs
					dc.Profile, dc.Kernels, dc.AtG = nil, nil, nil
				}
				dprog, err := sim.Build(in.graph, in.mapping, in.machine, dc, sim.Options{Capacity: capacity, NoFuseCPU: noFuse})
				if err != nil {
					return err
				}
				dcfg := cfg
				dcfg.Trace = false
				dres, err := sim.Run(dprog, dcfg)
				if err != nil {
					return fmt.Errorf("prediction from the declared costs: %w", err)
				}
				declared = dres.Throughput
			}
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
	return cmd
}

// finite returns v, or nil for an infinite or NaN value (JSON has none).
func finite(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return v
}

// declaresCosts reports whether some actor of g declares a cost.
func declaresCosts(g *graph.Graph) bool {
	for _, a := range g.Actors {
		if a.Cost > 0 {
			return true
		}
	}
	return false
}

func writeSimJSON(w io.Writer, in *simInputs, r *sim.Result, placement map[string]string, declared float64) error {
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
	if !math.IsNaN(declared) {
		out["declared_throughput"] = finite(declared)
	}
	if in.machineFrom != "" {
		out["machine_from"] = in.machineFrom
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeSimText(w io.Writer, in *simInputs, r *sim.Result, placement map[string]string, how string, declared float64) {
	fmt.Fprintf(w, "%s on %s, mapping: %s\n", in.graph.Name, in.machine.Name, how)
	if in.machineFrom != "" {
		fmt.Fprintf(w, "machine: %s\n", in.machineFrom)
	}
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
