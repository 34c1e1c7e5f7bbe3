package yamlpos

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Limits keep malformed or hostile input from exhausting memory and time.
type Limits struct {
	// Nodes is how many YAML nodes may be visited, aliases expanded (alias bombs).
	Nodes int
	// Nesting is how deep recursive reads (values, merge keys) may nest.
	Nesting int
	// Errors is how many errors are kept; a file with more is reported by its first ones.
	Errors int
}

// DefaultLimits are the limits of NewSession.
var DefaultLimits = Limits{Nodes: 1 << 18, Nesting: 64, Errors: 200}

// Session is what the files of one load share: the errors found, the node
// budget and the nesting depth.
type Session struct {
	// Errs is every problem found so far, in the order found.
	Errs   ErrorList
	limits Limits
	budget int
	spent  bool
	depth  int
}

// NewSession starts a session with DefaultLimits.
func NewSession() *Session { return NewSessionLimits(DefaultLimits) }

// NewSessionLimits starts a session with the given limits.
func NewSessionLimits(l Limits) *Session { return &Session{limits: l, budget: l.Nodes} }

// Add records a problem, keeping at most Limits.Errors of them (and a last
// one saying that there were more).
func (s *Session) Add(e *Error) {
	switch limit := s.limits.Errors; {
	case len(s.Errs) < limit:
		s.Errs = append(s.Errs, e)
	case len(s.Errs) == limit:
		s.Errs = append(s.Errs, &Error{File: e.File, Msg: fmt.Sprintf("too many errors: only the first %d are reported", limit)})
	}
}

// Err returns the problems sorted and deduplicated, or nil when there is none.
func (s *Session) Err() error { return s.Errs.Err() }

// Truncated reports whether the node budget ran out: the document was read
// only in part, so checks of the whole (unconnected ports, missing keys)
// would report false problems and must be skipped.
func (s *Session) Truncated() bool { return s.spent }

// Reader reads the nodes of one file of a session, reporting problems at
// their positions in File.
type Reader struct {
	*Session
	// File names the file in positions.
	File string
	// Rename maps alternative spellings of keys to the names in the allowed
	// lists given to Fields (applied only when Fields checks keys).
	Rename map[string]string
}

// NewReader reads file in a session of its own.
func NewReader(file string) *Reader { return &Reader{Session: NewSession(), File: file} }

// Errorf records a problem at node n (at the file when n is nil).
func (r *Reader) Errorf(n *yaml.Node, format string, args ...any) {
	e := &Error{File: r.File, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	r.Add(e)
}

// Pos renders n's position as an Origin string.
func (r *Reader) Pos(n *yaml.Node) string { return Origin(r.File, n.Line, n.Column) }

// Deref follows aliases (a bounded chain) without charging the budget.
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i <= 64; i++ {
		n = n.Alias
	}
	return n
}

// Node follows aliases and charges the node budget; it returns nil for a
// nil node, an alias chain that is too long, or once the budget is spent
// (reported once).
func (r *Reader) Node(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 64 {
			r.Errorf(n, "alias chain too long")
			return nil
		}
		n = n.Alias
	}
	if n == nil {
		return nil
	}
	r.budget--
	if r.budget < 0 {
		if !r.spent {
			r.spent = true
			r.Errorf(n, "document too large: more than %d nodes once aliases are expanded", r.limits.Nodes)
		}
		return nil
	}
	return n
}

// Enter guards a recursive read against self-referencing aliases and deep
// nesting; Leave must follow when it returns true.
func (r *Reader) Enter(n *yaml.Node, what string) bool {
	if r.depth >= r.limits.Nesting {
		if n != nil {
			r.Errorf(n, "%s: nested more than %d levels deep", what, r.limits.Nesting)
		}
		return false
	}
	r.depth++
	return true
}

// Leave ends what Enter began.
func (r *Reader) Leave() { r.depth-- }

// Kind names a node's YAML type (or a scalar's value) for messages.
func Kind(n *yaml.Node) string {
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
		return strconv.Quote(Clip(n.Value))
	}
	return "an unknown node"
}

// Clip shortens a value quoted in a message to 40 bytes.
func Clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Field is one key: value pair of a mapping.
type Field struct {
	// Key is the key's name (after Rename).
	Key string
	// K is the key's node; V the value's, aliases followed.
	K, V *yaml.Node
}

