package spec

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits that keep malformed or hostile input from exhausting memory.
const (
	maxNodes       = 1 << 18 // YAML nodes visited, aliases expanded (alias bombs)
	maxGraphs      = 1024    // composite bodies (inline or by file) in one load
	maxRate        = math.MaxInt32
	maxPhases      = 1 << 16
	maxTokenSize   = 1 << 30 // bytes in one token
	maxInitialData = 16 << 20
	maxFileSize    = 16 << 20
	maxDepth       = 16 // nested composite graph files
	maxNesting     = 64 // nested values, merges and inline graphs
)

// state is shared by a spec file and the files it includes.
type state struct {
	errs    ErrorList
	budget  int
	spent   bool
	quiet   map[string]bool // origin+"|class" of validation problems already explained
	loading []string        // composite graph files being read (cycle check)
	depth   int             // current nesting of recursive reads (values, merges, graphs)
	graphs  int             // graphs read so far
	gdepth  int             // current nesting of graphs
}

// enter guards a recursive read against self-referencing aliases; leave
// must follow when it returns true.
func (p *yp) enter(n *yaml.Node, what string) bool {
	if p.st.depth >= maxNesting {
		if n != nil {
			p.errorf(n, "%s: nested more than %d levels deep", what, maxNesting)
		}
		return false
	}
	p.st.depth++
	return true
}

func (p *yp) leave() { p.st.depth-- }

// maxErrors bounds the errors kept; a file with more is reported by its first ones.
const maxErrors = 200

func (st *state) add(e *Error) {
	switch {
	case len(st.errs) < maxErrors:
		st.errs = append(st.errs, e)
	case len(st.errs) == maxErrors:
		st.errs = append(st.errs, &Error{File: e.File, Msg: fmt.Sprintf("too many errors: only the first %d are reported", maxErrors)})
	}
}

func newState() *state { return &state{budget: maxNodes, quiet: map[string]bool{}} }

// yp reads the nodes of one file.
type yp struct {
	st   *state
	file string // as shown in positions
	dir  string // directory relative paths are resolved against
}

func (p *yp) errorf(n *yaml.Node, format string, args ...any) {
	e := &Error{File: p.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	p.st.add(e)
}

func (p *yp) pos(n *yaml.Node) string { return origin(p.file, n.Line, n.Column) }

// node follows aliases and charges the node budget; it returns nil once
// the budget is spent (reported once).
func (p *yp) node(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 64 {
			p.errorf(n, "alias chain too long")
			return nil
		}
		n = n.Alias
	}
	if n == nil {
		return nil
	}
	p.st.budget--
	if p.st.budget < 0 {
		if !p.st.spent {
			p.st.spent = true
			p.errorf(n, "document too large: more than %d nodes once aliases are expanded", maxNodes)
		}
		return nil
	}
	return n
}

// kind names a node's YAML type for messages.
func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode:
		return "a document"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int":
			return "integer " + n.Value
		case "!!float":
			return "number " + n.Value
		case "!!bool":
			return "boolean " + n.Value
		case "!!null":
			return "nothing (null)"
		}
		return strconv.Quote(clip(n.Value))
	}
	return "an unknown node"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// field is one key: value pair of a mapping.
type field struct {
	key  string
	k, v *yaml.Node
}

// fields returns the pairs of a mapping node in order. It reports a node
// that is not a mapping, keys that are not strings, duplicate keys and, when
// allowed is not nil, keys not in allowed. Merge keys (<<: *anchor) are
// expanded. Bad pairs are left out.
func (p *yp) fields(n *yaml.Node, what string, allowed []string) []field {
	n = p.node(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		p.errorf(n, "%s: expected a mapping, found %s", what, kind(n))
		return nil
	}
	var out []field
	seen := map[string]*yaml.Node{}
	var merged []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := p.node(n.Content[i]), n.Content[i+1]
		if k == nil {
			return out
		}
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, p.mergeFields(v, what, allowed)...)
			continue
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			p.errorf(k, "%s: expected a name as key, found %s", what, kind(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			p.errorf(k, "%s: duplicate key %q (first at line %d, column %d)", what, k.Value, prev.Line, prev.Column)
			continue
		}
		seen[k.Value] = k
		if allowed != nil && !contains(allowed, k.Value) {
			p.errorf(k, "%s: unknown key %q%s; allowed keys: %s", what, k.Value, didYouMean(k.Value, allowed), strings.Join(allowed, ", "))
			continue
		}
		out = append(out, field{k.Value, k, v})
	}
	for _, f := range merged {
		if seen[f.key] == nil {
			seen[f.key] = f.k
			out = append(out, f)
		}
	}
	return out
}

