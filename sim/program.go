package sim

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/namelist"
	"github.com/sluicehq/sluice/machine"
)

// Stream is a point-to-point stream of the program model (seed 004,
// Figure 20a): a channel of the graph.
type Stream struct {
	// Name is the channel's name.
	Name string
	// ElemSize is the size of one element (token) in bytes.
	ElemSize int64
	// ProducerQueue and ConsumerQueue are the elements the producer's and
	// the consumer's buffers hold. A stream between firings on the same
	// processor has one shared buffer of ConsumerQueue elements.
	ProducerQueue, ConsumerQueue int64
	// PreQueue is the number of elements queued before execution begins
	// (the channel's initial tokens); they start in the consumer's buffer.
	PreQueue int64
	// Producer and Consumer are task indices.
	Producer, Consumer int
	// Route is the static route from the producer's processor to the
	// consumer's; empty when both are on the same processor.
	Route []machine.Hop
}

// Access is a pop from or a push onto a stream by a subtask.
type Access struct {
	// Stream is a stream index.
	Stream int
	// Count is the number of elements.
	Count int64
}

// Subtask is the unit of sequencing inside a task (Figure 20b): acquire
// the input and output buffers, process for Time, release them in order.
type Subtask struct {
	// Name names the subtask ("actor" or "actor#phase").
	Name string
	// Time is the processing time in seconds on the task's processor,
	// excluding the communication primitives.
	Time float64
	// Pops and Pushes are the stream accesses.
	Pops, Pushes []Access
}

// NodeKind is the kind of a subtask tree node.
type NodeKind uint8

const (
	// SubtaskNode runs a subtask.
	SubtaskNode NodeKind = iota
	// IfNode runs its body when its control variable is 1 (0 if inverted).
	IfNode
	// WhileNode runs its body as many times as its control variable says.
	WhileNode
)

// Node is a node of a task's subtask tree (§3.3.4: Tree ::= (Subtask |
// If(CondVar, Invert, Tree) | While(CondVar, Tree))*).
type Node struct {
	Kind NodeKind
	// Subtask is the subtask index within the task (SubtaskNode).
	Subtask int
	// Cond names the control variable (IfNode, WhileNode).
	Cond string
	// Invert negates an IfNode's condition.
	Invert bool
	// Value is the control value that selects a CaseNode's body.
	Value int64
	// Body is the subtree of a control node.
	Body []Node

	id int // index of the control node within its task (its cursor)
}

// Task is a task of the program model (Figure 20c): one actor, mapped to
// one processor, running its subtask tree in an implicit loop.
type Task struct {
	// Name is the actor's name.
	Name string
	// Processor is the index of the processor in the machine.
	Processor int
	// Replicas is the number of firings that may run at once (≥ 1); their
	// outputs are released in order.
	Replicas int
	// Priority orders ready tasks on a processor (higher first).
	Priority int
	// Subtasks are indexed by the tree's SubtaskNodes.
	Subtasks []Subtask
	// Tree is the subtask tree run once per pass.
	Tree []Node
	// Passes is the number of tree passes per graph iteration.
	Passes int64
	// RoundLimit is the most firings one round may take on a pool
	// processor (machine.Processor.Pool): half of the smallest capacity of
	// the task's streams in firings, at least 1, as the CPU runtime's
	// rounds (0 counts as 1).
	RoundLimit int64
	// Batch is the number of firings one kernel invocation runs (the
	// mapping's work-groups, G) for an SDF actor on a gpu-kind processor:
	// it fires G firings at once — when all G are ready, fewer only for
	// the last — with one launch (the processor's firing cost), one
	// acquire and release per stream, and one message per stream carrying
	// the G firings' tokens. 0 or 1: firing by firing.
	Batch int64
	// Threads is the threads (work-items) one invocation of a batched task
	// occupies on a processor with machine.Processor.Threads: G × I, at
	// most the processor's. 0: the whole processor (one invocation at a
	// time, or one per unit).
	Threads int64
	// Invocations is the most invocations of a batched task in flight at
	// once (a stateless kernel actor's invocations on several streams of
	// its GPU): the processor's threads over the task's, at least 1; set
	// only with Threads. 0 or 1: one at a time.
	Invocations int
	// Stages are the actors of a fused chain run as this one task (the CPU
	// runtime's fused units, FusedChains), nil for a task of one actor.
	Stages []string
	// ClaimBatch, for a fused task, is the firings a replica claims at once
	// (the runtime's batch): the processor's firing cost and the port
	// costs of a firing are spread over them. 0 or 1: paid per firing.
	ClaimBatch int64

	controls int // number of control nodes
}

