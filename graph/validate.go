package graph

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/internal/suggest"
)

// Problem is one thing wrong with a graph: where it is and what is wrong.
type Problem struct {
	// Where is a file position ("g.yaml:4:7") or a graph location ("actor.port").
	Where string
	// Msg says what was expected and what was found.
	Msg string
}

// String renders "where: msg".
func (p Problem) String() string {
	if p.Where == "" {
		return p.Msg
	}
	return p.Where + ": " + p.Msg
}

// ValidationError lists every problem found in a graph.
type ValidationError struct {
	// Graph names the graph.
	Graph string
	// Problems in a stable order.
	Problems []Problem
}

// Error renders all problems, one per line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph %q has %d problem(s):", e.Graph, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Validate checks the graph and its composite actors' subgraphs and returns
// a *ValidationError listing every problem, or nil: problems recorded while
// building (duplicates, unknown actors or ports), unconnected ports, inputs
// connected twice, token type or size mismatches, rates that are missing or
// mixed (a dynamic port joined to a static one is allowed: the KPN side
// adapts), block sizes that do not divide the rate, capacities or initial
// tokens that are negative or inconsistent, and composite ports not bound.
// Ports named by a graph boundary (Inputs, Outputs) may stay unconnected.
func (g *Graph) Validate() error {
	var ps []Problem
	g.validate("", &ps)
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Graph: g.Name, Problems: ps}
}

