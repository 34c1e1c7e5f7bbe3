package mapping

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
)

// Input is what the strategies map: a graph onto a machine with costs.
type Input struct {
	// Graph is the program; composites are flattened.
	Graph *graph.Graph
	// Machine is the target.
	Machine *machine.Machine
	// Costs give per-processor firing costs (nil: graph.Actor.Cost).
	Costs *sim.Costs
	// Fixed pins actors to devices (a user's partial mapping); its replica
	// counts are kept too.
	Fixed *graph.Mapping
}

// Runnable reports whether actor a may run on processor p: p can do the
// actor's I/O, its cost there is not "never", and either the cost file
// gives a cost for p (by name or kind) or the actor has an implementation
// for p's kind (cpu: go or builtin; gpu: opencl or cuda; other kinds and
// actors without implementations: any).
func Runnable(a *graph.Actor, p *machine.Processor, costs *sim.Costs) bool {
	if a.IO && !p.HasIO {
		return false
	}
	c, src := costs.Lookup(a, p)
	if c.Never {
		return false
	}
	if src == "costs" {
		if m := costs.Actors[a.Name]; m != nil {
			if _, ok := m[p.Name]; ok {
				return true
			}
			if _, ok := m[p.Kind]; ok {
				return true
			}
		}
	}
	if len(a.Impls) == 0 {
		return true
	}
	for _, im := range a.Impls {
		switch p.Kind {
		case "cpu":
			if im.Kind == graph.ImplGo || im.Kind == graph.ImplBuiltin {
				return true
			}
		case "gpu":
			if im.Kind == graph.ImplOpenCL || im.Kind == graph.ImplCUDA {
				return true
			}
		default:
			return true
		}
	}
	return false
}

type prepared struct {
	g       *graph.Graph
	rv      *analysis.Repetitions
	allowed [][]int // actor → processor indices it may run on
}

func prepare(in Input) (*prepared, error) {
	if in.Graph == nil || in.Machine == nil {
		return nil, errors.New("mapping: nil graph or machine")
	}
	g := in.Graph
	if g.HasComposites() {
		f, err := g.Flatten()
		if err != nil {
			return nil, fmt.Errorf("mapping: %w", err)
		}
		g = f
	}
	rv, err := analysis.RepetitionVector(g)
	if err != nil {
		return nil, fmt.Errorf("mapping: %w", err)
	}
	pr := &prepared{g: g, rv: rv}
	for _, a := range g.Actors {
		var ok []int
		if in.Fixed != nil && in.Fixed.Actors[a.Name] != nil && in.Fixed.Actors[a.Name].Device != "" {
			p := in.Machine.Resolve(in.Fixed.Actors[a.Name].Device)
			if p == nil {
				return nil, fmt.Errorf("mapping: %s is pinned to %q, which is no processor of machine %s", a.Name, in.Fixed.Actors[a.Name].Device, in.Machine.Name)
			}
			ok = []int{in.Machine.ProcessorIndex(p.Name)}
		} else {
			for i, p := range in.Machine.Processors {
				if Runnable(a, p, in.Costs) {
					ok = append(ok, i)
				}
			}
		}
		if len(ok) == 0 {
			return nil, nowhere(a, in.Machine, in.Costs)
		}
		pr.allowed = append(pr.allowed, ok)
	}
	return pr, nil
}

