package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

// pipelineOf loads path as a pipeline-model when it is a YAML graph file
// with a `pipeline:` section; it returns nil, nil for other files.
func pipelineOf(path string) (*graph.Pipeline, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
	default:
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil || !spec.HasPipeline(data) {
		return nil, nil // spec.Load already read (or failed on) the file
	}
	return spec.ParsePipeline(path, data)
}

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

// openGraph says why sluice run does not run g when g is open (a graph
// input or output bound to no channel), and what runs it instead; "" when
// g is closed. check prints the same sentence, so the two agree.
func openGraph(g *graph.Graph) string {
	if len(g.Inputs) == 0 && len(g.Outputs) == 0 {
		return ""
	}
	var ports []string
	for _, b := range g.Inputs {
		ports = append(ports, "input "+b.Name)
	}
	for _, b := range g.Outputs {
		ports = append(ports, "output "+b.Name)
	}
	return fmt.Sprintf("graph %s is open (%s bound to no channel): sluice run runs closed graphs only; "+
		"run it from a program that feeds and drains those ports (a pipeline-model through package metapipe: see docs/metapipeline.md), "+
		"or use it as a composite (graph: FILE) inside a closed graph", g.Name, strings.Join(ports, ", "))
}
