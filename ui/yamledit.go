package ui

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlDoc is a graph file as a YAML node tree: edits change the nodes they
// concern and leave every other node, comments included, as written.
type yamlDoc struct {
	doc  yaml.Node // the document node
	root *yaml.Node
}

// parseDoc reads data (empty: a new graph named name) as a YAML mapping.
func parseDoc(data []byte, name string) (*yamlDoc, error) {
	d := &yamlDoc{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &d.doc); err != nil {
			return nil, fmt.Errorf("the YAML does not parse: %v", err)
		}
	}
	if d.doc.Kind == 0 {
		d.doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
		mapSet(d.doc.Content[0], "name", scalar(name))
	}
	if d.doc.Kind != yaml.DocumentNode || len(d.doc.Content) != 1 || d.doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("expected a YAML mapping (name, actors, channels) at the top, found something else")
	}
	d.root = d.doc.Content[0]
	return d, nil
}

// bytes writes the tree back as YAML, two spaces per level.
func (d *yamlDoc) bytes() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&d.doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func scalar(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: "!!str"}
	if _, err := strconv.Atoi(v); err == nil {
		n.Tag = "!!int"
	}
	return n
}

func flowMap() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle} }

// mapGet returns the value of key in the mapping m (nil when absent).
func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mapSet sets key to v in the mapping m, in place when key is there, at the
// end otherwise (the key keeps its comments).
func mapSet(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v.HeadComment, v.LineComment = m.Content[i+1].HeadComment, m.Content[i+1].LineComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// mapDelete removes key from the mapping m and reports whether it was there.
func mapDelete(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		}
	}
	return false
}

// section returns the top-level mapping or sequence key, created when
// absent (block style for actors, a flow-item block sequence for channels).
func (d *yamlDoc) section(key string, kind yaml.Kind) (*yaml.Node, error) {
	n := mapGet(d.root, key)
	if n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		n = &yaml.Node{Kind: kind}
		mapSet(d.root, key, n)
	}
	if n.Kind != kind {
		return nil, fmt.Errorf("%s: expected a %s, found a %s", key, kindName(kind), kindName(n.Kind))
	}
	return n, nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "YAML alias"
	}
	return "scalar"
}

// actor returns the mapping of the actor name, refusing aliases (an edit
// would change every actor sharing the anchor).
func (d *yamlDoc) actor(name string) (*yaml.Node, error) {
	a := mapGet(mapGet(d.root, "actors"), name)
	switch {
	case a == nil:
		return nil, fmt.Errorf("actor %q: expected an actor of the graph, found none", name)
	case a.Kind == yaml.AliasNode:
		return nil, fmt.Errorf("actor %q is a YAML alias (*%s): edit the anchored actor in the text", name, a.Value)
	case a.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("actor %q: expected a mapping, found a %s", name, kindName(a.Kind))
	}
	return a, nil
}

// port returns the mapping of actor.port, in "in" or "out".
func (d *yamlDoc) port(actor, port string) (*yaml.Node, error) {
	a, err := d.actor(actor)
	if err != nil {
		return nil, err
	}
	for _, dir := range []string{"in", "out"} {
		if p := mapGet(mapGet(a, dir), port); p != nil {
			if p.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("port %s.%s: expected a mapping {type, rate}, found a %s", actor, port, kindName(p.Kind))
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("port %s.%s: expected a port of %s, found none", actor, port, actor)
}

// rateNode writes a rate as the YAML has it: an integer, a flow list of
// phases, or dynamic.
func rateNode(r string) (*yaml.Node, error) {
	r = strings.TrimSpace(r)
	if r == "dynamic" || r == "kpn" {
		return scalar(r), nil
	}
	if strings.HasPrefix(r, "[") && strings.HasSuffix(r, "]") {
		r = r[1 : len(r)-1]
	}
	parts := strings.Split(r, ",")
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if _, err := strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("rate %q: expected an integer, phases [a, b, …] or dynamic", r)
		}
		seq.Content = append(seq.Content, scalar(p))
	}
	if len(seq.Content) == 1 {
		return seq.Content[0], nil
	}
	return seq, nil
}

// channelIndex returns the index in channels of the channel from → to.
func (d *yamlDoc) channelIndex(from, to string) (*yaml.Node, int, error) {
	chans := mapGet(d.root, "channels")
	if chans != nil && chans.Kind == yaml.SequenceNode {
		for i, c := range chans.Content {
			if c.Kind == yaml.MappingNode && value(mapGet(c, "from")) == from && value(mapGet(c, "to")) == to {
				return chans, i, nil
			}
		}
	}
	return nil, -1, fmt.Errorf("channel %s -> %s: expected a channel of the graph, found none", from, to)
}

func value(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

// endActor is the actor of an "actor.port" end.
func endActor(ref string) string {
	a, _, _ := strings.Cut(ref, ".")
	return a
}
