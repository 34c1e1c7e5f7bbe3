// Package yamlpos is the toolkit the spec, machine and sim packages share to
// read YAML files with every problem reported at its file:line:col: the
// positioned Error and ErrorList, a Session that collects them (sorted,
// deduplicated, capped) and guards against alias bombs and deep nesting,
// and a Reader whose node helpers iterate mappings (duplicate and unknown
// keys, listing the allowed ones) and decode scalars with positioned errors.
package yamlpos

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Error is one problem in a file, at a position. Line and Col count from 1;
// a zero Col means the position is known only to the line (the YAML syntax
// checker reports lines only), a zero Line that it is known only to the file.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	// Consequence marks a problem that follows from the file's own
	// mistakes (a port left unconnected by a misspelt key, found by
	// validating the graph read): ErrorList.Err lists every cause (unknown
	// keys, parse errors) before any consequence.
	Consequence bool
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

// ErrorList is every problem found in a file (and the files it includes),
// sorted by file and position once Err has been called. Parsers return it
// as their error when anything is wrong, so all problems are reported at
// once.
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

// Err returns the list sorted — causes before consequences, then by file,
// line and column — and without duplicates as an error, or nil when it is
// empty. It sorts in place.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.Consequence != b.Consequence {
			return !a.Consequence
		}
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

// Origin renders a position as the models' Origin strings do: "file:line:col".
func Origin(file string, line, col int) string {
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// ParseOrigin splits "file:line:col" (the file may itself hold colons).
func ParseOrigin(s string) (file string, line, col int, ok bool) {
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

// At returns an Error for a problem whose position is an Origin string:
// at that position when where parses as file:line:col, else in file with
// where kept in the message.
func At(file, where, msg string) *Error {
	if f, l, c, ok := ParseOrigin(where); ok {
		return &Error{File: f, Line: l, Col: c, Msg: msg}
	}
	if where != "" {
		msg = where + ": " + msg
	}
	return &Error{File: file, Msg: msg}
}