// Program is a mapped stream program ready to simulate.
type Program struct {
	// Machine is the target.
	Machine *machine.Machine
	// Tasks and Streams of the program.
	Tasks   []*Task
	Streams []*Stream
	// Notes lists defaults that were applied (costs missing, capacities
	// chosen), for the report.
	Notes []string

	burnt []string // actors charged as Costs.Burn's loops last
}

// Options adjust how Build derives the program from a graph.
type Options struct {
	// Capacity overrides channel capacities (channel name → tokens).
	Capacity map[string]int
	// NoFuseCPU simulates every actor as its own task, as the runtime
	// runs them with Options.NoFuseCPU (sluice run --no-fuse-cpu); by
	// default the chains the runtime fuses are one task each
	// (FusedChains).
	NoFuseCPU bool
}

// Build derives the program model from a graph, a mapping (nil: every
// actor on the first processor) and costs (nil: graph.Actor.Cost). Each
// actor becomes a task whose subtasks are its phases (one for an SDF actor),
// wrapped in the actor's control node if it has one; each channel becomes a
// stream with the token size as element size, the channel capacity as
// queue lengths (producer and consumer side) and the initial tokens
// prequeued. Devices named by the mapping are resolved with
// machine.Resolve. Routes are computed and a non-multiplexable interconnect
// carrying several streams is an error.
func Build(g *graph.Graph, m *graph.Mapping, mach *machine.Machine, costs *Costs, opt Options) (*Program, error) {
	if g == nil || mach == nil {
		return nil, errors.New("sim: nil graph or machine")
	}
	if len(mach.Processors) == 0 {
		return nil, fmt.Errorf("sim: machine %s has no processor", mach.Name)
	}
	if g.HasComposites() {
		f, err := g.Flatten()
		if err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		g = f
	}
	for _, a := range g.Actors {
		if a.Dynamic() {
			return nil, fmt.Errorf("sim: actor %s has a dynamic (KPN) port: the simulator needs static rates (SDF or CSDF); give its ports rates", a.Name)
		}
	}
	rv, err := analysis.RepetitionVector(g)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	p := &Program{Machine: mach}
	taskOf := map[*graph.Actor]int{}
	for _, a := range g.Actors {
		t, err := p.actorTask(g, a, m, mach, costs, rv.Firings[a.Name])
		if err != nil {
			return nil, err
		}
		taskOf[a] = len(p.Tasks)
		p.Tasks = append(p.Tasks, t)
	}
	if b := costs.burn(); len(p.burnt) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("synthetic actors %s: each declared cost d charged as their busy loop lasts on this host: d + %.1f%% of d + %.0f ns (sluice calibrate)", namelist.Short(p.burnt), 100*b.Stretch, b.Extra*1e9))
	}
	taskOf, fused := p.fuse(g, FusedChains(g, m, mach, costs, opt.NoFuseCPU), taskOf)
	for _, name := range sortedNames(opt.Capacity) {
		if g.Channel(name) == nil {
			return nil, fmt.Errorf("sim: capacity given for unknown channel %q (channels are named producer.port->consumer.port)", name)
		}
	}
	var uses []machine.Use
	for _, c := range g.Channels {
		if c.From == nil || c.To == nil {
			return nil, fmt.Errorf("sim: channel %s has a missing end (run Validate)", c.Name)
		}
		if taskOf[c.From.Actor] == taskOf[c.To.Actor] && len(p.Tasks[taskOf[c.From.Actor]].Stages) > 0 {
			continue // inside a fused chain: the stages pass it in the worker's scratch
		}
		s, err := p.channelStream(c, mach, opt, taskOf, fused)
		if err != nil {
			return nil, err
		}
		idx := len(p.Streams)
		pt, ct := p.Tasks[s.Producer], p.Tasks[s.Consumer]
		for k := range pt.Subtasks {
			if r := int64(c.From.Rate.At(k)); r > 0 {
				pt.Subtasks[k].Pushes = append(pt.Subtasks[k].Pushes, Access{idx, r})
			}
		}
		for k := range ct.Subtasks {
			if r := int64(c.To.Rate.At(k)); r > 0 {
				ct.Subtasks[k].Pops = append(ct.Subtasks[k].Pops, Access{idx, r})
			}
		}
		pp, cp := mach.Processors[pt.Processor], mach.Processors[ct.Processor]
		if pp != cp {
			s.Route, err = mach.Route(pp.Name, cp.Name)
			if err != nil {
				return nil, fmt.Errorf("sim: channel %s from %s to %s: %w", c.Name, pp.Name, cp.Name, err)
			}
			uses = append(uses, machine.Use{Stream: c.Name, Hops: s.Route})
		}
		p.Streams = append(p.Streams, s)
	}
	if err := mach.CheckRoutes(uses); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	setRoundLimits(p)
	creditWindows(p)
	return p, nil
}