func (g *Graph) validate(prefix string, ps *[]Problem) {
	add := func(where, format string, args ...any) {
		*ps = append(*ps, Problem{Where: where, Msg: prefix + fmt.Sprintf(format, args...)})
	}
	for _, p := range g.problems {
		add(p.Where, "%s", p.Msg)
	}
	where := func(origin, fallback string) string {
		if origin != "" {
			return origin
		}
		return fallback
	}

	bound := map[*Port]bool{}
	checkBoundary := func(kind string, dir Direction, bs []Boundary) {
		seen := map[string]bool{}
		for _, b := range bs {
			w := where(b.Origin, g.Name)
			if seen[b.Name] {
				add(w, "duplicate graph %s %q", kind, b.Name)
			}
			seen[b.Name] = true
			a := g.Actor(b.Actor)
			if a == nil {
				add(w, "graph %s %q is bound to unknown actor %q%s", kind, b.Name, b.Actor, suggest.Suggest(b.Actor, g.actorNames()))
				continue
			}
			p := a.Port(b.Port)
			if p == nil {
				add(w, "graph %s %q is bound to unknown port %q of actor %q", kind, b.Name, b.Port, b.Actor)
				continue
			}
			if p.Dir != dir {
				add(w, "graph %s %q is bound to %s, an %s port: expected an %s port", kind, b.Name, p.FullName(), p.Dir, dir)
				continue
			}
			bound[p] = true
		}
	}
	checkBoundary("input", In, g.Inputs)
	checkBoundary("output", Out, g.Outputs)

	for _, a := range g.Actors {
		aw := where(a.Origin, a.Name)
		for _, p := range a.Ports() {
			pw := where(p.Origin, aw)
			if p.Type.IsZero() || p.Type.Size <= 0 {
				add(pw, "port %s has no token type: expected one such as f32 or [4]u8", p.FullName())
			}
			if p.Rate.IsZero() {
				add(pw, "port %s has no rate: expected an integer, a list of phases or dynamic", p.FullName())
			}
			if p.Block < 0 {
				add(pw, "port %s has block size %d: expected a positive size", p.FullName(), p.Block)
			}
			switch {
			case p.History < 0:
				add(pw, "port %s: history %d: expected ≥ 0 tokens", p.FullName(), p.History)
			case p.History > 0 && p.Dir != In:
				add(pw, "port %s: history is kept on input ports only", p.FullName())
			case p.History > 0 && !a.Stateful:
				add(pw, "port %s: history %d needs firings in order: expected a stateful actor", p.FullName(), p.History)
			}
			if p.Block > 0 {
				if p.Dir == In {
					add(pw, "input port %s has a block size: blocks are defined on output ports only", p.FullName())
				} else if !p.Rate.IsDynamic() {
					for _, r := range p.Rate.List() {
						if r%p.Block != 0 {
							add(pw, "port %s: block size %d does not divide rate %d", p.FullName(), p.Block, r)
							break
						}
					}
				}
			}
		}
		if a.Sub != nil {
			g.validateComposite(a, add)
		}
		for _, msg := range ValidatePattern(a) {
			add(aw, "%s", msg)
		}
		for _, msg := range ValidateState(a) {
			add(aw, "%s", msg)
		}
	}

	ins := map[*Port]*Channel{}
	outs := map[*Port]int{}
	names := map[string]*Channel{}
	for _, c := range g.Channels {
		if c.From == nil || c.To == nil {
			add(where(c.Origin, g.Name), "channel %q has a missing end", c.Name)
			continue
		}
		cw := where(c.Origin, c.Name)
		if prev, dup := names[c.Name]; dup {
			add(cw, "duplicate channel name %q%s", c.Name, at(prev.Origin))
		}
		names[c.Name] = c
		if c.From.Dir != Out {
			add(cw, "channel %s starts at %s, an input port: expected an output port", c.Name, c.From.FullName())
		}
		if c.To.Dir != In {
			add(cw, "channel %s ends at %s, an output port: expected an input port", c.Name, c.To.FullName())
		}
		if g.Actor(c.From.Actor.Name) != c.From.Actor || g.Actor(c.To.Actor.Name) != c.To.Actor {
			add(cw, "channel %s joins a port of an actor that is not in graph %q", c.Name, g.Name)
		}
		if prev, dup := ins[c.To]; dup {
			add(cw, "input %s is connected twice: by %s and by %s (an input takes one channel; use a broadcast output instead)", c.To.FullName(), prev.Name, c.Name)
		} else {
			ins[c.To] = c
		}
		outs[c.From]++
		if c.From.Type != c.To.Type && !c.From.Type.IsZero() && !c.To.Type.IsZero() {
			if c.From.Type.Size != c.To.Type.Size {
				add(cw, "token size mismatch on %s: %s gives %s (%d bytes), %s expects %s (%d bytes)", c.Name, c.From.FullName(), c.From.Type, c.From.Type.Size, c.To.FullName(), c.To.Type, c.To.Type.Size)
			} else {
				add(cw, "token type mismatch on %s: %s gives %s, %s expects %s", c.Name, c.From.FullName(), c.From.Type, c.To.FullName(), c.To.Type)
			}
		}
		if c.Capacity < 0 {
			add(cw, "channel %s has capacity %d: expected a positive number of tokens (or none)", c.Name, c.Capacity)
		}
		if c.Initial < 0 {
			add(cw, "channel %s has %d initial tokens: expected zero or more", c.Name, c.Initial)
		}
		if c.Capacity > 0 && c.Initial > c.Capacity {
			add(cw, "channel %s holds %d initial tokens but has capacity %d: expected capacity ≥ initial tokens", c.Name, c.Initial, c.Capacity)
		}
		if c.InitialData != nil && c.From.Type.Size > 0 && len(c.InitialData) != c.Initial*c.From.Type.Size {
			add(cw, "channel %s: initial data has %d bytes, expected %d (%d tokens × %d bytes)", c.Name, len(c.InitialData), c.Initial*c.From.Type.Size, c.Initial, c.From.Type.Size)
		}
	}
	for _, a := range g.Actors {
		for _, p := range a.Inputs {
			if ins[p] == nil && !bound[p] {
				add(where(p.Origin, where(a.Origin, p.FullName())), "input port %s is not connected: expected a channel into it or a graph input bound to it", p.FullName())
			}
		}
		for _, p := range a.Outputs {
			if outs[p] == 0 && !bound[p] {
				add(where(p.Origin, where(a.Origin, p.FullName())), "output port %s is not connected: expected a channel from it or a graph output bound to it", p.FullName())
			}
		}
	}
	for _, a := range g.Actors {
		validateSwap(a, where(a.Origin, a.Name), add)
	}
}

