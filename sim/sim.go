// Package sim is sluice's cost-model simulator (seed 004 §3.3–3.4): a
// deterministic discrete-event simulation of a mapped stream program on an
// Abstract Streaming Machine (package machine).
//
// The program model (Build) turns each actor into a task running its
// subtask tree in an implicit loop, each subtask in three phases: acquire
// the input buffers (full) and output buffers (empty), process for the
// actor's cost on its processor, release the buffers in order — inputs
// discarded, outputs sent. A processor runs one subtask per unit at a time
// and pays the communication primitives' costs (pushAcq, the pushSend and
// popAcq staircases, popDisc). A task waits on full or empty buffers
// without holding its processor. Messages between processors follow the
// stream's static route; each interconnect is a bus with one unbounded
// queue and several channels, where a message holds a channel, its
// transmitter and its receiver for S + ⌈n/B⌉ + F cycles and reaches its
// receiver L + S + ⌈n/B⌉ after the start of pushSend when alone, forwarded
// store-and-forward or cut-through (Figure 13).
//
// Control nodes (if/while) are driven by control variables read from a
// trace (trace-driven mode) or drawn from Bernoulli variables with a seed
// (statistical mode). Results: throughput, period, latency of the first
// iteration, utilization of every processor and interconnect, and a trace
// (Chrome Trace Event JSON, Paraver).
//
// Time is in seconds throughout. Ties between events at the same time are
// broken by the order in which they were scheduled, so a simulation is
// reproducible bit for bit.
package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/wire"
)

// Mode selects where control variables come from.
type Mode int

const (
	// Statistical draws if outcomes from Bernoulli variables (Costs.
	// Probabilities, default 0.5) and while counts from Costs.Loops.
	Statistical Mode = iota
	// TraceDriven reads control variables from Config.Controls; a task
	// whose control variable runs out stops.
	TraceDriven
)

// Config controls a simulation.
type Config struct {
	// Iterations is the number of graph iterations to simulate (default 100).
	Iterations int64
	// Mode selects trace-driven or statistical control variables.
	Mode Mode
	// Controls holds the control variables of the trace-driven mode.
	Controls map[string][]int64
	// Probabilities and Loops are the statistical model (see Costs).
	Probabilities map[string]float64
	Loops         map[string]int64
	// Seed seeds the statistical model.
	Seed uint64
	// Trace records every busy interval in Result.Spans.
	Trace bool
	// TraceLimit is the most spans Trace keeps (about 90 bytes each): the
	// simulation's first ones; later ones are counted in
	// Result.TraceDropped. 0 means DefaultTraceLimit; < 0 keeps every one.
	TraceLimit int64
	// MaxEvents stops a runaway simulation (default 1<<34).
	MaxEvents int64
	// Flush is the flush timeout of the cluster's cross-machine channels
	// (streams routed over credit links): as the runtime's sender does
	// (internal/wire.Batch), a channel's pushes are batched into one
	// message until a batch (half the channel's capacity, at most a
	// 256 KiB chunk) is ready or Flush passed since its first push. 0
	// means wire.DefaultFlush; negative sends every push at once.
	Flush time.Duration
}

// Span is a busy interval of a processor unit or an interconnect channel.
type Span struct {
	// Element is the processor or interconnect name; Lane the unit or channel.
	Element string
	Lane    int
	// Bus is true for an interconnect channel.
	Bus bool
	// Name is the subtask (processor) or stream (interconnect).
	Name string
	// Task is the task index (processor) or stream index (interconnect).
	Task int
	// Start and End in seconds.
	Start, End float64
	// Bytes moved (interconnect).
	Bytes int64
}

// Result is what a simulation reports. Times are in seconds.
type Result struct {
	// Iterations completed.
	Iterations int64
	// Makespan is the time of the last event: the last firing's release or
	// the end of the last message's finish phase.
	Makespan float64
	// Latency is the completion time of the first iteration.
	Latency float64
	// Period is the steady-state time per iteration, averaged over the
	// middle half of the iterations (skipping the filling and draining
	// quarters; over the whole run when there are fewer than 8), ending
	// where the first task ran its last firing if that came earlier:
	// after that the graph drains what its channels hold, faster than it
	// runs (the tasks left have the processors to themselves).
	Period float64
	// Transient reports that the run had too few iterations for a steady
	// state: the first task ran its last firing before an eighth of the
	// iterations after the filling quarter had completed (channels that
	// hold more iterations than the run). Period is then over the middle
	// half, drain included, and too short; simulate more iterations.
	Transient bool
	// Throughput is 1/Period, in iterations per second.
	Throughput float64
	// Utilization maps each processor and interconnect to its busy
	// fraction of the makespan (over all its units or channels).
	Utilization map[string]float64
	// Firings maps each task to the subtasks it ran (a fused task, and
	// each of its stages, to its firings).
	Firings map[string]int64
	// Messages is the number of messages sent over interconnects.
	Messages int64
	// Events is the number of simulated events.
	Events int64
	// Spans is the trace (Config.Trace).
	Spans []Span
	// TraceDropped counts the spans the trace did not keep, its
	// Config.TraceLimit reached.
	TraceDropped int64
	// Notes explain defaults and early ends.
	Notes []string
	// Processors and Interconnects name the elements in machine order
	// (Paraver rows, trace threads).
	Processors, Interconnects []string
	// Units and Channels give each element's lane count.
	Units, Channels []int
	// Tasks names the tasks (trace values).
	Tasks []string
}

// DeadlockError reports a simulation that stopped with tasks still waiting.
type DeadlockError struct {
	// Time when nothing could happen any more.
	Time float64
	// Blocked describes each waiting task and what it waits for.
	Blocked []string
}

// Error names the blocked tasks.
func (e *DeadlockError) Error() string {
	return fmt.Sprintf("sim: deadlock at t=%gs: %s", e.Time, strings.Join(e.Blocked, "; "))
}

// event kinds
const (
	evUnitFree = iota
	evRelease
	evMsgReady
	evTransferEnd
	evChanFree
	evWake
	evHop
	evFlush
)