// channelStream is channel c's stream between its ends' tasks (taskOf;
// fused: the fused tasks' chains): its element size, initial tokens and
// capacity — the channel's, opt's, or the runtime's default for its ends
// (a kernel actor's, the pool's, or double buffering).
func (p *Program) channelStream(c *graph.Channel, mach *machine.Machine, opt Options, taskOf map[*graph.Actor]int, fused map[int]fusedInfo) (*Stream, error) {
	s := &Stream{Name: c.Name, ElemSize: int64(max(1, c.From.Type.Size)), PreQueue: int64(c.Initial),
		Producer: taskOf[c.From.Actor], Consumer: taskOf[c.To.Actor]}
	prodMax, consMax := int64(c.From.Rate.Max()), int64(c.To.Rate.Max())
	capTokens := int64(c.Capacity)
	if v, ok := opt.Capacity[c.Name]; ok && v > 0 {
		capTokens = int64(v)
	}
	if capTokens == 0 {
		pp, cp := mach.Processors[p.Tasks[taskOf[c.From.Actor]].Processor], mach.Processors[p.Tasks[taskOf[c.To.Actor]].Processor]
		pt, ct := p.Tasks[taskOf[c.From.Actor]], p.Tasks[taskOf[c.To.Actor]]
		if pt.Batch > 1 || ct.Batch > 1 {
			capTokens = kernelCapacity(c, pt, ct)
		} else if pp.Pool || cp.Pool {
			capTokens = poolCapacity(c, pt, ct, fused[taskOf[c.From.Actor]], fused[taskOf[c.To.Actor]])
		} else {
			capTokens = DefaultCapacity(c)
		}
	}
	if capTokens < prodMax || capTokens < consMax || capTokens < s.PreQueue {
		return nil, fmt.Errorf("sim: channel %s has capacity %d: expected at least %d (the largest rate at either end, and the initial tokens)", c.Name, capTokens, max(prodMax, consMax, s.PreQueue))
	}
	s.ProducerQueue, s.ConsumerQueue = capTokens, capTokens
	return s, nil
}

