package graph

import (
	"strings"
	"testing"
)

func TestValidateSwap(t *testing.T) {
	build := func(iter int, swap map[string]string, outRate int) error {
		g := New("s")
		f32 := MustTokenType("f32")
		src := g.AddActor("src")
		src.AddPort("o", Out, f32, SDF(8), "")
		a := g.AddActor("it")
		a.AddPort("x", In, f32, SDF(8), "")
		a.AddPort("y", Out, f32, SDF(outRate), "")
		a.Iterations, a.Swap = iter, swap
		snk := g.AddActor("snk")
		snk.AddPort("i", In, f32, SDF(outRate), "")
		g.JoinNames("src.o", "it.x")
		g.JoinNames("it.y", "snk.i")
		return g.Validate()
	}
	if err := build(10, map[string]string{"y": "x"}, 8); err != nil {
		t.Fatal(err)
	}
	if err := build(0, nil, 8); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		iter int
		swap map[string]string
		rate int
		want string
	}{
		{10, nil, 8, "without a swap pair"},
		{1, map[string]string{"y": "x"}, 8, "without iterations"},
		{10, map[string]string{"y": "x"}, 4, "expected equal fixed (SDF) rates"},
		{10, map[string]string{"x": "y"}, 8, "expected an output port"},
		{-1, nil, 8, "expected ≥ 0"},
	} {
		if err := build(tc.iter, tc.swap, tc.rate); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("iterations %d swap %v rate %d: %v, want %q", tc.iter, tc.swap, tc.rate, err, tc.want)
		}
	}
}