type event struct {
	t       float64
	seq     uint64
	kind    uint8
	a, b, c int32
}

// eventHeap is a binary min-heap of events by time, then sequence: the
// order container/heap would keep, with its sifts written for events so
// that no call goes through an interface (a fifth of a mapping search's
// time went to heap.Fix's Less and Swap).
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}

// up moves event j towards the root while it is earlier than its parent.
func (h eventHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			return
		}
		h[i], h[j] = h[j], h[i]
		j = i
	}
}

// down moves event i towards the leaves while a child is earlier.
func (h eventHeap) down(i int) {
	n := len(h)
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if r := j + 1; r < n && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

type frame struct {
	nodes []Node
	i     int
	rem   int64
}

type inflight struct {
	sub     int32
	release float64
}

type taskState struct {
	t        *Task
	proc     int
	next     int // next subtask, -1 finished, -2 to compute
	stack    []frame
	passes   int64
	target   int64
	started  bool
	stopped  bool // a control variable ran out
	running  int
	queue    []inflight // in flight, in start order
	qhead    int
	lastRel  float64
	cursors  []int64
	firings  int64
	ctlNodes []*Node
	inRound  bool    // a pool round is being laid out: passes wait for its end
	end      float64 // when its last iteration's passes completed (+Inf before)
	invocs   int     // on a processor with threads: invocations (firings) holding a unit
	lane     int     // the unit its last round or firing started on
}

type streamState struct {
	s       *Stream
	remote  bool
	credits bool  // routed over credit links: the window, not the producer's FIFO, holds what is in flight
	space   int64 // local: free slots; remote: producer buffer free slots
	cspace  int64 // remote: consumer buffer free slots
	avail   int64 // tokens the consumer may acquire
	pending []int32
	phead   int
	lastRdy float64
	hops    []hopInfo
	// A credit route's batching (Config.Flush): tokens and bytes pushed
	// and not sent yet, the batch that sends at once, the flush timeout,
	// and the generation of the pending batch (its flush event's).
	batchN, batchBytes int64
	batchTok           int64
	flush              float64
	batchGen           int32
}

type hopInfo struct {
	bus      int
	from, to int // element positions on the bus
	forward  uint8
}

type message struct {
	stream int32
	n      int64
	bytes  int64
	v      float64 // end of transfer phase on the previous/current hop
	next   int32   // free list
}

type procState struct {
	units  []bool
	free   int
	wake   float64   // wake latency in seconds (0: every free unit is awake)
	freeAt []float64 // per unit: when it last became free (awake until time moves on)
	wakeAt []float64 // per unit: when a pending wake ends, -1 when none
	// wakeCost is what waking a parked unit costs the pool unit whose
	// round's end readied the work (seconds); owed holds, per unit, what
	// it owes for the wakes it caused and pays at the start of its next
	// round or firing.
	wakeCost float64
	owed     []float64
	// A pool processor (machine.Processor.Pool): rounds, spinning, slices.
	pool      bool
	spin      float64   // seconds a free unit polls before it parks
	slice     float64   // seconds a unit keeps one task while others wait
	spinners  int       // most units polling at once
	firingT   float64   // per-firing cost, seconds
	roundT    float64   // per-round cost, seconds
	lastTask  []int     // per unit: the task of its last round, -1 none
	turnStart []float64 // per unit: when its turn with lastTask began
	tasks     []int
	rot       int
	busy      float64
	dirty     bool
	name      string
	pushAcq   int64
	popDisc   int64
	clock     float64
	procIdx   int
	maxPrio   int
	samePrio  bool
	// A processor with threads (machine.Processor.Threads): its units
	// run invocations at once while their threads fit.
	threads     int64
	used        int64   // threads held by running invocations
	laneThreads []int64 // per unit: the threads its invocation holds
	laneTask    []int   // per unit: the task it runs
	// A device whose work one host thread issues (machine.Processor
	// IssueCost, CopyIssueCost): invocations queue for it.
	issueT, copyIssueT float64 // seconds per invocation, per host copy
	issueFree          float64 // when the issuing thread is next free
}

type busState struct {
	name     string
	queue    []int32 // messages waiting, with their hop in msgHop
	qhops    []int32
	chans    []bool
	free     int
	tx, rx   []bool
	duplex   []bool
	busy     float64
	dirty    bool
	clock    float64
	s, f, l  int64
	bw       int64
	elements []string
}

type engine struct {
	p       *Program
	cfg     Config
	now     float64
	seq     uint64
	ev      eventHeap
	tasks   []taskState
	streams []streamState
	procs   []procState
	buses   []busState
	msgs    []message
	freeMsg int32
	dirtyP  []int
	dirtyB  []int
	iterT   []float64
	// roundPasses are the iterations completed by the round being laid out.
	roundPasses []int64
	res         *Result
	// committer is the pool unit whose release the engine is settling
	// (its commit readies the work a parked unit may be woken for):
	// processor and unit, processor -1 when none.
	committer [2]int
	ctl       map[string]*ctlSeq
	events    int64
	err       error
}

type ctlSeq struct {
	vals  []int64
	rng   *rand.Rand
	p     float64
	loop  int64
	isIf  bool
	trace bool
	// weights is a case variable's statistical model (see registerCase).
	weights []float64
}

// Run simulates the program and reports its performance.
func Run(p *Program, cfg Config) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if cfg.Iterations <= 0 {
		cfg.Iterations = 100
	}
	if cfg.Iterations > 1<<26 {
		return nil, fmt.Errorf("sim: %d iterations: expected at most %d (the period converges long before)", cfg.Iterations, 1<<26)
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = 1 << 34
	}
	switch {
	case cfg.TraceLimit == 0:
		cfg.TraceLimit = DefaultTraceLimit
	case cfg.TraceLimit < 0:
		cfg.TraceLimit = math.MaxInt64
	}
	if cfg.Mode == Statistical {
		if err := p.CheckCountTrees(); err != nil {
			return nil, err
		}
	}
	e, err := newEngine(p, cfg)
	if err != nil {
		return nil, err
	}
	r, err := e.run()
	if r != nil && r.TraceDropped > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("trace: the simulation's first %d spans kept, %d later ones not (--trace-limit N keeps more, 0 every one)", len(r.Spans), r.TraceDropped))
	}
	return r, err
}

