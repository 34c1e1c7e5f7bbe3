package mapping

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
	"github.com/sluicehq/sluice/spec"
)

// The documented example: pipeline2 on two-cpus has period 5.
func TestPipeline2Example(t *testing.T) {
	g, err := spec.Load("../examples/pipeline2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := machine.Load("../examples/machines/two-cpus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mp, _, err := HEFTMapping(Input{Graph: g, Machine: m})
	if err != nil {
		t.Fatal(err)
	}
	p, err := sim.Build(g, mp, m, nil, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sim.Run(p, sim.Config{Iterations: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.Period != 5 || r.Latency != 8 || r.Throughput != 0.2 {
		t.Errorf("period %g latency %g throughput %g: want 5, 8, 0.2", r.Period, r.Latency, r.Throughput)
	}
}

// Every example graph with static rates simulates on every example machine.
func TestExamplesSimulate(t *testing.T) {
	machines, _ := filepath.Glob("../examples/machines/*.yaml")
	for _, gf := range []string{"../examples/pipeline2.yaml", "../examples/cd2dat.yaml", "../examples/feedback.yaml"} {
		g, err := spec.Load(gf)
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range machines {
			m, err := machine.Load(mf)
			if err != nil {
				t.Fatal(err)
			}
			f, err := HEFTFound(Input{Graph: g, Machine: m}, 20)
			if err != nil {
				t.Errorf("%s on %s: %v", gf, mf, err)
				continue
			}
			if !(f.Period > 0) || math.IsInf(f.Period, 0) {
				t.Errorf("%s on %s: period %g", gf, mf, f.Period)
			}
		}
	}
}
