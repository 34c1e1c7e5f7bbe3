package spec

import (
	"context"
	"strings"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

var flowModelKeys = []string{"src", "sha256", "params", "max_bytes", "timeout", "doc"}

// FlowModelRef is what an actor's flowmodel: key says, as written: spec
// reads it and never fetches anything. A FlowModelResolver given in
// Options turns it into the actor's ports and kernels.
type FlowModelRef struct {
	// Src is the model's path (relative to Dir unless absolute), or its
	// http(s) URL, or any other reference a resolver knows, as written.
	Src string
	// Dir is the directory of the graph file that names the model.
	Dir string
	// SHA256 pins the model file's content (hex), when given.
	SHA256 string
	// MaxBytes and Timeout bound the fetch (0: the resolver's default).
	MaxBytes int64
	Timeout  time.Duration
	// Params override the model's parameters.
	Params map[string]float64
	// Origin is the position of the reference: "file:line:col".
	Origin string
}

// IsURL reports whether the reference is an http(s) URL.
func (r FlowModelRef) IsURL() bool {
	return strings.HasPrefix(r.Src, "http://") || strings.HasPrefix(r.Src, "https://")
}

// A FlowModelResolver makes a the actor the flow-model ref names: it sets
// its ports, kernels and attributes (a.Iterations and a.Origin are set
// already). Its error is reported at the reference's position; it should
// say what was expected and found without quoting the model's contents.
type FlowModelResolver func(ctx context.Context, a *graph.Actor, ref FlowModelRef) error

// parseFlowModel reads an actor's flowmodel: key — a path or URL, or a
// mapping {src, sha256, params, max_bytes, timeout} — and has the
// resolver of the load make the actor. It reports whether the actor got
// the model's ports.
func (p *yp) parseFlowModel(a *graph.Actor, m map[string]yamlpos.Field, what string) bool {
	f := m["flowmodel"]
	what += ": flowmodel"
	for _, k := range []string{"in", "out", "use", "kernel", "graph", "process", "swap"} {
		if o, ok := m[k]; ok {
			p.Errorf(o.K, "%s: an actor made from a flow-model has no %s: the model gives its ports and kernel (and iterations: N turns its swap pairs into the actor's)", what, k)
			return false
		}
	}
	ref := FlowModelRef{Dir: p.dir}
	at := f.V
	if n := p.Node(f.V); n != nil && n.Kind == yaml.ScalarNode {
		ref.Src, _ = p.Str(f.V, what)
	} else {
		fs := yamlpos.Index(p.Fields(f.V, what, flowModelKeys))
		s, ok := fs["src"]
		if !ok {
			if n := p.Node(f.V); n != nil && n.Kind == yaml.MappingNode {
				p.Errorf(n, "%s: missing src: expected a path or http(s) URL of the flow-model file", what)
			}
			return false
		}
		at = s.V
		ref.Src, _ = p.Str(s.V, what+": src")
		if x, ok := fs["sha256"]; ok {
			ref.SHA256, _ = p.Str(x.V, what+": sha256")
		}
		if x, ok := fs["max_bytes"]; ok {
			ref.MaxBytes, _ = p.Size(x.V, what+": max_bytes")
		}
		if x, ok := fs["timeout"]; ok {
			ref.Timeout, _ = p.Duration(x.V, what+": timeout")
		}
		if x, ok := fs["params"]; ok {
			ref.Params = map[string]float64{}
			for _, pf := range p.Fields(x.V, what+": params", nil) {
				if v, ok := p.Number(pf.V, what+": params."+pf.Key); ok {
					ref.Params[pf.Key] = v
				}
			}
		}
	}
	n := p.Node(at)
	if n == nil {
		return false
	}
	ref.Origin = p.Pos(n)
	if strings.TrimSpace(ref.Src) == "" {
		p.Errorf(n, "%s: expected a path or http(s) URL of the flow-model file, found an empty string", what)
		return false
	}
	if p.st.opts.FlowModels == nil {
		p.Errorf(n, "%s: this load resolves no flow-models: expected a graph without flowmodel: keys, or a load with a flow-model resolver (sluice check, run and the workbench give one)", what)
		return false
	}
	if !ref.IsURL() {
		if _, err := p.st.opts.Root.Rel(ref.Dir, ref.Src); err != nil {
			p.Errorf(n, "%s: %v", what, err)
			return false
		}
	}
	if err := p.st.opts.FlowModels(p.st.context(), a, ref); err != nil {
		p.Errorf(n, "%s: %v", what, err)
		return false
	}
	return true
}

// context returns the context of the parse (Background when none).
func (st *state) context() context.Context {
	if st.ctx == nil {
		return context.Background()
	}
	return st.ctx
}
