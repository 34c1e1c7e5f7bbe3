package driver

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/mapping"
	"github.com/sluicehq/sluice/sim"
)

// Machine is a machine model and where it came from.
type Machine struct {
	*machine.Machine
	// From says where the model came from, for reports: "file F",
	// "calibrated model F" (this host's, measured by sluice calibrate) or
	// "N CPU cores with no runtime costs".
	From string
	// Host reports whether the model is this host's calibrated one: a
	// mapping onto it runs here.
	Host bool
}

// LoadMachine reads a machine model file.
func LoadMachine(path string) (*Machine, error) {
	data, err := ReadInput(path, filekind.Machine)
	if err != nil {
		return nil, err
	}
	m, err := machine.Parse(path, data)
	if err != nil {
		return nil, err
	}
	return &Machine{Machine: m, From: "file " + path, Host: m.Name == calibrate.ModelName()}, nil
}

// HostMachine is this host's calibrated model (sluice calibrate caches
// it), or an error saying how to get one.
func HostMachine() (*Machine, error) {
	m, path, err := calibrate.Cached()
	if err != nil {
		return nil, fmt.Errorf("no calibrated model of this host (%v): run sluice calibrate once, or give a machine description such as examples/machines/two-cpus.yaml with --machine", err)
	}
	return &Machine{Machine: m, From: "calibrated model " + path, Host: true}, nil
}

// MachineOrHost is LoadMachine(path) or, when path is "", this host's
// calibrated model, measured now (calibrate.ForHost: 5 to 20 seconds, then
// cached) when it never was; note hears that it is being measured.
func MachineOrHost(ctx context.Context, path string, note func(string)) (*Machine, error) {
	if path != "" {
		return LoadMachine(path)
	}
	if m, err := HostMachine(); err == nil {
		return m, nil
	}
	if note != nil {
		note("note: this host has no calibrated model yet: measuring it now (sluice calibrate; cached for the next commands)")
	}
	m, cache, err := calibrate.ForHost(ctx, calibrate.Options{})
	if err != nil {
		return nil, fmt.Errorf("calibrating this host for its machine model: %w (give a machine description with --machine)", err)
	}
	return &Machine{Machine: m, From: "calibrated model " + cache, Host: true}, nil
}

// CPUMachine is a model of n CPU cores sharing a link that costs nothing,
// with no runtime costs: the workbench's model when this host was never
// calibrated.
func CPUMachine(n int) (*Machine, error) {
	var b strings.Builder
	b.WriteString("name: cpus\nprocessors:\n")
	var names []string
	for i := range max(n, 1) {
		fmt.Fprintf(&b, "  cpu%d: {kind: cpu, clock: 1Hz, io: true}\n", i)
		names = append(names, fmt.Sprintf("cpu%d", i))
	}
	if len(names) > 1 {
		fmt.Fprintf(&b, "interconnects:\n  memory: {elements: [%s], clock: 1Hz, start_latency: 0, start_cost: 0, bandwidth: 0, finish_cost: 0, channels: %d}\n",
			strings.Join(names, ", "), len(names))
	}
	m, err := machine.Parse("cpus.yaml", []byte(b.String()))
	if err != nil {
		return nil, err
	}
	return &Machine{Machine: m, From: fmt.Sprintf("%d CPU cores with no runtime costs (run sluice calibrate for this host's model)", n)}, nil
}

// LoadCosts reads a cost file (costsFile, "" for none) and profiles
// written by sluice run --profile. The first profile gives the profile
// costs; given several (measured with the graph's kernel actors at
// different G), each also gives the CPU actors' costs beside kernel
// actors of its G (sim.Costs.AtG). nil when there are none.
func LoadCosts(costsFile string, profiles []string) (*sim.Costs, error) {
	var costs *sim.Costs
	if costsFile != "" {
		if _, err := ReadInput(costsFile, filekind.Costs); err != nil {
			return nil, err
		}
		c, err := sim.LoadCosts(costsFile)
		if err != nil {
			return nil, err
		}
		costs = c
	}
	for i, file := range profiles {
		prof, err := sim.LoadProfileFull(file)
		if err != nil {
			return nil, err
		}
		if costs == nil {
			costs = &sim.Costs{}
		}
		if i == 0 {
			costs.Profile, costs.Kernels = prof.Mean, prof.Kernels
		}
		if len(profiles) > 1 {
			if prof.G() == 0 {
				return nil, fmt.Errorf("--profile %s: expected kernel actors with their work_groups (G), as sluice run --profile writes them, in each of several profiles: found none", file)
			}
			costs.AddAtG(prof)
		}
	}
	return costs, nil
}

