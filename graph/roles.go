package graph

import (
	"fmt"
	"sort"

	"github.com/sluicehq/sluice/internal/suggest"
)

// Role is the part a port plays in a pipeline-model (Caravela's
// meta-pipeline): where the application feeds it, reads it, or initialises it.
type Role int

const (
	// Intermediate is a port joined by a channel to another stage's port.
	Intermediate Role = iota
	// Entrance is an input port the application sends data to (a graph input).
	Entrance
	// Exit is an output port the application receives data from (a graph output).
	Exit
	// InitOnce is an input port on a feedback channel whose first tokens the
	// application gives (and may give again: re-initialisation) instead of
	// the pipeline producing them.
	InitOnce
)

// String returns the role's name as written in spec files.
func (r Role) String() string {
	switch r {
	case Entrance:
		return "entrance"
	case Exit:
		return "exit"
	case InitOnce:
		return "initonce"
	}
	return "intermediate"
}

// ParseRole reads a role name ("entrance", "exit", "initonce", "intermediate").
func ParseRole(s string) (Role, bool) {
	for _, r := range []Role{Intermediate, Entrance, Exit, InitOnce} {
		if r.String() == s {
			return r, true
		}
	}
	return Intermediate, false
}

// PortRole is a port's role and iteration limit in a pipeline-model.
type PortRole struct {
	// Role is the port's role.
	Role Role
	// Every is the iteration limit: the port exchanges data with the
	// application once every Every firings of its actor. For Entrance and
	// Exit ports 0 means 1 (every firing); an Entrance port keeps its last
	// data for the firings in between, an Exit port delivers the output of
	// the last firing of each group of Every. For an InitOnce port the
	// application gives the data of firing 0 and, when Every > 0, again
	// for every firing k with k%Every == 0 (re-initialisation: that
	// firing's fed-back tokens are dropped); 0 means once, at the start.
	Every int
	// Origin says where the role was declared, if known.
	Origin string
}

// Pipeline is a pipeline-model: a graph whose stages (actors) are joined by
// channels, with roles on the ports the application talks to. The graph's
// Inputs are its Entrance ports and its Outputs its Exit ports; Roles adds
// InitOnce ports and iteration limits, keyed by "actor.port".
type Pipeline struct {
	// Graph is the stages and their channels.
	Graph *Graph
	// Roles holds declared roles and limits, keyed by "actor.port".
	Roles map[string]PortRole
}

// NewPipeline returns a pipeline over g with no declared roles.
func NewPipeline(g *Graph) *Pipeline { return &Pipeline{Graph: g, Roles: map[string]PortRole{}} }

// SetRole declares the role and iteration limit (every, 0 or 1: each
// firing) of the port "actor.port".
func (p *Pipeline) SetRole(port string, r Role, every int, origin string) {
	if p.Roles == nil {
		p.Roles = map[string]PortRole{}
	}
	p.Roles[port] = PortRole{Role: r, Every: every, Origin: origin}
}

// RoleOf returns the port's role and iteration limit (at least 1, except
// for InitOnce where 0 means once): a declared role, else Entrance for a
// graph input, Exit for a graph output, Intermediate otherwise.
func (p *Pipeline) RoleOf(port *Port) PortRole {
	pr, ok := p.Roles[port.FullName()]
	if !ok {
		pr = PortRole{Role: Intermediate}
		if b := p.boundaryOf(port); b != nil {
			pr.Role, pr.Origin = Entrance, b.Origin
			if port.Dir == Out {
				pr.Role = Exit
			}
		}
	}
	if pr.Every < 1 && pr.Role != InitOnce {
		pr.Every = 1
	}
	return pr
}

func (p *Pipeline) boundaryOf(port *Port) *Boundary {
	bs := p.Graph.Inputs
	if port.Dir == Out {
		bs = p.Graph.Outputs
	}
	for i := range bs {
		if port.Actor != nil && bs[i].Actor == port.Actor.Name && bs[i].Port == port.Name {
			return &bs[i]
		}
	}
	return nil
}

// Ports returns the ports of the given role, in graph order.
func (p *Pipeline) Ports(r Role) []*Port {
	var out []*Port
	for _, a := range p.Graph.Actors {
		for _, q := range a.Ports() {
			if p.RoleOf(q).Role == r {
				out = append(out, q)
			}
		}
	}
	return out
}