// actorTask is actor a's task: its processor (the mapping's device),
// replicas, G and threads on a GPU, its cost there, its subtasks (one
// per phase) and control node; n is its firings per iteration.
func (p *Program) actorTask(g *graph.Graph, a *graph.Actor, m *graph.Mapping, mach *machine.Machine, costs *Costs, n int64) (*Task, error) {
	t := &Task{Name: a.Name, Replicas: 1}
	proc := mach.Processors[0]
	if m != nil {
		if pl := m.Actors[a.Name]; pl != nil {
			if pl.Device != "" {
				proc = mach.Resolve(pl.Device)
				if proc == nil {
					return nil, fmt.Errorf("sim: mapping places %s on %q, which is no processor of machine %s (processors: %s)", a.Name, pl.Device, mach.Name, procNames(mach))
				}
			}
			t.Replicas = max(1, pl.Replicas)
			t.Priority = pl.Priority
			if pl.WorkGroups > 1 && proc.Kind == "gpu" && a.Phases() == 1 {
				t.Batch = int64(pl.WorkGroups)
				if proc.Threads > 0 && !proc.Pool && pl.WorkItems > 0 {
					// Occupancy: invocations run at once while their
					// threads fit on the GPU.
					t.Threads = min(proc.Threads, t.Batch*int64(pl.WorkItems))
					if !a.Stateful {
						t.Invocations = int(max(1, proc.Threads/t.Threads))
					}
				}
			}
		}
	}
	if a.Stateful && t.Replicas > 1 {
		return nil, fmt.Errorf("sim: actor %s is stateful but the mapping asks for %d replicas: expected 1", a.Name, t.Replicas)
	}
	t.Processor = mach.ProcessorIndex(proc.Name)
	cost, src := costs.Lookup(a, proc)
	kp, kernel := costs.kernel(a.Name)
	var kernels map[string]KernelProfile
	if costs != nil {
		kernels = costs.Kernels
	}
	if proc.Kind == "gpu" {
		if s, k, ks, ok := costs.kernelAtG(a.Name, max(1, t.Batch)); ok {
			cost, src, kp, kernel, kernels = Cost{Seconds: s}, "profile", k, true, ks
		}
	} else if s, ok := costs.atG(a.Name, ContextG(g, a, m, mach)); ok {
		cost, src = Cost{Seconds: s}, "profile"
	}
	if kernel && src == "profile" && proc.Kind == "gpu" {
		ft, clamped := KernelFiringTime(g, a, cost.Seconds, kp, kernels, mach, proc)
		if clamped {
			p.Notes = append(p.Notes, fmt.Sprintf("kernel actor %s: its profiled time (%.3g s a firing) is not above its host copies as the link model charges them plus its launch's share: its kernel time is taken as 0", a.Name, cost.Seconds))
		}
		cost = Cost{Seconds: ft * waveScale(t, m.Actors[a.Name], kp, proc)}
		if !kp.Own() {
			p.Notes = append(p.Notes, fmt.Sprintf("kernel actor %s: its profile was taken with device mode %q, whose means share the device's time among the kernels in flight; profile with sluice run --device-mode callback for each kernel's own time", a.Name, kp.Mode))
		}
	}
	if cost.Never {
		return nil, fmt.Errorf("sim: actor %s is mapped to %s but its cost there is never (it cannot run on a %s processor)", a.Name, proc.Name, proc.Kind)
	}
	if src == "none" {
		p.Notes = append(p.Notes, "actor "+a.Name+" has no cost: taken as 0")
	}
	if src == "burn" {
		p.burnt = append(p.burnt, a.Name)
	}
	if a.IO && !proc.HasIO {
		return nil, fmt.Errorf("sim: actor %s does I/O but processor %s cannot (hasIO false)", a.Name, proc.Name)
	}
	phases := a.Phases()
	if n%int64(phases) != 0 {
		return nil, fmt.Errorf("sim: actor %s fires %d times per iteration, not a whole number of its %d phases", a.Name, n, phases)
	}
	t.Passes = n / int64(phases)
	if a.Pattern != nil {
		if err := patternTask(t, a, costs, proc); err != nil {
			return nil, err
		}
		phases = 0
	}
	for k := 0; k < phases; k++ {
		name := a.Name
		if phases > 1 {
			name = fmt.Sprintf("%s#%d", a.Name, k)
		}
		t.Subtasks = append(t.Subtasks, Subtask{Name: name, Time: cost.On(proc)})
		t.Tree = append(t.Tree, Node{Kind: SubtaskNode, Subtask: k})
	}
	ct, err := costs.ControlOf(a)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if ct.If != "" || ct.While != "" || a.Pattern != nil {
		t.Batch, t.Threads, t.Invocations = 0, 0, 0 // invocations of a conditional actor are not batched here
	}
	switch {
	case ct.If != "":
		t.Tree = []Node{{Kind: IfNode, Cond: ct.If, Invert: ct.Invert, Body: t.Tree}}
	case ct.While != "":
		t.Tree = []Node{{Kind: WhileNode, Cond: ct.While, Body: t.Tree}}
	}
	t.controls = numberControls(t.Tree, 0)
	return t, nil
}

