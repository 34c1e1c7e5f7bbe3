package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Error is one problem in a spec file, at a position. Line and Col count
// from 1; a zero Col means the position is known only to the line (the YAML
// syntax checker reports lines only), a zero Line that it is known only to
// the file.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

// Error renders "file:line:col: msg" (or "file:line: msg", "file: msg").
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	}
	return e.Msg
}

// ErrorList is every problem found in a spec file (and the files it
// includes), sorted by file and position. Parsers return it as their error
// when anything is wrong, so all problems are reported at once.
type ErrorList []*Error

// Error renders one problem per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the problems as errors, for errors.As and errors.Is.
func (l ErrorList) Unwrap() []error {
	es := make([]error, len(l))
	for i, e := range l {
		es[i] = e
	}
	return es
}

// err returns the list sorted and without duplicates as an error, or nil
// when it is empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	out := l[:0]
	seen := map[string]bool{}
	for _, e := range l {
		if k := e.Error(); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// origin renders a position as the graph model's Origin strings do.
func origin(file string, line, col int) string {
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// parseOrigin splits "file:line:col" (the file may itself hold colons).
func parseOrigin(s string) (file string, line, col int, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, 0, false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j <= 0 {
		return "", 0, 0, false
	}
	l, err1 := strconv.Atoi(s[j+1 : i])
	c, err2 := strconv.Atoi(s[i+1:])
	if err1 != nil || err2 != nil || l <= 0 || c < 0 {
		return "", 0, 0, false
	}
	return s[:j], l, c, true
}

// suggest returns ` (did you mean "x"?)` when a close name exists, or the
// list of known names when there are few.
func suggest(name string, names []string) string {
	if best := closest(name, names); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(names) > 0 && len(names) <= 12 {
		s := append([]string(nil), names...)
		sort.Strings(s)
		return " (known: " + strings.Join(s, ", ") + ")"
	}
	return ""
}

// closest returns the name nearest to name within a small edit distance.
func closest(name string, names []string) string {
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
