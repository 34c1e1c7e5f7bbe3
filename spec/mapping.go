package spec

import (
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

var (
	mappingKeys   = []string{"kind", "name", "doc", "machine", "mapping"}
	placementKeys = []string{"doc", "device", "impl", "replicas", "work-groups", "work-items", "distribution", "priority", "affinity", "team", "any", "strict"}
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
	p := st.reader(name)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p.SyntaxErrorIn(err, data)
		return nil, st.Err()
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, ErrorList{{File: name, Msg: "empty file: expected a mapping file (mapping: {actor: {device: ...}})"}}
	}
	mp := &graph.Mapping{Name: defaultName(name), Actors: map[string]*graph.Placement{}, Origin: name}
	m := yamlpos.Index(p.Fields(doc.Content[0], "mapping file", mappingKeys))
	p.CheckKind(m, "mapping")
	if f, ok := m["name"]; ok {
		if s, ok := p.Str(f.V, "name"); ok {
			mp.Name = s
		}
	}
	if f, ok := m["machine"]; ok {
		mp.Machine, _ = p.Str(f.V, "machine")
	}
	if f, ok := m["mapping"]; ok {
		for _, af := range p.Fields(f.V, "mapping", nil) {
			mp.Actors[af.Key] = p.parsePlacement(af)
		}
	} else if len(st.Errs) == 0 {
		p.Errorf(doc.Content[0], "mapping file: missing mapping: (expected actor: {device: ...} entries)")
	}
	if err := st.Err(); err != nil {
		return nil, err
	}
	return mp, nil
}

func (p *yp) parsePlacement(f yamlpos.Field) *graph.Placement {
	pl := &graph.Placement{Origin: p.Pos(f.K)}
	what := "mapping of " + f.Key
	m := yamlpos.Index(p.Fields(f.V, what, placementKeys))
	if x, ok := m["device"]; ok {
		pl.Device, _ = p.Str(x.V, what+": device")
	}
	if x, ok := m["any"]; ok {
		// any: {backend: cuda, memory: ">=8GiB"}: a remote device chosen
		// at run time; each value is "=V" by default or starts with an
		// operator (>=, <=, >, <, !=).
		var reqs []string
		for _, r := range p.Fields(x.V, what+": any", nil) {
			if v, ok := p.Str(r.V, what+": any."+r.Key); ok {
				if !strings.ContainsAny(v[:min(len(v), 1)], "<>=!") {
					v = "=" + v
				}
				reqs = append(reqs, r.Key+v)
			}
		}
		if len(reqs) == 0 {
			p.Errorf(x.V, "%s: any: expected requirements such as {backend: cuda, memory: \">=8GiB\"}, found none", what)
		}
		pl.Any = strings.Join(reqs, ",")
		if pl.Device != "" {
			p.Errorf(x.V, "%s: any: expected either device or any, found both (device %q)", what, pl.Device)
		}
	}
	if x, ok := m["impl"]; ok {
		if s, ok := p.Str(x.V, what+": impl"); ok {
			switch k := graph.ImplKind(s); k {
			case graph.ImplGo, graph.ImplOpenCL, graph.ImplCUDA, graph.ImplBuiltin:
				pl.Impl = k
			default:
				p.Errorf(x.V, "%s: impl %q: expected go, opencl, cuda or builtin%s", what, yamlpos.Clip(s), yamlpos.DidYouMean(s, []string{"go", "opencl", "cuda", "builtin"}))
			}
		}
	}
	if x, ok := m["strict"]; ok {
		pl.Strict, _ = p.Bool(x.V, what+": strict")
	}
	if x, ok := m["team"]; ok {
		if s, ok := p.Str(x.V, what+": team"); ok {
			switch t := graph.TeamMode(s); t {
			case graph.TeamSplit, graph.TeamReplicate:
				pl.Team = t
			default:
				p.Errorf(x.V, "%s: team %q: expected split or replicate%s", what, yamlpos.Clip(s), yamlpos.DidYouMean(s, []string{"split", "replicate"}))
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
			v, _ := p.Int(x.V, what+": "+in.key, in.lo, maxRate)
			*in.dst = int(v)
		}
	}
	if x, ok := m["distribution"]; ok {
		for _, d := range p.Fields(x.V, what+": distribution", nil) {
			if s, ok := p.Str(d.V, what+": distribution."+d.Key); ok {
				if s != string(graph.Consecutive) && s != string(graph.Strided) {
					p.Errorf(d.V, "%s: distribution %q: expected consecutive or strided%s", what, yamlpos.Clip(s), yamlpos.DidYouMean(s, []string{"consecutive", "strided"}))
					continue
				}
				if pl.Distribution == nil {
					pl.Distribution = map[string]graph.Distribution{}
				}
				pl.Distribution[d.Key] = graph.Distribution(s)
			}
		}
	}
	if x, ok := m["affinity"]; ok {
		n := p.Node(x.V)
		if n != nil && n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				if v, ok := p.Int(c, what+": affinity", 0, 1<<16); ok {
					pl.Affinity = append(pl.Affinity, int(v))
				}
			}
		} else if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
			if v, ok := p.Int(n, what+": affinity", 0, 1<<16); ok {
				pl.Affinity = []int{int(v)}
			}
		} else if n != nil {
			p.Errorf(n, "%s: affinity: expected a list of CPU core numbers, found %s", what, yamlpos.Kind(n))
		}
	}
	return pl
}