// HEFTMapping maps the graph with HEFT on one iteration: each actor is a
// task costing its firings per iteration × its firing cost on each
// processor; each channel without initial tokens is an edge moving one
// iteration's tokens, costing the route latency between the two
// processors (machine.RouteLatency); channels with initial tokens (delays)
// carry the previous iteration's data and are left out. Ties between
// processors go to the less loaded one, which spreads a pipeline over
// identical processors. Pinned actors (Input.Fixed) stay where they are.
func HEFTMapping(in Input) (*graph.Mapping, *Schedule, error) {
	pr, err := prepare(in)
	if err != nil {
		return nil, nil, err
	}
	g, m := pr.g, in.Machine
	idx := map[*graph.Actor]int{}
	p := &Problem{Procs: procNames(m), Load: true}
	for i, a := range g.Actors {
		idx[a] = i
		p.Tasks = append(p.Tasks, a.Name)
		row := make([]float64, len(m.Processors))
		for q := range row {
			row[q] = math.Inf(1)
		}
		n := float64(pr.rv.Firings[a.Name])
		for _, q := range pr.allowed[i] {
			c, _ := in.Costs.Lookup(a, m.Processors[q])
			row[q] = n * c.On(m.Processors[q])
		}
		p.Cost = append(p.Cost, row)
	}
	for _, c := range g.Channels {
		if c.Initial > 0 || c.From.Actor == c.To.Actor {
			continue
		}
		a := c.From.Actor
		per := pr.rv.Firings[a.Name] / int64(max(1, c.From.Rate.Phases())) * int64(c.From.Rate.Sum())
		p.Edges = append(p.Edges, Edge{From: idx[a], To: idx[c.To.Actor], Bytes: per * int64(max(1, c.From.Type.Size))})
	}
	routes := make([][][]machine.Hop, len(m.Processors))
	routeOK := make([][]bool, len(m.Processors))
	for a := range m.Processors {
		routes[a] = make([][]machine.Hop, len(m.Processors))
		routeOK[a] = make([]bool, len(m.Processors))
		for b := range m.Processors {
			h, err := m.Route(m.Processors[a].Name, m.Processors[b].Name)
			routes[a][b], routeOK[a][b] = h, err == nil
		}
	}
	p.Comm = func(e Edge, a, b int) float64 {
		if !routeOK[a][b] {
			return math.Inf(1)
		}
		return machine.RouteLatency(routes[a][b], e.Bytes)
	}
	s, err := HEFT(p)
	if err != nil {
		return nil, nil, err
	}
	mp := &graph.Mapping{Name: g.Name + "-heft", Actors: map[string]*graph.Placement{}}
	for i, a := range g.Actors {
		reps := 1
		if in.Fixed != nil && in.Fixed.Actors[a.Name] != nil {
			reps = max(1, in.Fixed.Actors[a.Name].Replicas)
		}
		mp.Actors[a.Name] = place(m.Processors[s.Proc[i]], reps, 0, template(in, nil, a.Name))
	}
	return mp, s, nil
}

func procNames(m *machine.Machine) []string {
	s := make([]string, len(m.Processors))
	for i, p := range m.Processors {
		s[i] = p.Name
	}
	return s
}

// Evaluate simulates a mapping with channel capacities (nil: the graph's
// or the simulator's defaults) for the given iterations in the statistical
// mode with seed 1.
func Evaluate(in Input, m *graph.Mapping, capacity map[string]int, iterations int64) (*sim.Result, error) {
	prog, err := sim.Build(in.Graph, m, in.Machine, in.Costs, sim.Options{Capacity: capacity})
	if err != nil {
		return nil, err
	}
	cfg := sim.Config{Iterations: iterations, Seed: 1}
	if in.Costs != nil {
		cfg.Probabilities, cfg.Loops = in.Costs.Probabilities, in.Costs.Loops
	}
	return sim.Run(prog, cfg)
}

// evaluateSteady is Evaluate for at least sim.SteadyIterations of the
// mapping's program: on a pool processor iterations complete in bursts
// (rounds), and a period taken over the middle half of fewer iterations
// may hold one burst or none (a period of 0, or far too short). A run
// that ends before its steady state (sim.Result.Transient) is simulated
// again with 4 times the iterations (sim.RunUntilSteady).
func evaluateSteady(in Input, m *graph.Mapping, capacity map[string]int, iterations int64) (*sim.Result, error) {
	prog, err := sim.Build(in.Graph, m, in.Machine, in.Costs, sim.Options{Capacity: capacity})
	if err != nil {
		return nil, err
	}
	cfg := sim.Config{Iterations: max(iterations, sim.SteadyIterations(prog)), Seed: 1}
	if in.Costs != nil {
		cfg.Probabilities, cfg.Loops = in.Costs.Probabilities, in.Costs.Loops
	}
	return sim.RunUntilSteady(prog, cfg)
}

// steadyInvocations is how many invocations of the largest G the search
// simulates at least. With 8 (a window of 4), the mixed graph with a
// kernel actor at G 256 simulated at 33.7k iterations/s over 2 260
// iterations and at 19.2k over 2 048 and 4 096.
const steadyInvocations = 32

