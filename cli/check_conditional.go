package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// writeBranches prints, per conditional pattern, each branch's inner
// firings per firing of the pattern.
func writeBranches(w io.Writer, b map[string][]map[string]int64) {
	names := make([]string, 0, len(b))
	for n := range b {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "conditional %s: firings per firing of the pattern, by control value:\n", n)
		for k, f := range b[n] {
			inner := make([]string, 0, len(f))
			for a := range f {
				inner = append(inner, a)
			}
			sort.Strings(inner)
			for i, a := range inner {
				inner[i] = fmt.Sprintf("%s=%d", a, f[a])
			}
			fmt.Fprintf(w, "  %d: %s\n", k, strings.Join(inner, " "))
		}
	}
}