// Validate checks the pipeline-model conditions (at least one Exit port, at
// least one stage, every stage connected to the others) and every declared
// role: the port exists, its direction fits the role (Entrance and InitOnce
// on inputs, Exit on outputs), Entrance and Exit ports are graph
// boundaries, an InitOnce port is fed by a channel, and Every ≥ 0. It
// returns a *ValidationError listing every problem, or nil.
func (p *Pipeline) Validate() error {
	g := p.Graph
	var ps []Problem
	add := func(where, format string, args ...any) {
		ps = append(ps, Problem{Where: where, Msg: fmt.Sprintf(format, args...)})
	}
	if g == nil {
		return &ValidationError{Problems: []Problem{{Msg: "pipeline has no graph"}}}
	}
	if len(g.Actors) == 0 {
		add(g.Origin, "pipeline %q has no stage: expected at least one actor", g.Name)
	}
	names := make([]string, 0, len(p.Roles))
	for n := range p.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p.checkRole(n, p.Roles[n], add)
	}
	if len(g.Actors) > 0 && len(p.Ports(Exit)) == 0 {
		add(g.Origin, "pipeline %q has no exit port: expected at least one (a graph output, or a port with role exit)", g.Name)
	}
	if parts := p.components(); len(parts) > 1 {
		add(g.Origin, "pipeline %q is not connected: expected one set of stages joined by channels, found %d: %v", g.Name, len(parts), parts)
	}
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Graph: g.Name, Problems: ps}
}

func (p *Pipeline) checkRole(name string, pr PortRole, add func(string, string, ...any)) {
	w := pr.Origin
	if w == "" {
		w = p.Graph.Name
	}
	an, pn, ok := splitRef(name)
	if !ok {
		add(w, "pipeline port %q: expected actor.port", name)
		return
	}
	a := p.Graph.Actor(an)
	if a == nil {
		add(w, "pipeline port %q: unknown actor %q%s", name, an, suggest.Suggest(an, p.Graph.actorNames()))
		return
	}
	port := a.Port(pn)
	if port == nil {
		add(w, "pipeline port %q: unknown port %q on actor %q", name, pn, an)
		return
	}
	if pr.Every < 0 {
		add(w, "pipeline port %s: iteration limit %d: expected 1 or more", name, pr.Every)
	}
	fed := len(p.Graph.ChannelsOf(port)) > 0
	switch pr.Role {
	case Entrance, InitOnce:
		if port.Dir != In {
			add(w, "pipeline port %s has role %s but is an output port: expected an input port", name, pr.Role)
			return
		}
	case Exit:
		if port.Dir != Out {
			add(w, "pipeline port %s has role exit but is an input port: expected an output port", name)
			return
		}
	}
	switch {
	case (pr.Role == Entrance || pr.Role == Exit) && p.boundaryOf(port) == nil:
		add(w, "pipeline port %s has role %s but is not a graph %s: expected it listed under %s", name, pr.Role, map[Direction]string{In: "input", Out: "output"}[port.Dir], map[Direction]string{In: "inputs", Out: "outputs"}[port.Dir])
	case (pr.Role == Entrance || pr.Role == Exit) && fed:
		add(w, "pipeline port %s has role %s but is joined by a channel: expected an open port", name, pr.Role)
	case pr.Role == InitOnce && !fed:
		add(w, "pipeline port %s has role initonce but no channel feeds it: expected a feedback channel whose first tokens the application gives", name)
	case pr.Role == Intermediate && !fed:
		add(w, "pipeline port %s has role intermediate but no channel joins it", name)
	case pr.Role == Intermediate && pr.Every > 1:
		add(w, "pipeline port %s: iteration limit %d on an intermediate port: expected limits only on entrance, exit and initonce ports", name, pr.Every)
	}
}

// components returns the weakly connected sets of actors, each as its
// first actor's name.
func (p *Pipeline) components() []string {
	g := p.Graph
	parent := map[*Actor]*Actor{}
	var find func(a *Actor) *Actor
	find = func(a *Actor) *Actor {
		for parent[a] != a {
			parent[a] = parent[parent[a]]
			a = parent[a]
		}
		return a
	}
	for _, a := range g.Actors {
		parent[a] = a
	}
	for _, c := range g.Channels {
		if c.From == nil || c.To == nil || c.From.Actor == nil || c.To.Actor == nil {
			continue
		}
		if _, ok := parent[c.From.Actor]; !ok {
			continue
		}
		if _, ok := parent[c.To.Actor]; !ok {
			continue
		}
		parent[find(c.From.Actor)] = find(c.To.Actor)
	}
	var roots []string
	seen := map[*Actor]bool{}
	for _, a := range g.Actors {
		if r := find(a); !seen[r] {
			seen[r] = true
			roots = append(roots, a.Name)
		}
	}
	return roots
}