// DefaultIterations is the least number of iterations Predict simulates.
const DefaultIterations = 100

// PredictOptions are a prediction's inputs besides the graph: one machine
// model, the mapping, the costs and the simulation policy.
type PredictOptions struct {
	// Machine is the model (required).
	Machine *Machine
	// Mapping places the actors on the model's processors (nil: HEFT's).
	Mapping *graph.Mapping
	// Costs are the firing costs beside the graph's cost: keys (nil: the
	// declared costs only). The synthetic actors' busy loops are added
	// from the model when the costs give none.
	Costs *sim.Costs
	// Iterations is the number of graph iterations simulated; 0:
	// DefaultIterations, raised to the machine's steady state and
	// simulated again with more while the run ends before a steady state.
	// With Exact, exactly Iterations are simulated.
	Iterations int64
	Exact      bool
	// Seed seeds the statistical model of control variables (0: 1).
	Seed uint64
	// Controls gives control variables (trace-driven mode).
	Controls map[string][]int64
	// Capacity overrides channel capacities (tokens, by channel name).
	Capacity map[string]int
	// NoFuseCPU simulates every CPU actor alone (sluice run --no-fuse-cpu).
	NoFuseCPU bool
	// Trace keeps the timeline in the result, at most TraceLimit spans
	// (sim.Config.TraceLimit: 0 means sim.DefaultTraceLimit, < 0 all).
	Trace      bool
	TraceLimit int64
}

// Prediction is the simulator's prediction of a graph on a machine model.
type Prediction struct {
	Machine *Machine
	// Mapping is the mapping simulated; How says where it came from.
	Mapping *graph.Mapping
	How     string
	// Costs are the costs simulated (nil: the declared ones).
	Costs   *sim.Costs
	Program *sim.Program
	Result  *sim.Result
	// Placement gives each actor's (and fused stage's) processor.
	Placement map[string]string
	// Config is the simulator's configuration, for a second prediction
	// under the same policy.
	Config sim.Config
	// Assumptions says, one sentence per actor with dynamic (KPN) ports,
	// the static rates simulated in their place (mapping.StaticEstimate);
	// the same sentences lead the result's notes, after "assumed: ".
	Assumptions []string
	// simulated is the graph simulated: the prepared graph, or its
	// static estimate when it has dynamic ports.
	simulated *graph.Graph
}

// Throughput is the predicted iterations per second (+Inf when every
// cost is zero).
func (p *Prediction) Throughput() float64 { return p.Result.Throughput }