// creditWindows gives each stream routed over credit links (machine.
// Interconnect.Credits: sluice's cross-machine channels) the room the
// cluster runtime gives it beyond the producer's FIFO: per hop a credit
// window of the channel's capacity in flight, per relay (the client
// between two workers) a FIFO of the capacity, and the consumer's FIFO —
// 2 × hops × capacity. Rounds keep the limits of one capacity (each FIFO
// has one), so this runs after setRoundLimits.
func creditWindows(p *Program) {
	for _, s := range p.Streams {
		if CreditRoute(s.Route) {
			s.ConsumerQueue = RemoteRoom(s.ConsumerQueue, len(s.Route))
		}
	}
}

// CreditRoute reports whether a route crosses a credit link (a
// cross-machine channel of the cluster runtime).
func CreditRoute(r []machine.Hop) bool {
	for _, h := range r {
		if h.Interconnect.Credits {
			return true
		}
	}
	return false
}

// RemoteRoom is the room a cross-machine channel of the given capacity
// has between the producer's FIFO and the consumer's release over the
// given hops: a credit window per hop, a relay FIFO between hops and the
// consumer's FIFO, each of the capacity.
func RemoteRoom(capacity int64, hops int) int64 {
	return 2 * int64(max(hops, 1)) * capacity
}

// pageBytes is the floor of the CPU runtime's default channel capacity in
// bytes (runtime.Options' documented default).
const pageBytes = 64 << 10

// RuntimeCapacity is the capacity the CPU runtime gives a channel between
// pooled actors that has none: the initial tokens plus twice the larger
// rate times the larger team (replicas), and at least 64 KiB worth of
// tokens, so that cheap actors fire in long rounds (docs/runtime.md,
// "Capacities"). The runtime also raises it to the analysis' minimal
// buffer, which on the graphs the simulator takes (consistent SDF/CSDF) is
// never above the 2 × rate term for a chain; a graph whose minimal buffer
// is larger should give the channel its capacity.
func RuntimeCapacity(c *graph.Channel, replicas int) int64 {
	n := int64(c.Initial) + 2*int64(max(c.From.Rate.Max(), c.To.Rate.Max(), 1))*int64(max(replicas, 1))
	if ts := c.From.Type.Size; ts > 0 {
		n = max(n, int64(pageBytes/ts))
	}
	return n
}

// poolCapacity is the CPU runtime's default capacity of a channel between
// tasks pt and ct of which one at least is on a pool: RuntimeCapacity
// with the replicas the mapping gives (a fused task's stages have one),
// and at least fusedCapacity at a fused end.
func poolCapacity(c *graph.Channel, pt, ct *Task, pf, cf fusedInfo) int64 {
	reps := func(t *Task, f fusedInfo) int {
		if f.replicas > 0 {
			return 1
		}
		return t.Replicas
	}
	n := RuntimeCapacity(c, max(reps(pt, pf), reps(ct, cf)))
	if cf.replicas > 0 {
		n = max(n, fusedCapacity(c, cf.batch, cf.replicas, c.To.Rate.Max()))
	}
	if pf.replicas > 0 {
		n = max(n, fusedCapacity(c, pf.batch, pf.replicas, c.From.Rate.Max()))
	}
	return n
}

// kernelCapacity is the CPU runtime's default capacity of a channel with a
// kernel actor (a batched task) on one end at least (runtime's kernelFIFO):
// room for twice the tokens the larger end holds in flight — a kernel
// actor G firings × its depth of invocations (16 up to 64 KiB of one
// port's invocation, 8 up to 1 MiB, else 4), a Go actor one firing per
// replica — or, next to a Go actor whose invocations move more than 1 MiB,
// half the kernel end's plus twice the Go end's into a kernel actor and
// 1¼ of the kernel end's plus twice the Go end's out of one; at least
// 64 KiB worth of tokens. The depth the runtime picks for CUDA lanes may
// be larger (docs/runtime.md, "Lanes").
func kernelCapacity(c *graph.Channel, pt, ct *Task) int64 {
	size := int64(max(1, c.From.Type.Size))
	var kin, goin, slot int64
	for _, e := range []struct {
		t    *Task
		rate int64
	}{{pt, int64(c.From.Rate.Max())}, {ct, int64(c.To.Rate.Max())}} {
		if e.t.Batch <= 1 {
			goin = max(goin, e.rate*int64(e.t.Replicas))
			continue
		}
		s := e.t.Batch * e.rate * size
		slot = max(slot, s)
		depth := int64(4)
		switch {
		case s <= 64<<10:
			depth = 16
		case s <= 1<<20:
			depth = 8
		}
		kin = max(kin, e.rate*e.t.Batch*depth)
	}
	var n int64
	switch {
	case slot <= 1<<20 || goin == 0:
		n = 2 * max(kin, goin)
	case ct.Batch > 1:
		n = kin/2 + 2*goin
	default:
		n = kin + kin/4 + 2*goin
	}
	return max(int64(c.Initial)+n, int64(pageBytes)/size)
}

