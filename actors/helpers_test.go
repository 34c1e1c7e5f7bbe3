package actors

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// port is a port declaration for tests: "in x f32 1024", "out y c64 [1,2]".
func newActor(t testing.TB, use string, params map[string]any, ports ...string) *graph.Actor {
	t.Helper()
	g := graph.New("test")
	a := g.AddActor("a", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: use, Params: params}))
	for _, p := range ports {
		f := strings.Fields(p)
		if len(f) != 4 {
			t.Fatalf("bad port %q", p)
		}
		dir := graph.In
		if f[0] == "out" {
			dir = graph.Out
		}
		r, err := graph.ParseRate(f[3])
		if err != nil {
			t.Fatal(err)
		}
		a.AddPort(f[1], dir, graph.MustTokenType(f[2]), r, "")
	}
	return a
}

// build resolves the built-in and fails the test on error.
func build(t testing.TB, use string, params map[string]any, ports ...string) (*graph.Actor, any) {
	t.Helper()
	a := newActor(t, use, params, ports...)
	impl, err := runtime.Resolve(a)
	if err != nil {
		t.Fatalf("%s: %v", use, err)
	}
	return a, impl
}

// buildErr resolves the built-in and returns the error (nil if none).
func buildErr(t testing.TB, use string, params map[string]any, ports ...string) error {
	t.Helper()
	_, err := runtime.Resolve(newActor(t, use, params, ports...))
	return err
}

// fire runs one firing of impl.
func fire(a *graph.Actor, impl any, index int64, ins, outs [][]byte) error {
	f := runtime.NewFiring(context.Background(), a, index, ins, outs)
	switch x := impl.(type) {
	case runtime.FireFunc:
		return x(f)
	case runtime.Actor:
		return x.Fire(f)
	}
	return errors.New("not a FireFunc or Actor")
}

func start(t testing.TB, impl any) {
	t.Helper()
	if s, ok := impl.(runtime.Starter); ok {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func stop(t testing.TB, impl any) {
	t.Helper()
	if s, ok := impl.(runtime.Stopper); ok {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// bytesOf views a slice as bytes.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// tokensOf views bytes as a slice of T.
func tokensOf[T any](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// wantErr checks that err is non-nil and contains every fragment.
func wantErr(t testing.TB, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected an error containing %q, got nil", fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err, f)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
