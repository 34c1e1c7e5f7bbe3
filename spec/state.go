package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
)

func init() {
	actorKeys = append(actorKeys, "state")
}

var stateKeys = []string{"type", "init", "lifetime"}

var lifetimes = map[string]graph.Lifetime{
	"initializestate": graph.InitializeState,
	"copyinstate":     graph.CopyInState,
	"copyoutstate":    graph.CopyOutState,
	"finalize":        graph.FinalizeState,
}

// parseState reads an actor's declared state:
//
//	state: {type: i64, init: 0, lifetime: [initializestate, copyoutstate]}
//
// The state is one value of type; init is required with initializestate.
func (p *yp) parseState(a *graph.Actor, m map[string]yamlpos.Field, what string) {
	f, ok := m["state"]
	if !ok {
		return
	}
	what += ": state"
	sm := yamlpos.Index(p.Fields(f.V, what, stateKeys))
	tf, ok := sm["type"]
	if !ok {
		p.Errorf(f.K, "%s: expected a type: key (the state is one value of that type)", what)
		return
	}
	t, ok := p.tokenType(tf.V, what+": type")
	if !ok {
		return
	}
	d := &graph.State{Size: t.Size}
	if lf, ok := sm["lifetime"]; ok {
		for _, n := range p.List(lf.V, what+": lifetime", "a list of initializestate, copyinstate, copyoutstate, finalize") {
			s, ok := p.Str(n, what+": lifetime")
			if !ok {
				continue
			}
			l, known := lifetimes[s]
			if !known {
				p.Errorf(n, "%s: lifetime %q: expected initializestate, copyinstate, copyoutstate or finalize", what, yamlpos.Clip(s))
				continue
			}
			d.Lifetime |= l
		}
	}
	if inf, ok := sm["init"]; ok {
		vn := inf.V
		if dn := p.Node(vn); dn != nil && dn.Kind != yaml.SequenceNode {
			vn = &yaml.Node{Kind: yaml.SequenceNode, Line: dn.Line, Column: dn.Column, Content: []*yaml.Node{dn}}
		}
		if b, n, ok := p.encodeValues(t, vn, what+": init"); ok {
			if n != 1 {
				p.Errorf(inf.V, "%s: init: %d values: expected one %s value", what, n, t)
			}
			d.Init = b
		}
		if d.Lifetime&graph.InitializeState == 0 {
			p.Errorf(inf.K, "%s: init: given without initializestate in lifetime: expected both or neither", what)
		}
	} else if d.Lifetime&graph.InitializeState != 0 {
		p.Errorf(f.K, "%s: initializestate needs an init: value", what)
	}
	a.StateDecl = d
}
