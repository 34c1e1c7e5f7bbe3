package runtime

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

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

// TestRegistryRule: the built-in actors and Go functions follow
// internal/registry's one rule (a duplicate panics naming both places,
// the first stays), and a Go function of the wrong type is refused at
// registration. Every refused registration leaves the registries as they
// were.
func TestRegistryRule(t *testing.T) {
	t.Parallel()
	msg := panicOf(func() { RegisterBuiltin("switch", "again", newSwitch) })
	re := regexp.MustCompile(`^built-in actor "switch" registered twice: first at runtime/switch\.go:\d+, again at runtime/registry_test\.go:\d+: expected one registration per name$`)
	if !re.MatchString(msg) {
		t.Errorf("a second switch: panic %q: expected it to match %s", msg, re)
	}
	for _, b := range Builtins() {
		if b.Name == "switch" && b.Doc == "again" {
			t.Errorf("the refused duplicate replaced the first switch")
		}
	}
	msg = panicOf(func() { RegisterFunc("registry-test.bad", 42) })
	if want := `runtime: Go function "registry-test.bad" has type int: expected runtime.FireFunc, runtime.ProcessFunc, runtime.Actor or a func with the signature of one of them`; msg != want {
		t.Errorf("a Go function of type int: panic %q, want %q", msg, want)
	}
	if Registered("registry-test.bad") {
		t.Errorf("the refused Go function is registered")
	}
}

// TestUnknownBuiltin: an unknown built-in is named with the close name
// (internal/suggest's rule), or with every known name when none is close.
func TestUnknownBuiltin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ use, want string }{
		{"swich", `actor a: unknown built-in actor "swich" (did you mean "switch"?)`},
		{"nothing-like-it", `actor a: unknown built-in actor "nothing-like-it" (known: ` + strings.Join(names(Builtins()), ", ") + ")"},
	} {
		g := graph.New("g")
		a := g.AddActor("a", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: c.use}))
		if _, err := Resolve(a); err == nil || err.Error() != c.want {
			t.Errorf("use: %s: %v, want %q", c.use, err, c.want)
		}
	}
}

func names(bs []BuiltinInfo) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Name
	}
	return out
}
