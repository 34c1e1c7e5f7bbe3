package spec

import (
	"github.com/sluicehq/sluice/device/scenario"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

// parseElementwise declares a element-wise when its kernel: mapping has
// an elementwise: body (and optionally param:), once its ports and
// iterations are known (scenario.Elementwise).
func (p *yp) parseElementwise(a *graph.Actor, m map[string]yamlpos.Field, what string) {
	f, ok := m["kernel"]
	if !ok {
		return
	}
	n := p.Node(f.V)
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	var body, param *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "elementwise":
			body = n.Content[i+1]
		case "param":
			param = n.Content[i+1]
		}
	}
	what += ": kernel"
	if body == nil {
		if param != nil {
			p.Errorf(param, "%s: param: is the parameter of an elementwise: body: expected an elementwise: key", what)
		}
		return
	}
	src, ok := p.Str(body, what+": elementwise")
	if !ok {
		return
	}
	var v float64
	if param != nil {
		if v, ok = p.Number(param, what+": param"); !ok {
			return
		}
	}
	if err := scenario.Elementwise(a, src, float32(v)); err != nil {
		p.Errorf(body, "%s: elementwise: %v", what, err)
	}
}