func (g *Graph) validateComposite(a *Actor, add func(string, string, ...any)) {
	sub := a.Sub
	aw := a.Origin
	if aw == "" {
		aw = a.Name
	}
	binds := map[string]Boundary{}
	for _, b := range sub.Inputs {
		binds["in "+b.Name] = b
	}
	for _, b := range sub.Outputs {
		binds["out "+b.Name] = b
	}
	for _, p := range a.Ports() {
		b, ok := binds[p.Dir.String()+" "+p.Name]
		if !ok {
			add(aw, "composite port %s is not bound: expected a graph %sput %q in its subgraph %q", p.FullName(), p.Dir, p.Name, sub.Name)
			continue
		}
		inner := sub.Actor(b.Actor)
		if inner == nil {
			continue // reported by the subgraph's own validation
		}
		if ip := inner.Port(b.Port); ip != nil && !ip.Type.IsZero() && ip.Type != p.Type {
			add(aw, "composite port %s is %s but is bound to %s.%s of type %s", p.FullName(), p.Type, b.Actor, b.Port, ip.Type)
		}
	}
	var inner []Problem
	sub.validate("", &inner)
	for _, p := range inner {
		add(p.Where, "in composite %s: %s", a.Name, p.Msg)
	}
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
}

// validateSwap checks an actor's iteration count and swap pairs: each pair
// joins an output to an input of the same token type and fixed rate, and
// no port is in two pairs.
func validateSwap(a *Actor, w string, add func(where, format string, args ...any)) {
	if a.Iterations < 0 {
		add(w, "actor %s: iterations %d: expected ≥ 0", a.Name, a.Iterations)
	}
	if len(a.Swap) > 0 && a.Iterations <= 1 {
		add(w, "actor %s: swap pairs without iterations: expected iterations ≥ 2 (a swap pair feeds iteration k's output to iteration k+1)", a.Name)
	}
	if a.Iterations > 1 && len(a.Swap) == 0 {
		add(w, "actor %s: iterations %d without a swap pair: expected swap: {output: input}", a.Name, a.Iterations)
	}
	if a.Iterations > 1 && a.Sub != nil {
		add(w, "actor %s: a composite actor cannot iterate: expected iterations on an atomic actor", a.Name)
	}
	outs := make([]string, 0, len(a.Swap))
	for o := range a.Swap {
		outs = append(outs, o)
	}
	sort.Strings(outs)
	usedIn := map[string]string{}
	for _, o := range outs {
		in := a.Swap[o]
		op, ip := a.Port(o), a.Port(in)
		if op == nil || op.Dir != Out {
			add(w, "actor %s: swap %s: %s: expected an output port of %s", a.Name, o, quote(o), a.Name)
			continue
		}
		if ip == nil || ip.Dir != In {
			add(w, "actor %s: swap %s: %s: expected an input port of %s", a.Name, o, quote(in), a.Name)
			continue
		}
		if prev, dup := usedIn[in]; dup {
			add(w, "actor %s: swap: input %s is paired with both %s and %s: expected one output per input", a.Name, in, prev, o)
		}
		usedIn[in] = o
		if op.Type.Name != ip.Type.Name {
			add(w, "actor %s: swap %s: %s: token types differ (%s, %s): expected the same type", a.Name, o, in, op.Type.Name, ip.Type.Name)
		}
		if op.Rate.IsDynamic() || op.Rate.IsCSDF() || ip.Rate.IsDynamic() || ip.Rate.IsCSDF() || op.Rate.Sum() != ip.Rate.Sum() {
			add(w, "actor %s: swap %s: %s: rates %v and %v: expected equal fixed (SDF) rates", a.Name, o, in, op.Rate, ip.Rate)
		}
	}
}

// ErrorLines splits an error listing several problems into one line each:
// a *ValidationError's problems (found with errors.As), else the error's
// non-empty lines (as spec's file:line:col lists are written).
func ErrorLines(err error) []string {
	var ve *ValidationError
	if errors.As(err, &ve) {
		out := make([]string, len(ve.Problems))
		for i, p := range ve.Problems {
			out[i] = p.String()
		}
		return out
	}
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