// setRoundLimits sets each task's RoundLimit as the CPU runtime's
// roundLimit does: for every stream, half its capacity over the task's
// tokens per firing there (rounded up over the phases), at least 1; on a
// pool with a round time, at most that time's worth of the task's
// firings (see roundTimeLimit).
func setRoundLimits(p *Program) {
	for ti, t := range p.Tasks {
		k := int64(1 << 20)
		lim := func(capTok int64, tokens []int64) {
			var sum int64
			for _, v := range tokens {
				sum += v
			}
			if sum == 0 {
				return
			}
			per := (sum + int64(len(tokens)) - 1) / int64(len(tokens))
			k = min(k, max(1, capTok/2/max(per, 1)))
		}
		for si, s := range p.Streams {
			if s.Producer != ti && s.Consumer != ti {
				continue
			}
			if s.Consumer == ti {
				lim(s.ConsumerQueue, accessCounts(t, si, false))
			}
			if s.Producer == ti {
				lim(s.ProducerQueue, accessCounts(t, si, true))
			}
		}
		t.RoundLimit = min(k, roundTimeLimit(p.Machine.Processors[t.Processor], t))
	}
}

// roundTimeLimit is the most firings of task t that last the pool's
// RoundTime, as the runtime bounds a unit's rounds by their measured pace
// (runtime/unit.go noteRound): RoundTime × replicas over a firing's time
// (the task's mean subtask time and the pool's firing cost), at least one
// firing per replica and, for a fused chain's replicas, two claimed
// batches each. Unbounded off pools, without a round time, or for a task
// that costs nothing.
func roundTimeLimit(pr *machine.Processor, t *Task) int64 {
	const unbounded = 1 << 62
	if !pr.Pool || pr.RoundTime <= 0 || len(t.Subtasks) == 0 {
		return unbounded
	}
	var sum float64
	for _, st := range t.Subtasks {
		sum += st.Time
	}
	per := sum/float64(len(t.Subtasks)) + pr.Seconds(pr.FiringCost)/float64(max(1, t.ClaimBatch))
	if per <= 0 {
		return unbounded
	}
	reps := int64(max(1, t.Replicas))
	least := reps
	if t.ClaimBatch > 0 {
		least = 2 * reps * t.ClaimBatch
	}
	return max(least, int64(pr.Seconds(pr.RoundTime)*float64(reps)/per))
}

// accessCounts lists the tokens each subtask of t pops (push: pushes) on
// stream si.
func accessCounts(t *Task, si int, push bool) []int64 {
	out := make([]int64, len(t.Subtasks))
	for k, st := range t.Subtasks {
		as := st.Pops
		if push {
			as = st.Pushes
		}
		for _, a := range as {
			if a.Stream == si {
				out[k] += a.Count
			}
		}
	}
	return out
}

// DefaultCapacity is the capacity the simulator gives a channel that has
// none: the initial tokens plus twice the larger rate at either end, so
// producer and consumer can overlap (double buffering).
func DefaultCapacity(c *graph.Channel) int64 {
	return int64(c.Initial) + 2*int64(max(c.From.Rate.Max(), c.To.Rate.Max(), 1))
}

