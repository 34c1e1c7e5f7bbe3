package spec

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device/scenario"
	"github.com/sluicehq/sluice/graph"
)

// kernel: {elementwise: BODY, param: P} declares an element-wise actor
// (scenario.Elementwise): its OpenCL and CUDA kernels are generated.
func TestElementwiseKey(t *testing.T) {
	g, err := Load("../examples/flowmodel-chain/chain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := g.Actor("damp")
	if a.Attrs[scenario.AttrBody] != "out[i] = in[i] / (1.0f + p * in[i] * in[i]);" || a.Attrs[scenario.AttrParam] != "0.01" || a.Iterations != 3 {
		t.Fatalf("damp: attrs %v, iterations %d", a.Attrs, a.Iterations)
	}
	for _, k := range []graph.ImplKind{graph.ImplOpenCL, graph.ImplCUDA} {
		im, ok := a.Impl(k)
		if src, _ := im.Func.(string); !ok || !strings.Contains(src, "void FIRE()") {
			t.Fatalf("damp: %s implementation %+v: expected a generated FIRE", k, im)
		}
	}
	for _, c := range []struct{ kernel, want string }{
		{`{elementwise: "out[i] = in[i + 1];"}`, `t.yaml:3:29: actor A: kernel: elementwise: actor A: body "out[i] = in[i + 1];": in[i + 1]: an element-wise body reads in[i] and writes out[i] only`},
		{`{opencl: a.cl, param: 2}`, "t.yaml:3:37: actor A: kernel: param: is the parameter of an elementwise: body: expected an elementwise: key"},
		{`{elementwise: "out[i] = in[i];", param: x}`, "actor A: kernel: param: expected a number"},
	} {
		src := "name: t\nactors:\n  A: {kernel: " + c.kernel + ", in: {x: {type: f32, rate: 4}}, out: {y: {type: f32, rate: 4}}}\n"
		_, err := ParseGraph("t.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nexpected %s", c.kernel, err, c.want)
		}
	}
}
