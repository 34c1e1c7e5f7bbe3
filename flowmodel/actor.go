package flowmodel

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// Attribute keys a flow-model actor carries (graph.Actor.Attrs).
const (
	// AttrModel holds where the model came from (its path or URL, or its
	// name when it was built in Go).
	AttrModel = "flowmodel"
	// AttrRequires holds the model's requirements, backends and streams as
	// JSON, read by Place to check or choose the actor's device.
	AttrRequires = "flowmodel.requires"
)

// ActorOptions adjust how a flow-model becomes a graph actor.
type ActorOptions struct {
	// Params overrides the values of the model's parameters by name.
	Params map[string]float64
	// Iterations is how many times one firing runs the kernel. With 2 or
	// more, the model's swap pairs become the actor's swap pairs: iteration
	// k's output stream is iteration k+1's input stream, exchanged on the
	// device (graph.Actor.Swap). With 0 or 1 the kernel runs once per
	// firing and swap pairs play no part.
	Iterations int
	// Origin says where the actor was declared, for messages.
	Origin string
}

// Actor adds the model to g as a kernel actor named name: one input port
// per input stream and one output port per output stream, each of the
// stream's token type with a rate of the stream's length (one firing moves
// whole streams); an OpenCL and/or CUDA implementation generated from the
// model's kernel, its parameters compiled in as constants; and the model's
// requirements, which Place uses to check or choose the actor's device.
//
// One firing runs the model's whole launch range: the work-items of the
// firing's work-group (the mapping's work-items, I) share the model's
// work-items, each running the kernel for global ids l, l+I, l+2I, …, so
// kernels whose work-items cooperate (barriers, local memory, group or
// local ids, shared memory) are refused, as are Go built-ins. Nothing is added to g when the model does not fit.
func (m *Model) Actor(g *graph.Graph, name string, o ActorOptions) (*graph.Actor, error) {
	plan, err := m.actorPlan(name, o)
	if err != nil {
		return nil, err
	}
	a := g.AddActor(name, graph.At(o.Origin))
	plan.apply(a)
	return a, nil
}

// Define makes a, an actor without ports or implementations, the model's
// kernel actor, as Actor does (spec uses it for actors it has created).
func (m *Model) Define(a *graph.Actor, o ActorOptions) error {
	if len(a.Inputs)+len(a.Outputs) > 0 || len(a.Impls) > 0 {
		return fmt.Errorf("actor %s: flow-model %s: expected an actor without ports or implementations (the model gives them)", a.Name, m.Name)
	}
	plan, err := m.actorPlan(a.Name, o)
	if err != nil {
		return err
	}
	if plan.origin == "" {
		plan.origin = a.Origin
	}
	plan.apply(a)
	return nil
}

// actorPlan is everything an actor made from a model gets, computed and
// checked before the actor is touched.
type actorPlan struct {
	ins, outs []graph.Port
	impls     []graph.Impl
	attrs     map[string]string
	iters     int
	swap      map[string]string
	origin    string
}

func (p *actorPlan) apply(a *graph.Actor) {
	for _, q := range p.ins {
		a.AddPort(q.Name, graph.In, q.Type, q.Rate, p.origin)
	}
	for _, q := range p.outs {
		a.AddPort(q.Name, graph.Out, q.Type, q.Rate, p.origin)
	}
	a.Impls = append(a.Impls, p.impls...)
	if a.Attrs == nil {
		a.Attrs = map[string]string{}
	}
	maps.Copy(a.Attrs, p.attrs)
	if p.iters > 1 {
		a.Iterations = p.iters
		a.Swap = p.swap
	}
}