func newEngine(p *Program, cfg Config) (*engine, error) {
	m := p.Machine
	e := &engine{p: p, cfg: cfg, freeMsg: -1, ctl: map[string]*ctlSeq{}, committer: [2]int{-1, -1},
		res: &Result{Utilization: map[string]float64{}, Firings: map[string]int64{}, Notes: append([]string(nil), p.Notes...)}}
	e.iterT = make([]float64, cfg.Iterations)
	for _, pr := range m.Processors {
		ps := procState{units: make([]bool, pr.Units), free: pr.Units, name: pr.Name, clock: pr.ClockHz}
		ps.firingT = pr.Seconds(pr.FiringCost)
		if pr.Pool {
			ps.pool = true
			ps.spin, ps.slice = pr.Seconds(pr.SpinTime), pr.Seconds(pr.TimeSlice)
			ps.spinners = max(1, pr.Units/2)
			ps.roundT = pr.Seconds(pr.RoundCost)
			ps.lastTask = make([]int, pr.Units)
			ps.turnStart = make([]float64, pr.Units)
			ps.wakeCost = pr.Seconds(pr.WakeCost)
			ps.owed = make([]float64, pr.Units)
			for k := range ps.lastTask {
				ps.lastTask[k] = -1
			}
		}
		ps.issueT, ps.copyIssueT = pr.Seconds(pr.IssueCost), pr.Seconds(pr.CopyIssueCost)
		if pr.WakeLatency > 0 || pr.Pool {
			ps.wake = pr.Seconds(pr.WakeLatency)
			ps.freeAt = make([]float64, pr.Units)
			ps.wakeAt = make([]float64, pr.Units)
			for k := range ps.wakeAt {
				ps.wakeAt[k] = -1
			}
		}
		e.procs = append(e.procs, ps)
		e.res.Processors = append(e.res.Processors, pr.Name)
		e.res.Units = append(e.res.Units, pr.Units)
	}
	busIdx := map[string]int{}
	for i, ic := range m.Interconnects {
		b := busState{name: ic.Name, chans: make([]bool, ic.Channels), free: ic.Channels, clock: ic.ClockHz,
			s: ic.StartCost, f: ic.FinishCost, l: ic.StartLatency, bw: ic.Bandwidth, elements: ic.Elements,
			tx: make([]bool, len(ic.Elements)), rx: make([]bool, len(ic.Elements)), duplex: make([]bool, len(ic.Elements))}
		for j, el := range ic.Elements {
			b.duplex[j] = ic.IsDuplex(el)
		}
		busIdx[ic.Name] = i
		e.buses = append(e.buses, b)
		e.res.Interconnects = append(e.res.Interconnects, ic.Name)
		e.res.Channels = append(e.res.Channels, ic.Channels)
	}
	for i, pr := range m.Processors {
		if pr.Threads > 0 && !pr.Pool {
			threadLanes(&e.procs[i], pr.Threads, p.Tasks, i)
			e.res.Units[i] = len(e.procs[i].units)
		}
	}
	for i, t := range p.Tasks {
		t.controls = numberControls(t.Tree, 0)
		ts := taskState{t: t, proc: t.Processor, next: -2, target: t.Passes * cfg.Iterations, cursors: make([]int64, t.controls), end: math.Inf(1)}
		e.tasks = append(e.tasks, ts)
		e.procs[t.Processor].tasks = append(e.procs[t.Processor].tasks, i)
		e.res.Tasks = append(e.res.Tasks, t.Name)
		if err := e.registerControls(t.Tree); err != nil {
			return nil, err
		}
	}
	for i := range e.procs {
		ps := &e.procs[i]
		ps.samePrio = true
		for k, ti := range ps.tasks {
			pr := p.Tasks[ti].Priority
			if k == 0 || pr > ps.maxPrio {
				ps.maxPrio = pr
			}
			if pr != p.Tasks[ps.tasks[0]].Priority {
				ps.samePrio = false
			}
		}
	}
	for _, s := range p.Streams {
		ss := streamState{s: s, remote: len(s.Route) > 0, credits: CreditRoute(s.Route)}
		if ss.credits && cfg.Flush >= 0 {
			b := wire.NewBatch(int(s.ElemSize), int(min(s.ProducerQueue, 1<<40)), 0, cfg.Flush)
			if b.Flush > 0 {
				ss.batchTok, ss.flush = int64(b.Tokens), b.Flush.Seconds()
			}
		}
		if ss.remote {
			ss.space = s.ProducerQueue
			ss.cspace = s.ConsumerQueue - s.PreQueue
			for _, h := range s.Route {
				bi := busIdx[h.Interconnect.Name]
				hi := hopInfo{bus: bi, from: indexOf(h.Interconnect.Elements, h.From), to: indexOf(h.Interconnect.Elements, h.To)}
				if h.Forward == "cut-through" {
					hi.forward = 1
				}
				ss.hops = append(ss.hops, hi)
			}
		} else {
			ss.space = s.ConsumerQueue - s.PreQueue
		}
		ss.avail = s.PreQueue
		e.streams = append(e.streams, ss)
	}
	return e, nil
}

// threadLanes sets up processor pi with threads: the threads and one unit
// per invocation that may run at once (each task's Invocations, at least
// one), at least the processor's units.
func threadLanes(ps *procState, threads int64, tasks []*Task, pi int) {
	ps.threads = threads
	n := len(ps.units)
	lanes := 0
	for _, t := range tasks {
		if t.Processor == pi {
			lanes += max(1, t.Invocations)
		}
	}
	n = max(n, lanes)
	ps.units, ps.free = make([]bool, n), n
	ps.laneThreads, ps.laneTask = make([]int64, n), make([]int, n)
	if ps.freeAt != nil {
		ps.freeAt, ps.wakeAt = make([]float64, n), make([]float64, n)
		for k := range ps.wakeAt {
			ps.wakeAt[k] = -1
		}
	}
}

