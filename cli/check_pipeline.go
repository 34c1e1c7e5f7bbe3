package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluicehq/sluice/analysis"
)

// writePipeline prints check's pipeline-model section (nothing for nil).
func writePipeline(w io.Writer, p *analysis.PipelineReport) {
	if p == nil {
		return
	}
	if !p.Valid {
		fmt.Fprintf(w, "✗ not a pipeline-model: %d problem(s)\n", len(p.Errors))
		for _, e := range p.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
		return
	}
	fmt.Fprintf(w, "✓ pipeline-model (≥1 exit port, ≥1 stage, connected): entrance %s; exit %s; initonce %s\n",
		roleList(p.Entrance), roleList(p.Exit), roleList(p.InitOnce))
	for _, k := range sortedKeys(p.NeedInitOnce) {
		fmt.Fprintf(w, "  needs initonce port %s (+%d tokens): a loop cannot start without them\n", k, p.NeedInitOnce[k])
	}
	for _, r := range p.Rates {
		every := fmt.Sprintf("every %d firing(s)", r.Every)
		if r.Role == "initonce" && r.Every == 0 {
			every = "once, at the start"
		}
		fmt.Fprintf(w, "  %-9s %-20s %s: %.4g exchange(s) of %d token(s) per iteration\n", r.Role, r.Port, every, r.Exchanges, r.Tokens)
	}
}

func roleList(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return strings.Join(xs, ", ")
}
