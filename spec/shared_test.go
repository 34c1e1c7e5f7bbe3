package spec_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

func TestSharedYAML(t *testing.T) {
	src := base + `shared:
  threshold: {type: f32, init: 0.5, mode: sync}
  count: {type: i32, mode: async}
`
	g, err := spec.ParseGraph("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	th, n := g.SharedNamed("threshold"), g.SharedNamed("count")
	if th == nil || th.Type.Name != "f32" || th.Mode != graph.SharedSync || string(th.Init) != "\x00\x00\x00\x3f" {
		t.Errorf("threshold = %+v", th)
	}
	if n == nil || n.Mode != graph.SharedAsync || n.Init != nil || n.Origin != "t.yaml:9:3" {
		t.Errorf("count = %+v", n)
	}
	for _, c := range []struct{ yaml, want string }{
		{"  x: {type: f32, mode: later}\n", `t.yaml:8:24: shared variable x: mode: "later": expected sync or async`},
		{"  x: {init: 1}\n", `t.yaml:8:6: shared variable x: expected a type: key`},
		{"  x: {type: f32, init: [1, 2]}\n", `t.yaml:8:24: shared variable x: init: 2 values: expected one f32 value`},
		{"  x: {type: f32}\n  x: {type: f32}\n", `t.yaml:9:3: shared: duplicate key "x" (first at line 8, column 3)`},
	} {
		_, err := spec.ParseGraph("t.yaml", []byte(base+"shared:\n"+c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.yaml, err, c.want)
		}
	}
}
