package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/gogen"
	"github.com/sluicehq/sluice/graph"
)

func newGen() *cobra.Command {
	gen := &cobra.Command{
		Use:   "gen",
		Short: "Generate code from a graph file",
	}
	var mapping, out string
	var iterations int64
	goCmd := &cobra.Command{
		Use:   "go FILE",
		Short: "Write the Go program equivalent to a graph (package graph, the built-in actors, runtime.Run)",
		Long: `gen go writes a main package that builds FILE's graph with sluice's Go API
(the same actors, ports, channels and, with --mapping, placements) and runs it
with runtime.Run; its -iterations flag defaults to --iterations. Actors without
any implementation fire a placeholder that keeps a core busy for their cost.
The program goes to standard output, or to -o FILE.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := loadGraph(args[0], loadOptions(cmd))
			if err != nil {
				return err
			}
			var m *graph.Mapping
			if mapping != "" {
				if m, err = loadMapping(mapping); err != nil {
					return err
				}
				if err := m.Check(g); err != nil {
					return err
				}
			}
			src, err := gogen.Generate(g, m, gogen.Options{Iterations: iterations, Source: args[0]})
			if err != nil {
				return err
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(src)
				return err
			}
			if err := os.WriteFile(out, src, 0o644); err != nil {
				return fmt.Errorf("-o %s: %w", out, err)
			}
			return nil
		},
	}
	goCmd.Flags().StringVar(&mapping, "mapping", "", "mapping file whose placements the program uses")
	goCmd.Flags().StringVarP(&out, "output", "o", "", "write the program to this file instead of standard output")
	goCmd.Flags().Int64VarP(&iterations, "iterations", "n", 0, "default of the program's -iterations flag (0: until the sources end)")
	gen.AddCommand(goCmd)
	return gen
}
