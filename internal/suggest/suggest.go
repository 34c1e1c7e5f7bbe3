// Package suggest is sluice's one rule for "did you mean": the edit
// distance between two names, the closest of a list of known names, and
// the parenthesised hint every message appends after an unknown name. It
// imports nothing of sluice (package graph uses it, as do the YAML
// readers through internal/yamlpos), so every message suggests alike.
package suggest

import (
	"fmt"
	"sort"
	"strings"
)

// MaxKnown is the most names Suggest lists when none is close: longer
// lists are left out of the message.
const MaxKnown = 12

// Suggest returns ` (did you mean "x"?)` when a close name exists
// (Closest), else the sorted list of known names ` (known: a, b)` when
// there are at most MaxKnown, else "".
func Suggest(name string, names []string) string {
	if s := DidYouMean(name, names); s != "" {
		return s
	}
	if len(names) > 0 && len(names) <= MaxKnown {
		s := append([]string(nil), names...)
		sort.Strings(s)
		return " (known: " + strings.Join(s, ", ") + ")"
	}
	return ""
}

// DidYouMean returns ` (did you mean "x"?)` when a close name exists
// (Closest), or "".
func DidYouMean(name string, names []string) string {
	if c := Closest(name, names); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// Closest returns the name nearest to name, ignoring case, within a small
// edit distance: at most 2, or at most 1 for names of up to 3 letters; ""
// when none is that close. Of equally near names the first listed wins.
// Names longer than 256 bytes and lists longer than 2000 names are not
// searched (the distance costs the product of the two lengths).
func Closest(name string, names []string) string {
	if len(name) > 256 || len(names) > 2000 {
		return ""
	}
	best, bestD := "", 3
	if len(name) <= 3 {
		bestD = 2
	}
	lower := strings.ToLower(name)
	for _, n := range names {
		if len(n) > 256 {
			continue
		}
		if d := EditDistance(lower, strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// EditDistance returns the Levenshtein distance between a and b, counted
// in bytes: the fewest insertions, deletions and substitutions that turn
// a into b.
func EditDistance(a, b string) int {
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
