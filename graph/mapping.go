package graph

import "github.com/sluicehq/sluice/internal/suggest"

// Distribution says how an output's blocks are spread over the work-items of
// a work-group: Consecutive gives each work-item a run of neighbouring
// blocks; Strided deals blocks out round-robin (neighbouring work-items touch
// neighbouring blocks, which coalesces memory accesses on GPUs).
type Distribution string

const (
	// Consecutive assigns each work-item a contiguous run of blocks.
	Consecutive Distribution = "consecutive"
	// Strided assigns block k to work-item k mod I.
	Strided Distribution = "strided"
)

// TeamMode says how the replicas of an actor share its work (ACOTES teams).
type TeamMode string

const (
	// TeamSplit (the default) splits the input streams: each firing, with
	// its rate-sized chunk of every input, goes to one replica. Only
	// stateless actors may be replicated this way.
	TeamSplit TeamMode = "split"
	// TeamReplicate replicates the input streams and the state: every
	// replica keeps its own state and runs every firing (ACOTES
	// inputreplicate and teamreplicate), but only the firing's leader,
	// replica index mod Replicas, writes the outputs. Stateful actors may be
	// replicated this way; the leaders' outputs are merged in order.
	TeamReplicate TeamMode = "replicate"
)

// Placement says where and how one actor runs.
type Placement struct {
	// Device names the device: "cpu", "opencl:0:1" (platform:device),
	// "cuda:0", or a name the device registry resolves.
	Device string
	// Impl chooses the implementation kind; empty lets the runtime pick the
	// one that fits the device.
	Impl ImplKind
	// Replicas is the number of concurrent firings (a team); 0 or 1 means one.
	Replicas int
	// Team says how replicas share the inputs and the state; empty means
	// TeamSplit.
	Team TeamMode
	// WorkGroups (G) is the number of firings per kernel invocation.
	WorkGroups int
	// WorkItems (I) is the number of work-items per work-group.
	WorkItems int
	// Distribution maps output port name → block distribution.
	Distribution map[string]Distribution
	// Priority orders ready firings when executors are scarce (higher first).
	Priority int
	// Affinity pins the actor's firings to the listed CPU cores, if set.
	Affinity []int
	// Any, when set, places the actor on any remote device meeting these
	// requirements ("backend=cuda,memory>=8GiB"), chosen at run time; then
	// Device is empty. A Device "worker:NAME/DEVICE" names one instead.
	Any string
	// Strict pins a remote actor: when its worker is lost the run fails
	// rather than moving it to another worker (docs/recovery.md).
	Strict bool
	// Origin says where the placement was declared, if known.
	Origin string
}

// Mapping assigns actors to devices. Actors without an entry run on the
// default device (the CPU).
type Mapping struct {
	// Name names the mapping.
	Name string
	// Actors maps actor name → placement.
	Actors map[string]*Placement
	// Origin is the file the mapping came from, if any.
	Origin string
	// Machine names the machine model the mapping was made for (sluice
	// map writes it; "" for a hand-written mapping): its device names are
	// that machine's.
	Machine string
}

// Clone returns a copy of m whose Actors map and placements may be changed
// without changing m's (nil for nil).
func (m *Mapping) Clone() *Mapping {
	if m == nil {
		return nil
	}
	c := *m
	c.Actors = make(map[string]*Placement, len(m.Actors))
	for k, p := range m.Actors {
		cp := *p
		c.Actors[k] = &cp
	}
	return &c
}

// Check reports mapping entries that name actors or ports unknown to g, and
// values out of range, as a *ValidationError (or nil).
func (m *Mapping) Check(g *Graph) error {
	var ps []Problem
	for name, pl := range m.Actors {
		w := pl.Origin
		if w == "" {
			w = m.Origin
		}
		a := g.resolve(name)
		if a == nil {
			ps = append(ps, Problem{w, "mapping names unknown actor " + quote(name) + suggest.Suggest(name, g.flatNames(""))})
			continue
		}
		for port, d := range pl.Distribution {
			if p := a.Port(port); p == nil || p.Dir != Out {
				ps = append(ps, Problem{w, "mapping of " + name + " gives a distribution for " + quote(port) + ": expected an output port of " + name})
			}
			if d != Consecutive && d != Strided {
				ps = append(ps, Problem{w, "distribution " + quote(string(d)) + ": expected consecutive or strided"})
			}
		}
		if pl.Replicas < 0 || pl.WorkGroups < 0 || pl.WorkItems < 0 {
			ps = append(ps, Problem{w, "mapping of " + name + ": replicas, work-groups and work-items must be ≥ 0"})
		}
		switch pl.Team {
		case "", TeamSplit:
			if pl.Replicas > 1 && a.Stateful {
				ps = append(ps, Problem{w, "mapping of " + name + " asks for replicas but the actor is stateful: expected 1 replica, or team: replicate (each replica keeps its own state)"})
			}
		case TeamReplicate:
		default:
			ps = append(ps, Problem{w, "mapping of " + name + " has team " + quote(string(pl.Team)) + ": expected split or replicate"})
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sortProblems(ps)
	return &ValidationError{Graph: g.Name, Problems: ps}
}

func quote(s string) string { return "\"" + s + "\"" }

// resolve finds the actor a mapping names: an actor of g, or
// "composite/inner" (at any depth) for an actor inside a composite, as
// Flatten names it.
func (g *Graph) resolve(name string) *Actor {
	if a := g.Actor(name); a != nil {
		return a
	}
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		if c := g.Actor(name[:i]); c != nil && c.Sub != nil {
			if a := c.Sub.resolve(name[i+1:]); a != nil {
				return a
			}
		}
	}
	return nil
}

// flatNames lists the names a mapping may use: every actor, and the inner
// actors of composites as "composite/inner".
func (g *Graph) flatNames(prefix string) []string {
	var ns []string
	for _, a := range g.Actors {
		ns = append(ns, prefix+a.Name)
		if a.Sub != nil {
			ns = append(ns, a.Sub.flatNames(prefix+a.Name+"/")...)
		}
	}
	return ns
}
