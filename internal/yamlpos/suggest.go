package yamlpos

import (
	"fmt"
	"sort"
	"strings"
)

// Suggest returns ` (did you mean "x"?)` when a close name exists, or the
// list of known names when there are few (at most 12), or "".
func Suggest(name string, names []string) string {
	if s := DidYouMean(name, names); s != "" {
		return s
	}
	if len(names) > 0 && len(names) <= 12 {
		s := append([]string(nil), names...)
		sort.Strings(s)
		return " (known: " + strings.Join(s, ", ") + ")"
	}
	return ""
}

// DidYouMean returns ` (did you mean "x"?)` when a close name exists, or "".
func DidYouMean(name string, names []string) string {
	if c := Closest(name, names); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// Closest returns the name nearest to name (ignoring case) within a small
// edit distance: at most 2, or 1 for names of up to 3 letters; "" when none
// is that close. Long names and long lists are not searched.
func Closest(name string, names []string) string {
	if len(name) > 256 || len(names) > 2000 {
		return ""
	}
	best, bestD := "", 3
	if len(name) <= 3 {
		bestD = 2
	}
	for _, n := range names {
		if len(n) > 256 {
			continue
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
