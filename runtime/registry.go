package runtime

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/registry"
	"github.com/sluicehq/sluice/internal/suggest"
)

// Factory builds the Go implementation of a built-in actor from the actor's
// declaration (its ports) and its parameters. It returns a FireFunc, a
// ProcessFunc or an Actor, or an error that says which port or parameter is
// wrong and what was expected.
type Factory func(a *graph.Actor, p Params) (any, error)

// BuiltinInfo describes a registered built-in actor.
type BuiltinInfo struct {
	// Name is what spec files write after "use:".
	Name string
	// Doc is a one-line description with its parameters.
	Doc string
	// Process reports whether the built-in is a KPN process (dynamic ports).
	Process bool
	factory Factory
}

// The two registries (internal/registry's rule: a name is registered
// once; a second registration panics naming both places).
var (
	builtins = registry.New[BuiltinInfo]("built-in actor", 1)
	funcs    = registry.New[any]("Go function", 1)
)

// RegisterBuiltin registers a built-in actor under name. It panics if the
// name is taken, naming both registrations (registration happens in init
// functions).
func RegisterBuiltin(name, doc string, f Factory) {
	builtins.Register(name, BuiltinInfo{Name: name, Doc: doc, factory: f})
}

// Builtins lists the registered built-in actors, sorted by name.
func Builtins() []BuiltinInfo { return builtins.Values() }

// RegisterFunc registers a Go implementation (FireFunc, ProcessFunc, Actor,
// or a func with one of their signatures) under a name that spec files
// reference with `kernel: {go: name}`. It panics if the name is taken,
// naming both registrations, or if impl is none of those types (both are
// mistakes of the program, found at init rather than at the first run).
func RegisterFunc(name string, impl any) {
	n, ok := normalizeImpl(impl)
	if !ok {
		panic(fmt.Sprintf("runtime: Go function %q has type %T: expected runtime.FireFunc, runtime.ProcessFunc, runtime.Actor or a func with the signature of one of them", name, impl))
	}
	funcs.Register(name, n)
}

// Registered reports whether a Go implementation is registered under name
// (RegisterFunc).
func Registered(name string) bool {
	_, ok := funcs.Lookup(name)
	return ok
}

// Resolve returns the Go implementation of an actor: a Func attached in code,
// a function registered by name, or a built-in built from its parameters.
// The result is a FireFunc, a ProcessFunc or an Actor.
func Resolve(a *graph.Actor) (any, error) { return resolve(a, FileAccess{}) }

// resolve is Resolve with the run's file access, which built-ins receive
// in their Params.
func resolve(a *graph.Actor, files FileAccess) (any, error) {
	if a.Pattern != nil {
		return newConditional(a, files)
	}
	for _, im := range a.Impls {
		switch im.Kind {
		case graph.ImplGo:
			impl := im.Func
			if impl == nil {
				impl, _ = funcs.Lookup(im.Source)
				if impl == nil {
					return nil, fmt.Errorf("actor %s: Go implementation %q is not registered in this program (expected a package calling runtime.RegisterFunc(%q, ...) in its init, imported by the program; a graph file names that package with a top-level go: key, e.g. go: [.], and sluice run builds a program that imports it)", a.Name, im.Source, im.Source)
				}
			}
			return normalize(a, impl)
		case graph.ImplBuiltin:
			b, ok := builtins.Lookup(im.Source)
			if !ok {
				return nil, fmt.Errorf("actor %s: unknown built-in actor %q%s", a.Name, im.Source, unknownBuiltinHint(im.Source))
			}
			impl, err := b.factory(a, Params{actor: a.Name, m: im.Params, files: files})
			if err != nil {
				return nil, fmt.Errorf("actor %s (%s): %w", a.Name, im.Source, err)
			}
			return normalize(a, impl)
		}
	}
	var kinds []string
	for _, im := range a.Impls {
		kinds = append(kinds, string(im.Kind))
	}
	return nil, fmt.Errorf("actor %s has no Go or built-in implementation to run on the CPU (has: %s)", a.Name, strings.Join(kinds, ", "))
}

