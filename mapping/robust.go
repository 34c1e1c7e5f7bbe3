package mapping

import (
	"maps"
	"math"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
)

// slowCPU is the factor by which the search's finalists' CPU costs are
// raised to tell apart mappings of equal predicted throughput: a CPU
// actor's firing time moves by that much with what runs beside it (the
// image pipeline's per-frame sums took 6.8 µs a frame with 8 or 16
// replicas beside G 64 and 13.7 µs with 4, whose frames waited long
// enough to leave the cache).
const slowCPU = 2

// tieTolerance is how close two predicted periods are taken as equal when
// the finalists are ranked (the model's errors are larger).
const tieTolerance = 0.02

// robustScore is a finalist's predicted period, its period with its CPU
// actors slowCPU times slower, its resources and its spread (score).
type robustScore struct {
	period, slow, res, spread float64
}

// robustBetter orders finalists: the shorter period; within tieTolerance,
// the shorter period with slower CPU actors (the mapping with headroom on
// its CPU stages); then the fewer resources, then the wider spread on
// pool processors (better).
func robustBetter(a, b robustScore) bool {
	if !near(a.period, b.period) {
		return a.period < b.period
	}
	if !near(a.slow, b.slow) {
		return a.slow < b.slow
	}
	if a.res != b.res {
		return a.res < b.res
	}
	return a.spread > b.spread
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= tieTolerance*math.Max(math.Abs(a), math.Abs(b))
}

// slowerCPU returns costs whose every cost on a processor other than a
// GPU is f times c's (cost-file entries, profile means, the per-G
// profiles' CPU actors, the graph's declared costs, a synthetic actor's
// as its busy loop lasts, c.Burn); kernel actors' times and GPU entries
// are c's.
func slowerCPU(c *sim.Costs, g *graph.Graph, m *machine.Machine, f float64) *sim.Costs {
	out := &sim.Costs{}
	if c != nil {
		*out = *c
	}
	scale := func(v sim.Cost) sim.Cost {
		v.Seconds *= f
		v.Cycles = int64(math.Round(float64(v.Cycles) * f))
		return v
	}
	gpu := func(key string) bool {
		if key == "gpu" {
			return true
		}
		p := m.Processor(key)
		return p != nil && p.Kind == "gpu"
	}
	out.Actors = map[string]map[string]sim.Cost{}
	var given map[string]map[string]sim.Cost
	if c != nil {
		given = c.Actors
	}
	for a, byProc := range given {
		out.Actors[a] = map[string]sim.Cost{}
		for k, v := range byProc {
			if !gpu(k) && k != "*" {
				v = scale(v)
			}
			out.Actors[a][k] = v
		}
	}
	if c != nil {
		out.Profile = map[string]float64{}
		for a, v := range c.Profile {
			if _, kernel := c.Kernels[a]; !kernel {
				v *= f
			}
			out.Profile[a] = v
		}
		out.AtG = map[int64]*sim.Profile{}
		for gv, p := range c.AtG {
			q := &sim.Profile{Mean: maps.Clone(p.Mean), Kernels: p.Kernels}
			for a := range q.Mean {
				if _, kernel := p.Kernels[a]; !kernel {
					q.Mean[a] *= f
				}
			}
			out.AtG[gv] = q
		}
	}
	// Declared costs (where no profile mean comes first), and "*"
	// entries, on every processor kind but gpu.
	for _, a := range g.Actors {
		_, profiled := out.Profile[a.Name]
		base, ok := sim.Cost{}, false
		if byProc := out.Actors[a.Name]; byProc != nil {
			base, ok = byProc["*"]
		}
		if !ok && a.Cost > 0 && !profiled {
			base, ok = sim.Cost{Seconds: a.Cost.Seconds()}, true
			if out.Burn != nil && out.Burn.Actors[a.Name] {
				base.Seconds = out.Burn.Time(base.Seconds) // a synthetic actor's busy loop
			}
		}
		if !ok {
			continue
		}
		if out.Actors[a.Name] == nil {
			out.Actors[a.Name] = map[string]sim.Cost{}
		}
		for _, p := range m.Processors {
			if _, set := out.Actors[a.Name][p.Kind]; !set && p.Kind != "gpu" {
				out.Actors[a.Name][p.Kind] = scale(base)
			}
		}
	}
	return out
}
