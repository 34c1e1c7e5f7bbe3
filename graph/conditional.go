package graph

import "fmt"

// ControlPort is the name of a conditional pattern's control input port.
const ControlPort = "ctl"

// Conditional is the GSLD conditional pattern (Fork + Switch + branches +
// Select) encapsulated as one actor that is SDF from the outside: each
// firing reads one control token from the actor's ControlPort input and
// runs one complete iteration of the branch it selects, which consumes the
// actor's data inputs and produces its data outputs at their static rates;
// the branches not selected do not fire.
//
// A control token is an integer scalar (u8 for the boolean form: 0 false,
// 1 true; i32 or another integer type for the n-way form); value k selects
// Branches[k]. Each branch is a graph whose Inputs and Outputs bind the
// actor's data ports by name, like a composite's subgraph.
type Conditional struct {
	// Branches are the subgraphs, indexed by control value.
	Branches []*Graph
}

// AddConditional adds a conditional pattern actor named name to g, with a
// control input port ControlPort of type control (rate 1) and the given
// branches. Add the data ports with AddPort: their names must match each
// branch's boundary names. The actor is stateful (inner channels and
// actors keep state from one firing to the next, in order).
func (g *Graph) AddConditional(name string, control TokenType, branches []*Graph, opts ...ActorOption) *Actor {
	a := g.AddActor(name, opts...)
	a.Stateful = true
	a.Pattern = &Conditional{Branches: branches}
	a.Impls = append(a.Impls, Impl{Kind: ImplGo, Source: "conditional"})
	a.AddPort(ControlPort, In, control, SDF(1), a.Origin)
	return a
}

// AddIf adds the boolean form of the conditional pattern: the control port
// has type u8 and a token of 0 runs elseBranch, any other value thenBranch.
func (g *Graph) AddIf(name string, thenBranch, elseBranch *Graph, opts ...ActorOption) *Actor {
	return g.AddConditional(name, MustTokenType("u8"), []*Graph{elseBranch, thenBranch}, opts...)
}

// IsIntegerType reports whether t is an integer scalar usable as a
// control token.
func IsIntegerType(t TokenType) bool {
	switch t.Name {
	case "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64":
		return true
	}
	return false
}

// DataInputs returns the pattern actor's inputs other than the control port.
func (c *Conditional) DataInputs(a *Actor) []*Port {
	var ps []*Port
	for _, p := range a.Inputs {
		if p.Name != ControlPort {
			ps = append(ps, p)
		}
	}
	return ps
}

// ValidatePattern checks a conditional pattern's structure (not its rates:
// see analysis.CheckConditional): a rate-1 integer control port, at least
// one branch, every data port bound in every branch with the same token
// type, static ports only. Problems name "actor/branch[k]".
func ValidatePattern(a *Actor) []string {
	c := a.Pattern
	if c == nil {
		return nil
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	ctl := a.Port(ControlPort)
	switch {
	case ctl == nil || ctl.Dir != In:
		add("%s: conditional pattern has no control input port %q", a.Name, ControlPort)
	case !IsIntegerType(ctl.Type):
		add("%s: control port %s has type %s: expected an integer type (u8 for a boolean)", a.Name, ctl.FullName(), ctl.Type)
	case !ctl.Rate.Equal(SDF(1)):
		add("%s: control port %s has rate %s: expected 1", a.Name, ctl.FullName(), ctl.Rate)
	}
	if len(c.Branches) == 0 {
		add("%s: conditional pattern has no branches", a.Name)
	}
	for _, p := range a.Ports() {
		if p.Rate.IsDynamic() || p.Rate.IsCSDF() {
			add("%s: port %s has rate %s: a conditional pattern's interface must be SDF", a.Name, p.FullName(), p.Rate)
		}
	}
	for k, b := range c.Branches {
		where := fmt.Sprintf("%s/branch[%d]", a.Name, k)
		if b == nil {
			add("%s: branch is nil", where)
			continue
		}
		out = append(out, validateBranch(a, b, where)...)
	}
	return out
}

func validateBranch(a *Actor, b *Graph, where string) []string {
	var out []string
	binds := map[string]Boundary{}
	for _, x := range b.Inputs {
		binds["in "+x.Name] = x
	}
	for _, x := range b.Outputs {
		binds["out "+x.Name] = x
	}
	for _, p := range a.Ports() {
		if p.Name == ControlPort {
			continue
		}
		x, ok := binds[p.Dir.String()+" "+p.Name]
		if !ok {
			out = append(out, fmt.Sprintf("%s: port %s is not bound: expected a graph %sput %q in branch %q", where, p.FullName(), p.Dir, p.Name, b.Name))
			continue
		}
		inner := b.Actor(x.Actor)
		if inner == nil || inner.Port(x.Port) == nil {
			out = append(out, fmt.Sprintf("%s: boundary %q names unknown port %s.%s", where, x.Name, x.Actor, x.Port))
			continue
		}
		if ip := inner.Port(x.Port); ip.Type != p.Type {
			out = append(out, fmt.Sprintf("%s: port %s is %s but is bound to %s.%s of type %s", where, p.FullName(), p.Type, x.Actor, x.Port, ip.Type))
		}
	}
	for _, ia := range b.Actors {
		if ia.Sub != nil {
			out = append(out, fmt.Sprintf("%s/%s: composite actors inside a branch are not supported: flatten the branch first", where, ia.Name))
		}
		for _, p := range ia.Ports() {
			if p.Rate.IsDynamic() {
				out = append(out, fmt.Sprintf("%s/%s: port %s is dynamic: a branch must be static (SDF or CSDF)", where, ia.Name, p.Name))
			}
		}
	}
	if err := b.Validate(); err != nil {
		out = append(out, fmt.Sprintf("%s: %v", where, err))
	}
	return out
}
