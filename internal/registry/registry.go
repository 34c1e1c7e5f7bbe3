// Package registry is the one registry of named things that sluice's
// packages fill in from their init functions: built-in actors and Go
// functions (package runtime), flow-model Go kernels (package flowmodel)
// and device backends (package device). Each keeps a Registry of its own
// type; all follow one rule for names.
//
// The rule: a name is registered once. Registering an empty name, or a
// name already taken, is a programming error — two packages claiming one
// name would make which one runs depend on import order — so Register
// panics, at init, with a message naming the kind of thing, the name and
// the places (file:line) of both registrations.
package registry

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
)

// Registry maps names to values of type T. It is safe for concurrent use;
// the zero value is not usable (use New).
type Registry[T any] struct {
	what     string // the kind of thing, for panics: "built-in actor"
	wrappers int    // functions between the registering code and Register
	mu       sync.RWMutex
	m        map[string]entry[T]
}

type entry[T any] struct {
	v  T
	at string // where it was registered: file:line
}

// New returns an empty registry of what ("built-in actor", "device
// backend"): the words a duplicate's panic uses. wrappers is how many
// functions stand between the code that registers and Register: 0 when it
// calls Register itself, 1 when a package's exported function
// (runtime.RegisterBuiltin) calls Register for it, so that a panic names
// the place that registered, not the wrapper.
func New[T any](what string, wrappers int) *Registry[T] {
	return &Registry[T]{what: what, wrappers: max(0, wrappers), m: map[string]entry[T]{}}
}

// Register adds v under name. It panics when name is empty or already
// registered (the package's rule: see the package documentation).
func (r *Registry[T]) Register(name string, v T) {
	at := r.caller()
	if name == "" {
		panic(fmt.Sprintf("%s with an empty name registered at %s: expected a name", r.what, at))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, dup := r.m[name]; dup {
		panic(fmt.Sprintf("%s %q registered twice: first at %s, again at %s: expected one registration per name", r.what, name, old.at, at))
	}
	r.m[name] = entry[T]{v: v, at: at}
}

// Lookup returns the value registered under name and whether there is one.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.m[name]
	return e.v, ok
}

// Names returns the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Values returns the registered values in the order of their names.
func (r *Registry[T]) Values() []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = r.m[n].v
	}
	return out
}

// caller returns file:line of the code that registered (Register's
// caller, past r.wrappers wrappers), the file given by its directory's
// name and its own; "unknown" when the stack is shorter.
func (r *Registry[T]) caller() string {
	_, file, line, ok := runtime.Caller(2 + r.wrappers)
	if !ok {
		return "unknown"
	}
	return filepath.Join(filepath.Base(filepath.Dir(file)), filepath.Base(file)) + ":" + strconv.Itoa(line)
}
