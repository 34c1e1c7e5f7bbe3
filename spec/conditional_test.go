package spec_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

const condYAML = `name: c
actors:
  src: {out: {o: {type: f32, rate: 4}}, kernel: {go: src}}
  sel: {out: {o: {type: i32, rate: 1}}, kernel: {go: sel}}
  route:
    pattern: conditional
    control: i32
    in: {x: {type: f32, rate: 4}}
    out: {y: {type: f32, rate: 4}}
    branches:
      - actors:
          f: {in: {i: {type: f32, rate: 4}}, out: {o: {type: f32, rate: 4}}, kernel: {go: f}}
        inputs: {x: f.i}
        outputs: {y: f.o}
      - actors:
          h: {in: {i: {type: f32, rate: 2}}, out: {o: {type: f32, rate: 2}}, kernel: {go: h}}
        inputs: {x: h.i}
        outputs: {y: h.o}
  sink: {in: {i: {type: f32, rate: 4}}, kernel: {go: sink}}
channels:
  - {from: src.o, to: route.x}
  - {from: sel.o, to: route.ctl}
  - {from: route.y, to: sink.i}
`

func TestConditionalYAML(t *testing.T) {
	g, err := spec.ParseGraph("c.yaml", []byte(condYAML))
	if err != nil {
		t.Fatal(err)
	}
	a := g.Actor("route")
	if a.Pattern == nil || len(a.Pattern.Branches) != 2 {
		t.Fatalf("route is not a 2-branch pattern: %+v", a)
	}
	if p := a.Port(graph.ControlPort); p == nil || p.Type.Name != "i32" {
		t.Fatalf("control port %+v, want an i32 input", p)
	}
	per, err := analysis.BranchFirings(a)
	if err != nil {
		t.Fatal(err)
	}
	if per[0]["f"] != 1 || per[1]["h"] != 2 {
		t.Errorf("per-branch firings %v, want f 1 and h 2", per)
	}
}

func TestConditionalYAMLErrors(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"unknown pattern", "pattern: conditional", "pattern: loop",
			`c.yaml:6:14: actor route: pattern: unknown pattern "loop": expected conditional`},
		{"float control", "control: i32", "control: f32",
			`c.yaml:7:14: actor route: control: type f32: expected an integer type (u8 for a boolean)`},
		{"no branches", "    branches:\n", "    branchez:\n",
			`c.yaml:10:5: actor route: unknown key "branchez" (did you mean "branches"?)`},
		{"control without pattern", "    pattern: conditional\n", "    doc: x\n",
			`c.yaml:7:5: actor route: control: belongs to a conditional pattern: expected pattern: conditional`},
		{"unbound port", "outputs: {y: h.o}", "outputs: {z: h.o}",
			`route/branch[1]: port route.y is not bound: expected a graph output "y"`},
		{"rate", "h: {in: {i: {type: f32, rate: 2}}", "h: {in: {i: {type: f32, rate: 3}}",
			""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(condYAML, c.from, c.to, 1)
			if src == condYAML {
				t.Fatalf("case does not change the spec")
			}
			g, err := spec.ParseGraph("c.yaml", []byte(src))
			if c.want == "" {
				// Parses; the rate mismatch is the analysis's to report.
				if err != nil {
					t.Fatal(err)
				}
				r := analysis.Check(g, analysis.CheckOptions{})
				if !strings.Contains(strings.Join(r.Errors, "\n"), "route/branch[1]/h.i: one branch iteration moves 3 tokens") {
					t.Fatalf("check errors %q, want a violation in route/branch[1]/h.i", r.Errors)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