// SearchOptions tune Search.
type SearchOptions struct {
	// Seed seeds the search (same seed, same answer).
	Seed uint64
	// Evaluations is the number of candidate mappings simulated (default 300).
	Evaluations int
	// Iterations is the number of graph iterations per simulation (default 64).
	Iterations int64
	// Start is the first candidate (default: HEFT's mapping).
	Start *graph.Mapping
	// MaxCapacityScale bounds capacities at base × 2^k (default k = 3).
	MaxCapacityScale int
	// FixedCapacities keeps every channel at its base capacity (the
	// graph's, else the runtime's default for the candidate): a mapping
	// file carries no capacities, so `sluice run --mapping` runs the
	// search's pick with those. In the model the image pipeline's pick
	// with raised capacities ran at 674k frames/s and at 478k without.
	FixedCapacities bool
	// WorkGroups lists the values of G (firings per kernel invocation,
	// graph.Placement.WorkGroups) the search may give an actor it places on
	// a gpu processor; nil keeps the G of Start (or of Input.Fixed) and
	// leaves the others at the runtime's default.
	WorkGroups []int
	// Settings and WorkItems give the work-items and distribution of the
	// actors the search places on gpu processors, as the runnable mapping
	// will run them (MapOptions.Settings, RunnableOptions.WorkItems): the
	// simulator sizes an invocation's threads, and so the invocations in
	// flight and their waves, from them. Input.Fixed's and Start's
	// placements come first.
	Settings  *graph.Mapping
	WorkItems int
}

// Found is a mapping found by a strategy, with its predicted performance.
type Found struct {
	// Strategy is "heft" or "search".
	Strategy string
	// Mapping places every actor.
	Mapping *graph.Mapping
	// Capacity gives the channel capacities in tokens the search raised
	// above the defaults (search only; channels absent keep theirs).
	Capacity map[string]int
	// Throughput (iterations per second) and Period (seconds) predicted by
	// the simulator.
	Throughput, Period float64
	// Evaluations is the number of simulations the strategy ran.
	Evaluations int
}

type state struct {
	proc []int
	reps []int
	caps []int // exponent: capacity = base << caps[c]
	wg   []int // work-groups (G) on a gpu processor; 0: the template's
}

