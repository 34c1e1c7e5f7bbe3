package spec

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

const ringYAML = `name: ring
actors:
  a:
    in:  {x: {type: f32, rate: 2}, fb: {type: f32, rate: 2}}
    out: {y: {type: f32, rate: 2}}
  b:
    in:  {x: {type: f32, rate: 2}}
    out: {y: {type: f32, rate: 2}, fb: {type: f32, rate: 2}}
inputs: {x: a.x}
outputs: {y: b.y}
channels:
  - {from: a.y, to: b.x}
  - {from: b.fb, to: a.fb}
`

func TestParsePipeline(t *testing.T) {
	pl, err := ParsePipeline("ring.yaml", []byte(ringYAML+`pipeline:
  ports:
    a.fb: {role: initonce, every: 3}
    b.y: {every: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	fb := pl.Graph.Actor("a").Port("fb")
	if r := pl.RoleOf(fb); r.Role != graph.InitOnce || r.Every != 3 || r.Origin != "ring.yaml:16:5" {
		t.Errorf("a.fb: %+v", r)
	}
	if r := pl.RoleOf(pl.Graph.Actor("b").Port("y")); r.Role != graph.Exit || r.Every != 2 {
		t.Errorf("b.y: %+v", r)
	}
	if c := pl.Graph.ChannelsOf(fb)[0]; c.Initial != 2 {
		t.Errorf("initonce channel holds %d initial tokens, want 2 (one firing)", c.Initial)
	}
	pl, err = ParsePipeline("ring.yaml", []byte(ringYAML+"pipeline:\n  ports:\n    a.fb: {role: initonce}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := pl.RoleOf(fb0(pl)); r.Role != graph.InitOnce || r.Every != 0 {
		t.Errorf("a.fb without a limit: %+v, want initonce once (every 0)", r)
	}
	if !HasPipeline([]byte(ringYAML+"pipeline: {}\n")) || HasPipeline([]byte(ringYAML)) {
		t.Error("HasPipeline is wrong")
	}
}

// ParseGraphFile reads the graph and its pipeline in one parse: no
// pipeline without a pipeline: section, the same roles as ParsePipeline
// with one, and the section's errors at their positions.
func TestParseGraphFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, pl, err := ParseGraphFile(ctx, "ring.yaml", []byte(ringYAML), Options{})
	if err != nil || g == nil || pl != nil {
		t.Fatalf("without a pipeline section: graph %v, pipeline %v, error %v: expected a graph and no pipeline", g != nil, pl, err)
	}
	data := []byte(ringYAML + "pipeline:\n  ports:\n    a.fb: {role: initonce, every: 3}\n")
	g, pl, err = ParseGraphFile(ctx, "ring.yaml", data, Options{})
	if err != nil || pl == nil || pl.Graph != g {
		t.Fatalf("with a pipeline section: pipeline %v, error %v: expected the graph's pipeline", pl, err)
	}
	want, err := ParsePipeline("ring.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	got, exp := pl.RoleOf(g.Actor("a").Port("fb")), want.RoleOf(want.Graph.Actor("a").Port("fb"))
	if got != exp || got.Role != graph.InitOnce || got.Every != 3 {
		t.Errorf("a.fb: %+v, ParsePipeline's %+v: expected initonce every 3 from both", got, exp)
	}
	_, _, err = ParseGraphFile(ctx, "ring.yaml", []byte(ringYAML+"pipeline:\n  ports:\n    a.fb: {rol: exit}\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), `ring.yaml:16:12: pipeline: ports.a.fb: unknown key "rol"`) {
		t.Errorf("a misspelt key in the pipeline section: %v", err)
	}
}

func TestParsePipelineErrors(t *testing.T) {
	cases := map[string]string{
		"    a.fb: {role: initonse}\n":    `ring.yaml:16:18: pipeline: ports.a.fb: role "initonse": expected entrance, exit, initonce or intermediate (did you mean "initonce"?)`,
		"    a.fb: {every: -1}\n":         "ring.yaml:16:19: pipeline: ports.a.fb: every: -1 out of range",
		"    a.fb: {rol: exit}\n":         `ring.yaml:16:12: pipeline: ports.a.fb: unknown key "rol"`,
		"    a.y: {role: initonce}\n":     "ring.yaml:16:5: pipeline port a.y has role initonce but is an output port",
		"    b.x: {role: exit}\n":         "ring.yaml:16:5: pipeline port b.x has role exit but is an input port",
		"    a.x: {role: intermediate}\n": "ring.yaml:16:5: pipeline port a.x has role intermediate but no channel joins it",
	}
	for tail, want := range cases {
		_, err := ParsePipeline("ring.yaml", []byte(ringYAML+"pipeline:\n  ports:\n"+tail))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", tail, err, want)
		}
	}
}

func fb0(pl *graph.Pipeline) *graph.Port { return pl.Graph.Actor("a").Port("fb") }
