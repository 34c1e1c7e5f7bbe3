package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

func TestParseCosts(t *testing.T) {
	c, err := ParseCosts("c.yaml", []byte(`unit: cycles
costs:
  src: 3
  blur: {cpu: 2ms, gpu: 200us, gpu0: "3000 cycles", spe: never}
control:
  filter: {if: "!c1"}
  loop: {while: n}
probabilities: {c1: 0.25}
loops: {n: 4}
`))
	if err != nil {
		t.Fatal(err)
	}
	cpu := &machine.Processor{Name: "cpu0", Kind: "cpu", ClockHz: 1e9}
	gpu0 := &machine.Processor{Name: "gpu0", Kind: "gpu", ClockHz: 1.5e9}
	gpu1 := &machine.Processor{Name: "gpu1", Kind: "gpu", ClockHz: 1e9}
	spe := &machine.Processor{Name: "s", Kind: "spe", ClockHz: 1e9}
	blur := &graph.Actor{Name: "blur", Cost: time.Second}
	src := &graph.Actor{Name: "src"}
	other := &graph.Actor{Name: "other", Cost: time.Millisecond}
	for _, tc := range []struct {
		a    *graph.Actor
		p    *machine.Processor
		want float64
		from string
	}{
		{src, cpu, 3e-9, "costs"}, {blur, cpu, 2e-3, "costs"}, {blur, gpu0, 2e-6, "costs"}, {blur, gpu1, 200e-6, "costs"},
		{other, cpu, 1e-3, "graph"},
	} {
		c, from := c.Lookup(tc.a, tc.p)
		if got := c.On(tc.p); from != tc.from || got < tc.want*(1-1e-12) || got > tc.want*(1+1e-12) {
			t.Errorf("%s on %s: %g from %s, want %g from %s", tc.a.Name, tc.p.Name, got, from, tc.want, tc.from)
		}
	}
	if v, _ := c.Lookup(blur, spe); !v.Never {
		t.Error("blur on spe: want never")
	}
	if ct, _ := c.ControlOf(&graph.Actor{Name: "filter"}); ct.If != "c1" || !ct.Invert {
		t.Errorf("control of filter = %+v", ct)
	}
	if c.Probabilities["c1"] != 0.25 || c.Loops["n"] != 4 {
		t.Error("probabilities or loops")
	}
	_, err = ParseCosts("c.yaml", []byte("costs:\n  a: fast\nprobabilities: {c: 2}\nbogus: 1\n"))
	if err == nil || !strings.Contains(err.Error(), "c.yaml:2:6: cost of a") || !strings.Contains(err.Error(), "c.yaml:3:20: probability of c") || !strings.Contains(err.Error(), `unknown key "bogus"`) {
		t.Errorf("errors: %v", err)
	}
}

func TestParseProfile(t *testing.T) {
	p, err := ParseProfile("p.yaml", []byte("graph: g\nactors:\n  a: {mean_ns: 1500, min_ns: 1000, max_ns: 2000, firings: 10}\n  b: {mean_ns: 20}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p["a"] != 1500e-9 || p["b"] != 20e-9 {
		t.Errorf("profile %v", p)
	}
	// The format runtime.Stats.WriteProfile writes.
	p, err = ParseProfile("p.yaml", []byte("# sluice actor profile\ndevice: cpu\nactors:\n  \"scale\":\n    firings: 1000\n    mean_ns: 20113\n    min_ns: 19870\n    max_ns: 40211\n    p50_ns: 20480\n"))
	if err != nil || p["scale"] != 20113e-9 {
		t.Errorf("runtime profile %v %v", p, err)
	}
	p, err = ParseProfile("p.yaml", []byte("a: {mean_ns: 7}\n"))
	if err != nil || p["a"] != 7e-9 {
		t.Errorf("flat profile %v %v", p, err)
	}
	c := &Costs{Profile: p}
	if v, from := c.Lookup(&graph.Actor{Name: "a", Cost: time.Second}, &machine.Processor{ClockHz: 1}); from != "profile" || v.Seconds != 7e-9 {
		t.Errorf("profile lookup %v %s", v, from)
	}
}

// TestLookupBurn: a synthetic actor's declared cost is charged as its busy
// loop lasts (Costs.Burn); another actor's and a cost file's stand.
func TestLookupBurn(t *testing.T) {
	p := &machine.Processor{Name: "cpu", Kind: "cpu"}
	c := &Costs{Burn: &Burn{Extra: 100e-9, Stretch: 0.5, Actors: map[string]bool{"s": true}},
		Actors: map[string]map[string]Cost{"f": {"*": {Seconds: 7e-6}}}}
	syn := &graph.Actor{Name: "s", Cost: 2 * time.Microsecond}
	if got, src := c.Lookup(syn, p); src != "burn" || math.Abs(got.Seconds-3.1e-6) > 1e-12 {
		t.Fatalf("synthetic actor: %v s from %q, expected 2 µs × 1.5 + 100 ns = 3.1 µs from burn", got.Seconds, src)
	}
	real := &graph.Actor{Name: "r", Cost: 2 * time.Microsecond}
	if got, src := c.Lookup(real, p); src != "graph" || got.Seconds != 2e-6 {
		t.Fatalf("actor with code: %v s from %q, expected its declared 2 µs", got.Seconds, src)
	}
	file := &graph.Actor{Name: "f", Cost: 2 * time.Microsecond}
	c.Burn.Actors["f"] = true
	if got, src := c.Lookup(file, p); src != "costs" || got.Seconds != 7e-6 {
		t.Fatalf("actor in the cost file: %v s from %q, expected the file's 7 µs", got.Seconds, src)
	}
}
