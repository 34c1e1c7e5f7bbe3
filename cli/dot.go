package cli

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/dot"
)

func newDot() *cobra.Command {
	var svg bool
	var outFile string
	cmd := &cobra.Command{
		Use:   "dot FILE",
		Short: "Write the graph as Graphviz DOT (or SVG), with deadlock findings highlighted",
		Long: `dot writes the graph as Graphviz DOT: actors with their repetition counts, channels
with rates, capacities and initial tokens. Channels on a blocked cycle are drawn red and
dashed; channels that need initial tokens are bold red with the number to add.
With --svg it renders SVG through Graphviz's dot program.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := loadGraph(args[0], loadOptions(cmd))
			if err != nil {
				return err
			}
			rep := analysis.Check(g, analysis.CheckOptions{NoThroughput: true, NoSchedule: true})
			h := dot.Highlight{Cycles: rep.Cycles, Initialize: rep.Initialize, Buffers: rep.Buffers}
			if rep.Consistent {
				h.Repetitions = rep.Repetitions
			}
			var buf bytes.Buffer
			if err := dot.Write(&buf, g, h); err != nil {
				return err
			}
			// Render first, write after: a failed rendering leaves no
			// empty or partial output file behind.
			data := buf.Bytes()
			if svg {
				var img bytes.Buffer
				if err := dot.SVG(cmd.Context(), data, &img); err != nil {
					return err
				}
				data = img.Bytes()
			}
			if outFile == "" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			if err := os.WriteFile(outFile, data, 0o644); err != nil {
				return err
			}
			if outFile != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", outFile)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&svg, "svg", false, "render SVG with Graphviz (dot must be installed)")
	cmd.Flags().StringVarP(&outFile, "output", "o", "", "write to this file instead of standard output")
	return cmd
}