func (p *yp) mergeFields(v *yaml.Node, what string, allowed []string) []field {
	v = p.node(v)
	if v == nil || !p.enter(v, what) {
		return nil
	}
	defer p.leave()
	if v.Kind == yaml.SequenceNode {
		var out []field
		for _, m := range v.Content {
			out = append(out, p.fields(m, what, allowed)...)
		}
		return out
	}
	return p.fields(v, what, allowed)
}

func didYouMean(s string, names []string) string {
	if c := closest(s, names); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str reads a scalar as a string (any scalar: names may look like numbers).
func (p *yp) str(n *yaml.Node, what string) (string, bool) {
	n = p.node(n)
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, "%s: expected a string, found %s", what, kind(n))
		return "", false
	}
	return n.Value, true
}

// integer reads an integer in [lo, hi].
func (p *yp) integer(n *yaml.Node, what string, lo, hi int64) (int64, bool) {
	n = p.node(n)
	if n == nil {
		return 0, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		p.errorf(n, "%s: expected an integer, found %s", what, kind(n))
		return 0, false
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		p.errorf(n, "%s: integer %s out of range: expected %d to %d", what, clip(n.Value), lo, hi)
		return 0, false
	}
	if v < lo || v > hi {
		p.errorf(n, "%s: %d out of range: expected %d to %d", what, v, lo, hi)
		return 0, false
	}
	return v, true
}

// boolean reads true or false.
func (p *yp) boolean(n *yaml.Node, what string) (bool, bool) {
	n = p.node(n)
	if n == nil {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		p.errorf(n, "%s: expected true or false, found %s", what, kind(n))
		return false, false
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		p.errorf(n, "%s: expected true or false, found %s", what, kind(n))
		return false, false
	}
	return v, true
}

// number reads an integer or floating-point scalar.
func (p *yp) number(n *yaml.Node, what string) (float64, bool) {
	n = p.node(n)
	if n == nil {
		return 0, false
	}
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		p.errorf(n, "%s: expected a number, found %s", what, kind(n))
		return 0, false
	}
	var v float64
	if err := n.Decode(&v); err != nil {
		p.errorf(n, "%s: expected a number, found %s", what, kind(n))
		return 0, false
	}
	return v, true
}

// value converts a node to plain Go values (for built-in parameters):
// map[string]any, []any, string, int, float64, bool or nil.
func (p *yp) value(n *yaml.Node, what string) any {
	n = p.node(n)
	if n == nil || !p.enter(n, what) {
		return nil
	}
	defer p.leave()
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, f := range p.fields(n, what, nil) {
			m[f.key] = p.value(f.v, what+"."+f.key)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			l = append(l, p.value(c, fmt.Sprintf("%s[%d]", what, i)))
		}
		return l
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!int":
			var v int
			if n.Decode(&v) == nil {
				return v
			}
			var f float64
			if n.Decode(&f) == nil {
				return f
			}
		case "!!float":
			var f float64
			if n.Decode(&f) == nil {
				return f
			}
		case "!!bool":
			var b bool
			if n.Decode(&b) == nil {
				return b
			}
		}
		return n.Value
	}
	p.errorf(n, "%s: unexpected %s", what, kind(n))
	return nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the YAML library's parser (not scanner) errors. It
// reports their lines counting from 0, at the start of the enclosing
// collection; scanner errors count from 1.
var parserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive",
	"found duplicate %YAML directive", "found incompatible YAML document",
	"found undefined tag handle",
}

// syntaxErrors turns a YAML parser error into a positioned error. The YAML
// library gives a line but no column.
func (p *yp) syntaxErrors(err error) {
	m := err.Error()
	e := &Error{File: p.file, Line: 1, Msg: "malformed YAML: " + strings.TrimPrefix(m, "yaml: ")}
	if sm := yamlLine.FindStringSubmatch(m); sm != nil {
		e.Line, _ = strconv.Atoi(sm[1])
		e.Msg = "malformed YAML: " + sm[2]
		if contains(parserProblems, sm[2]) {
			e.Line++
			e.Msg += " (in the block or flow collection that starts on this line)"
		}
	}
	p.st.add(e)
}
