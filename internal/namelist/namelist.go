// Package namelist writes lists of names (actors, channels, stages) for
// people to read: a 5,000-actor graph's note names a few and says how
// many it leaves out instead of filling the terminal.
package namelist

import (
	"fmt"
	"strings"
)

// Join joins names with sep, keeping at most max of them: beyond that,
// the first max/2 and the last max/2 with "… (N more)" between, N the
// names left out. max < 2 keeps them all.
func Join(names []string, max int, sep string) string {
	if max < 2 || len(names) <= max {
		return strings.Join(names, sep)
	}
	head, tail := names[:max/2], names[len(names)-max/2:]
	return strings.Join(head, sep) + fmt.Sprintf("%s… (%d more)%s", sep, len(names)-len(head)-len(tail), sep) + strings.Join(tail, sep)
}

// Short is Join with ", " and at most 8 names: how a note names actors.
func Short(names []string) string { return Join(names, 8, ", ") }
