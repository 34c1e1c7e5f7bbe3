package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
)

// GraphJSON is the graph as the API sends it: actors with their ports and
// channels with rates, capacities and initial tokens.
type GraphJSON struct {
	// ID identifies the graph's structure (see GraphID): two answers with
	// the same ID are of the same graph, whatever their comments, layout
	// or declaration lines; the page shows a run's figures only on the
	// graph whose ID the run carries.
	ID       string        `json:"id,omitempty"`
	Name     string        `json:"name"`
	Actors   []ActorJSON   `json:"actors"`
	Channels []ChannelJSON `json:"channels"`
	// Inputs and Outputs bind a (sub)graph's boundary names to inner ports;
	// the page follows them to draw a composite expanded in place.
	Inputs  []BoundaryJSON `json:"inputs,omitempty"`
	Outputs []BoundaryJSON `json:"outputs,omitempty"`
}

// BoundaryJSON is one graph input or output: Name bound to Port
// ("actor.port") inside the graph.
type BoundaryJSON struct {
	Name string `json:"name"`
	Port string `json:"port"`
}

// ActorJSON is one actor; Sub is the subgraph of a composite actor.
type ActorJSON struct {
	Name     string     `json:"name"`
	Inputs   []PortJSON `json:"inputs"`
	Outputs  []PortJSON `json:"outputs"`
	Stateful bool       `json:"stateful,omitempty"`
	CostNS   int64      `json:"cost_ns,omitempty"`
	Origin   string     `json:"origin,omitempty"`
	// Kind is what runs the actor: "go", "builtin", "kernel",
	// "flowmodel" (a flow-model's kernel), "composite", "conditional" or
	// "synthetic" (a declared cost only).
	Kind string `json:"kind"`
	// Line is the line of the file where the actor is declared (0: unknown).
	Line int        `json:"line,omitempty"`
	Sub  *GraphJSON `json:"sub,omitempty"`
}

// PortJSON is one port; Rate is written as in the YAML ("3", "[1,2]", "*").
type PortJSON struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Rate string `json:"rate"`
}

// ChannelJSON is one channel between two "actor.port" ends.
type ChannelJSON struct {
	Name     string `json:"name"`
	From     string `json:"from"`
	To       string `json:"to"`
	Capacity int    `json:"capacity"`
	Initial  int    `json:"initial"`
	// Line is the line of the file where the channel is declared (0: unknown).
	Line int `json:"line,omitempty"`
}

// EncodeGraph converts g (and its composites' subgraphs) to GraphJSON.
func EncodeGraph(g *graph.Graph) *GraphJSON {
	out := &GraphJSON{Name: g.Name, Actors: []ActorJSON{}, Channels: []ChannelJSON{}}
	for _, a := range g.Actors {
		aj := ActorJSON{Name: a.Name, Inputs: ports(a.Inputs), Outputs: ports(a.Outputs),
			Stateful: a.Stateful, CostNS: a.Cost.Nanoseconds(), Origin: a.Origin,
			Kind: actorKind(a), Line: originLine(a.Origin)}
		if a.Sub != nil {
			aj.Sub = EncodeGraph(a.Sub)
		}
		out.Actors = append(out.Actors, aj)
	}
	for _, b := range g.Inputs {
		out.Inputs = append(out.Inputs, BoundaryJSON{Name: b.Name, Port: b.Actor + "." + b.Port})
	}
	for _, b := range g.Outputs {
		out.Outputs = append(out.Outputs, BoundaryJSON{Name: b.Name, Port: b.Actor + "." + b.Port})
	}
	for _, c := range g.Channels {
		out.Channels = append(out.Channels, ChannelJSON{Name: c.Name, From: c.From.FullName(),
			To: c.To.FullName(), Capacity: c.Capacity, Initial: c.Initial, Line: originLine(c.Origin)})
	}
	out.ID = out.structureID()
	return out
}

// GraphID is the identity of g's structure: a hash of its name, its
// actors (names, ports with types and rates, costs, statefulness,
// composites' subgraphs) and its channels (ends, capacities, initial
// tokens). Comments, layout, declaration lines and what implements an
// actor (a run gives actors without code a synthetic one) leave it as it
// is; any change of the graph that analysis or a run sees changes it.
func GraphID(g *graph.Graph) string {
	if g == nil {
		return ""
	}
	return EncodeGraph(g).ID
}

// structureID hashes the fields of g that GraphID names.
func (g *GraphJSON) structureID() string {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(g.structure())
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// structure is g without what GraphID leaves out.
func (g *GraphJSON) structure() any {
	type actor struct {
		Name     string
		In, Out  []PortJSON
		Stateful bool
		CostNS   int64
		Sub      any
	}
	type channel struct {
		From, To          string
		Capacity, Initial int
	}
	s := struct {
		Name            string
		Actors          []actor
		Channels        []channel
		Inputs, Outputs []BoundaryJSON
	}{Name: g.Name, Inputs: g.Inputs, Outputs: g.Outputs}
	for _, a := range g.Actors {
		x := actor{Name: a.Name, In: a.Inputs, Out: a.Outputs, Stateful: a.Stateful, CostNS: a.CostNS}
		if a.Sub != nil {
			x.Sub = a.Sub.structure()
		}
		s.Actors = append(s.Actors, x)
	}
	for _, c := range g.Channels {
		s.Channels = append(s.Channels, channel{From: c.From, To: c.To, Capacity: c.Capacity, Initial: c.Initial})
	}
	return s
}

func ports(ps []*graph.Port) []PortJSON {
	out := make([]PortJSON, len(ps))
	for i, p := range ps {
		out[i] = PortJSON{Name: p.Name, Type: p.Type.String(), Rate: p.Rate.String()}
	}
	return out
}

// actorKind says what runs a: a composite's or a conditional pattern's
// subgraph, a kernel, a built-in, a Go function, or nothing but its cost.
func actorKind(a *graph.Actor) string {
	switch {
	case a.Sub != nil:
		return "composite"
	case a.Pattern != nil:
		return "conditional"
	case a.Attrs[flowmodel.AttrModel] != "":
		return "flowmodel"
	}
	kind := "synthetic"
	for _, im := range a.Impls {
		switch im.Kind {
		case graph.ImplOpenCL, graph.ImplCUDA:
			return "kernel"
		case graph.ImplBuiltin:
			kind = "builtin"
		case graph.ImplGo:
			if kind == "synthetic" {
				kind = "go"
			}
		}
	}
	return kind
}

// originLine is the line of an origin "file:line:col" (0 when it has none).
func originLine(origin string) int {
	parts := strings.Split(origin, ":")
	if len(parts) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(parts[len(parts)-2])
	return n
}