func (s state) key() string {
	var b strings.Builder
	for _, v := range s.proc {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, v := range s.reps {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, v := range s.caps {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, v := range s.wg {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(',')
	}
	return b.String()
}

func (s state) clone() state {
	return state{append([]int(nil), s.proc...), append([]int(nil), s.reps...), append([]int(nil), s.caps...), append([]int(nil), s.wg...)}
}

// template returns the placement whose kernel settings (implementation,
// G, work-items, distribution) an actor keeps: Input.Fixed's, else the
// start mapping's (nil when neither places it).
func template(in Input, start *graph.Mapping, name string) *graph.Placement {
	if in.Fixed != nil && in.Fixed.Actors[name] != nil {
		return in.Fixed.Actors[name]
	}
	if start != nil {
		return start.Actors[name]
	}
	return nil
}

// place builds an actor's placement on processor p: replicas on a CPU,
// G (wg, else the template's), work-items and distribution on a gpu
// processor, the template's implementation and priority where they fit
// p's kind.
func place(p *machine.Processor, reps, wg int, tpl *graph.Placement) *graph.Placement {
	pl := &graph.Placement{Device: p.Name, Replicas: reps}
	if tpl == nil {
		if p.Kind == "gpu" && wg > 0 {
			pl.WorkGroups = wg
		}
		return pl
	}
	pl.Priority = tpl.Priority
	gpuImpl := tpl.Impl == graph.ImplOpenCL || tpl.Impl == graph.ImplCUDA
	if p.Kind != "gpu" {
		if !gpuImpl {
			pl.Impl = tpl.Impl
		}
		return pl
	}
	if tpl.Impl == "" || gpuImpl {
		pl.Impl = tpl.Impl
	}
	pl.WorkGroups, pl.WorkItems, pl.Distribution = tpl.WorkGroups, tpl.WorkItems, tpl.Distribution
	if wg > 0 {
		pl.WorkGroups = wg
	}
	return pl
}

// kernelSettings gives each placement of m on a gpu processor that has no
// work-items the ones it will run with, as ForRuntime does (see
// kernelThreads; settings pins them). The simulator sizes an
// invocation's threads from them: without, it would see neither the
// GPU's occupancy nor an invocation's waves, and predict another mapping
// than the one written.
func kernelSettings(mach *machine.Machine, m, settings *graph.Mapping, workItems int) {
	for name, pl := range m.Actors {
		p := mach.Resolve(pl.Device)
		if p == nil || p.Kind != "gpu" || pl.WorkItems > 0 {
			continue
		}
		backend, _, _ := strings.Cut(mach.DeviceID(p), ":")
		kind := graph.ImplKind(backend)
		var pin *graph.Placement
		if settings != nil {
			pin = settings.Actors[name]
		}
		kernelThreads(pl, pin, kind, workItems)
		if pl.Impl == "" && pin != nil && pin.Impl == kind {
			pl.Impl = kind
		}
	}
}

// steadyIterations raises n to cover steadyInvocations invocations of
// the largest G of the mapping: the period is measured over the middle
// half of the run, between two iterations' completions, and a batched
// kernel actor completes its G iterations at once: a window of few
// invocations counts one more or less depending on where its ends fall.
func steadyIterations(m *graph.Mapping, rv *analysis.Repetitions, n int64) int64 {
	for name, pl := range m.Actors {
		if pl.WorkGroups > 1 {
			f := max(1, rv.Firings[name])
			n = max(n, (steadyInvocations*int64(pl.WorkGroups)+f-1)/f)
		}
	}
	return n
}

// scaledCapacities returns the capacities of the channels whose exponent
// in exp (graph channel order) is above 0: the capacity the simulator
// gives the channel under mapping mp (the graph's, else the runtime's
// default for the mapping: batched kernel actors and pooled teams get
// more) times 2^exp. Channels at exponent 0 keep that default (absent
// from the map).
func scaledCapacities(in Input, mp *graph.Mapping, exp []int) (map[string]int, error) {
	caps := map[string]int{}
	if !slices.ContainsFunc(exp, func(k int) bool { return k > 0 }) {
		return caps, nil
	}
	prog, err := sim.Build(in.Graph, mp, in.Machine, in.Costs, sim.Options{})
	if err != nil {
		return nil, err
	}
	base := map[string]int64{}
	for _, st := range prog.Streams {
		base[st.Name] = st.ProducerQueue
	}
	g := in.Graph
	if g.HasComposites() {
		if g, err = g.Flatten(); err != nil {
			return nil, err
		}
	}
	for i, c := range g.Channels {
		if i < len(exp) && exp[i] > 0 {
			caps[c.Name] = int(base[c.Name]) << exp[i]
		}
	}
	return caps, nil
}

func contains(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// HEFTFound runs HEFTMapping and simulates its mapping for the prediction.
func HEFTFound(in Input, iterations int64) (*Found, error) {
	mp, _, err := HEFTMapping(in)
	if err != nil {
		return nil, err
	}
	if iterations <= 0 {
		iterations = 64
	}
	pr, err := prepare(in)
	if err != nil {
		return nil, err
	}
	r, err := evaluateSteady(in, mp, nil, steadyIterations(mp, pr.rv, iterations))
	if err != nil {
		return nil, fmt.Errorf("mapping: simulating HEFT's mapping: %w", err)
	}
	return &Found{Strategy: "heft", Mapping: mp, Period: r.Period, Throughput: r.Throughput, Evaluations: 1}, nil
}

// WriteMapping writes a mapping in the YAML format spec.LoadMapping reads:
//
//	name: ...
//	doc: ...
//	mapping:
//	  actor: {device: cpu0, replicas: 2}
//
// Actors are sorted by name; replicas are written when above 1, priority,
// the implementation, work-groups, work-items and distribution when set.
// doc (one line) may say how the mapping was found.
func WriteMapping(w io.Writer, m *graph.Mapping, doc string) error {
	var b strings.Builder
	if m.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", strconv.Quote(m.Name))
	}
	if doc != "" {
		fmt.Fprintf(&b, "doc: %s\n", strconv.Quote(doc))
	}
	if m.Machine != "" {
		fmt.Fprintf(&b, "machine: %s\n", strconv.Quote(m.Machine))
	}
	b.WriteString("mapping:\n")
	names := make([]string, 0, len(m.Actors))
	for n := range m.Actors {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pl := m.Actors[n]
		fmt.Fprintf(&b, "  %s: {device: %s", strconv.Quote(n), strconv.Quote(pl.Device))
		if pl.Replicas > 1 {
			fmt.Fprintf(&b, ", replicas: %d", pl.Replicas)
		}
		if pl.Priority != 0 {
			fmt.Fprintf(&b, ", priority: %d", pl.Priority)
		}
		if pl.Impl != "" {
			fmt.Fprintf(&b, ", impl: %s", pl.Impl)
		}
		if pl.WorkGroups > 0 {
			fmt.Fprintf(&b, ", work-groups: %d", pl.WorkGroups)
		}
		if pl.WorkItems > 0 {
			fmt.Fprintf(&b, ", work-items: %d", pl.WorkItems)
		}
		if len(pl.Distribution) > 0 {
			ports := make([]string, 0, len(pl.Distribution))
			for p := range pl.Distribution {
				ports = append(ports, p)
			}
			sort.Strings(ports)
			for i, p := range ports {
				ports[i] = fmt.Sprintf("%s: %s", strconv.Quote(p), pl.Distribution[p])
			}
			fmt.Fprintf(&b, ", distribution: {%s}", strings.Join(ports, ", "))
		}
		b.WriteString("}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