// Index maps fields by key.
func Index(fs []Field) map[string]Field {
	m := make(map[string]Field, len(fs))
	for _, f := range fs {
		m[f.Key] = f
	}
	return m
}

// Fields returns the pairs of a mapping node in order. It reports a node
// that is not a mapping (null reads as empty), keys that are not names,
// duplicate keys and, when allowed is not nil, keys not in allowed (naming
// the closest and listing the allowed ones). Merge keys (<<: *anchor) are
// expanded; explicit keys win over merged ones. Bad pairs are left out.
func (r *Reader) Fields(n *yaml.Node, what string, allowed []string) []Field {
	n = r.Node(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		r.Errorf(n, "%s: expected a mapping, found %s", what, Kind(n))
		return nil
	}
	var out []Field
	seen := map[string]*yaml.Node{}
	var merged []Field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := r.Node(n.Content[i]), Deref(n.Content[i+1])
		if k == nil {
			return out
		}
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merged = append(merged, r.mergeFields(v, what, allowed)...)
			continue
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			r.Errorf(k, "%s: expected a name as key, found %s", what, Kind(k))
			continue
		}
		key := k.Value
		if a, ok := r.Rename[key]; ok && allowed != nil {
			key = a
		}
		if prev, dup := seen[key]; dup {
			r.Errorf(k, "%s: duplicate key %q (first at line %d, column %d)", what, k.Value, prev.Line, prev.Column)
			continue
		}
		seen[key] = k
		if allowed != nil && !slices.Contains(allowed, key) {
			r.Errorf(k, "%s: unknown key %q%s; allowed keys: %s", what, k.Value, DidYouMean(k.Value, allowed), strings.Join(allowed, ", "))
			continue
		}
		out = append(out, Field{key, k, v})
	}
	for _, f := range merged {
		if seen[f.Key] == nil {
			seen[f.Key] = f.K
			out = append(out, f)
		}
	}
	return out
}

func (r *Reader) mergeFields(v *yaml.Node, what string, allowed []string) []Field {
	v = r.Node(v)
	if v == nil || !r.Enter(v, what) {
		return nil
	}
	defer r.Leave()
	if v.Kind == yaml.SequenceNode {
		var out []Field
		for _, m := range v.Content {
			out = append(out, r.Fields(m, what, allowed)...)
		}
		return out
	}
	return r.Fields(v, what, allowed)
}

// List returns the items of a sequence node, reporting any other node as
// "what: expected want, found ...".
func (r *Reader) List(n *yaml.Node, what, want string) []*yaml.Node {
	n = r.Node(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.Errorf(n, "%s: expected %s, found %s", what, want, Kind(n))
		return nil
	}
	return n.Content
}

// Str reads a scalar as a string (any scalar: names may look like numbers).
func (r *Reader) Str(n *yaml.Node, what string) (string, bool) {
	n = r.Node(n)
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		r.Errorf(n, "%s: expected a string, found %s", what, Kind(n))
		return "", false
	}
	return n.Value, true
}

// Int reads an integer in [lo, hi].
func (r *Reader) Int(n *yaml.Node, what string, lo, hi int64) (int64, bool) {
	n = r.Node(n)
	if n == nil {
		return 0, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		r.Errorf(n, "%s: expected an integer, found %s", what, Kind(n))
		return 0, false
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		r.Errorf(n, "%s: integer %s out of range: expected %d to %d", what, Clip(n.Value), lo, hi)
		return 0, false
	}
	if v < lo || v > hi {
		r.Errorf(n, "%s: %d out of range: expected %d to %d", what, v, lo, hi)
		return 0, false
	}
	return v, true
}

// Bool reads true or false.
func (r *Reader) Bool(n *yaml.Node, what string) (bool, bool) {
	n = r.Node(n)
	if n == nil {
		return false, false
	}
	var v bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&v) != nil {
		r.Errorf(n, "%s: expected true or false, found %s", what, Kind(n))
		return false, false
	}
	return v, true
}

// Number reads an integer or floating-point scalar.
func (r *Reader) Number(n *yaml.Node, what string) (float64, bool) {
	n = r.Node(n)
	if n == nil {
		return 0, false
	}
	var v float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&v) != nil {
		r.Errorf(n, "%s: expected a number, found %s", what, Kind(n))
		return 0, false
	}
	return v, true
}