func normalize(a *graph.Actor, impl any) (any, error) {
	if n, ok := normalizeImpl(impl); ok {
		return n, nil
	}
	return nil, fmt.Errorf("actor %s: Go implementation has type %T: expected runtime.FireFunc, runtime.ProcessFunc or runtime.Actor", a.Name, impl)
}

// normalizeImpl returns impl as a FireFunc, a ProcessFunc or an Actor, and
// whether it is one of them (or a func with the signature of one).
func normalizeImpl(impl any) (any, bool) {
	switch f := impl.(type) {
	case FireFunc, ProcessFunc, Actor:
		return f, true
	case func(*Firing) error:
		return FireFunc(f), true
	case func(*Process) error:
		return ProcessFunc(f), true
	}
	return nil, false
}

// unknownBuiltinHint is what follows an unknown built-in's name: the
// close name (internal/suggest's rule), else every known name.
func unknownBuiltinHint(name string) string {
	names := builtins.Names()
	if s := suggest.DidYouMean(name, names); s != "" {
		return s
	}
	return " (known: " + strings.Join(names, ", ") + ")"
}

// Params are a built-in actor's parameters (the spec's "with:"), with typed
// accessors whose errors name the actor and the parameter.
type Params struct {
	actor string
	m     map[string]any
	files FileAccess
}

// Files returns the run's file access (Options.Files): the root the
// actor's paths are confined to, or why files are refused.
func (p Params) Files() FileAccess { return p.files }

// NewParams wraps a parameter map, for tests and Go callers.
func NewParams(actor string, m map[string]any) Params { return Params{actor: actor, m: m} }

// Has reports whether the parameter is given.
func (p Params) Has(name string) bool { _, ok := p.m[name]; return ok }

// Keys returns the given parameter names, sorted.
func (p Params) Keys() []string {
	ks := make([]string, 0, len(p.m))
	for k := range p.m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Only returns an error naming any parameter not in allowed.
func (p Params) Only(allowed ...string) error {
	for _, k := range p.Keys() {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return fmt.Errorf("unknown parameter %q: expected one of %s", k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func (p Params) bad(name, want string, v any) error {
	return fmt.Errorf("parameter %q: expected %s, found %v (%T)", name, want, v, v)
}

// Float returns a number parameter, or def when absent.
func (p Params) Float(name string, def float64) (float64, error) {
	v, ok := p.m[name]
	if !ok {
		return def, nil
	}
	if f, ok := toFloat(v); ok {
		return f, nil
	}
	return 0, p.bad(name, "a number", v)
}

// Int returns an integer parameter, or def when absent.
func (p Params) Int(name string, def int) (int, error) {
	v, ok := p.m[name]
	if !ok {
		return def, nil
	}
	if f, ok := toFloat(v); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int(f), nil
	}
	return 0, p.bad(name, "an integer", v)
}

// String returns a string parameter, or def when absent.
func (p Params) String(name, def string) (string, error) {
	v, ok := p.m[name]
	if !ok {
		return def, nil
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", p.bad(name, "a string", v)
}

// Bool returns a boolean parameter, or def when absent.
func (p Params) Bool(name string, def bool) (bool, error) {
	v, ok := p.m[name]
	if !ok {
		return def, nil
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, p.bad(name, "true or false", v)
}

// Floats returns a list-of-numbers parameter, or def when absent.
func (p Params) Floats(name string, def []float64) ([]float64, error) {
	v, ok := p.m[name]
	if !ok {
		return def, nil
	}
	switch l := v.(type) {
	case []float64:
		return l, nil
	case []any:
		out := make([]float64, len(l))
		for i, e := range l {
			f, ok := toFloat(e)
			if !ok {
				return nil, p.bad(fmt.Sprintf("%s[%d]", name, i), "a number", e)
			}
			out[i] = f
		}
		return out, nil
	}
	return nil, p.bad(name, "a list of numbers", v)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}
