package spec_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/spec"
)

func TestSwapAndIterations(t *testing.T) {
	src := `name: jacobi
actors:
  src: {out: {o: {type: f32, rate: 64}}, kernel: {go: src}}
  jac:
    in: {x: {type: f32, rate: 64}}
    out: {y: {type: f32, rate: 64}}
    kernel: {go: jac}
    iterations: 100
    swap: {y: x}
  snk: {in: {i: {type: f32, rate: 64}}, kernel: {go: snk}}
channels:
  - {from: src.o, to: jac.x}
  - {from: jac.y, to: snk.i}
`
	g, err := spec.ParseGraph("j.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	a := g.Actor("jac")
	if a.Iterations != 100 || a.Swap["y"] != "x" || len(a.Swap) != 1 {
		t.Fatalf("iterations %d swap %v", a.Iterations, a.Swap)
	}
	for _, tc := range []struct{ edit, old, want string }{
		{"swap: {x: y}", "swap: {y: x}", "expected an output port of jac"},
		{"swap: {y: nope}", "swap: {y: x}", `"nope": expected an input port of jac`},
		{"iterations: 1", "iterations: 100", "swap pairs without iterations"},
		{"iterations: -2", "iterations: 100", "iterations"},
		{"swap: [y, x]", "swap: {y: x}", "swap"},
		{"out: {y: {type: f64, rate: 64}}", "out: {y: {type: f32, rate: 64}}", "token types differ"},
	} {
		bad := strings.Replace(src, tc.old, tc.edit, 1)
		if tc.edit[:3] == "out" {
			bad = strings.Replace(strings.Replace(bad, "snk: {in: {i: {type: f32", "snk: {in: {i: {type: f64", 1), "", "", 1)
		}
		g, err := spec.ParseGraph("j.yaml", []byte(bad))
		if err == nil {
			err = g.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.edit, err, tc.want)
		}
	}
}