// Predict simulates a prepared graph on one machine model under one
// policy: HEFT's mapping when none is given; at least DefaultIterations,
// as many as the model's pool needs for a steady state, and more while
// the run ends before one (unless Exact). The same graph and model give
// the same prediction wherever it is shown.
func Predict(ctx context.Context, p *Prepared, o PredictOptions) (*Prediction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.Machine == nil || o.Machine.Machine == nil {
		return nil, fmt.Errorf("predict %s: no machine model", p.Path)
	}
	mach := o.Machine.Machine
	costs := withBurn(o.Costs, o.Machine, p.Synthetic)
	// A graph with dynamic (KPN) ports is simulated as its static
	// estimate, the same one sluice map searches with.
	g, assumed, err := mapping.StaticEstimate(p.Graph)
	if err != nil {
		return nil, fmt.Errorf("predict %s: %w", p.Path, err)
	}
	pr := &Prediction{Machine: o.Machine, Mapping: o.Mapping, Costs: costs, How: "mapping " + mappingName(o.Mapping), Assumptions: assumed, simulated: g}
	if o.Mapping != nil {
		if err := o.Mapping.Check(p.Graph); err != nil {
			return nil, err
		}
	} else {
		m, _, err := mapping.HEFTMapping(mapping.Input{Graph: g, Machine: mach, Costs: costs})
		if err != nil {
			return nil, err
		}
		pr.Mapping, pr.How = m, "heft (no mapping given)"
	}
	prog, err := sim.Build(g, pr.Mapping, mach, costs, sim.Options{Capacity: o.Capacity, NoFuseCPU: o.NoFuseCPU})
	if err != nil {
		return nil, err
	}
	pr.Program = prog
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	cfg := sim.Config{Iterations: o.Iterations, Seed: seed, Trace: o.Trace, TraceLimit: o.TraceLimit}
	if costs != nil {
		cfg.Probabilities, cfg.Loops = costs.Probabilities, costs.Loops
	}
	if o.Controls != nil {
		cfg.Mode, cfg.Controls = sim.TraceDriven, o.Controls
	}
	run := sim.Run
	if !o.Exact {
		cfg.Iterations = max(cfg.Iterations, DefaultIterations, sim.SteadyIterations(prog))
		if cfg.Mode != sim.TraceDriven {
			run = sim.RunUntilSteady
		}
	}
	if pr.Result, err = run(prog, cfg); err != nil {
		return nil, err
	}
	if len(assumed) > 0 {
		notes := make([]string, 0, len(assumed)+len(pr.Result.Notes))
		for _, a := range assumed {
			notes = append(notes, "assumed: "+a)
		}
		pr.Result.Notes = append(notes, pr.Result.Notes...)
	}
	pr.Config = cfg
	pr.Placement = map[string]string{}
	for _, t := range prog.Tasks {
		pr.Placement[t.Name] = mach.Processors[t.Processor].Name
		for _, st := range t.Stages {
			pr.Placement[st] = pr.Placement[t.Name]
		}
	}
	return pr, nil
}

// withBurn is costs with the synthetic actors' busy loops on m (sluice
// run gives these actors busy loops on the clock, which last longer than
// their declared costs), unless costs model them already.
func withBurn(costs *sim.Costs, m *Machine, synthetic []string) *sim.Costs {
	if costs != nil && costs.Burn != nil {
		return costs
	}
	b := calibrate.SyntheticBurn(m.Machine, synthetic)
	if b == nil {
		return costs
	}
	c := &sim.Costs{}
	if costs != nil {
		*c = *costs
	}
	c.Burn = b
	return c
}

// DeclaredThroughput predicts again with the graph's declared costs only
// (the profile's left out), under the same mapping and policy: NaN when
// no actor declares a cost.
func (pr *Prediction) DeclaredThroughput(p *Prepared, o PredictOptions) (float64, error) {
	if !declaresCosts(p.Graph) {
		return math.NaN(), nil
	}
	dc := &sim.Costs{}
	if pr.Costs != nil {
		*dc = *pr.Costs
		dc.Profile, dc.Kernels, dc.AtG = nil, nil, nil
	}
	g := pr.simulated
	if g == nil {
		g = p.Graph
	}
	prog, err := sim.Build(g, pr.Mapping, pr.Machine.Machine, dc, sim.Options{Capacity: o.Capacity, NoFuseCPU: o.NoFuseCPU})
	if err != nil {
		return 0, err
	}
	cfg := pr.Config
	cfg.Trace = false
	r, err := sim.Run(prog, cfg)
	if err != nil {
		return 0, fmt.Errorf("prediction from the declared costs: %w", err)
	}
	return r.Throughput, nil
}

// declaresCosts reports whether some actor of g declares a cost.
func declaresCosts(g *graph.Graph) bool {
	for _, a := range g.Actors {
		if a.Cost > 0 {
			return true
		}
	}
	return false
}

func mappingName(m *graph.Mapping) string {
	if m == nil {
		return ""
	}
	if m.Origin != "" {
		return "file " + m.Origin
	}
	return m.Name
}
