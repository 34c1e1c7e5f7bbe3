// Package graph is the model every other part of sluice works on: a Graph of
// Actors joined by Channels from output Ports to input Ports. A port carries
// fixed-size tokens of one TokenType at a Rate (SDF, CSDF or dynamic/KPN).
// Actors may be composite (a subgraph exposing ports), carry several
// implementations (Go, OpenCL, CUDA, built-in), and be stateful or not.
//
// Graphs are built either from spec files (package spec) or in Go with the
// typed builder (AddInput, AddOutput, Connect), where joining a float32 port
// to an int32 port does not compile. Validate reports every problem at once.
//
// The package imports nothing else of sluice.
package graph

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/suggest"
)

// Direction says whether a port consumes (In) or produces (Out) tokens.
type Direction int

const (
	// In is an input port: the actor consumes tokens from it.
	In Direction = iota
	// Out is an output port: the actor produces tokens on it.
	Out
)

// String returns "in" or "out".
func (d Direction) String() string {
	if d == In {
		return "in"
	}
	return "out"
}

// Port is one typed end of a channel on an actor.
type Port struct {
	// Name is unique among the ports of its actor.
	Name string
	// Dir is the port's direction.
	Dir Direction
	// Type is the token type.
	Type TokenType
	// Rate is the number of tokens per firing.
	Rate Rate
	// Block is, on an output port, the number of consecutive tokens that can
	// be computed independently (a block, spread over work-items); 0 means
	// the whole firing is one block. It must divide every phase of Rate.
	Block int
	// History is, on an input port, the number of tokens before the
	// firing's window that the firing also sees (a peek window of History +
	// rate tokens, seed 004's peek with history); 0 means none. The first
	// firings see zero tokens before the stream's start.
	History int
	// Actor is the actor owning the port.
	Actor *Actor
	// Origin says where the port was declared ("file.yaml:12:5"), if known.
	Origin string
}

// FullName returns "actor.port".
func (p *Port) FullName() string {
	if p.Actor == nil {
		return p.Name
	}
	return p.Actor.Name + "." + p.Name
}

// ImplKind is the kind of an actor implementation.
type ImplKind string

const (
	// ImplGo is a Go function run by the CPU runtime.
	ImplGo ImplKind = "go"
	// ImplOpenCL is an OpenCL C kernel source file.
	ImplOpenCL ImplKind = "opencl"
	// ImplCUDA is a CUDA C kernel source file.
	ImplCUDA ImplKind = "cuda"
	// ImplBuiltin is one of sluice's built-in actors, selected by name.
	ImplBuiltin ImplKind = "builtin"
)

// Impl is one implementation of an actor.
type Impl struct {
	// Kind says what the implementation is.
	Kind ImplKind
	// Source is the kernel file (OpenCL, CUDA) or, for Go, the registered
	// function name; for built-ins, the built-in's name (e.g. "gen.ramp").
	Source string
	// Entry is the kernel's entry point name, when it differs from the actor's.
	Entry string
	// Params are the parameters given to a built-in actor ("with:").
	Params map[string]any
	// Func is a Go implementation attached in code; its expected signature
	// is defined by the runtime package.
	Func any
}

