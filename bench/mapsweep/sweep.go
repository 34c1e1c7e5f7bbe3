package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/mapping"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
)

// Config is one sweep.
type Config struct {
	// Graph is the graph file.
	Graph string
	// Backend is "opencl", "cuda" or "" (CPU only).
	Backend graph.ImplKind
	// Devices are the backend's device IDs kernel actors may go to.
	Devices []string
	// Default is a mapping measured as "default" with its variants over G
	// and Replicas (nil: none).
	Default *graph.Mapping
	// Machine is the calibrated model (processors cpu and one per device).
	Machine *machine.Machine
	// Warmup and Iterations are each measured run's iterations; a run
	// the warm-up says would last less than MinTime gets more.
	Warmup, Iterations int64
	MinTime            time.Duration
	// Max bounds the candidates: every mapping of a space up to Max, else
	// Max drawn with Seed.
	Max  int
	Seed uint64
	// G and Replicas are the values tried for kernel actors' work-groups
	// and stateless CPU actors' replicas; WorkItems the work-items of a
	// kernel actor the default mapping does not set.
	G, Replicas []int
	WorkItems   int
	// Workers is the CPU pool (0: GOMAXPROCS).
	Workers int
	// Evaluations and SearchIterations are the mapping search's (as sluice
	// map's --evaluations and --iterations).
	Evaluations      int
	SearchIterations int64
	// Rounds is how many times the picked mapping and the Finalists
	// fastest candidates are measured in all (the sweep's run the first;
	// ≤ 1: once).
	Rounds, Finalists int
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// Candidate is one measured mapping. Throughputs are iterations per
// second: Measured after start-up (every actor past a tenth of its
// firings), MeasuredWhole over the whole run; Predicted is the simulator's
// steady throughput (1 / period) from this run's profile, PredictedWhole
// iterations over the simulated makespan; Model the steady throughput from
// the cost table the mapping search uses.
type Candidate struct {
	Name           string  `json:"name"`
	Mapping        string  `json:"mapping"`
	Iterations     int64   `json:"iterations"`
	Measured       float64 `json:"measured_iter_per_s"`
	MeasuredWhole  float64 `json:"measured_whole_iter_per_s"`
	Predicted      float64 `json:"predicted_iter_per_s"`
	PredictedWhole float64 `json:"predicted_whole_iter_per_s"`
	ErrorPct       float64 `json:"error_pct"`
	Model          float64 `json:"model_iter_per_s,omitempty"`
	ModelErrorPct  float64 `json:"model_error_pct,omitempty"`
	// Profile is the run's mean firing time per actor, ns.
	Profile map[string]float64 `json:"profile_ns,omitempty"`
	// Capacity is the channel capacities (tokens) the run applied over
	// the runtime's defaults (none: the mapping as sluice run runs it).
	Capacity map[string]int `json:"capacity,omitempty"`
	Err      string         `json:"error,omitempty"`
	m        *graph.Mapping
	raw      []byte // the run's profile file (Stats.WriteProfile)
}

// Report is a sweep's outcome.
type Report struct {
	Graph      string   `json:"graph"`
	Backend    string   `json:"backend"`
	Devices    []string `json:"devices"`
	Machine    string   `json:"machine"`
	Iterations int64    `json:"iterations"`
	Workers    int      `json:"workers"`
	SpaceSize  float64  `json:"space_size"`
	Exhaustive bool     `json:"exhaustive"`
	// Costs is the table the mapping search used: actor → processor kind
	// → mean firing time in ns, from the all-cpu and all-device runs.
	Costs map[string]map[string]float64 `json:"costs_ns"`
	// CostsAtG is the CPU actors' costs beside the kernel actors at each G
	// (G → actor → mean firing time in ns) from the default mapping's
	// runs at that G (costsAtG); the search costs a CPU actor from the G
	// nearest its candidate's (sim.Costs.AtG).
	CostsAtG   map[string]map[string]float64 `json:"costs_at_g_ns,omitempty"`
	Candidates []Candidate                   `json:"candidates"`
	Best       string                        `json:"best"`
	BestIterS  float64                       `json:"best_iter_per_s"`
	// Picked is the mapping sluice map's strategies chose, measured as
	// `sluice run --mapping` runs the file it writes (the runtime's channel
	// capacities: mapping files carry none); PickedBy the strategy,
	// PickedPredicted its predicted throughput, Capacity the channel
	// capacities the search assumed (the finalist "picked-capacity" runs
	// with them).
	Picked          Candidate      `json:"picked"`
	PickedBy        string         `json:"picked_by"`
	PickedPredicted float64        `json:"picked_predicted_iter_per_s"`
	Capacity        map[string]int `json:"capacity,omitempty"`
	// Ratio is the picked mapping's measured throughput over the best
	// candidate's.
	Ratio float64 `json:"ratio"`
	// Finals are the pick (first) and the fastest candidates measured
	// Config.Rounds times each; FinalBest the finalist of the highest
	// median and RatioRounds the pick's median over that one's.
	Finals      []Final `json:"finals,omitempty"`
	FinalBest   string  `json:"final_best,omitempty"`
	RatioRounds float64 `json:"ratio_rounds,omitempty"`
	// kern is the kernel times' profile file (the all-device run in
	// device mode callback), nil without kernel actors; kernAt the same
	// at each G.
	kern   []byte
	kernAt map[int][]byte
}

func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// Sweep measures the candidate mappings of cfg.Graph, predicts each, runs
// the mapping search on the cost table of the reference runs and measures
// its pick.
func Sweep(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Iterations <= 0 || cfg.Max <= 0 || cfg.Machine == nil {
		return nil, fmt.Errorf("iterations %d, max %d, machine %v: expected iterations and max > 0 and a machine model", cfg.Iterations, cfg.Max, cfg.Machine != nil)
	}
	g, err := load(cfg.Graph)
	if err != nil {
		return nil, err
	}
	tpl := cfg.Default
	if tpl == nil {
		tpl = &graph.Mapping{Actors: map[string]*graph.Placement{}}
	}
	sp, err := newSpace(g, cfg.Backend, cfg.Devices, cfg.Replicas, cfg.G, cfg.WorkItems, tpl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Graph, err)
	}
	rep := &Report{Graph: cfg.Graph, Backend: string(cfg.Backend), Devices: cfg.Devices, Machine: cfg.Machine.Name,
		Iterations: cfg.Iterations, Workers: cfg.Workers, SpaceSize: sp.size(), Exhaustive: sp.size() <= float64(cfg.Max)}
	refs := []*graph.Mapping{sp.reference(false, 0)}
	if len(cfg.Devices) > 0 && cfg.Backend != "" {
		refs = append(refs, sp.reference(true, defaultG(cfg)))
	}
	if cfg.Default != nil {
		refs = append(refs, variants(cfg, sp)...)
	}
	var kern *sim.Profile
	kernAt := map[int]*sim.Profile{}
	if len(refs) > 1 {
		// The kernel actors' own times: the all-device mapping with one
		// invocation in flight at a time, at the default G and at each
		// other G searched.
		rep.kernAt = map[int][]byte{}
		for _, gv := range append([]int{defaultG(cfg)}, cfg.G...) {
			if kernAt[gv] != nil {
				continue
			}
			m := refs[1]
			if gv != defaultG(cfg) {
				m = sp.reference(true, gv)
			}
			r, err := measure(ctx, cfg.Graph, m, nil, cfg.Workers, cfg.Warmup, cfg.Iterations, cfg.MinTime, runtime.Callback)
			if err != nil {
				return nil, fmt.Errorf("kernel times (all-device at G %d, device mode callback): %w", gv, err)
			}
			kernAt[gv], rep.kernAt[gv] = r.profile, r.raw
			if kern == nil {
				kern, rep.kern = r.profile, r.raw
			}
			cfg.logf("kernel times (all-device, callback): %s", kernelTimes(r.profile))
		}
	}
	kr := kernelRuns{def: kern, at: kernAt}
	all := append(refs, sp.candidates(cfg.Max, cfg.Seed, refs)...)
	for i, m := range all {
		c := cfg.candidate(ctx, m, kr)
		cfg.logf("[%d/%d] %s %s: measured %.0f it/s, predicted %.0f (%+.1f%%) %s", i+1, len(all), c.Name, c.Mapping, c.Measured, c.Predicted, c.ErrorPct, c.Err)
		rep.Candidates = append(rep.Candidates, c)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	rep.Costs = costTable(g, rep.Candidates[:len(refs)], kern, cfg.Machine)
	rep.CostsAtG = costsAtG(cfg, g, rep.Candidates[:len(refs)])
	costs := toCosts(rep.Costs, kern)
	costs.AtG = atGProfiles(rep.CostsAtG, kernAt)
	for i := range rep.Candidates {
		c := &rep.Candidates[i]
		if c.Err == "" {
			if p, err := predict(cfg.Graph, c.m, cfg.Machine, costs, nil, c.Iterations); err == nil {
				c.Model, c.ModelErrorPct = p.steady, pct(p.steady, c.Measured)
			}
		}
		if c.Err == "" && c.Measured > rep.BestIterS {
			rep.Best, rep.BestIterS = c.Name, c.Measured
		}
	}
	if rep.BestIterS == 0 {
		return nil, fmt.Errorf("%s: no candidate mapping ran (first error: %s)", cfg.Graph, rep.Candidates[0].Err)
	}
	if err := cfg.pick(ctx, g, costs, kr, rep); err != nil {
		return rep, err
	}
	return rep, cfg.remeasure(ctx, rep)
}

// candidate measures and predicts one mapping (its kernel actors' costs
// from kr, withKernelTimes); a failure is recorded in Err.
func (cfg *Config) candidate(ctx context.Context, m *graph.Mapping, kr kernelRuns) Candidate {
	c := Candidate{Name: m.Name, Mapping: describe(m), m: m}
	r, err := measure(ctx, cfg.Graph, m, nil, cfg.Workers, cfg.Warmup, cfg.Iterations, cfg.MinTime, "")
	if err != nil {
		c.Err = err.Error()
		return c
	}
	c.Iterations, c.raw = r.iters, r.raw
	c.Measured, c.MeasuredWhole = r.steady, r.whole
	c.Profile = map[string]float64{}
	for a, s := range r.profile.Mean {
		c.Profile[a] = s * 1e9
	}
	p, err := predict(cfg.Graph, m, cfg.Machine, withKernelTimes(r.profile, kr), nil, r.iters)
	if err != nil {
		c.Err = "predict: " + err.Error()
		return c
	}
	c.Predicted, c.PredictedWhole, c.ErrorPct = p.steady, p.whole, pct(p.steady, c.Measured)
	return c
}

func pct(p, m float64) float64 {
	if m == 0 {
		return math.NaN()
	}
	return 100 * (p - m) / m
}

// defaultG is the default mapping's G (its first kernel actor's), else
// the largest of cfg.G.
func defaultG(cfg Config) int {
	if cfg.Default != nil {
		for _, pl := range cfg.Default.Actors {
			if pl.WorkGroups > 0 {
				return pl.WorkGroups
			}
		}
	}
	g := 1
	for _, v := range cfg.G {
		g = max(g, v)
	}
	return g
}

// variants returns the default mapping ("default", its backend-named
// devices resolved to the first device) and its variants: every G of
// cfg.G for its kernel actors with every replica count of cfg.Replicas for
// its stateless CPU actors ("default-G16-r2").
func variants(cfg Config, sp *space) []*graph.Mapping {
	base := &graph.Mapping{Name: "default", Actors: map[string]*graph.Placement{}}
	for _, a := range sp.g.Actors {
		pl := &graph.Placement{Device: "cpu", Replicas: 1}
		if d := cfg.Default.Actors[a.Name]; d != nil {
			cp := *d
			pl = &cp
		}
		if pl.Device == string(cfg.Backend) && len(cfg.Devices) > 0 {
			pl.Device = cfg.Devices[0]
		}
		base.Actors[a.Name] = pl
	}
	out := []*graph.Mapping{base}
	seen := map[string]bool{describe(base): true}
	for _, gv := range cfg.G {
		for _, r := range cfg.Replicas {
			m := &graph.Mapping{Name: fmt.Sprintf("default-G%d-r%d", gv, r), Actors: map[string]*graph.Placement{}}
			for _, a := range sp.g.Actors {
				cp := *base.Actors[a.Name]
				switch {
				case cp.Device != "cpu" && cp.Device != "":
					cp.WorkGroups = gv
				case !a.Stateful:
					cp.Replicas = r
				}
				m.Actors[a.Name] = &cp
			}
			if d := describe(m); !seen[d] {
				seen[d] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// costTable gathers per-kind firing costs (ns): an actor's mean on the
// CPU from the all-device run where that run placed it on the CPU (refs[1]:
// beside the device, where it writes or reads host-staged windows that do
// not stay in its cache as they do in the all-cpu run: the image
// pipeline's source takes three times longer there), else from the all-cpu
// run (refs[0]), else the first reference run that placed it on the CPU;
// and its kernel's time per firing on the device
// ("gpu") from kern, the all-device run with one invocation in flight at a
// time, less the copies of its host-staged ports and the launch spread
// over its G (sim.KernelFiringTime: the simulator charges the copies on
// the link and adds the launch per invocation).
func costTable(g *graph.Graph, refs []Candidate, kern *sim.Profile, mach *machine.Machine) map[string]map[string]float64 {
	t := map[string]map[string]float64{}
	set := func(a, kind string, ns float64) {
		if t[a] == nil {
			t[a] = map[string]float64{}
		}
		if _, ok := t[a][kind]; !ok {
			t[a][kind] = ns
		}
	}
	order := refs
	if len(refs) > 1 {
		order = append([]Candidate{refs[1], refs[0]}, refs[2:]...)
	}
	for _, c := range order {
		if c.Err != "" {
			continue
		}
		for _, a := range g.Actors {
			pl, ns := c.m.Actors[a.Name], c.Profile[a.Name]
			if pl != nil && ns > 0 && (pl.Device == "cpu" || pl.Device == "") {
				set(a.Name, "cpu", ns)
			}
		}
	}
	if kern != nil {
		for a, k := range kern.Kernels {
			if p := mach.Resolve(k.Device); p != nil && p.Kind == "gpu" {
				ft, _ := sim.KernelFiringTime(g, g.Actor(a), kern.Mean[a], k, kern.Kernels, mach, p)
				set(a, "gpu", 1e9*ft)
			}
		}
	}
	return t
}

// costsAtG gathers, per G of cfg.G, the CPU actors' mean firing times
// (ns) in the run of the default mapping at that G with its replicas
// ("default" at its own G, "default-G<G>-r<R>" at the others), as a user
// profiles the mapping they run at each G they consider (sluice run
// --profile at each, then sluice map --profile FILE --profile FILE ...).
// Beside kernel actors a CPU actor's cost depends on their G (the image
// pipeline's per-frame sums cost 8.2–9.1 µs a frame beside G 64 and
// 13.5–22.6 µs beside G 256): one run's costs mislead the search at the
// other G. Nil without a default mapping.
func costsAtG(cfg Config, g *graph.Graph, refs []Candidate) map[string]map[string]float64 {
	var base *Candidate
	for i := range refs {
		if refs[i].Name == "default" && refs[i].Err == "" {
			base = &refs[i]
		}
	}
	if base == nil {
		return nil
	}
	out := map[string]map[string]float64{}
	for _, gv := range cfg.G {
		m := &graph.Mapping{Actors: map[string]*graph.Placement{}}
		for n, pl := range base.m.Actors {
			cp := *pl
			if cp.Device != "cpu" && cp.Device != "" {
				cp.WorkGroups = gv
			}
			m.Actors[n] = &cp
		}
		want := describe(m)
		for _, c := range refs {
			if c.Err != "" || c.Mapping != want {
				continue
			}
			t := map[string]float64{}
			for _, a := range g.Actors {
				if pl := c.m.Actors[a.Name]; pl != nil && (pl.Device == "cpu" || pl.Device == "") && c.Profile[a.Name] > 0 {
					t[a.Name] = c.Profile[a.Name]
				}
			}
			if len(t) > 0 {
				out[strconv.Itoa(gv)] = t
			}
			break
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// atGProfiles is the simulator's per-G profiles (sim.Costs.AtG): the CPU
// actors' costs of a CostsAtG table (nil: none) and the kernel actors'
// own times of the callback runs at each G (only theirs: the CPU actors of
// a run with one invocation in flight wait for it, and cost less than in
// a pipelined run).
func atGProfiles(cpu map[string]map[string]float64, kernAt map[int]*sim.Profile) map[int64]*sim.Profile {
	c := &sim.Costs{}
	for k, m := range cpu {
		gv, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			continue
		}
		p := &sim.Profile{Mean: map[string]float64{}, Kernels: map[string]sim.KernelProfile{}}
		for a, ns := range m {
			p.Mean[a] = ns / 1e9
		}
		c.AddAt(gv, p)
	}
	for _, p := range kernAt {
		k := &sim.Profile{Mean: map[string]float64{}, Kernels: p.Kernels}
		for a := range p.Kernels {
			k.Mean[a] = p.Mean[a]
		}
		c.AddAtG(k) // its CPU actors ran one invocation at a time: not their costs
	}
	return c.AtG
}

// toCosts turns the table into the simulator's costs, what sluice map is
// given: a kernel actor's time on the device from kern, the kernel times'
// profile (a profile entry records the G it was measured at, and the
// simulator scales it to other G by waves of the GPU's threads; the
// table's "gpu" entry is the same time at that G only), everything else
// from the table (what a cost file with `unit: ns` and these entries
// gives). Without kern, the table's "gpu" entries.
func toCosts(t map[string]map[string]float64, kern *sim.Profile) *sim.Costs {
	c := &sim.Costs{Actors: map[string]map[string]sim.Cost{}}
	for a, m := range t {
		c.Actors[a] = map[string]sim.Cost{}
		for k, ns := range m {
			if kern != nil && k == "gpu" {
				if _, ok := kern.Kernels[a]; ok {
					continue
				}
			}
			c.Actors[a][k] = sim.Cost{Seconds: ns / 1e9}
		}
	}
	if kern != nil {
		c.Profile, c.Kernels = map[string]float64{}, map[string]sim.KernelProfile{}
		for a, k := range kern.Kernels {
			c.Profile[a], c.Kernels[a] = kern.Mean[a], k
		}
	}
	return c
}

// WriteCosts writes the table as a cost file (docs/simulate.md, "Costs")
// that `sluice map --costs` and `sluice simulate --costs` read.
func WriteCosts(w io.Writer, t map[string]map[string]float64) error {
	var b strings.Builder
	b.WriteString("# per-kind firing costs measured by bench/mapsweep (all-cpu and all-device runs)\nunit: ns\ncosts:\n")
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		kinds := make([]string, 0, len(t[n]))
		for k := range t[n] {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%s: %.0f", k, t[n][k])
		}
		fmt.Fprintf(&b, "  %q: {%s}\n", n, strings.Join(parts, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pick runs mapping.Map as sluice map --strategy all does (G searched
// over cfg.G, kernel settings from the default mapping, else cfg.WorkItems),
// and measures the runnable mapping it writes.
func (cfg *Config) pick(ctx context.Context, g *graph.Graph, costs *sim.Costs, kr kernelRuns, rep *Report) error {
	res, err := mapping.Map(ctx, mapping.Input{Graph: g, Machine: cfg.Machine, Costs: costs}, mapping.MapOptions{Strategy: "all", Seed: 1,
		Evaluations: cfg.Evaluations, Iterations: cfg.SearchIterations, WorkGroups: cfg.G, WorkItems: cfg.WorkItems, Settings: cfg.Default})
	if err != nil {
		return err
	}
	best, m := res.Best, res.Runnable
	m.Name = "picked"
	rep.PickedBy, rep.PickedPredicted = best.Strategy, best.Throughput
	if best.Strategy == "search" {
		rep.Capacity = best.Capacity
	}
	cfg.logf("sluice map's choice (%s, predicted %.0f it/s): %s", best.Strategy, best.Throughput, describe(m))
	c := Candidate{Name: "picked", Mapping: describe(m), m: m}
	r, err := measure(ctx, cfg.Graph, m, nil, cfg.Workers, cfg.Warmup, cfg.Iterations, cfg.MinTime, "")
	if err != nil {
		return fmt.Errorf("measuring the picked mapping: %w", err)
	}
	c.Measured, c.MeasuredWhole, c.Iterations, c.raw = r.steady, r.whole, r.iters, r.raw
	if p, err := predict(cfg.Graph, m, cfg.Machine, withKernelTimes(r.profile, kr), nil, r.iters); err == nil {
		c.Predicted, c.PredictedWhole, c.ErrorPct = p.steady, p.whole, pct(p.steady, c.Measured)
	}
	if p, err := predict(cfg.Graph, m, cfg.Machine, costs, nil, r.iters); err == nil {
		c.Model, c.ModelErrorPct = p.steady, pct(p.steady, c.Measured)
	}
	rep.Picked, rep.Ratio = c, c.Measured/rep.BestIterS
	return nil
}

// kernelRuns are the kernel actors' own times: def from the callback run
// at the default G, at from those at each G (nil entries: none).
type kernelRuns struct {
	def *sim.Profile
	at  map[int]*sim.Profile
}

// withKernelTimes is the costs of a run's profile with its kernel actors'
// means taken from kr, the profiles of runs with one invocation in flight
// at a time (device mode callback): at the G nearest each kernel actor's
// (sim.Costs.AtG), else kr.def's. A run that enqueues ahead gives each
// kernel actor a share of the device's time, not its own
// (docs/simulate.md, "Kernel actors' costs").
func withKernelTimes(own *sim.Profile, kr kernelRuns) *sim.Costs {
	c := &sim.Costs{Profile: map[string]float64{}, Kernels: map[string]sim.KernelProfile{}}
	for a, v := range own.Mean {
		c.Profile[a] = v
	}
	for a, k := range own.Kernels {
		c.Kernels[a] = k
		if kr.def != nil {
			if kk, ok := kr.def.Kernels[a]; ok {
				c.Profile[a], c.Kernels[a] = kr.def.Mean[a], kk
			}
		}
	}
	c.AtG = atGProfiles(nil, kr.at)
	return c
}

// kernelTimes lists a profile's kernel actors' means (µs per firing) and G.
func kernelTimes(p *sim.Profile) string {
	names := make([]string, 0, len(p.Kernels))
	for a := range p.Kernels {
		names = append(names, a)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, a := range names {
		parts[i] = fmt.Sprintf("%s %.1f µs/firing (G %d)", a, p.Mean[a]*1e6, p.Kernels[a].WorkGroups)
	}
	return strings.Join(parts, ", ")
}