// waveScale is what a kernel actor's time per firing, profiled at kp's G
// with one invocation in flight, becomes at the mapping's G on a GPU with
// threads: an invocation lasts as many of the profiled invocation's
// durations as it takes waves of the GPU's resident threads (⌈G × I /
// threads⌉, against the profiled G's), not G times a firing's share — an
// invocation that fits in one wave runs its work-groups at once, whatever
// G. So G × time = profiled G × time × waves(G) / waves(profiled G). 1
// where the task has no threads (no work-items, or a GPU whose threads
// are unknown), the mapping's G is the profiled one, or the profile
// entry is not the kernel's own time (device mode other than callback).
func waveScale(t *Task, pl *graph.Placement, kp KernelProfile, proc *machine.Processor) float64 {
	if t.Threads <= 0 || pl == nil || pl.WorkItems <= 0 || proc.Threads <= 0 || !kp.Own() || kp.WorkGroups <= 0 || kp.WorkGroups == t.Batch {
		return 1
	}
	waves := func(g int64) int64 {
		return (g*int64(pl.WorkItems) + proc.Threads - 1) / proc.Threads
	}
	return float64(kp.WorkGroups*waves(t.Batch)) / float64(t.Batch*waves(kp.WorkGroups))
}

func procNames(m *machine.Machine) string {
	s := make([]string, len(m.Processors))
	for i, p := range m.Processors {
		s[i] = p.Name
	}
	return strings.Join(s, ", ")
}

func numberControls(ns []Node, next int) int {
	for i := range ns {
		if ns[i].Kind != SubtaskNode {
			ns[i].id = next
			next++
			next = numberControls(ns[i].Body, next)
		}
	}
	return next
}

// Validate checks a program built by hand: indices in range, queues at
// least as long as every access, replicas ≥ 1, finite non-negative times,
// every stream with one producer and one consumer task that access it.
func (p *Program) Validate() error {
	var errs []string
	for ti, t := range p.Tasks {
		if t.Processor < 0 || t.Processor >= len(p.Machine.Processors) {
			errs = append(errs, fmt.Sprintf("task %s: processor index %d out of range", t.Name, t.Processor))
		}
		if t.Replicas < 1 {
			errs = append(errs, fmt.Sprintf("task %s: %d replicas: expected ≥ 1", t.Name, t.Replicas))
		}
		if t.Threads < 0 || t.Invocations < 0 {
			errs = append(errs, fmt.Sprintf("task %s: %d threads, %d invocations: expected ≥ 0", t.Name, t.Threads, t.Invocations))
		}
		if t.Passes < 0 {
			errs = append(errs, fmt.Sprintf("task %s: %d passes per iteration: expected ≥ 0", t.Name, t.Passes))
		}
		for _, st := range t.Subtasks {
			if !(st.Time >= 0) || math.IsInf(st.Time, 0) {
				errs = append(errs, fmt.Sprintf("task %s: subtask %s has time %g: expected a finite time ≥ 0", t.Name, st.Name, st.Time))
			}
			check := func(as []Access, push bool) {
				for _, a := range as {
					if a.Stream < 0 || a.Stream >= len(p.Streams) {
						errs = append(errs, fmt.Sprintf("task %s: subtask %s names stream %d: out of range", t.Name, st.Name, a.Stream))
						continue
					}
					s := p.Streams[a.Stream]
					owner, q := s.Consumer, s.ConsumerQueue
					if push {
						owner = s.Producer
						if len(s.Route) > 0 {
							q = s.ProducerQueue
						}
					}
					if owner != ti {
						errs = append(errs, fmt.Sprintf("task %s: subtask %s accesses stream %s, which belongs to task %d", t.Name, st.Name, s.Name, owner))
					}
					if a.Count <= 0 || a.Count > q {
						errs = append(errs, fmt.Sprintf("task %s: subtask %s moves %d elements on stream %s whose buffer holds %d: expected 1 to %d", t.Name, st.Name, a.Count, s.Name, q, q))
					}
				}
			}
			check(st.Pops, false)
			check(st.Pushes, true)
		}
		var walk func([]Node)
		walk = func(ns []Node) {
			for _, n := range ns {
				if n.Kind == SubtaskNode && (n.Subtask < 0 || n.Subtask >= len(t.Subtasks)) {
					errs = append(errs, fmt.Sprintf("task %s: tree names subtask %d: out of range", t.Name, n.Subtask))
				}
				if n.Kind != SubtaskNode && n.Cond == "" {
					errs = append(errs, fmt.Sprintf("task %s: control node without a control variable", t.Name))
				}
				walk(n.Body)
			}
		}
		walk(t.Tree)
	}
	for _, s := range p.Streams {
		if s.Producer < 0 || s.Producer >= len(p.Tasks) || s.Consumer < 0 || s.Consumer >= len(p.Tasks) {
			errs = append(errs, fmt.Sprintf("stream %s: producer or consumer task out of range", s.Name))
		}
		if s.ElemSize <= 0 || s.ConsumerQueue <= 0 || s.PreQueue < 0 || s.PreQueue > s.ConsumerQueue || (len(s.Route) > 0 && s.ProducerQueue <= 0) {
			errs = append(errs, fmt.Sprintf("stream %s: expected element size > 0, queues > 0 and 0 ≤ prequeue ≤ consumer queue", s.Name))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New("sim: invalid program:\n  " + strings.Join(errs, "\n  "))
}

// countTree is a subtask tree reduced to the element counts one stream
// moves (§3.3.5).
type countTree struct {
	leaf   int64
	kind   NodeKind
	cond   string
	invert bool
	body   []countTree
}

func (c countTree) String() string {
	if c.kind == SubtaskNode {
		return fmt.Sprint(c.leaf)
	}
	var b strings.Builder
	if c.kind == IfNode {
		b.WriteString("if ")
		if c.invert {
			b.WriteString("!")
		}
	} else {
		b.WriteString("while ")
	}
	b.WriteString(c.cond + " " + renderTrees(c.body))
	return b.String()
}

func renderTrees(ts []countTree) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

func counts(t *Task, ns []Node, stream int, push bool) []countTree {
	var out []countTree
	seenCase := map[string]bool{}
	for _, n := range ns {
		if n.Kind == CaseNode { // a pattern's branches move the same interface counts: count one
			if !seenCase[n.Cond] {
				seenCase[n.Cond] = true
				out = append(out, counts(t, n.Body, stream, push)...)
			}
			continue
		}
		if n.Kind == SubtaskNode {
			st := t.Subtasks[n.Subtask]
			as := st.Pops
			if push {
				as = st.Pushes
			}
			for _, a := range as {
				if a.Stream == stream {
					out = append(out, countTree{leaf: a.Count})
				}
			}
			continue
		}
		if body := counts(t, n.Body, stream, push); len(body) > 0 {
			out = append(out, countTree{kind: n.Kind, cond: n.Cond, invert: n.Invert, body: body})
		}
	}
	// Outermost control nodes holding exactly one node are removed.
	for len(out) == 1 && out[0].kind != SubtaskNode && len(out[0].body) == 1 {
		out = out[0].body
	}
	return out
}

func equalTrees(a, b []countTree) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.kind != y.kind || x.leaf != y.leaf || x.cond != y.cond || x.invert != y.invert || !equalTrees(x.body, y.body) {
			return false
		}
	}
	return true
}