// Actor is a unit of computation with ports.
type Actor struct {
	// Name is unique within its graph.
	Name string
	// Inputs and Outputs are the actor's ports in declaration order.
	Inputs, Outputs []*Port
	// Stateful actors fire strictly in order, one firing at a time;
	// stateless actors may be replicated.
	Stateful bool
	// IO marks an actor that blocks on I/O; the runtime runs it on its I/O pool.
	IO bool
	// Impls are the actor's implementations; the mapping chooses one.
	Impls []Impl
	// Cost is the execution time of one firing, for throughput analysis and
	// scheduling; zero when unknown.
	Cost time.Duration
	// Sub is the subgraph of a composite actor; its Inputs and Outputs bind
	// the actor's ports by name. Nil for an atomic actor.
	Sub *Graph
	// Attrs holds free-form attributes (priority, affinity, ...).
	Attrs map[string]string
	// Iterations makes one firing iterate the actor's computation that many
	// times (0 or 1: once), the recursive kernels of Caravela: iteration 0
	// reads the firing's input windows, the last iteration writes its output
	// windows, and in between each Swap pair's output of iteration k is the
	// input of iteration k+1. Device runtimes keep the pair's two buffers on
	// the device and exchange them (swap) rather than copying.
	Iterations int
	// Swap maps output port name → input port name: the swap pairs of an
	// iterated actor (same token type and rate on both ports).
	Swap map[string]string
	// Origin says where the actor was declared, if known.
	Origin string
	// Graph is the graph owning the actor.
	Graph *Graph
	// Pattern, when set, makes the actor a GSLD conditional pattern (see
	// Conditional): SDF from outside, one branch run per firing inside.
	Pattern *Conditional
	// StateDecl, when set, is state the runtime keeps for the actor, per
	// replica, with ACOTES lifetimes (see State).
	StateDecl *State
}

