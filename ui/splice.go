package ui

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// splice writes the edited tree of a graph file as text that keeps the
// original bytes of every node the edits left alone: top-level keys and
// the entries of top-level block collections (actors, channels, …) that
// did not change are copied from text as they were, with their comments,
// blank lines and spacing; changed entries are written anew at the
// original indentation, new ones after their section's last entry. It
// reports false when the text does not lend itself (then write the tree).
func splice(text []byte, orig, edited *yaml.Node) ([]byte, bool) {
	lines := strings.SplitAfter(string(text), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if orig.Kind != yaml.MappingNode || orig.Style&yaml.FlowStyle != 0 || len(orig.Content) == 0 {
		return nil, false
	}
	sp := &splicer{lines: lines}
	first := sp.entries(orig, len(lines))[0].head
	sp.copy(1, first-1)
	if !sp.collection(orig, edited, len(lines), 0) {
		return nil, false
	}
	return []byte(strings.Join(sp.out, "")), true
}

// splicer builds the spliced text line by line.
type splicer struct {
	lines []string // the original text's lines, each with its newline
	out   []string
}

// entry is one entry of a mapping (key and value) or a sequence (value):
// its key for matching and the lines it spans in the original text.
type entry struct {
	key         string
	k, v        *yaml.Node // k is nil in a sequence
	head, first int        // its head comment's first line, its own first line
	last        int        // its last line, trailing comments and blank lines left out
}

// entries lists the entries of the block collection n, which ends at line end.
func (sp *splicer) entries(n *yaml.Node, end int) []entry {
	var out []entry
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, entry{key: n.Content[i].Value, k: n.Content[i], v: n.Content[i+1], first: n.Content[i].Line})
		}
	} else {
		for _, v := range n.Content {
			out = append(out, entry{key: render(nil, v, false), v: v, first: v.Line})
		}
	}
	for i := range out {
		stop := end
		if i+1 < len(out) {
			stop = out[i+1].first - 1
		}
		out[i].last = sp.trimBack(out[i].first, stop)
		prev := 0
		if i > 0 {
			prev = out[i-1].last
		}
		out[i].head = sp.headOf(out[i].first, prev)
	}
	return out
}

// trimBack is the last line in [first, stop] that is not blank or a comment.
func (sp *splicer) trimBack(first, stop int) int {
	for stop > first && isGap(sp.line(stop)) {
		stop--
	}
	return stop
}

// headOf is the first of the comment lines right above line first (after
// line prev).
func (sp *splicer) headOf(first, prev int) int {
	h := first
	for h-1 > prev && strings.HasPrefix(strings.TrimSpace(sp.line(h-1)), "#") {
		h--
	}
	return h
}

func isGap(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "#")
}

func (sp *splicer) line(n int) string {
	if n < 1 || n > len(sp.lines) {
		return ""
	}
	return sp.lines[n-1]
}

// copy copies the original lines from..to (inclusive).
func (sp *splicer) copy(from, to int) {
	for n := from; n <= to; n++ {
		sp.out = append(sp.out, sp.line(n))
	}
}

// collection splices the entries of the block collection orig (ending at
// line end) edited into edited; depth 0 is the document's top level.
func (sp *splicer) collection(orig, edited *yaml.Node, end, depth int) bool {
	oe := sp.entries(orig, end)
	if len(oe) == 0 {
		return false
	}
	indent := leading(sp.line(oe[0].first))
	ee := make([]entry, 0, len(edited.Content))
	if edited.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(edited.Content); i += 2 {
			ee = append(ee, entry{key: edited.Content[i].Value, k: edited.Content[i], v: edited.Content[i+1]})
		}
	} else {
		for _, v := range edited.Content {
			ee = append(ee, entry{key: render(nil, v, false), v: v})
		}
	}
	match := matchEntries(oe, ee)
	next := 0 // the next edited entry to write
	cursor := oe[0].head
	for i, o := range oe {
		sp.copy(cursor, o.head-1)
		cursor = o.last + 1
		j, ok := match[i]
		if !ok {
			continue // removed
		}
		for ; next < j; next++ {
			sp.add(ee[next], indent)
		}
		next = j + 1
		if !sp.entry(o, ee[j], indent, depth) {
			return false
		}
	}
	for ; next < len(ee); next++ {
		sp.add(ee[next], indent)
	}
	sp.copy(cursor, end)
	return true
}

// matchEntries pairs original entries with edited ones, in order: by key
// in a mapping, by equal text in a sequence.
func matchEntries(oe, ee []entry) map[int]int {
	m := map[int]int{}
	at := 0
	for i, o := range oe {
		for j := at; j < len(ee); j++ {
			if ee[j].key == o.key {
				m[i] = j
				at = j + 1
				break
			}
		}
	}
	return m
}

// entry writes one entry that is in both trees: as it was when unchanged,
// spliced when a top-level block collection changed, anew otherwise.
func (sp *splicer) entry(o, e entry, indent string, depth int) bool {
	sp.copy(o.head, o.first-1)
	if render(o.k, o.v, false) == render(e.k, e.v, false) {
		sp.copy(o.first, o.last)
		return true
	}
	if depth == 0 && o.k != nil && blockCollection(o.v) && e.v.Kind == o.v.Kind && o.v.Line > o.k.Line && len(o.v.Content) > 0 {
		sp.copy(o.first, o.v.Line-1)
		return sp.collection(o.v, e.v, o.last, depth+1)
	}
	sp.add(entry{k: e.k, v: e.v}, indent)
	return true
}

func blockCollection(n *yaml.Node) bool {
	return (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0
}

// add writes an entry anew at the indentation, without its head comment
// (kept from the original text when there was one).
func (sp *splicer) add(e entry, indent string) {
	for _, l := range strings.SplitAfter(render(e.k, e.v, true), "\n") {
		if l != "" {
			sp.out = append(sp.out, indent+l)
		}
	}
}

// render writes key: value (k not nil) or "- value" as YAML, two spaces
// per level; noHead leaves the head comment out.
func render(k, v *yaml.Node, noHead bool) string {
	var n yaml.Node
	if k != nil {
		kc := *k
		if noHead {
			kc.HeadComment = ""
		}
		n = yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{&kc, v}}
	} else {
		vc := *v
		if noHead {
			vc.HeadComment = ""
		}
		n = yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{&vc}}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if enc.Encode(&n) != nil || enc.Close() != nil {
		return ""
	}
	return buf.String()
}

// leading is the indentation of a line.
func leading(l string) string {
	return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
}
