package analysis

import (
	"fmt"
	"sort"

	"github.com/sluicehq/sluice/graph"
)

// BranchFirings returns, for a conditional pattern actor (graph.Actor with
// a Pattern), each branch's firings per firing of the pattern: the inner
// actors' repetitions scaled so that one branch iteration consumes and
// produces exactly the pattern's interface rates. It checks the GSLD
// constraints of every branch and returns *GSLDError listing each
// violation with its path ("actor/branch[k]/inner.port").
func BranchFirings(a *graph.Actor) ([]map[string]int64, error) {
	if a == nil || a.Pattern == nil {
		return nil, fmt.Errorf("actor is not a conditional pattern")
	}
	if ps := graph.ValidatePattern(a); len(ps) > 0 {
		return nil, &GSLDError{Actor: a.Name, Violations: ps}
	}
	out := make([]map[string]int64, len(a.Pattern.Branches))
	var vs []string
	for k, b := range a.Pattern.Branches {
		where := fmt.Sprintf("%s/branch[%d]", a.Name, k)
		f, err := branchFirings(a, b, where)
		if err != nil {
			vs = append(vs, err.Error())
			continue
		}
		out[k] = f
	}
	if len(vs) > 0 {
		return nil, &GSLDError{Actor: a.Name, Violations: vs}
	}
	return out, nil
}

// GSLDError lists the violations of the GSLD constraints of one pattern.
type GSLDError struct {
	// Actor is the pattern actor.
	Actor string
	// Violations are readable lines, each starting with its path.
	Violations []string
}

// Error joins the violations.
func (e *GSLDError) Error() string {
	s := fmt.Sprintf("conditional pattern %s violates the GSLD constraints:", e.Actor)
	for _, v := range e.Violations {
		s += "\n  " + v
	}
	return s
}

// branchFirings solves one branch's balance equations, scales them to the
// interface rates and checks that one scaled iteration completes from the
// branch's initial tokens (so inner token populations return to their
// initial values after every firing of the pattern).
func branchFirings(a *graph.Actor, b *graph.Graph, where string) (map[string]int64, error) {
	rv, err := RepetitionVector(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	if len(rv.Skipped) > 0 {
		return nil, fmt.Errorf("%s: dynamic actors %v: a branch must be static", where, rv.Skipped)
	}
	scale, err := interfaceScale(a, b, rv, where)
	if err != nil {
		return nil, err
	}
	f := make(map[string]int64, len(rv.Firings))
	for n, q := range rv.Firings {
		f[n] = q * scale
	}
	for _, ia := range b.Actors {
		if f[ia.Name] == 0 {
			return nil, fmt.Errorf("%s/%s: actor does not fire in a branch iteration: expected every inner actor to be connected to the pattern's interface", where, ia.Name)
		}
	}
	d, err := Deadlock(b, &Repetitions{Firings: f, Order: rv.Order})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	if d.Deadlock {
		return nil, fmt.Errorf("%s: one iteration of the branch deadlocks (blocked: %v; add initial tokens: %v)", where, d.Blocked, d.Initialize)
	}
	return f, nil
}

// interfaceScale finds the one integer factor by which the branch's
// minimal iteration must be repeated so that every boundary port moves
// exactly the pattern port's rate. It fails, naming the port, when no such
// integer exists or when two ports disagree.
func interfaceScale(a *graph.Actor, b *graph.Graph, rv *Repetitions, where string) (int64, error) {
	type bound struct {
		outer *graph.Port
		inner *graph.Port
	}
	var bs []bound
	for _, x := range append(append([]graph.Boundary(nil), b.Inputs...), b.Outputs...) {
		op := a.Port(x.Name)
		ia := b.Actor(x.Actor)
		if op == nil || ia == nil || ia.Port(x.Port) == nil {
			return 0, fmt.Errorf("%s: boundary %q binds no port of %s", where, x.Name, a.Name)
		}
		bs = append(bs, bound{outer: op, inner: ia.Port(x.Port)})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].outer.Name < bs[j].outer.Name })
	var scale int64
	var first string
	for _, x := range bs {
		ia := x.inner.Actor
		moved := rv.Firings[ia.Name] / int64(ia.Phases()) * int64(x.inner.Rate.Sum())
		want := int64(x.outer.Rate.Sum())
		path := fmt.Sprintf("%s/%s.%s", where, ia.Name, x.inner.Name)
		if moved == 0 || want%moved != 0 {
			return 0, fmt.Errorf("%s: one branch iteration moves %d tokens on port %s: expected a divisor of the pattern's rate %d so that inner token populations return to their initial values", path, moved, x.outer.FullName(), want)
		}
		s := want / moved
		if scale == 0 {
			scale, first = s, x.outer.FullName()
		} else if s != scale {
			return 0, fmt.Errorf("%s: port %s needs %d branch iterations per firing but %s needs %d: the branch's rates do not match the pattern's interface", path, x.outer.FullName(), s, first, scale)
		}
	}
	if scale == 0 {
		return 0, fmt.Errorf("%s: branch binds no data port of %s", where, a.Name)
	}
	return scale, nil
}

// checkPatterns runs BranchFirings on every pattern actor of g.
func checkPatterns(g *graph.Graph) (map[string][]map[string]int64, []string) {
	var errs []string
	var out map[string][]map[string]int64
	for _, a := range g.Actors {
		if a.Pattern == nil {
			continue
		}
		f, err := BranchFirings(a)
		if err != nil {
			if ge, ok := err.(*GSLDError); ok {
				errs = append(errs, ge.Violations...)
			} else {
				errs = append(errs, err.Error())
			}
			continue
		}
		if out == nil {
			out = map[string][]map[string]int64{}
		}
		out[a.Name] = f
	}
	return out, errs
}
