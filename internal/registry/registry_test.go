package registry

import (
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"testing"
)

func TestRegisterLookupNames(t *testing.T) {
	t.Parallel()
	r := New[int]("number", 0)
	r.Register("two", 2)
	r.Register("one", 1)
	r.Register("three", 3)
	if v, ok := r.Lookup("two"); !ok || v != 2 {
		t.Errorf("Lookup(two) = %d, %v: want 2, true", v, ok)
	}
	if v, ok := r.Lookup("four"); ok || v != 0 {
		t.Errorf("Lookup(four) = %d, %v: want 0, false", v, ok)
	}
	if got, want := r.Names(), []string{"one", "three", "two"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	if got, want := r.Values(), []int{1, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("Values = %v, want %v (by name)", got, want)
	}
}

// panicOf returns what f panics with ("" when it returns).
func panicOf(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}

// TestDuplicatePanicsNamingBoth: the second registration of a name
// panics with the kind, the name and both places; the first stays.
func TestDuplicatePanicsNamingBoth(t *testing.T) {
	t.Parallel()
	r := New[string]("widget", 0)
	r.Register("w", "first")
	msg := panicOf(func() { r.Register("w", "second") })
	re := regexp.MustCompile(`^widget "w" registered twice: first at registry/registry_test\.go:\d+, again at registry/registry_test\.go:\d+: expected one registration per name$`)
	if !re.MatchString(msg) {
		t.Errorf("duplicate: panic %q: want it to match %s", msg, re)
	}
	if v, _ := r.Lookup("w"); v != "first" {
		t.Errorf("after the refused duplicate Lookup(w) = %q, want the first value", v)
	}
	if msg := panicOf(func() { r.Register("", "x") }); !regexp.MustCompile(`^widget with an empty name registered at registry/registry_test\.go:\d+: expected a name$`).MatchString(msg) {
		t.Errorf("empty name: panic %q", msg)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	r := New[int]("number", 0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Register(fmt.Sprint(i), i)
			r.Names()
			r.Lookup("0")
		}()
	}
	wg.Wait()
	if n := len(r.Names()); n != 8 {
		t.Errorf("%d names after 8 concurrent registrations", n)
	}
}

// register stands for a package's exported wrapper around Register.
func register(r *Registry[string], name string) { r.Register(name, name) }

// TestWrapperNamesItsCaller: through a wrapper, the places named are the
// wrapper's callers' lines, not the wrapper's.
func TestWrapperNamesItsCaller(t *testing.T) {
	t.Parallel()
	r := New[string]("widget", 1)
	register(r, "w")
	_, _, line, _ := runtime.Caller(0)
	msg := panicOf(func() { register(r, "w") })
	want := fmt.Sprintf(`widget "w" registered twice: first at registry/registry_test.go:%d, again at registry/registry_test.go:%d: expected one registration per name`, line-1, line+1)
	if msg != want {
		t.Errorf("panic %q, want %q", msg, want)
	}
}
