package spec_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

func TestStateYAML(t *testing.T) {
	with := func(state string) string {
		return strings.Replace(base, "B: {in: {i: {type: f32, rate: 1}}}", "B: {in: {i: {type: f32, rate: 1}}, state: "+state+"}", 1)
	}
	g, err := spec.ParseGraph("t.yaml", []byte(with("{type: i64, init: 7, lifetime: [initializestate, copyoutstate, finalize]}")))
	if err != nil {
		t.Fatal(err)
	}
	d := g.Actor("B").StateDecl
	if d == nil || d.Size != 8 || d.Init[0] != 7 || d.Lifetime != graph.InitializeState|graph.CopyOutState|graph.FinalizeState {
		t.Fatalf("state %+v", d)
	}
	for _, c := range []struct{ state, want string }{
		{"{type: i64, lifetime: [forever]}", `t.yaml:4:68: actor B: state: lifetime "forever": expected initializestate, copyinstate, copyoutstate or finalize`},
		{"{type: i64, lifetime: [initializestate]}", `actor B: state: initializestate needs an init: value`},
		{"{type: i64, init: 1}", `actor B: state: init: given without initializestate in lifetime`},
		{"{init: 1}", `actor B: state: expected a type: key`},
		{"{type: i64, init: 1, lifetime: [initializestate, copyinstate]}", `state is both initialized and copied in`},
	} {
		if _, err := spec.ParseGraph("t.yaml", []byte(with(c.state))); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.state, err, c.want)
		}
	}
}
