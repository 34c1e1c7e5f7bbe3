// Package dot renders a graph as Graphviz DOT: actors as boxes (with their
// repetition counts when known), channels as edges labelled with rates,
// capacities and initial tokens, composite actors as clusters, and the
// findings of the deadlock analysis highlighted: channels on blocked cycles
// in red, channels that need initial tokens bold with the count to add.
package dot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// Highlight carries analysis results to draw on the graph. Every field is
// optional.
type Highlight struct {
	// Repetitions maps actor name → firings per iteration.
	Repetitions map[string]int64
	// Cycles lists blocked cycles as channel names.
	Cycles [][]string
	// Initialize maps channel name → initial tokens to add.
	Initialize map[string]int
	// Buffers maps channel name → suggested capacity in tokens.
	Buffers map[string]int
}

// Write renders g (flattened when it has composites) as DOT on w.
func Write(w io.Writer, g *graph.Graph, h Highlight) error {
	if g.HasComposites() {
		f, err := g.Flatten()
		if err != nil {
			return err
		}
		g = f
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph %s {\n", quote(g.Name))
	bw.WriteString("  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")

	// Group actors of composites ("comp/inner") into clusters.
	clusters := map[string][]*graph.Actor{}
	var top []*graph.Actor
	for _, a := range g.Actors {
		if i := strings.LastIndex(a.Name, "/"); i > 0 {
			clusters[a.Name[:i]] = append(clusters[a.Name[:i]], a)
		} else {
			top = append(top, a)
		}
	}
	for i, a := range top {
		if a.Pattern != nil {
			writePattern(bw, i, a, h)
			continue
		}
		writeActor(bw, "  ", a, h)
	}
	names := make([]string, 0, len(clusters))
	for n := range clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		fmt.Fprintf(bw, "  subgraph cluster_%d {\n    label=%s; style=dashed;\n", i, quote(n))
		for _, a := range clusters[n] {
			writeActor(bw, "    ", a, h)
		}
		bw.WriteString("  }\n")
	}
	for _, b := range g.Inputs {
		fmt.Fprintf(bw, "  %s [shape=cds, label=%s];\n  %s -> %s;\n", quote("in:"+b.Name), quote(b.Name), quote("in:"+b.Name), quote(b.Actor))
	}
	for _, b := range g.Outputs {
		fmt.Fprintf(bw, "  %s [shape=cds, label=%s];\n  %s -> %s;\n", quote("out:"+b.Name), quote(b.Name), quote(b.Actor), quote("out:"+b.Name))
	}

	onCycle := map[string]bool{}
	for _, cy := range h.Cycles {
		for _, c := range cy {
			onCycle[c] = true
		}
	}
	for _, c := range g.Channels {
		var label []string
		label = append(label, c.From.Rate.String()+" → "+c.To.Rate.String())
		if c.Capacity > 0 {
			label = append(label, fmt.Sprintf("cap %d", c.Capacity))
		} else if b, ok := h.Buffers[c.Name]; ok {
			label = append(label, fmt.Sprintf("cap ≥%d", b))
		}
		if c.Initial > 0 {
			label = append(label, fmt.Sprintf("●%d", c.Initial))
		}
		attrs := []string{"label=" + quote(strings.Join(label, "\n"))}
		if c.From.Type.Name != "" {
			attrs = append(attrs, "tooltip="+quote(c.Name+" ("+c.From.Type.Name+")"))
		}
		if n, ok := h.Initialize[c.Name]; ok {
			attrs[0] = "label=" + quote(strings.Join(label, "\n")+fmt.Sprintf("\n+%d initial", n))
			attrs = append(attrs, "color=red", "fontcolor=red", "penwidth=3")
		} else if onCycle[c.Name] {
			attrs = append(attrs, "color=red", "fontcolor=red", "style=dashed")
		} else if isControlEdge(c) {
			attrs = append(attrs, "color=blue", "fontcolor=blue", "style=bold", "xlabel=\"control\"")
		}
		fmt.Fprintf(bw, "  %s -> %s [%s];\n", quote(c.From.Actor.Name), quote(c.To.Actor.Name), strings.Join(attrs, ", "))
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

func writeActor(w io.Writer, indent string, a *graph.Actor, h Highlight) {
	label := a.Name
	if i := strings.LastIndex(label, "/"); i >= 0 {
		label = label[i+1:]
	}
	if q, ok := h.Repetitions[a.Name]; ok {
		label += fmt.Sprintf("\n×%d", q)
	}
	var kinds []string
	for _, im := range a.Impls {
		if im.Kind == graph.ImplBuiltin {
			kinds = append(kinds, im.Source)
		} else {
			kinds = append(kinds, string(im.Kind))
		}
	}
	if len(kinds) > 0 {
		label += "\n[" + strings.Join(kinds, ", ") + "]"
	}
	attrs := "label=" + quote(label)
	if a.Dynamic() {
		attrs += ", shape=ellipse"
	}
	if a.Stateful {
		attrs += ", peripheries=2"
	}
	fmt.Fprintf(w, "%s%s [%s];\n", indent, quote(a.Name), attrs)
}

func quote(s string) string {
	return `"` + quoter.Replace(s) + `"`
}

// quoter escapes a DOT string's backslashes, quotes and newlines (a
// strings.Replacer is safe for concurrent use; building one per string
// took a fifth of sluice dot's time on a 5 000-actor graph).
var quoter = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// ErrNoGraphviz is returned by SVG when the dot program is not installed.
var ErrNoGraphviz = errors.New("Graphviz is not installed: the dot program was not found on PATH (install it, e.g. apt-get install graphviz, or write DOT and render it elsewhere)")

// SVG renders DOT source to SVG with Graphviz's dot program.
func SVG(ctx context.Context, dotSrc []byte, w io.Writer) error {
	path, err := exec.LookPath("dot")
	if err != nil {
		return ErrNoGraphviz
	}
	cmd := exec.CommandContext(ctx, path, "-Tsvg")
	cmd.Stdin = strings.NewReader(string(dotSrc))
	cmd.Stdout = w
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("dot -Tsvg failed: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
