package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
)

func init() {
	graphKeys = append(graphKeys, "shared")
}

var sharedKeys = []string{"type", "init", "mode", "doc"}

// parseShared reads a graph's shared variables:
//
//	shared:
//	  threshold: {type: f32, init: 0.5, mode: sync}
func (p *yp) parseShared(c *gctx, n *yaml.Node) {
	for _, f := range p.Fields(n, "shared", nil) {
		what := "shared variable " + f.Key
		m := yamlpos.Index(p.Fields(f.V, what, sharedKeys))
		tf, ok := m["type"]
		if !ok {
			if vn := p.Node(f.V); vn != nil {
				p.Errorf(vn, "%s: expected a type: key", what)
			}
			continue
		}
		t, ok := p.tokenType(tf.V, what+": type")
		if !ok {
			continue
		}
		mode := graph.SharedSync
		if mf, ok := m["mode"]; ok {
			if s, ok := p.Str(mf.V, what+": mode"); ok {
				md, err := graph.ParseSharedMode(s)
				if err != nil {
					p.Errorf(mf.V, "%s: mode: %q: expected sync or async", what, yamlpos.Clip(s))
				}
				mode = md
			}
		}
		var init []byte
		if inf, ok := m["init"]; ok {
			vn := inf.V
			if d := p.Node(vn); d != nil && d.Kind != yaml.SequenceNode {
				vn = &yaml.Node{Kind: yaml.SequenceNode, Line: d.Line, Column: d.Column, Content: []*yaml.Node{d}}
			}
			b, n, ok := p.encodeValues(t, vn, what+": init")
			if !ok {
				continue
			}
			if n != 1 {
				p.Errorf(inf.V, "%s: init: %d values: expected one %s value", what, n, t)
				continue
			}
			init = b
		}
		c.g.AddShared(f.Key, t, init, mode, p.Pos(f.K))
	}
}
