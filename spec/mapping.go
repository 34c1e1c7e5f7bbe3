package spec

import (
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"go.yaml.in/yaml/v3"
)

var (
	mappingKeys   = []string{"name", "doc", "mapping"}
	placementKeys = []string{"doc", "device", "impl", "replicas", "work-groups", "work-items", "distribution", "priority", "affinity"}
)

// LoadMapping reads a mapping file: the ETH XML binding format when the
// file name ends in .xml, the YAML mapping format otherwise.
func LoadMapping(path string) (*graph.Mapping, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(path), ".xml") {
		return ImportETHMapping(path, data)
	}
	return ParseMapping(path, data)
}

// ParseMapping parses a YAML mapping. name is used in error positions and
// Origin fields. It checks the mapping on its own; graph.Mapping.Check
// checks it against a graph.
func ParseMapping(name string, data []byte) (*graph.Mapping, error) {
	st := newState()
	p := &yp{st: st, file: name, dir: filepath.Dir(name)}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p.syntaxErrors(err)
		return nil, st.errs.err()
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, ErrorList{{File: name, Msg: "empty file: expected a mapping file (mapping: {actor: {device: ...}})"}}
	}
	mp := &graph.Mapping{Name: defaultName(name), Actors: map[string]*graph.Placement{}, Origin: name}
	m := index(p.fields(doc.Content[0], "mapping file", mappingKeys))
	if f, ok := m["name"]; ok {
		if s, ok := p.str(f.v, "name"); ok {
			mp.Name = s
		}
	}
	if f, ok := m["mapping"]; ok {
		for _, af := range p.fields(f.v, "mapping", nil) {
			mp.Actors[af.key] = p.parsePlacement(af)
		}
	} else if len(st.errs) == 0 {
		p.errorf(doc.Content[0], "mapping file: missing mapping: (expected actor: {device: ...} entries)")
	}
	if err := st.errs.err(); err != nil {
		return nil, err
	}
	return mp, nil
}

func (p *yp) parsePlacement(f field) *graph.Placement {
	pl := &graph.Placement{Origin: p.pos(f.k)}
	what := "mapping of " + f.key
	m := index(p.fields(f.v, what, placementKeys))
	if x, ok := m["device"]; ok {
		pl.Device, _ = p.str(x.v, what+": device")
	}
	if x, ok := m["impl"]; ok {
		if s, ok := p.str(x.v, what+": impl"); ok {
			switch k := graph.ImplKind(s); k {
			case graph.ImplGo, graph.ImplOpenCL, graph.ImplCUDA, graph.ImplBuiltin:
				pl.Impl = k
			default:
				p.errorf(x.v, "%s: impl %q: expected go, opencl, cuda or builtin%s", what, clip(s), didYouMean(s, []string{"go", "opencl", "cuda", "builtin"}))
			}
		}
	}
	ints := []struct {
		key string
		dst *int
		lo  int64
	}{{"replicas", &pl.Replicas, 0}, {"work-groups", &pl.WorkGroups, 0}, {"work-items", &pl.WorkItems, 0}, {"priority", &pl.Priority, -maxRate}}
	for _, in := range ints {
		if x, ok := m[in.key]; ok {
			v, _ := p.integer(x.v, what+": "+in.key, in.lo, maxRate)
			*in.dst = int(v)
		}
	}
	if x, ok := m["distribution"]; ok {
		for _, d := range p.fields(x.v, what+": distribution", nil) {
			if s, ok := p.str(d.v, what+": distribution."+d.key); ok {
				if s != string(graph.Consecutive) && s != string(graph.Strided) {
					p.errorf(d.v, "%s: distribution %q: expected consecutive or strided%s", what, clip(s), didYouMean(s, []string{"consecutive", "strided"}))
					continue
				}
				if pl.Distribution == nil {
					pl.Distribution = map[string]graph.Distribution{}
				}
				pl.Distribution[d.key] = graph.Distribution(s)
			}
		}
	}
	if x, ok := m["affinity"]; ok {
		n := p.node(x.v)
		if n != nil && n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				if v, ok := p.integer(c, what+": affinity", 0, 1<<16); ok {
					pl.Affinity = append(pl.Affinity, int(v))
				}
			}
		} else if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
			if v, ok := p.integer(n, what+": affinity", 0, 1<<16); ok {
				pl.Affinity = []int{int(v)}
			}
		} else if n != nil {
			p.errorf(n, "%s: affinity: expected a list of CPU core numbers, found %s", what, kind(n))
		}
	}
	return pl
}
