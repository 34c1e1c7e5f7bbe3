// Package filekind tells what a sluice YAML file is — a graph, a mapping, a
// flow-model, a machine model, a shell executable or batch, a cost file, a
// profile — so that every command can check it was given the right kind
// and, when not, name the command that takes it.
//
// A file says what it is with a top-level `kind:` key. Without one, its
// kind is detected from its top-level keys, with the same result for every
// file sluice ships (the examples' test checks both agree).
package filekind

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kind is a kind of file.
type Kind string

// The kinds of YAML file sluice reads.
const (
	Graph      Kind = "graph"
	Mapping    Kind = "mapping"
	FlowModel  Kind = "flowmodel"
	Machine    Kind = "machine"
	Executable Kind = "executable"
	Batch      Kind = "batch"
	Costs      Kind = "costs"
	Profile    Kind = "profile"
	Unknown    Kind = ""
)

// Kinds lists every kind, in the order help texts show them.
var Kinds = []Kind{Graph, Mapping, FlowModel, Machine, Executable, Batch, Costs, Profile}

// info says what a kind is and which commands take it.
var info = map[Kind]struct{ what, use string }{
	Graph:      {"a graph of actors and channels", "sluice check, run, dot, simulate, map, ui or gen go"},
	Mapping:    {"a mapping (where each actor runs)", "--mapping with sluice run, check, simulate or map"},
	FlowModel:  {"a flow-model (a portable kernel)", "sluice sh (or `flowmodel:` in a graph's actor)"},
	Machine:    {"a machine model", "--machine with sluice simulate or map"},
	Executable: {"a shell executable (a flow-model bound to buffers)", "sluice sh"},
	Batch:      {"a shell batch (a list of shell commands)", "sluice sh"},
	Costs:      {"a cost file (per-actor, per-processor costs)", "--costs with sluice simulate or map"},
	Profile:    {"a profile (measured firing times)", "--profile with sluice simulate or map"},
}

// What describes k in a few words ("a mapping (where each actor runs)").
func (k Kind) What() string {
	if i, ok := info[k]; ok {
		return i.what
	}
	return "not a file kind sluice knows"
}

// Use names the commands that take a file of kind k.
func (k Kind) Use() string { return info[k].use }

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// signatures are the top-level keys that identify each kind when a file
// has no `kind:` key. The first kind whose required keys are all present
// wins, so more specific signatures come first.
var signatures = []struct {
	kind Kind
	keys []string
}{
	{Executable, []string{"flowmodel", "bind"}},
	{Batch, []string{"batch"}},
	{Mapping, []string{"mapping"}},
	{Machine, []string{"processors"}},
	{FlowModel, []string{"kernel", "requires"}},
	{FlowModel, []string{"kernel", "in"}},
	{FlowModel, []string{"kernel", "out"}},
	{Costs, []string{"costs"}},
	{Graph, []string{"actors"}},
}

// Detect returns the kind of a YAML document: its `kind:` key when it has
// one (an error when that names no kind), else the kind its top-level keys
// show, else Unknown. file names the document in errors.
func Detect(file string, data []byte) (Kind, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Unknown, &SyntaxError{Msg: fmt.Sprintf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	if len(doc.Content) == 0 {
		return Unknown, nil
	}
	return DetectNode(file, doc.Content[0])
}

// DetectNode is Detect on a document already parsed: top is its root
// node.
func DetectNode(file string, top *yaml.Node) (Kind, error) {
	if top == nil || top.Kind != yaml.MappingNode {
		return Unknown, nil
	}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		keys[top.Content[i].Value] = top.Content[i+1]
	}
	if v, ok := keys["kind"]; ok {
		k := Kind(v.Value)
		if v.Kind != yaml.ScalarNode || !k.Valid() {
			return Unknown, fmt.Errorf("%s:%d:%d: kind: expected one of %s, found %q", file, v.Line, v.Column, list(), v.Value)
		}
		return k, nil
	}
	return detectKeys(keys), nil
}

// SyntaxError is Detect's error for data that is not YAML at all (the
// readers report it with its position; a caller that only asks the kind
// may take it as Unknown).
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }

// detectKeys matches top-level keys against the signatures. A profile is
// a mapping of actor names to numbers with none of the other kinds' keys.
func detectKeys(keys map[string]*yaml.Node) Kind {
	if a, ok := keys["actors"]; ok && len(keys) <= 2 && a.Kind == yaml.MappingNode && len(a.Content) > 0 {
		inner := map[string]*yaml.Node{}
		for i := 0; i+1 < len(a.Content); i += 2 {
			inner[a.Content[i].Value] = a.Content[i+1]
		}
		if allScalarOrMeanNS(inner) && !hasScalar(inner) {
			return Profile
		}
	}
	for _, s := range signatures {
		if all(keys, s.keys) {
			return s.kind
		}
	}
	if len(keys) > 0 && allScalarOrMeanNS(keys) {
		return Profile
	}
	return Unknown
}

func all(keys map[string]*yaml.Node, want []string) bool {
	for _, k := range want {
		if _, ok := keys[k]; !ok {
			return false
		}
	}
	return true
}

// allScalarOrMeanNS reports whether every value is a number or a mapping
// holding mean_ns, the shapes of a profile written by sluice run --profile.
func allScalarOrMeanNS(keys map[string]*yaml.Node) bool {
	for _, v := range keys {
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag != "!!int" && v.Tag != "!!float" {
				return false
			}
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(v.Content); i += 2 {
				found = found || v.Content[i].Value == "mean_ns"
			}
			if !found {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func hasScalar(keys map[string]*yaml.Node) bool {
	for _, v := range keys {
		if v.Kind == yaml.ScalarNode {
			return true
		}
	}
	return false
}

func list() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// WrongKind is the error a command gives when a file is not of the kind it
// takes: it says what the file is and which command takes it.
type WrongKind struct {
	File      string
	Want, Got Kind
}

// Error renders "FILE is a mapping (...), not a graph: use it with ...".
func (e *WrongKind) Error() string {
	if e.Got == Unknown {
		return fmt.Sprintf("%s: expected %s, found a file of no kind sluice knows (add `kind: %s` at the top if it is one; kinds: %s)", e.File, e.Want.What(), e.Want, list())
	}
	return fmt.Sprintf("%s is %s, not %s: use it with %s", e.File, e.Got.What(), e.Want.What(), e.Got.Use())
}

// Expect returns a *WrongKind error when data is not of kind want. A file
// of Unknown kind is let through when want is Graph, so that the graph
// parser reports what is wrong with it, key by key.
func Expect(file string, data []byte, want Kind) error {
	got, err := Detect(file, data)
	return expected(file, want, got, err)
}

// ExpectNode is Expect on a document already parsed: top is its root
// node.
func ExpectNode(file string, top *yaml.Node, want Kind) error {
	got, err := DetectNode(file, top)
	return expected(file, want, got, err)
}

// expected is Expect's verdict on a detected kind.
func expected(file string, want, got Kind, err error) error {
	if err != nil {
		return err
	}
	if got == want || (got == Unknown && want == Graph) {
		return nil
	}
	return &WrongKind{File: file, Want: want, Got: got}
}
