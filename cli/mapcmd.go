package cli

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/mapping"
)

func newMap() *cobra.Command {
	var (
		machineFile, fixedFile, costsFile, strategy, outFile, workGroups string
		profileFiles                                                     []string
		seed                                                             uint64
		evaluations, workItems                                           int
		iterations                                                       int64
		capacities                                                       bool
	)
	cmd := &cobra.Command{
		Use:   "map GRAPH [--machine MACHINE]",
		Short: "Map actors onto a machine's processors (HEFT, or a search driven by the simulator)",
		Long: `map chooses a processor for every actor of the graph: heft applies HEFT to one
iteration with the per-processor costs (--costs, --profile, or the graph's cost: keys);
search runs a seeded simulated annealing over placements, replica counts, the G of
kernel actors and (with --capacities) channel capacities, scoring each candidate with
the simulator; all runs both. Several --profile files, taken with the kernel actors at
different G, let the simulator cost each actor as it ran at the G nearest the
candidate's. It prints the predicted throughput of each strategy tried and writes the
best mapping (-o, default standard output) in the mapping YAML format. --mapping pins
the actors it names.
Without --machine it maps onto this host's model measured by sluice calibrate.
Actors placed on a processor of a calibrated model that stands for a device are
written with its device ID (opencl:0:0, cuda:0), their kernel implementation, the
G the search chose (--work-groups) and the work-items of --mapping (else
--work-items), so that sluice run GRAPH --mapping FILE runs the result.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch strategy {
			case "heft", "search", "all":
			default:
				return fmt.Errorf("--strategy %q: expected heft, search or all", strategy)
			}
			in, err := loadSimInputs(cmd, "map", args[0], machineFile, fixedFile, costsFile, profileFiles)
			if err != nil {
				return err
			}
			gs, err := parseIntList("--work-groups", workGroups)
			if err != nil {
				return err
			}
			res, err := driver.Map(cmd.Context(), in.prepared, driver.MapInput{Machine: in.machine, Costs: in.costs, Fixed: in.mapping},
				mapping.MapOptions{Strategy: strategy, Seed: seed, Evaluations: evaluations,
					Iterations: iterations, WorkGroups: gs, WorkItems: workItems, Capacities: capacities})
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			for _, f := range res.Found {
				fmt.Fprintf(errw, "%-7s predicted throughput %.6g iterations/s, period %.6g s (%d simulation(s))\n",
					f.Strategy, f.Throughput, f.Period, f.Evaluations)
			}
			for _, a := range res.Assumptions {
				fmt.Fprintf(errw, "assumed: %s\n", a)
			}
			best := res.Best
			doc := fmt.Sprintf("found by sluice map --strategy %s on machine %s: %s, predicted period %.6g s (%.6g iterations/s)",
				strategy, in.machine.Name, best.Strategy, best.Period, best.Throughput)
			if len(res.Assumptions) > 0 {
				doc += "; assumed: " + strings.Join(res.Assumptions, "; ")
			}
			if len(best.Capacity) > 0 {
				names := make([]string, 0, len(best.Capacity))
				for n := range best.Capacity {
					names = append(names, n)
				}
				sort.Strings(names)
				parts := make([]string, len(names))
				for i, n := range names {
					parts[i] = fmt.Sprintf("%s=%d", n, best.Capacity[n])
				}
				doc += "; channel capacities assumed (simulate with --capacity " + strings.Join(parts, ",") + ")"
			}
			var buf bytes.Buffer
			if err := mapping.WriteMapping(&buf, res.Runnable, doc); err != nil {
				return err
			}
			if outFile == "" {
				_, err := cmd.OutOrStdout().Write(buf.Bytes())
				return err
			}
			if err := os.WriteFile(outFile, buf.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(errw, "best: %s, written to %s\n", best.Strategy, outFile)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&machineFile, "machine", "", "machine description (YAML; default: this host's model from sluice calibrate)")
	f.StringVar(&fixedFile, "mapping", "", "mapping file whose placements are kept (pinned actors)")
	alias(f, "map", "mapping")
	f.StringVar(&costsFile, "costs", "", "cost file: per-actor, per-processor firing costs")
	f.StringArrayVar(&profileFiles, "profile", nil, "profile written by sluice run --profile (actor → mean_ns); repeat it with profiles taken at other G of the kernel actors and each CPU actor costs what it took beside the nearest G")
	f.StringVar(&strategy, "strategy", "all", "heft, search or all")
	f.StringVarP(&outFile, "output", "o", "", "write the mapping to this file (default: standard output)")
	f.Uint64Var(&seed, "seed", 1, "seed of the search")
	f.IntVar(&evaluations, "evaluations", 300, "simulations the search may run")
	f.Int64VarP(&iterations, "iterations", "n", 64, "graph iterations per simulation")
	f.StringVar(&workGroups, "work-groups", "16,64", "G (firings per kernel invocation) the search tries for actors on GPUs, comma-separated; the largest for HEFT's")
	f.IntVar(&workItems, "work-items", 64, "work-items per work-group of a kernel actor that --mapping gives none")
	f.BoolVar(&capacities, "capacities", false, "let the search raise channel capacities too (the mapping file does not carry them: they are listed in its doc: for sluice simulate --capacity, or to set on the graph's channels)")
	return cmd
}

// parseIntList reads a comma-separated list of positive integers (flag
// names the flag in errors).
func parseIntList(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s: expected positive integers separated by commas, found %q", flag, f)
		}
		out = append(out, v)
	}
	return out, nil
}
