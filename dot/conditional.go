package dot

import (
	"fmt"
	"io"

	"github.com/sluicehq/sluice/graph"
)

// writePattern draws a conditional pattern actor as a cluster: a diamond
// for the pattern's interface (where outer channels and the control edge
// arrive) and one dashed sub-cluster per branch with its inner actors and
// channels; dotted edges from the diamond to each branch's actors that read
// the interface are labelled with the control value that selects them.
func writePattern(w io.Writer, n int, a *graph.Actor, h Highlight) {
	fmt.Fprintf(w, "  subgraph cluster_pattern_%d {\n    label=%s; style=solid;\n", n, quote(a.Name+" (conditional)"))
	label := a.Name
	if q, ok := h.Repetitions[a.Name]; ok {
		label += fmt.Sprintf("\n×%d", q)
	}
	fmt.Fprintf(w, "    %s [label=%s, shape=diamond];\n", quote(a.Name), quote(label))
	for k, b := range a.Pattern.Branches {
		prefix := fmt.Sprintf("%s/%d/", a.Name, k)
		fmt.Fprintf(w, "    subgraph cluster_pattern_%d_%d {\n      label=%s; style=dashed;\n", n, k, quote(fmt.Sprintf("ctl = %d: %s", k, b.Name)))
		for _, ia := range b.Actors {
			named := *ia
			named.Name = prefix + ia.Name
			writeActor(w, "      ", &named, Highlight{})
		}
		w.Write([]byte("    }\n"))
		for _, x := range b.Inputs {
			fmt.Fprintf(w, "    %s -> %s [style=dotted, label=%s];\n", quote(a.Name), quote(prefix+x.Actor), quote(fmt.Sprintf("%s (ctl=%d)", x.Name, k)))
		}
		for _, x := range b.Outputs {
			fmt.Fprintf(w, "    %s -> %s [style=dotted, label=%s];\n", quote(prefix+x.Actor), quote(a.Name), quote(x.Name))
		}
		for _, c := range b.Channels {
			lab := c.From.Rate.String() + " → " + c.To.Rate.String()
			if c.Initial > 0 {
				lab += fmt.Sprintf("\n●%d", c.Initial)
			}
			fmt.Fprintf(w, "    %s -> %s [label=%s];\n", quote(prefix+c.From.Actor.Name), quote(prefix+c.To.Actor.Name), quote(lab))
		}
	}
	w.Write([]byte("  }\n"))
}

// isControlEdge reports whether c feeds a pattern's control port.
func isControlEdge(c *graph.Channel) bool {
	return c.To != nil && c.To.Actor != nil && c.To.Actor.Pattern != nil && c.To.Name == graph.ControlPort
}