func hasControl(ns []Node) bool {
	for _, n := range ns {
		if n.Kind != SubtaskNode {
			return true
		}
	}
	return false
}

// CheckCountTrees applies the statistical model's condition (§3.3.5): for
// every stream whose producer or consumer has control nodes, the tree of
// push counts of the producer must be isomorphic to the tree of pop counts
// of the consumer (after removing outermost control nodes that hold
// exactly one node), so that independent control variables cannot
// deadlock the program. Streams between tasks without control nodes are
// left to the static analysis (balanced rates). It returns an error naming
// every stream that fails, with both trees.
func (p *Program) CheckCountTrees() error {
	var bad []string
	for i, s := range p.Streams {
		pt, ct := p.Tasks[s.Producer], p.Tasks[s.Consumer]
		if !hasControl(pt.Tree) && !hasControl(ct.Tree) {
			continue
		}
		a, b := counts(pt, pt.Tree, i, true), counts(ct, ct.Tree, i, false)
		if !equalTrees(a, b) {
			bad = append(bad, fmt.Sprintf("stream %s: %s pushes %s but %s pops %s", s.Name, pt.Name, renderTrees(a), ct.Name, renderTrees(b)))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("sim: the statistical model needs, on each stream, the producer's tree of push counts isomorphic to the consumer's tree of pop counts (otherwise some control values deadlock); use trace-driven control variables or give both ends the same control node:\n  %s", strings.Join(bad, "\n  "))
}