// Duration reads a non-negative duration ("10us", "1.5ms") or an integer
// number of nanoseconds.
func (r *Reader) Duration(n *yaml.Node, what string) (time.Duration, bool) {
	n = r.Node(n)
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		v, ok := r.Int(n, what, 0, math.MaxInt64)
		return time.Duration(v), ok
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		d, err := time.ParseDuration(strings.TrimSpace(n.Value))
		if err == nil && d >= 0 {
			return d, true
		}
	}
	r.Errorf(n, "%s: expected a duration such as 10us or 1.5ms, or an integer number of nanoseconds, found %s", what, Kind(n))
	return 0, false
}

var sizeRE = regexp.MustCompile(`^\s*([0-9]+)\s*([KMGT]i?B|B)?\s*$`)

var sizeUnits = map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}

// Size reads a non-negative size in bytes of at most 2^53 as an integer,
// or a string with a unit: "16KiB", "4 MB", "1GiB".
func (r *Reader) Size(n *yaml.Node, what string) (int64, bool) {
	n = r.Node(n)
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var v int64
		if n.Decode(&v) == nil && v >= 0 && v <= 1<<53 {
			return v, true
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if m := sizeRE.FindStringSubmatch(n.Value); m != nil {
			v, err := strconv.ParseInt(m[1], 10, 64)
			if mul := sizeUnits[m[2]]; err == nil && v <= (1<<62)/mul {
				return v * mul, true
			}
		}
	}
	r.Errorf(n, "%s: expected a size in bytes such as 4096, 16KiB or 1GB, found %s", what, Kind(n))
	return 0, false
}

// Value converts a node to plain Go values: map[string]any, []any, string,
// int, float64, bool or nil.
func (r *Reader) Value(n *yaml.Node, what string) any {
	n = r.Node(n)
	if n == nil || !r.Enter(n, what) {
		return nil
	}
	defer r.Leave()
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, f := range r.Fields(n, what, nil) {
			m[f.Key] = r.Value(f.V, what+"."+f.Key)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			l = append(l, r.Value(c, fmt.Sprintf("%s[%d]", what, i)))
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
	r.Errorf(n, "%s: unexpected %s", what, Kind(n))
	return nil
}

// Parse unmarshals a YAML document and returns its root node, or nil when
// the document is malformed (reported at its line) or empty.
func (r *Reader) Parse(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		r.SyntaxError(err)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	return doc.Content[0]
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

// SyntaxError records a YAML library error at its line (the library gives
// no column) as "malformed YAML: ...".
func (r *Reader) SyntaxError(err error) { r.SyntaxErrorIn(err, nil) }

// SyntaxErrorIn is SyntaxError for the document data: an error the
// library reports past the last line (the file ended inside a collection)
// is put at the end of the file, line and column, and says so.
func (r *Reader) SyntaxErrorIn(err error, data []byte) {
	m := err.Error()
	e := &Error{File: r.File, Line: 1, Msg: "malformed YAML: " + strings.TrimPrefix(m, "yaml: ")}
	if sm := yamlLine.FindStringSubmatch(m); sm != nil {
		e.Line, _ = strconv.Atoi(sm[1])
		e.Msg = "malformed YAML: " + sm[2]
		if slices.Contains(parserProblems, sm[2]) {
			e.Line++
			if end := endOf(data); data != nil && e.Line >= end.line {
				e.Line, e.Col = end.line, end.col
				e.Msg += " (the file ends inside a block or flow collection that is not closed)"
			} else {
				e.Msg += " (in the block or flow collection that starts on this line)"
			}
		}
	}
	r.Add(e)
}

type mark struct{ line, col int }

// endOf is the position just past the last character of data.
func endOf(data []byte) mark {
	line := 1 + strings.Count(string(data), "\n")
	last := strings.LastIndexByte(string(data), '\n')
	return mark{line, 1 + len([]rune(string(data[last+1:])))}
}

// CheckKind reports an error when the fields of a file's root hold a
// `kind:` key whose value is not want (files say what they are with it; see
// package filekind).
func (r *Reader) CheckKind(m map[string]Field, want string) {
	f, ok := m["kind"]
	if !ok {
		return
	}
	if s, ok := r.Str(f.V, "kind"); ok && s != want {
		r.Errorf(f.V, "kind: this file is read as a %s, but it says kind: %s (check the file and the command or flag it was given to)", want, s)
	}
}