// demand is the threads task ts holds while it runs on processor ps (with
// threads): its Threads, or the whole processor.
func (ps *procState) demand(t *Task) int64 {
	if t.Threads > 0 && t.Threads < ps.threads {
		return t.Threads
	}
	return ps.threads
}

// occupy records that unit lane of ps runs task ti (a processor with
// threads): its threads are held until the unit frees. It returns the
// share of the processor the task holds, which weighs its busy time.
func (e *engine) occupy(ps *procState, lane, ti int) float64 {
	if ps.threads <= 0 {
		return 1
	}
	d := ps.demand(e.tasks[ti].t)
	ps.used += d
	ps.laneThreads[lane], ps.laneTask[lane] = d, ti
	e.tasks[ti].invocs++
	return float64(d) / float64(ps.threads) * float64(len(ps.units))
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

func (e *engine) registerControls(ns []Node) error {
	for i := range ns {
		n := &ns[i]
		if n.Kind == SubtaskNode {
			continue
		}
		cs := e.ctl[n.Cond]
		if cs == nil {
			cs = &ctlSeq{isIf: n.Kind == IfNode}
			if e.cfg.Mode == TraceDriven {
				vals, ok := e.cfg.Controls[n.Cond]
				if !ok {
					return fmt.Errorf("sim: trace-driven mode: control variable %q has no values in the control file (known: %s)", n.Cond, strings.Join(sortedNames(e.cfg.Controls), ", "))
				}
				cs.vals, cs.trace = vals, true
			} else if n.Kind == CaseNode {
				if err := cs.registerCase(n.Cond, caseWidth(ns, n.Cond), e.cfg.Probabilities, e.cfg.Seed); err != nil {
					return err
				}
			} else if n.Kind == IfNode {
				cs.p = 0.5
				if v, ok := e.cfg.Probabilities[n.Cond]; ok {
					cs.p = v
				}
				h := fnv.New64a()
				h.Write([]byte(n.Cond))
				cs.rng = rand.New(rand.NewPCG(e.cfg.Seed, h.Sum64()))
			} else {
				v, ok := e.cfg.Loops[n.Cond]
				if !ok {
					return fmt.Errorf("sim: statistical mode has no model for while variable %q: give its iteration count under loops: in the cost file, or use trace-driven control variables", n.Cond)
				}
				cs.loop = v
			}
			e.ctl[n.Cond] = cs
		} else if cs.isIf != (n.Kind == IfNode) && !cs.trace && n.Kind != CaseNode {
			return fmt.Errorf("sim: control variable %q is used by both an if and a while", n.Cond)
		}
		if err := e.registerControls(n.Body); err != nil {
			return err
		}
	}
	return nil
}

// control returns the k-th value of a control variable; ok is false when
// a trace runs out.
func (e *engine) control(n *Node, k int64) (int64, bool) {
	cs := e.ctl[n.Cond]
	if cs.trace {
		if k >= int64(len(cs.vals)) {
			return 0, false
		}
		return cs.vals[k], true
	}
	if n.Kind == WhileNode {
		return cs.loop, true
	}
	for int64(len(cs.vals)) <= k {
		v := int64(0)
		if cs.weights != nil {
			v = cs.drawCase()
		} else if cs.rng.Float64() < cs.p {
			v = 1
		}
		cs.vals = append(cs.vals, v)
	}
	return cs.vals[k], true
}

// DefaultTraceLimit is the most spans a simulation's trace keeps when
// Config.TraceLimit is 0 (about 360 MB).
const DefaultTraceLimit = 4_000_000

// addSpan keeps sp in the trace, or counts it as dropped once the trace
// holds Config.TraceLimit spans.
func (e *engine) addSpan(sp Span) {
	if int64(len(e.res.Spans)) >= e.cfg.TraceLimit {
		e.res.TraceDropped++
		return
	}
	e.res.Spans = append(e.res.Spans, sp)
}

func (e *engine) schedule(t float64, kind uint8, a, b, c int32) {
	e.seq++
	e.ev = append(e.ev, event{t: t, seq: e.seq, kind: kind, a: a, b: b, c: c})
	e.ev.up(len(e.ev) - 1)
}

func (e *engine) pop() event {
	ev := e.ev[0]
	n := len(e.ev) - 1
	e.ev[0] = e.ev[n]
	e.ev = e.ev[:n]
	if n > 0 {
		e.ev.down(0)
	}
	return ev
}

func (e *engine) markProc(i int) {
	if !e.procs[i].dirty {
		e.procs[i].dirty = true
		e.dirtyP = append(e.dirtyP, i)
	}
}

func (e *engine) markBus(i int) {
	if !e.buses[i].dirty {
		e.buses[i].dirty = true
		e.dirtyB = append(e.dirtyB, i)
	}
}

func (e *engine) run() (*Result, error) {
	for i := range e.procs {
		e.markProc(i)
	}
	e.settle()
	for len(e.ev) > 0 && e.err == nil {
		ev := e.pop()
		if ev.kind == evFlush {
			if ss := &e.streams[ev.a]; ss.batchGen != ev.b || ss.batchN == 0 {
				continue // its batch went full: no time passes for it
			}
		}
		e.now = ev.t
		e.events++
		if e.events > e.cfg.MaxEvents {
			return nil, fmt.Errorf("sim: more than %d events: stopped (raise Config.MaxEvents)", e.cfg.MaxEvents)
		}
		switch ev.kind {
		case evUnitFree:
			ps := &e.procs[ev.a]
			ps.units[ev.b] = false
			ps.free++
			if ps.threads > 0 {
				ps.used -= ps.laneThreads[ev.b]
				e.tasks[ps.laneTask[ev.b]].invocs--
			}
			if ps.freeAt != nil {
				ps.freeAt[ev.b] = e.now
			}
			e.markProc(int(ev.a))
		case evWake:
			ps := &e.procs[ev.a]
			ps.freeAt[ev.b], ps.wakeAt[ev.b] = e.now, -1
			e.markProc(int(ev.a))
		case evRelease:
			ts := &e.tasks[ev.a]
			e.committer = [2]int{ts.proc, ts.lane}
			for range max(1, ev.c) { // a pool round releases its firings at once
				e.release(int(ev.a))
			}
		case evMsgReady:
			e.msgReady(int(ev.a), ev.b)
		case evTransferEnd:
			e.transferEnd(int(ev.a), ev.b, int(ev.c))
		case evChanFree:
			e.chanFree(int(ev.a), int(ev.b), int(ev.c))
		case evHop:
			e.enqueue(ev.b, int(ev.c))
		case evFlush:
			e.sendBatch(int(ev.a), e.now)
		}
		e.settle()
		e.committer[0] = -1
	}
	if e.err != nil {
		return nil, e.err
	}
	return e.finish()
}

// settle starts whatever can start now: firings on dirty processors and
// transmissions on dirty buses, until nothing changes.
func (e *engine) settle() {
	for len(e.dirtyP) > 0 || len(e.dirtyB) > 0 {
		for len(e.dirtyP) > 0 {
			i := e.dirtyP[len(e.dirtyP)-1]
			e.dirtyP = e.dirtyP[:len(e.dirtyP)-1]
			e.procs[i].dirty = false
			e.dispatch(i)
		}
		for len(e.dirtyB) > 0 {
			i := e.dirtyB[len(e.dirtyB)-1]
			e.dirtyB = e.dirtyB[:len(e.dirtyB)-1]
			e.buses[i].dirty = false
			e.startTransfers(i)
		}
	}
}

// nextSubtask walks the task's tree to its next subtask, consuming control
// values; it returns -1 when the task has finished its passes.
func (e *engine) nextSubtask(ti int) int {
	ts := &e.tasks[ti]
	for {
		if len(ts.stack) == 0 {
			if ts.started {
				ts.passes++
				e.passDone(ts)
			}
			if ts.passes >= ts.target || ts.stopped {
				return -1
			}
			ts.stack = append(ts.stack, frame{nodes: ts.t.Tree})
			ts.started = true
		}
		f := &ts.stack[len(ts.stack)-1]
		if f.i >= len(f.nodes) {
			if f.rem > 0 {
				f.rem--
				f.i = 0
				continue
			}
			ts.stack = ts.stack[:len(ts.stack)-1]
			continue
		}
		n := &f.nodes[f.i]
		f.i++
		switch n.Kind {
		case SubtaskNode:
			return n.Subtask
		case IfNode, WhileNode, CaseNode:
			k := ts.cursors[n.id]
			v, ok := e.control(n, k)
			if !ok {
				ts.stopped = true
				ts.stack = ts.stack[:0]
				e.res.Notes = append(e.res.Notes, fmt.Sprintf("task %s stopped: control variable %s ran out after %d values", ts.t.Name, n.Cond, k))
				return -1
			}
			ts.cursors[n.id] = k + 1
			if n.Kind == CaseNode {
				if v == n.Value {
					ts.stack = append(ts.stack, frame{nodes: n.Body})
				}
			} else if n.Kind == IfNode {
				if (v != 0) != n.Invert {
					ts.stack = append(ts.stack, frame{nodes: n.Body})
				}
			} else if v > 0 {
				ts.stack = append(ts.stack, frame{nodes: n.Body, rem: v - 1})
			}
		}
	}
}

// passDone records the completion of a tree pass: at the release time of
// the last firing started.
func (e *engine) passDone(ts *taskState) {
	if ts.t.Passes <= 0 || ts.passes%ts.t.Passes != 0 {
		return
	}
	it := ts.passes/ts.t.Passes - 1
	if ts.inRound {
		e.roundPasses = append(e.roundPasses, it)
		return
	}
	e.iterDone(ts, it, ts.lastRel)
}

// iterDone records that task ts completed its passes of iteration it at
// t: the iteration completes when its last task does, and a task ends
// with its last iteration.
func (e *engine) iterDone(ts *taskState, it int64, t float64) {
	if it < int64(len(e.iterT)) && t > e.iterT[it] {
		e.iterT[it] = t
	}
	if it == int64(len(e.iterT))-1 {
		ts.end = t
	}
}

// firstEnd is when the first task to end ran its last firing (+Inf when
// one has not).
func (e *engine) firstEnd() float64 {
	t := math.Inf(1)
	for i := range e.tasks {
		if e.tasks[i].t.Passes > 0 {
			t = min(t, e.tasks[i].end)
		}
	}
	return t
}

// completedBy is how many of the first n iterations, counted from the
// first, had completed by t.
func (e *engine) completedBy(t float64, n int64) int64 {
	var k int64
	for k < n && e.iterT[k] <= t {
		k++
	}
	return k
}

func (e *engine) ready(ti int) bool {
	ts := &e.tasks[ti]
	ps := &e.procs[ts.proc]
	if ps.threads > 0 && ts.t.Batch > 1 {
		// Invocations in flight, not firings released: an invocation
		// holds its threads until its unit frees.
		if ts.invocs >= max(1, ts.t.Invocations) {
			return false
		}
	} else if ts.running >= ts.t.Replicas {
		return false
	}
	if ps.threads > 0 && ps.used > 0 && ps.used+ps.demand(ts.t) > ps.threads {
		return false // its threads do not fit beside the running invocations
	}
	return e.readyTokens(ti)
}

// readyTokens reports whether the task's next subtask has its input
// tokens and output room, whatever runs.
func (e *engine) readyTokens(ti int) bool {
	ts := &e.tasks[ti]
	if ts.next == -2 {
		ts.next = e.nextSubtask(ti)
	}
	if ts.next < 0 {
		return false
	}
	st := &ts.t.Subtasks[ts.next]
	if k := e.batchSize(ts); k > 1 && !ts.inRound && (ts.running == 0 || e.procs[ts.proc].threads > 0) {
		// A kernel invocation waits for all of its firings (on a
		// processor with threads, also while earlier ones are in flight).
		for _, a := range st.Pops {
			if e.streams[a.Stream].avail < k*a.Count {
				return false
			}
		}
		for _, a := range st.Pushes {
			if e.streams[a.Stream].space < k*a.Count {
				return false
			}
		}
		return true
	}
	for _, a := range st.Pops {
		if e.streams[a.Stream].avail < a.Count {
			return false
		}
	}
	for _, a := range st.Pushes {
		if e.streams[a.Stream].space < a.Count {
			return false
		}
	}
	return true
}

// pickReady returns the index in ps.tasks of the ready task of highest
// priority, taken in rotation order from ps.rot (the first one found when
// all share a priority), or -1 when none is ready.
func (e *engine) pickReady(ps *procState) int {
	n := len(ps.tasks)
	pick, best := -1, 0
	for k := 0; k < n; k++ {
		j := (ps.rot + k) % n
		ti := ps.tasks[j]
		if !e.ready(ti) {
			continue
		}
		pr := e.tasks[ti].t.Priority
		if pick < 0 || pr > best {
			pick, best = j, pr
			if ps.samePrio || pr == ps.maxPrio {
				break
			}
		}
	}
	return pick
}

func (e *engine) dispatch(pi int) {
	ps := &e.procs[pi]
	if ps.pool {
		e.dispatchPool(pi)
		return
	}
	for ps.free > 0 {
		n := len(ps.tasks)
		pick := e.pickReady(ps)
		if pick < 0 {
			return
		}
		lane := e.awakeUnit(ps)
		if lane < 0 {
			e.wakeUnits(ps, pi)
			return
		}
		ps.rot = (pick + 1) % n
		if e.tasks[ps.tasks[pick]].t.Batch > 1 {
			e.startRound(ps.tasks[pick], pi, lane, false)
			continue
		}
		e.start(ps.tasks[pick], pi, lane)
	}
}

// awakeUnit returns a free unit that can start a subtask now, or -1. With
// a wake latency, a free unit is awake at the time it became free (it
// takes what its own release made ready) or when its wake ends; after
// that it is parked.
func (e *engine) awakeUnit(ps *procState) int {
	for l, busy := range ps.units {
		if !busy && (ps.freeAt == nil || ps.freeAt[l] == e.now || (ps.wake == 0 && !ps.pool)) {
			return l
		}
	}
	if ps.pool {
		return e.spinningUnit(ps)
	}
	return -1
}

// wakeUnits starts waking parked units of a processor, one per ready task
// that no wake covers yet: each ends WakeLatency later.
func (e *engine) wakeUnits(ps *procState, pi int) {
	ready := 0
	for _, ti := range ps.tasks {
		if e.ready(ti) {
			ready++
		}
	}
	for l := range ps.units {
		if ps.wakeAt[l] >= 0 {
			ready--
		}
	}
	for l, busy := range ps.units {
		if ready <= 0 {
			return
		}
		if !busy && ps.wakeAt[l] < 0 {
			ps.wakeAt[l] = e.now + ps.wake
			e.schedule(ps.wakeAt[l], evWake, int32(pi), int32(l), 0)
			e.chargeWake(ps, pi)
			ready--
		}
	}
}

// chargeWake charges pool processor pi's wake cost to its unit whose
// release is being settled (the committer: its commit readied the work a
// parked unit is woken for), which pays it at the start of its next round
// or firing. A wake readied from elsewhere (a message, a unit of another
// processor) costs the pool's units nothing.
func (e *engine) chargeWake(ps *procState, pi int) {
	if ps.wakeCost == 0 || ps.owed == nil || e.committer[0] != pi {
		return
	}
	ps.owed[e.committer[1]] += ps.wakeCost
}

// payWake returns what unit lane of ps owes for the wakes it caused, and
// clears it: the time its next round or firing starts late.
func (ps *procState) payWake(lane int) float64 {
	if ps.owed == nil {
		return 0
	}
	d := ps.owed[lane]
	ps.owed[lane] = 0
	return d
}

// start runs the acquire → process → release of the task's next subtask.
func (e *engine) start(ti, pi, lane int) {
	ts := &e.tasks[ti]
	ps := &e.procs[pi]
	pr := e.p.Machine.Processors[pi]
	st := &ts.t.Subtasks[ts.next]
	sub := ts.next
	ps.units[lane] = true
	ps.free--
	ts.lane = lane
	share := e.occupy(ps, lane, ti)
	var acq, rel int64
	for _, a := range st.Pops {
		ss := &e.streams[a.Stream]
		ss.avail -= a.Count
		acq += pr.PopAcq.Cycles(a.Count * ss.s.ElemSize)
		rel += pr.PopDisc
	}
	for _, a := range st.Pushes {
		e.streams[a.Stream].space -= a.Count
		acq += pr.PushAcq
	}
	// A fused chain's replicas claim batches of firings: the runtime's
	// per-firing and per-port work is paid once per claimed batch.
	per := float64(max(1, ts.t.ClaimBatch))
	procEnd := e.now + ps.payWake(lane) + (pr.Seconds(acq)+ps.firingT)/per + st.Time
	sendAt := procEnd
	for _, a := range st.Pushes {
		ss := &e.streams[a.Stream]
		bytes := a.Count * ss.s.ElemSize
		switch {
		case ss.remote && ss.batchTok > 1:
			// Batched: a full batch goes now, a partial one at its
			// flush timeout.
			if ss.batchN == 0 {
				ss.batchGen++
				e.schedule(sendAt+ss.flush, evFlush, int32(a.Stream), ss.batchGen, 0)
			}
			ss.batchN += a.Count
			ss.batchBytes += bytes
			if ss.batchN >= ss.batchTok {
				e.sendBatch(a.Stream, sendAt)
			}
		case ss.remote:
			rdy := max(sendAt+e.sendLatency(ss), ss.lastRdy)
			ss.lastRdy = rdy
			m := e.newMsg(int32(a.Stream), a.Count, bytes)
			e.schedule(rdy, evMsgReady, int32(a.Stream), m, 0)
		}
		c := pr.PushSend.Cycles(bytes)
		rel += c
		sendAt += pr.Seconds(c) / per
	}
	end := procEnd + pr.Seconds(rel)/per
	ps.busy += (end - e.now) * share
	relT := max(end, ts.lastRel)
	ts.lastRel = relT
	ts.running++
	ts.firings++
	ts.queue = append(ts.queue, inflight{sub: int32(sub), release: relT})
	if e.cfg.Trace {
		e.addSpan(Span{Element: ps.name, Lane: lane, Name: st.Name, Task: ti, Start: e.now, End: end})
	}
	e.schedule(end, evUnitFree, int32(pi), int32(lane), 0)
	e.schedule(relT, evRelease, int32(ti), 0, 0)
	ts.next = -2
	ts.next = e.nextSubtask(ti)
}

func (e *engine) release(ti int) {
	ts := &e.tasks[ti]
	f := ts.queue[ts.qhead]
	ts.qhead++
	if ts.qhead == len(ts.queue) {
		ts.queue, ts.qhead = ts.queue[:0], 0
	}
	ts.running--
	st := &ts.t.Subtasks[f.sub]
	for _, a := range st.Pops {
		ss := &e.streams[a.Stream]
		if ss.remote {
			ss.cspace += a.Count
			e.flushPending(a.Stream)
		} else {
			ss.space += a.Count
			e.markProc(e.tasks[ss.s.Producer].proc)
		}
	}
	for _, a := range st.Pushes {
		ss := &e.streams[a.Stream]
		if !ss.remote {
			ss.avail += a.Count
			e.markProc(e.tasks[ss.s.Consumer].proc)
		}
	}
	e.markProc(ts.proc)
}

func (e *engine) newMsg(stream int32, n, bytes int64) int32 {
	var i int32
	if e.freeMsg >= 0 {
		i = e.freeMsg
		e.freeMsg = e.msgs[i].next
	} else {
		e.msgs = append(e.msgs, message{})
		i = int32(len(e.msgs) - 1)
	}
	e.msgs[i] = message{stream: stream, n: n, bytes: bytes, next: -1}
	e.res.Messages++
	return i
}

// msgReady: the message reached the end of the start latency; it joins the
// first bus queue once the consumer's buffer has room (in stream order).
func (e *engine) msgReady(si int, m int32) {
	ss := &e.streams[si]
	if ss.phead == len(ss.pending) && ss.cspace >= e.msgs[m].n {
		ss.cspace -= e.msgs[m].n
		e.admit(si, m)
		return
	}
	ss.pending = append(ss.pending, m)
}

func (e *engine) flushPending(si int) {
	ss := &e.streams[si]
	for ss.phead < len(ss.pending) {
		m := ss.pending[ss.phead]
		if ss.cspace < e.msgs[m].n {
			return
		}
		ss.cspace -= e.msgs[m].n
		ss.phead++
		e.admit(si, m)
	}
	ss.pending, ss.phead = ss.pending[:0], 0
}

// sendLatency is the start latency a message waits before it asks for
// room at the consumer: the first link's L, or none on a credit route,
// where the latency is spent in flight, inside the credit window (admit).
// sendBatch sends stream si's pending batch as one message at time t.
func (e *engine) sendBatch(si int, t float64) {
	ss := &e.streams[si]
	rdy := max(t+e.sendLatency(ss), ss.lastRdy)
	ss.lastRdy = rdy
	m := e.newMsg(int32(si), ss.batchN, ss.batchBytes)
	ss.batchN, ss.batchBytes = 0, 0
	ss.batchGen++ // the pending flush event finds nothing to send
	e.schedule(rdy, evMsgReady, int32(si), m, 0)
}

func (e *engine) sendLatency(ss *streamState) float64 {
	if ss.credits {
		return 0
	}
	ic := ss.s.Route[0].Interconnect
	return ic.Seconds(ic.StartLatency)
}

// admit starts a message that has room at the consumer on its route. On a
// credit route its tokens leave the producer's FIFO now (the runtime's
// sender writes them to the socket once credits allow) and it reaches the
// first bus after the link's start latency.
func (e *engine) admit(si int, m int32) {
	ss := &e.streams[si]
	if !ss.credits {
		e.enqueue(m, 0)
		return
	}
	ss.space += e.msgs[m].n
	e.markProc(e.tasks[ss.s.Producer].proc)
	e.forward(si, m, 0)
}

func (e *engine) enqueue(m int32, hop int) {
	ss := &e.streams[e.msgs[m].stream]
	bi := ss.hops[hop].bus
	b := &e.buses[bi]
	b.queue = append(b.queue, m)
	b.qhops = append(b.qhops, int32(hop))
	e.markBus(bi)
}

// startTransfers starts queued messages while channels are free: the one
// nearest the head whose transmitter and receiver are free.
func (e *engine) startTransfers(bi int) {
	b := &e.buses[bi]
	for b.free > 0 && len(b.queue) > 0 {
		pick := -1
		for k, m := range b.queue {
			h := e.streams[e.msgs[m].stream].hops[b.qhops[k]]
			if b.tx[h.from] || b.rx[h.to] {
				continue
			}
			if !b.duplex[h.from] && b.rx[h.from] || !b.duplex[h.to] && b.tx[h.to] {
				continue
			}
			pick = k
			break
		}
		if pick < 0 {
			return
		}
		m, hop := b.queue[pick], int(b.qhops[pick])
		copy(b.queue[pick:], b.queue[pick+1:])
		copy(b.qhops[pick:], b.qhops[pick+1:])
		b.queue = b.queue[:len(b.queue)-1]
		b.qhops = b.qhops[:len(b.qhops)-1]
		msg := &e.msgs[m]
		ss := &e.streams[msg.stream]
		h := ss.hops[hop]
		lane := 0
		for b.chans[lane] {
			lane++
		}
		b.chans[lane] = true
		b.free--
		b.tx[h.from], b.rx[h.to] = true, true
		xfer := int64(0)
		if b.bw > 0 {
			xfer = (msg.bytes + b.bw - 1) / b.bw
		}
		u := e.now
		v := u + float64(b.s+xfer)/b.clock
		if hop > 0 && h.forward == 1 {
			v = max(v, msg.v+1/b.clock)
		}
		occ := u + float64(b.s+xfer+b.f)/b.clock
		msg.v = v
		b.busy += occ - u
		if e.cfg.Trace {
			e.addSpan(Span{Element: b.name, Lane: lane, Bus: true, Name: ss.s.Name, Task: int(msg.stream), Start: u, End: occ, Bytes: msg.bytes})
		}
		e.schedule(v, evTransferEnd, msg.stream, m, int32(hop))
		e.schedule(occ, evChanFree, msg.stream, int32(lane), int32(hop))
		if hop+1 < len(ss.hops) && ss.hops[hop+1].forward == 1 {
			e.enqueue(m, hop+1) // cut-through: the next hop may start now
		}
	}
}

func (e *engine) transferEnd(si int, m int32, hop int) {
	ss := &e.streams[si]
	msg := &e.msgs[m]
	if hop == 0 && !ss.credits {
		ss.space += msg.n // the data left the producer's buffer
		e.markProc(e.tasks[ss.s.Producer].proc)
	}
	if hop+1 < len(ss.hops) {
		if ss.hops[hop+1].forward == 0 {
			e.forward(si, m, hop+1)
		}
		return
	}
	ss.avail += msg.n
	e.markProc(e.tasks[ss.s.Consumer].proc)
	e.msgs[m].next = e.freeMsg
	e.freeMsg = m
}

// forward sends a stored message on along its route: at once, or on a
// credit link after the link's start latency (a relay on the client is a
// receiver committing to a FIFO and a sender taking from it, as costly as
// the first hop's start).
func (e *engine) forward(si int, m int32, hop int) {
	ic := e.streams[si].s.Route[hop].Interconnect
	if !ic.Credits || ic.StartLatency == 0 {
		e.enqueue(m, hop)
		return
	}
	e.schedule(e.now+ic.Seconds(ic.StartLatency), evHop, int32(si), m, int32(hop))
}

func (e *engine) chanFree(si, lane, hop int) {
	h := e.streams[si].hops[hop]
	b := &e.buses[h.bus]
	b.chans[lane] = false
	b.free++
	b.tx[h.from], b.rx[h.to] = false, false
	e.markBus(h.bus)
}

func (e *engine) finish() (*Result, error) {
	r := e.res
	var blocked []string
	done := int64(math.MaxInt64)
	stopped := false
	for i := range e.tasks {
		ts := &e.tasks[i]
		r.Firings[ts.t.Name] = ts.firings
		for _, st := range ts.t.Stages {
			r.Firings[st] = ts.firings
		}
		r.Makespan = max(r.Makespan, ts.lastRel)
		if ts.t.Passes > 0 {
			done = min(done, ts.passes/ts.t.Passes)
		}
		stopped = stopped || ts.stopped
		if ts.passes < ts.target && !ts.stopped {
			blocked = append(blocked, e.describeBlocked(i))
		}
	}
	if len(blocked) > 0 && !stopped {
		return nil, &DeadlockError{Time: e.now, Blocked: blocked}
	}
	if done == math.MaxInt64 {
		done = 0
	}
	r.Iterations = min(done, e.cfg.Iterations)
	r.Events = e.events
	r.Makespan = max(r.Makespan, e.now)
	T := r.Makespan
	for _, ps := range e.procs {
		if T > 0 {
			r.Utilization[ps.name] = ps.busy / (T * float64(len(ps.units)))
		} else {
			r.Utilization[ps.name] = 0
		}
	}
	for _, b := range e.buses {
		if T > 0 {
			r.Utilization[b.name] = b.busy / (T * float64(len(b.chans)))
		} else {
			r.Utilization[b.name] = 0
		}
	}
	if r.Iterations > 0 {
		n := r.Iterations
		r.Latency = e.iterT[0]
		if n < 8 {
			r.Period = e.iterT[n-1] / float64(n)
		} else {
			// Steady state: skip the first quarter (filling) and the last
			// quarter or whatever completed after the first task ended
			// (draining, when upstream tasks have stopped).
			a, b := n/4, n-n/4
			if d := e.completedBy(e.firstEnd(), n); d < b {
				if d-a >= max(2, n/8) {
					b = d
				} else {
					r.Transient = true
					r.Notes = append(r.Notes, fmt.Sprintf("the first task ran its last firing when %d of %d iterations had completed: the channels hold more iterations than this run, whose period includes the drain (too short); simulate more iterations", d, n))
				}
			}
			r.Period = (e.iterT[b-1] - e.iterT[a-1]) / float64(b-a)
		}
		if r.Period > 0 {
			r.Throughput = 1 / r.Period
		} else {
			r.Throughput = math.Inf(1)
		}
	}
	if r.Iterations < e.cfg.Iterations {
		r.Notes = append(r.Notes, fmt.Sprintf("only %d of %d iterations completed", r.Iterations, e.cfg.Iterations))
	}
	return r, nil
}

func (e *engine) describeBlocked(ti int) string {
	ts := &e.tasks[ti]
	if ts.next < 0 {
		return fmt.Sprintf("%s (pass %d of %d)", ts.t.Name, ts.passes, ts.target)
	}
	st := &ts.t.Subtasks[ts.next]
	var why []string
	for _, a := range st.Pops {
		ss := &e.streams[a.Stream]
		if ss.avail < a.Count {
			why = append(why, fmt.Sprintf("waits for %d tokens on %s (has %d)", a.Count, ss.s.Name, ss.avail))
		}
	}
	for _, a := range st.Pushes {
		ss := &e.streams[a.Stream]
		if ss.space < a.Count {
			why = append(why, fmt.Sprintf("waits for room for %d tokens on %s (has %d)", a.Count, ss.s.Name, ss.space))
		}
	}
	if len(why) == 0 {
		why = append(why, "ready but never dispatched")
	}
	return st.Name + " " + strings.Join(why, ", ")
}
