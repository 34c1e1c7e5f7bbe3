package ui

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// sketch reads what a graph file draws — actors with their ports, channels
// with their capacities and initial tokens — from YAML that parses but does
// not make a valid graph (an actor just added, its ports not connected
// yet). It returns nil when the YAML does not parse or has no actors.
func sketch(data []byte) *GraphJSON {
	d, err := parseDoc(data, "")
	if err != nil {
		return nil
	}
	actors := mapGet(d.root, "actors")
	if actors == nil || actors.Kind != yaml.MappingNode {
		return nil
	}
	names := map[string]bool{}
	g := &GraphJSON{Name: value(mapGet(d.root, "name")), Actors: []ActorJSON{}, Channels: []ChannelJSON{}}
	for i := 0; i+1 < len(actors.Content); i += 2 {
		a := actors.Content[i+1]
		if a.Kind == yaml.AliasNode {
			a = a.Alias
		}
		names[actors.Content[i].Value] = true
		g.Actors = append(g.Actors, ActorJSON{Name: actors.Content[i].Value,
			Inputs: sketchPorts(mapGet(a, "in")), Outputs: sketchPorts(mapGet(a, "out"))})
	}
	if chans := mapGet(d.root, "channels"); chans != nil && chans.Kind == yaml.SequenceNode {
		for _, c := range chans.Content {
			from, to := value(mapGet(c, "from")), value(mapGet(c, "to"))
			if from == "" || to == "" {
				continue
			}
			cj := ChannelJSON{Name: from + "->" + to, From: from, To: to}
			if n := value(mapGet(c, "name")); n != "" {
				cj.Name = n
			}
			if !names[endActor(from)] || !names[endActor(to)] {
				continue
			}
			for key, v := range map[string]*int{"capacity": &cj.Capacity, "initial": &cj.Initial} {
				if n := mapGet(c, key); n != nil {
					_ = n.Decode(v)
				}
			}
			g.Channels = append(g.Channels, cj)
		}
	}
	return g
}

func sketchPorts(m *yaml.Node) []PortJSON {
	ps := []PortJSON{}
	if m == nil || m.Kind != yaml.MappingNode {
		return ps
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		p := m.Content[i+1]
		pj := PortJSON{Name: m.Content[i].Value, Type: value(mapGet(p, "type")), Rate: value(mapGet(p, "rate"))}
		if r := mapGet(p, "rate"); r != nil && r.Kind == yaml.SequenceNode {
			var ph []string
			for _, e := range r.Content {
				ph = append(ph, e.Value)
			}
			pj.Rate = "[" + strings.Join(ph, ",") + "]"
		}
		ps = append(ps, pj)
	}
	return ps
}
