package spec

import (
	"context"
	"errors"
	"math"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/internal/yamlpos"
)

var (
	pipelineKeys = []string{"ports", "doc"}
	roleKeys     = []string{"role", "every", "doc"}
)

// LoadPipeline reads a YAML graph file as a pipeline-model: the graph (see
// LoadGraph) and its optional `pipeline:` section, which gives ports roles
// and iteration limits:
//
//	pipeline:
//	  ports:
//	    acc.state: {role: initonce}   # fed back; first tokens from the application
//	    acc.total: {every: 4}         # exchanged once every 4 firings
//
// Graph inputs are entrance ports and graph outputs exit ports unless the
// section says otherwise. An initonce port's channel gets one firing's
// worth of initial tokens (the application's init data) when it declares
// none. The pipeline is validated (graph.Pipeline.Validate); every problem
// is returned at once as an ErrorList with file:line:col positions.
func LoadPipeline(path string) (*graph.Pipeline, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePipeline(path, data)
}

// ParsePipeline is LoadPipeline on data read from the file name.
func ParsePipeline(name string, data []byte) (*graph.Pipeline, error) {
	return ParsePipelineWith(context.Background(), name, data, Options{})
}

// ParsePipelineWith is ParsePipeline with a load's options (ParseGraphWith).
func ParsePipelineWith(ctx context.Context, name string, data []byte, o Options) (*graph.Pipeline, error) {
	g, root, err := parseGraphDoc(ctx, name, data, o, nil)
	if err != nil {
		return nil, err
	}
	return pipelineOf(name, g, root)
}

// ParseGraphFile reads a YAML graph file as ParseGraphWith does, parsing
// it once: the graph and, when the file has a `pipeline:` section, the
// pipeline as ParsePipelineWith reads it (nil without one). A file of
// another kind (a mapping, a machine model, ...: filekind.Detect's
// verdict on its top-level keys) is refused before its graph is read,
// with a *filekind.WrongKind error.
func ParseGraphFile(ctx context.Context, name string, data []byte, o Options) (*graph.Graph, *graph.Pipeline, error) {
	check := func(root *yaml.Node) error {
		var wk *filekind.WrongKind
		if err := filekind.ExpectNode(name, root, filekind.Graph); errors.As(err, &wk) {
			return wk
		}
		return nil // a bad kind: value is the graph reader's to report, at its position
	}
	g, root, err := parseGraphDoc(ctx, name, data, o, check)
	if err != nil {
		return nil, nil, err
	}
	if !hasKey(root, "pipeline") {
		return g, nil, nil
	}
	pl, err := pipelineOf(name, g, root)
	if err != nil {
		return nil, nil, err
	}
	return g, pl, nil
}

// pipelineOf is graph g, read from file name whose root node is root, as
// a pipeline: the roles and limits of root's `pipeline:` section, if any,
// initonce ports' initial tokens, validated.
func pipelineOf(name string, g *graph.Graph, root *yaml.Node) (*graph.Pipeline, error) {
	st := newState()
	p := st.reader(name)
	pl := graph.NewPipeline(g)
	if f, ok := yamlpos.Index(p.Fields(root, "graph", nil))["pipeline"]; ok {
		p.parsePipeline(pl, f.V)
	}
	if err := st.Err(); err != nil {
		return nil, err
	}
	initOnceTokens(pl)
	if err := pl.Validate(); err != nil {
		var ve *graph.ValidationError
		if errors.As(err, &ve) {
			for _, pr := range ve.Problems {
				st.Add(yamlpos.At(name, pr.Where, pr.Msg))
			}
		}
		return nil, st.Err()
	}
	return pl, nil
}

// HasPipeline reports whether a YAML graph file has a `pipeline:` section.
func HasPipeline(data []byte) bool {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	return hasKey(doc.Content[0], "pipeline")
}

// hasKey reports whether n is a mapping with the key.
func hasKey(n *yaml.Node, key string) bool {
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func (p *yp) parsePipeline(pl *graph.Pipeline, n *yaml.Node) {
	m := yamlpos.Index(p.Fields(n, "pipeline", pipelineKeys))
	f, ok := m["ports"]
	if !ok {
		return
	}
	for _, pf := range p.Fields(f.V, "pipeline: ports", nil) {
		what := "pipeline: ports." + pf.Key
		rm := yamlpos.Index(p.Fields(pf.V, what, roleKeys))
		pr := pl.RoleOf(dummyPort(pl.Graph, pf.Key))
		pr.Every, pr.Origin = 0, p.Pos(pf.K) // RoleOf's default limit is not a declared one
		if rf, ok := rm["role"]; ok {
			if s, ok := p.Str(rf.V, what+": role"); ok {
				r, ok := graph.ParseRole(s)
				if !ok {
					p.Errorf(rf.V, "%s: role %q: expected entrance, exit, initonce or intermediate%s", what, s, yamlpos.DidYouMean(s, []string{"entrance", "exit", "initonce", "intermediate"}))
				}
				pr.Role = r
			}
		}
		if ef, ok := rm["every"]; ok {
			if v, ok := p.Int(ef.V, what+": every", 0, math.MaxInt32); ok {
				pr.Every = int(v)
			}
		}
		pl.Roles[pf.Key] = pr
	}
}

// dummyPort returns the named port, or a placeholder so that RoleOf gives
// the default role (Validate reports the unknown port).
func dummyPort(g *graph.Graph, ref string) *graph.Port {
	an, pn, ok := splitRef(ref)
	if ok {
		if a := g.Actor(an); a != nil {
			if q := a.Port(pn); q != nil {
				return q
			}
		}
	}
	return &graph.Port{Name: ref}
}

// initOnceTokens gives each initonce port's channel one firing's tokens
// when it declares no initial tokens: the application's init data stands
// in for them.
func initOnceTokens(pl *graph.Pipeline) {
	for _, q := range pl.Ports(graph.InitOnce) {
		for _, c := range pl.Graph.ChannelsOf(q) {
			if c.Initial == 0 && !q.Rate.IsDynamic() {
				c.Initial = q.Rate.At(0)
			}
		}
	}
}
