package spec

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

var flowModelKeys = []string{"src", "sha256", "params", "max_bytes", "timeout", "doc"}

// LoadGraphContext is LoadGraph whose flow-model fetches (actors with a
// flowmodel: key naming an http(s) URL) end when ctx does.
func LoadGraphContext(ctx context.Context, path string) (*graph.Graph, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseGraphContext(ctx, path, data)
}

// ParseGraphContext is ParseGraph whose flow-model fetches end when ctx
// does.
func ParseGraphContext(ctx context.Context, name string, data []byte) (*graph.Graph, error) {
	return parseGraph(ctx, name, data)
}

// parseFlowModel makes a an actor of the flow-model its flowmodel: key
// names: a path (relative to the spec file's directory) or an http(s) URL,
// or a mapping {src, sha256, params, max_bytes, timeout}. It reports
// whether the actor got the model's ports.
func (p *yp) parseFlowModel(a *graph.Actor, m map[string]yamlpos.Field, what string) bool {
	f := m["flowmodel"]
	what += ": flowmodel"
	for _, k := range []string{"in", "out", "use", "kernel", "graph", "process", "swap"} {
		if o, ok := m[k]; ok {
			p.Errorf(o.K, "%s: an actor made from a flow-model has no %s: the model gives its ports and kernel (and iterations: N turns its swap pairs into the actor's)", what, k)
			return false
		}
	}
	var (
		src  string
		opts flowmodel.LoadOptions
		ao   = flowmodel.ActorOptions{Iterations: a.Iterations, Origin: a.Origin}
		at   = f.V
	)
	if n := p.Node(f.V); n != nil && n.Kind == yaml.ScalarNode {
		src, _ = p.Str(f.V, what)
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
		src, _ = p.Str(s.V, what+": src")
		if x, ok := fs["sha256"]; ok {
			opts.SHA256, _ = p.Str(x.V, what+": sha256")
		}
		if x, ok := fs["max_bytes"]; ok {
			opts.MaxBytes, _ = p.Size(x.V, what+": max_bytes")
		}
		if x, ok := fs["timeout"]; ok {
			var d time.Duration
			d, _ = p.Duration(x.V, what+": timeout")
			opts.Timeout = d
		}
		if x, ok := fs["params"]; ok {
			ao.Params = map[string]float64{}
			for _, pf := range p.Fields(x.V, what+": params", nil) {
				if v, ok := p.Number(pf.V, what+": params."+pf.Key); ok {
					ao.Params[pf.Key] = v
				}
			}
		}
	}
	if strings.TrimSpace(src) == "" {
		if n := p.Node(at); n != nil {
			p.Errorf(n, "%s: expected a path or http(s) URL of the flow-model file, found an empty string", what)
		}
		return false
	}
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") && !filepath.IsAbs(src) {
		src = filepath.Join(p.dir, src)
	}
	model, err := flowmodel.Load(p.st.context(), src, opts)
	if err == nil {
		err = model.Define(a, ao)
	}
	if err != nil {
		if n := p.Node(at); n != nil {
			p.Errorf(n, "%s: %v", what, err)
		}
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
