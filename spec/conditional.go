package spec

import (
	"fmt"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
)

// The keys of a conditional pattern actor (see parsePattern).
func init() {
	actorKeys = append(actorKeys, "pattern", "control", "branches")
}

// parsePattern reads a conditional pattern actor:
//
//	route:
//	  pattern: conditional
//	  control: u8            # the ctl input's type (default u8)
//	  in:  {x: {type: f32, rate: 4}}
//	  out: {y: {type: f32, rate: 4}}
//	  branches: [else.yaml, {actors: ...}]   # index = control value
//
// It adds the control input port graph.ControlPort; every branch is a file
// name or an inline graph, like a composite's graph:.
func (p *yp) parsePattern(a *graph.Actor, m map[string]yamlpos.Field, what string) {
	pf, ok := m["pattern"]
	if !ok {
		for _, k := range []string{"control", "branches"} {
			if f, ok := m[k]; ok {
				p.Errorf(f.K, "%s: %s: belongs to a conditional pattern: expected pattern: conditional", what, k)
			}
		}
		return
	}
	if s, ok := p.Str(pf.V, what+": pattern"); ok && s != "conditional" {
		p.Errorf(pf.V, "%s: pattern: unknown pattern %q: expected conditional", what, yamlpos.Clip(s))
		return
	}
	for _, k := range []string{"use", "kernel", "process", "graph"} {
		if o, ok := m[k]; ok {
			p.Errorf(o.K, "%s: a conditional pattern has no %s: its body is its branches", what, k)
		}
	}
	if a.Port(graph.ControlPort) != nil {
		p.Errorf(pf.K, "%s: port %q is the pattern's control input, added for it: expected no port of that name in in:", what, graph.ControlPort)
		return
	}
	ctl := graph.MustTokenType("u8")
	if f, ok := m["control"]; ok {
		if t, ok := p.tokenType(f.V, what+": control"); ok {
			if !graph.IsIntegerType(t) {
				p.Errorf(f.V, "%s: control: type %s: expected an integer type (u8 for a boolean)", what, t)
			}
			ctl = t
		}
	}
	var branches []*graph.Graph
	if f, ok := m["branches"]; ok {
		for i, bn := range p.List(f.V, what+": branches", "a list of graphs (file names or inline graphs)") {
			b := p.parseSub(bn, fmt.Sprintf("%s/branch[%d]", a.Name, i), fmt.Sprintf("%s: branches[%d]", what, i))
			if b == nil {
				b = graph.New(fmt.Sprintf("%s/branch[%d]", a.Name, i))
			}
			branches = append(branches, b)
		}
	} else {
		p.Errorf(pf.K, "%s: pattern: conditional needs branches: (a list of graphs, indexed by control value)", what)
	}
	a.Stateful = true
	a.Pattern = &graph.Conditional{Branches: branches}
	a.Impls = append(a.Impls, graph.Impl{Kind: graph.ImplGo, Source: "conditional"})
	a.AddPort(graph.ControlPort, graph.In, ctl, graph.SDF(1), p.Pos(pf.K))
}