// actorPlan checks that the model can be a graph actor and generates its
// kernel sources.
func (m *Model) actorPlan(name string, o ActorOptions) (*actorPlan, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	where := fmt.Sprintf("actor %s: flow-model %s (%s)", name, m.Name, m.at(0))
	if m.Kernel.Builtin != "" {
		return nil, fmt.Errorf("%s: kernel builtin %q: a Go built-in is not a graph kernel actor (write a Go actor, or give the model OpenCL or CUDA source)", where, m.Kernel.Builtin)
	}
	params, err := m.overrideParams(o.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	rg, err := m.actorRange()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	p := &actorPlan{origin: o.Origin, attrs: map[string]string{AttrModel: m.source()}}
	for _, s := range m.streams() {
		t, err := graph.ParseTokenType(s.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: stream %q: type %s has no graph token type: %w", where, s.Name, s.Type, err)
		}
		port := graph.Port{Name: s.Name, Type: t, Rate: graph.SDF(s.Length)}
		if _, in, _ := m.Stream(s.Name); in {
			p.ins = append(p.ins, port)
		} else {
			p.outs = append(p.outs, port)
		}
	}
	for _, lang := range []fmLang{fmOpenCL, fmCUDA} {
		src := lang.source(m)
		if src == "" {
			continue
		}
		text, err := lang.generate(m, src, params, rg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		p.impls = append(p.impls, graph.Impl{Kind: lang.kind, Source: lang.file(m), Func: text})
	}
	info, err := json.Marshal(requireInfo{Model: m.Name, Requires: m.Requires, Backends: m.backends(), Streams: m.streams()})
	if err != nil {
		return nil, err
	}
	p.attrs[AttrRequires] = string(info)
	if o.Iterations > 1 {
		p.iters = o.Iterations
		p.swap = map[string]string{}
		for _, sp := range m.Swap {
			p.swap[sp.Out] = sp.In
		}
	}
	return p, nil
}

// source names the model in attributes: its file or URL, else its name.
func (m *Model) source() string {
	if m.file != "" {
		return m.file
	}
	return m.Name
}

// overrideParams returns the parameters with values overridden by name.
func (m *Model) overrideParams(over map[string]float64) ([]Param, error) {
	ps := slices.Clone(m.Params)
	for _, name := range slices.Sorted(maps.Keys(over)) {
		i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
		if i < 0 {
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
			}
			return nil, fmt.Errorf("params: %q: expected one of the model's parameters (%s)", name, strings.Join(names, ", "))
		}
		if ps[i].Local > 0 {
			return nil, fmt.Errorf("params: %q is local memory: expected a scalar parameter", name)
		}
		ps[i].Value = over[name]
	}
	for _, p := range ps {
		if p.Local > 0 {
			return nil, fmt.Errorf("%s: param %q is local memory (%d bytes): a graph actor runs the model's work-items one after another, so kernels sharing local memory are not graph actors", m.at(p.line), p.Name, p.Local)
		}
	}
	return ps, nil
}

// actorRange returns the model's global range (1 to 3 dimensions) and its
// local range (nil: none given).
func (m *Model) actorRange() (Range, error) {
	r := Range{Global: m.Range.Global, Local: m.Range.Local}
	if len(r.Global) == 0 {
		r.Global = []int{m.Out[0].Length}
	}
	if len(r.Global) > 3 {
		return r, fmt.Errorf("range: global %v: expected 1 to 3 dimensions", r.Global)
	}
	for _, n := range r.Global {
		if n <= 0 {
			return r, fmt.Errorf("range: global %v: expected sizes > 0", r.Global)
		}
	}
	if len(r.Local) > 0 {
		if len(r.Local) != len(r.Global) {
			return r, fmt.Errorf("range: local %v for global %v: expected as many dimensions", r.Local, r.Global)
		}
		for i, n := range r.Local {
			if n <= 0 || r.Global[i]%n != 0 {
				return r, fmt.Errorf("range: local %v: expected sizes > 0 dividing global %v", r.Local, r.Global)
			}
		}
	}
	return r, nil
}

// requireInfo is what Place needs to check a device for an actor made
// from a model, kept in the actor's AttrRequires attribute.
type requireInfo struct {
	Model    string       `json:"model"`
	Requires Requirements `json:"requires"`
	Backends []string     `json:"backends"`
	Streams  []Stream     `json:"streams"`
}