// Port returns the port with the given name, or nil.
func (a *Actor) Port(name string) *Port {
	for _, p := range a.Inputs {
		if p.Name == name {
			return p
		}
	}
	for _, p := range a.Outputs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Impl returns the actor's implementation of the given kind, if any.
func (a *Actor) Impl(kind ImplKind) (Impl, bool) {
	for _, im := range a.Impls {
		if im.Kind == kind {
			return im, true
		}
	}
	return Impl{}, false
}

// Dynamic reports whether any port of the actor has a dynamic rate: such an
// actor is a Kahn process, not an SDF actor.
func (a *Actor) Dynamic() bool {
	for _, p := range a.Ports() {
		if p.Rate.IsDynamic() {
			return true
		}
	}
	return false
}

// Ports returns the inputs followed by the outputs.
func (a *Actor) Ports() []*Port {
	ps := make([]*Port, 0, len(a.Inputs)+len(a.Outputs))
	return append(append(ps, a.Inputs...), a.Outputs...)
}

// Phases returns the number of phases of the actor's firing cycle: the least
// common multiple of its ports' phase counts (1 for an SDF actor).
func (a *Actor) Phases() int {
	n := 1
	for _, p := range a.Ports() {
		if k := p.Rate.Phases(); k > 0 {
			n = lcm(n, k)
		}
	}
	return n
}

// Channel is a bounded FIFO from one output port to one input port.
type Channel struct {
	// Name identifies the channel; by default "actor.port->actor.port".
	Name string
	// From is the producing output port; To the consuming input port.
	From, To *Port
	// Capacity is the channel's size in tokens; 0 leaves it to analysis.
	Capacity int
	// Initial is the number of initial tokens (delays).
	Initial int
	// InitialData optionally holds the initial tokens' values,
	// Initial×token-size bytes, little-endian.
	InitialData []byte
	// Origin says where the channel was declared, if known.
	Origin string
}

// Boundary is a graph input or output (Caravela's ENTRANCE and EXIT): a name
// bound to a port of an actor inside the graph. For a composite actor, its
// subgraph's boundaries bind the composite's ports of the same names.
type Boundary struct {
	// Name is the exposed name.
	Name string
	// Actor and Port name the inner port.
	Actor, Port string
	// Origin says where it was declared, if known.
	Origin string
}

// Graph is a set of actors joined by channels.
type Graph struct {
	// Name names the graph.
	Name string
	// Actors in insertion order.
	Actors []*Actor
	// Channels in insertion order.
	Channels []*Channel
	// Inputs and Outputs are the graph's boundary ports.
	Inputs, Outputs []Boundary
	// Origin is the file the graph came from, if any.
	Origin string
	// Shared are the graph's shared variables (see SharedVar).
	Shared []*SharedVar
	// GoPackages are the Go packages that register the graph's Go actors
	// (runtime.RegisterFunc in their init): import paths, or directories
	// made absolute by the loader. A program must import them for the
	// graph to run; `sluice run` builds one that does when needed.
	GoPackages []string

	byName   map[string]*Actor
	problems []Problem
}

// New returns an empty graph.
func New(name string) *Graph {
	return &Graph{Name: name, byName: map[string]*Actor{}}
}

// Actor returns the actor with the given name, or nil.
func (g *Graph) Actor(name string) *Actor {
	if g.byName == nil {
		g.reindex()
	}
	return g.byName[name]
}

func (g *Graph) reindex() {
	g.byName = make(map[string]*Actor, len(g.Actors))
	for _, a := range g.Actors {
		if _, dup := g.byName[a.Name]; !dup {
			g.byName[a.Name] = a
		}
	}
}

// ActorOption configures an actor created by AddActor.
type ActorOption func(*Actor)

// Stateful marks the actor stateful (its firings run one at a time, in order).
func Stateful() ActorOption { return func(a *Actor) { a.Stateful = true } }

// IO marks the actor as doing blocking I/O.
func IO() ActorOption { return func(a *Actor) { a.IO = true } }

// WithCost sets the execution time of one firing.
func WithCost(d time.Duration) ActorOption { return func(a *Actor) { a.Cost = d } }

// WithImpl adds an implementation.
func WithImpl(im Impl) ActorOption { return func(a *Actor) { a.Impls = append(a.Impls, im) } }

// WithFunc adds a Go implementation given as a function value.
func WithFunc(fn any) ActorOption {
	return func(a *Actor) { a.Impls = append(a.Impls, Impl{Kind: ImplGo, Func: fn}) }
}

// Composite makes the actor a composite whose body is sub.
func Composite(sub *Graph) ActorOption { return func(a *Actor) { a.Sub = sub } }

// At records where the actor was declared.
func At(origin string) ActorOption { return func(a *Actor) { a.Origin = origin } }

// AddActor adds an actor. A duplicate name is recorded as a problem that
// Validate reports; the actor is still returned so building can go on.
func (g *Graph) AddActor(name string, opts ...ActorOption) *Actor {
	a := &Actor{Name: name, Graph: g}
	for _, o := range opts {
		o(a)
	}
	if g.byName == nil {
		g.reindex()
	}
	if name == "" {
		g.problem(a.Origin, "actor has an empty name: expected a unique non-empty name")
	} else if prev, dup := g.byName[name]; dup {
		g.problem(a.Origin, "duplicate actor name %q: already declared%s", name, at(prev.Origin))
	} else {
		g.byName[name] = a
	}
	g.Actors = append(g.Actors, a)
	return a
}

// AddPort adds an untyped port to the actor (as spec files do). Use the
// generic AddInput and AddOutput in Go code for compile-time type checking.
func (a *Actor) AddPort(name string, dir Direction, t TokenType, r Rate, origin string) *Port {
	p := &Port{Name: name, Dir: dir, Type: t, Rate: r, Actor: a, Origin: origin}
	if prev := a.Port(name); prev != nil && a.Graph != nil {
		a.Graph.problem(origin, "duplicate port %q on actor %q: already declared%s", name, a.Name, at(prev.Origin))
	}
	if dir == In {
		a.Inputs = append(a.Inputs, p)
	} else {
		a.Outputs = append(a.Outputs, p)
	}
	return p
}

// ChannelOption configures a channel made by Connect or Graph.Join.
type ChannelOption func(*Channel)

// Capacity sets the channel capacity in tokens.
func Capacity(tokens int) ChannelOption { return func(c *Channel) { c.Capacity = tokens } }

// Initial sets the number of initial tokens (zero-valued unless InitialData is given).
func Initial(tokens int) ChannelOption { return func(c *Channel) { c.Initial = tokens } }

// InitialData sets the initial tokens' bytes; the count is derived from the
// token size when the channel is created.
func InitialData(b []byte) ChannelOption { return func(c *Channel) { c.InitialData = b } }

// Named sets the channel's name.
func Named(name string) ChannelOption { return func(c *Channel) { c.Name = name } }

// ChannelAt records where the channel was declared.
func ChannelAt(origin string) ChannelOption { return func(c *Channel) { c.Origin = origin } }

// Join connects an output port to an input port without compile-time type
// checking (spec files use it); Validate checks the types. Nil ports are
// recorded as problems.
func (g *Graph) Join(from, to *Port, opts ...ChannelOption) *Channel {
	c := &Channel{From: from, To: to}
	for _, o := range opts {
		o(c)
	}
	if c.InitialData != nil && c.Initial == 0 && from != nil && from.Type.Size > 0 {
		c.Initial = len(c.InitialData) / from.Type.Size
	}
	if c.Name == "" && from != nil && to != nil {
		c.Name = from.FullName() + "->" + to.FullName()
	}
	g.Channels = append(g.Channels, c)
	return c
}

// JoinNames connects "actor.port" names, recording unknown actors or ports
// as problems (reported by Validate) and returning nil for them.
func (g *Graph) JoinNames(from, to string, opts ...ChannelOption) *Channel {
	probe := &Channel{}
	for _, o := range opts {
		o(probe)
	}
	fp := g.lookup(from, Out, probe.Origin)
	tp := g.lookup(to, In, probe.Origin)
	if fp == nil || tp == nil {
		return nil
	}
	return g.Join(fp, tp, opts...)
}

func (g *Graph) lookup(ref string, dir Direction, origin string) *Port {
	an, pn, ok := splitRef(ref)
	if !ok {
		g.problem(origin, "port reference %q: expected actor.port", ref)
		return nil
	}
	a := g.Actor(an)
	if a == nil {
		g.problem(origin, "unknown actor %q in %q%s", an, ref, suggest.Suggest(an, g.actorNames()))
		return nil
	}
	p := a.Port(pn)
	if p == nil {
		var names []string
		for _, q := range a.Ports() {
			names = append(names, q.Name)
		}
		g.problem(origin, "unknown port %q on actor %q%s", pn, an, suggest.Suggest(pn, names))
		return nil
	}
	if p.Dir != dir {
		g.problem(origin, "port %s is an %s port: expected an %s port here", ref, p.Dir, dir)
		return nil
	}
	return p
}

func (g *Graph) actorNames() []string {
	names := make([]string, len(g.Actors))
	for i, a := range g.Actors {
		names[i] = a.Name
	}
	return names
}

func splitRef(ref string) (string, string, bool) {
	for i := len(ref) - 1; i >= 0; i-- {
		if ref[i] == '.' {
			return ref[:i], ref[i+1:], i > 0 && i < len(ref)-1
		}
	}
	return "", "", false
}

// Expose adds a graph input (dir In) or output (dir Out) named name, bound to
// the port actor.port inside the graph.
func (g *Graph) Expose(dir Direction, name, actor, port, origin string) {
	b := Boundary{Name: name, Actor: actor, Port: port, Origin: origin}
	if dir == In {
		g.Inputs = append(g.Inputs, b)
	} else {
		g.Outputs = append(g.Outputs, b)
	}
}

// Problem records a problem at a place; the builder accumulates them and
// Validate returns them with its own findings.
func (g *Graph) Problem(origin, format string, args ...any) { g.problem(origin, format, args...) }

func (g *Graph) problem(origin, format string, args ...any) {
	g.problems = append(g.problems, Problem{Where: origin, Msg: fmt.Sprintf(format, args...)})
}

// ChannelsOf returns the channels leaving (dir Out) or entering (dir In) the port.
func (g *Graph) ChannelsOf(p *Port) []*Channel {
	var cs []*Channel
	for _, c := range g.Channels {
		if (p.Dir == Out && c.From == p) || (p.Dir == In && c.To == p) {
			cs = append(cs, c)
		}
	}
	return cs
}

// Channel returns the channel with the given name, or nil.
func (g *Graph) Channel(name string) *Channel {
	for _, c := range g.Channels {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func at(origin string) string {
	if origin == "" {
		return ""
	}
	return " at " + origin
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	if a < 0 {
		return -a
	}
	return a
}

func lcm(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	return a / gcd(a, b) * b
}
