// Package machine is sluice's Abstract Streaming Machine (ASM): a model of
// the target computer as a bipartite graph of processors and memories on
// one side and interconnects on the other, with every cost parameter of the
// ACOTES ASM (clock rates, I/O capability, address spaces, the processor
// costs of the push/pop communication primitives with their staircase
// units, memory size, latency and bandwidth, and for each interconnect its
// elements, duplex and routing interfaces, start latency L, start cost S,
// bandwidth per channel B, finish cost F, channel count and
// multiplexability).
//
// A Machine is read from YAML with Load or Parse (errors carry
// file:line:col) or built in Go; Validate reports every problem at once.
// Route finds the static route of a stream between two processors, and
// CheckRoutes reports a non-multiplexable interconnect asked to carry more
// than one stream. Package sim simulates a mapped program on a Machine.
//
// All costs are in cycles of the element's own clock; Seconds converts.
// The package imports nothing else of sluice.
package machine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/internal/yamlpos"
)

// Routing is the forwarding scheme of an element on an interconnect: how
// (and whether) it forwards messages arriving from that interconnect.
type Routing string

const (
	// NoRouting forwards nothing: a route may not pass through the element.
	NoRouting Routing = "none"
	// StoreAndForward receives the whole message before retransmitting it.
	StoreAndForward Routing = "store-and-forward"
	// CutThrough starts retransmitting once the incoming start phase began,
	// never faster than the incoming link delivers.
	CutThrough Routing = "cut-through"
)

// Staircase is the cost of a communication primitive moving n bytes: a
// fixed cost, plus UnitCost for each complete or partial Unit of bytes
// after the first (Figure 14a: pushSend and popAcq).
type Staircase struct {
	// Fixed is the minimum cost in cycles.
	Fixed int64
	// Unit is the transfer unit in bytes; 0 means one unit of any size.
	Unit int64
	// UnitCost is the cost in cycles of each unit after the first.
	UnitCost int64
}

// Cycles returns the cost of moving n bytes.
func (s Staircase) Cycles(n int64) int64 {
	if s.Unit <= 0 || n <= s.Unit {
		return s.Fixed
	}
	units := (n + s.Unit - 1) / s.Unit
	return s.Fixed + (units-1)*s.UnitCost
}

// AddressRange is one memory in a processor's local address space.
type AddressRange struct {
	// Memory names the memory.
	Memory string
	// Base is the virtual address at which it appears.
	Base uint64
}

// Processor is a processing element (ASM Figure 14a).
type Processor struct {
	// Name is unique in the machine.
	Name string
	// Kind classifies the processor for per-kind costs and implementation
	// choice: "cpu", "gpu", "spe", ... (default "cpu").
	Kind string
	// ClockHz is the clock rate in Hz.
	ClockHz float64
	// Units is the number of firings the processor runs at once (cores,
	// GPU streams); 1 is the ASM's processor. An extension of Figure 14.
	Units int
	// HasIO says whether the processor can perform system I/O.
	HasIO bool
	// AddressSpace lists the memories addressable by load/store.
	AddressSpace []AddressRange
	// PushAcq is the cost of acquiring an empty producer buffer (pushAcqCost).
	PushAcq int64
	// PushSend is the cost of sending a pushed block (pushSendFixedCost,
	// pushSendUnit, pushSendUnitCost).
	PushSend Staircase
	// PopAcq is the cost of acquiring a full consumer buffer (popAcqFixedCost,
	// popAcqUnit, popAcqUnitCost).
	PopAcq Staircase
	// PopDisc is the cost of discarding a consumer buffer (popDiscCost).
	PopDisc int64
	// WakeLatency is the time in cycles an idle unit takes to start a
	// subtask that became ready while it was idle (a parked pool worker
	// woken by another); a unit that has just finished a subtask takes
	// ready work at once. 0 (the ASM's processor) means no latency. An
	// extension of Figure 14.
	WakeLatency int64
	// WakeCost is what waking a parked unit costs the unit that wakes it,
	// in cycles: a pool worker whose commit readies work while no other
	// worker polls signals a parked one (a lock, a channel send and the
	// Go scheduler's wake-up of an idle thread) before it goes on, and is
	// that much later to its next round. Only pool processors pay it (0:
	// waking is free). An extension of Figure 14.
	WakeCost int64
	// Pool says the processor's units are a pool of workers that run firings
	// the way sluice's CPU runtime does: an actor taken by a unit fires a
	// round of every firing it is ready for (up to half of the smallest
	// capacity of its channels, in firings), its outputs committed and its
	// inputs released when the round ends; the unit keeps the actor for
	// further rounds while it stays ready, up to TimeSlice when other work
	// waits; a unit with nothing to do polls for SpinTime, then parks and
	// takes WakeLatency to start work readied later. The port costs are then
	// charged once per round and port. An extension of Figure 14.
	Pool bool
	// FiringCost is the processor's own cost per firing in cycles (a pool
	// worker's clock read and call; a GPU's kernel launch), on top of the
	// actor's cost. An extension of Figure 14.
	FiringCost int64
	// RoundCost is a pool's cost per round in cycles (taking the unit from a
	// run queue, checking readiness, notifying the neighbours). An
	// extension of Figure 14.
	RoundCost int64
	// SpinTime is how long, in cycles, an idle pool unit polls for work
	// before it parks (0: it parks at once). An extension of Figure 14.
	SpinTime int64
	// TimeSlice is how long, in cycles, a pool unit keeps running rounds of
	// one actor while other work waits (0: one round per turn). An
	// extension of Figure 14.
	TimeSlice int64
	// RoundTime is about how long, in cycles, a pool's round may last: a
	// round takes at most that many cycles' worth of its actor's firings
	// (at least one per replica; a fused chain's replicas at least two
	// claimed batches each), below the capacities' limit (0: the
	// capacities' limit only). An extension of Figure 14.
	RoundTime int64
	// Threads is the number of threads (work-items) a GPU keeps resident
	// at once: its SMs (compute units) × the resident threads per SM. With
	// it, invocations of kernel actors on the processor run concurrently
	// (on different streams of the device) while their threads fit — an
	// invocation of G work-groups of I work-items takes G × I of them, all
	// when that is more — and at least one runs at a time; 0 (unknown)
	// keeps one invocation per unit. An extension of Figure 14.
	Threads int64
	// IssueCost and CopyIssueCost are what issuing work to a device costs
	// the one host thread that does it for all of the device's actors (the
	// runtime's device manager), in cycles: per kernel invocation and per
	// copy between host memory and the device. Invocations queue for that
	// thread, one at a time, before they run; 0: issuing is free. An
	// extension of Figure 14.
	IssueCost, CopyIssueCost int64
	// Origin says where the processor was declared, if known.
	Origin string
}

// Seconds converts cycles of the processor's clock to seconds.
func (p *Processor) Seconds(cycles int64) float64 { return float64(cycles) / p.ClockHz }

// Memory is a memory (ASM Figure 14b).
type Memory struct {
	// Name is unique in the machine.
	Name string
	// ClockHz is the clock rate in Hz.
	ClockHz float64
	// Size is the size in bytes (0: unknown).
	Size int64
	// Latency is the access latency in cycles.
	Latency int64
	// Bandwidth is in bytes per cycle.
	Bandwidth int64
	// Origin says where the memory was declared, if known.
	Origin string
}

// Interconnect is a bus with one or more channels joining processors and
// memories (ASM Figure 14c).
type Interconnect struct {
	// Name is unique in the machine.
	Name string
	// ClockHz is the clock rate in Hz.
	ClockHz float64
	// Elements names the processors and memories on the bus.
	Elements []string
	// Duplex says, per element, whether it can transmit and receive at the
	// same time on different channels; elements not listed are duplex.
	Duplex map[string]bool
	// Routing says, per element, how it forwards messages arriving on this
	// interconnect; elements not listed do not route (memories default to
	// store-and-forward).
	Routing map[string]Routing
	// StartLatency (L) is the time from the start of pushSend until the
	// message joins the bus queue, in cycles.
	StartLatency int64
	// StartCost (S) is the length of the start phase in cycles.
	StartCost int64
	// Bandwidth (B) is the bandwidth of one channel in bytes per cycle;
	// 0 means unlimited (the transfer phase takes no time).
	Bandwidth int64
	// FinishCost (F) is the length of the finish phase in cycles.
	FinishCost int64
	// Channels is the number of channels (numChannels, ≥ 1).
	Channels int
	// Multiplexable is false for a hardware FIFO that carries one stream.
	Multiplexable bool
	// Credits says the link carries sluice's cross-machine channels (the
	// cluster runtime's remote streams, docs/cluster.md): every stream on
	// it has a credit window of its channel's capacity in flight on each
	// hop, and a processor that relays it (the client between two
	// workers) holds it in a FIFO of that capacity, so the stream buffers
	// two capacities per hop beyond the producer's own FIFO. Without it a
	// message waits for room in the consumer's one buffer (the ASM). An
	// extension of Figure 14.
	Credits bool
	// Origin says where the interconnect was declared, if known.
	Origin string
}

// Seconds converts cycles of the interconnect's clock to seconds.
func (ic *Interconnect) Seconds(cycles int64) float64 { return float64(cycles) / ic.ClockHz }

// TransferCycles returns ⌈n/B⌉, the cycles of the transfer phase of an
// n-byte message (0 when the bandwidth is unlimited).
func (ic *Interconnect) TransferCycles(n int64) int64 {
	if ic.Bandwidth <= 0 || n <= 0 {
		return 0
	}
	return (n + ic.Bandwidth - 1) / ic.Bandwidth
}

// Latency returns L + S + ⌈n/B⌉ in seconds: the time from the start of
// pushSend until an n-byte message sent alone is available to the receiver.
func (ic *Interconnect) Latency(n int64) float64 {
	return ic.Seconds(ic.StartLatency + ic.StartCost + ic.TransferCycles(n))
}

// Occupancy returns S + ⌈n/B⌉ + F in seconds: how long an n-byte message
// holds a channel.
func (ic *Interconnect) Occupancy(n int64) float64 {
	return ic.Seconds(ic.StartCost + ic.TransferCycles(n) + ic.FinishCost)
}

// IsDuplex reports whether element e may transmit and receive at once.
func (ic *Interconnect) IsDuplex(e string) bool {
	d, ok := ic.Duplex[e]
	return !ok || d
}

// RoutingOf returns how element e forwards messages arriving on ic.
func (ic *Interconnect) RoutingOf(e string, isMemory bool) Routing {
	if r, ok := ic.Routing[e]; ok {
		return r
	}
	if isMemory {
		return StoreAndForward
	}
	return NoRouting
}

// Has reports whether e is an element of the interconnect.
func (ic *Interconnect) Has(e string) bool {
	for _, x := range ic.Elements {
		if x == e {
			return true
		}
	}
	return false
}

// Machine is an Abstract Streaming Machine.
type Machine struct {
	// Name names the machine.
	Name string
	// Processors, Memories and Interconnects in declaration order.
	Processors    []*Processor
	Memories      []*Memory
	Interconnects []*Interconnect
	// Calibration holds what a calibration measured to derive the model
	// (host, CPU model, devices, raw figures), as strings keyed by name;
	// it does not enter the cost model.
	Calibration map[string]string
	// Aliases maps device IDs to the processor that stands for them: one
	// GPU seen through two backends (cuda:0, and opencl:1:0 through
	// NVIDIA's OpenCL) is one processor, which both IDs resolve to.
	Aliases map[string]string
	// Origin is the file the machine came from, if any.
	Origin string
}

// Processor returns the processor with the given name, or nil.
func (m *Machine) Processor(name string) *Processor {
	for _, p := range m.Processors {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// ProcessorIndex returns the index of the named processor, or -1.
func (m *Machine) ProcessorIndex(name string) int {
	for i, p := range m.Processors {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// Memory returns the memory with the given name, or nil.
func (m *Machine) Memory(name string) *Memory {
	for _, x := range m.Memories {
		if x.Name == name {
			return x
		}
	}
	return nil
}

// Interconnect returns the interconnect with the given name, or nil.
func (m *Machine) Interconnect(name string) *Interconnect {
	for _, x := range m.Interconnects {
		if x.Name == name {
			return x
		}
	}
	return nil
}

// Resolve finds the processor a mapping's device names: a processor of that
// name, else of that name without its colons ("cuda:1" → "cuda1", as a
// calibrated model names its GPUs), else for "cuda…" or "opencl…" the first
// gpu-kind processor whose name starts with the backend's, else the first
// processor whose kind is the device name or its prefix before ':' ("cpu",
// "gpu:0" → kind gpu, "cuda:0" → kind gpu, "opencl:0:1" → first gpu). It
// returns nil when nothing fits. A worker's device ("worker:w1/cpu", or
// "worker:w1" for its CPU, as a cluster mapping names it) is the processor
// named after the worker ("w1"), or "w1-cuda0" for its device cuda:0, as
// `sluice calibrate --broker` names them; nothing else stands in for it.
func (m *Machine) Resolve(device string) *Processor {
	if p := m.Processor(device); p != nil {
		return p
	}
	if a, ok := m.Aliases[device]; ok {
		return m.Processor(a)
	}
	if w, ok := strings.CutPrefix(device, "worker:"); ok {
		return m.resolveWorker(w)
	}
	// A device ID without its colons names a processor of a calibrated
	// model ("cuda:1" → "cuda1").
	if p := m.Processor(strings.ReplaceAll(device, ":", "")); p != nil {
		return p
	}
	kind, _, _ := strings.Cut(device, ":")
	if kind == "cuda" || kind == "opencl" {
		// A calibrated model names its GPUs by device ID ("cuda0",
		// "opencl10"): the backend's first one.
		for _, p := range m.Processors {
			if p.Kind == "gpu" && strings.HasPrefix(p.Name, kind) {
				return p
			}
		}
	}
	switch kind {
	case "cuda", "opencl":
		kind = "gpu"
	case "host":
		kind = "cpu"
	}
	for _, p := range m.Processors {
		if p.Kind == kind {
			return p
		}
	}
	return nil
}

// DeviceID returns the device ID (cuda:0, opencl:0:0) that gpu processor
// p of a calibrated model stands for, which sluice run and device.Open
// accept: the calibration record's NAME_id (sluice calibrate writes it),
// else the ID read back from calibrate's naming — "cuda" and a number, or
// "opencl" and two digits (platform, device). It returns "" for any other
// processor (a hand-written model's "gpu" names no device).
func (m *Machine) DeviceID(p *Processor) string {
	if p == nil || p.Kind != "gpu" {
		return ""
	}
	if id := m.Calibration[p.Name+"_id"]; id != "" {
		return id
	}
	digits := func(s string) bool {
		for _, r := range s {
			if r < '0' || r > '9' {
				return false
			}
		}
		return s != ""
	}
	if n, ok := strings.CutPrefix(p.Name, "cuda"); ok && digits(n) {
		return "cuda:" + n
	}
	if n, ok := strings.CutPrefix(p.Name, "opencl"); ok && digits(n) && len(n) == 2 {
		return "opencl:" + n[:1] + ":" + n[1:]
	}
	return ""
}

// resolveWorker finds the processor of a worker's device, "NAME/DEVICE"
// or "NAME" (its CPU), as a calibrated cluster model names them: "NAME"
// for the worker's CPU pool ("NAME-cpu" when the host's model has an
// element of that name), "NAME-DEVICE" without colons for another device
// ("w1-cuda0"). It returns nil when the model has none.
func (m *Machine) resolveWorker(w string) *Processor {
	name, dev, _ := strings.Cut(w, "/")
	if dev != "" && dev != "cpu" {
		return m.Processor(name + "-" + strings.ReplaceAll(dev, ":", ""))
	}
	if p := m.Processor(name + "-cpu"); p != nil {
		return p // the worker's name is taken by the host's processor
	}
	return m.Processor(name)
}

// Problem is one thing wrong with a machine description.
type Problem struct {
	// Where is a file position ("m.yaml:4:7") or an element name.
	Where string
	// Msg says what was expected and what was found.
	Msg string
}

// String renders "where: msg".
func (p Problem) String() string {
	if p.Where == "" {
		return p.Msg
	}
	return p.Where + ": " + p.Msg
}

// ValidationError lists every problem found in a machine.
type ValidationError struct {
	// Machine names the machine.
	Machine string
	// Problems in a stable order.
	Problems []Problem
}

// Error renders all problems, one per line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "machine %q has %d problem(s):", e.Machine, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Validate checks the machine and returns a *ValidationError listing every
// problem, or nil: names that are empty or not unique across processors,
// memories and interconnects; the bipartite topology (an interconnect's
// elements must be processors or memories, never interconnects, and
// processors and memories connect only through interconnects); unknown
// elements in interconnects, duplex and routing tables and address spaces;
// clock rates, sizes and costs out of range; a staircase with a unit cost
// but no unit; an interconnect with fewer than two elements or no channel;
// a processor or memory on no interconnect while the machine has several.
func (m *Machine) Validate() error {
	var ps []Problem
	add := func(where, fallback, format string, args ...any) {
		if where == "" {
			where = fallback
		}
		ps = append(ps, Problem{Where: where, Msg: fmt.Sprintf(format, args...)})
	}
	kinds := map[string]string{}
	origins := map[string]string{}
	declare := func(name, kind, origin string) {
		if name == "" {
			add(origin, m.Name, "%s has an empty name: expected a unique name", kind)
			return
		}
		if prev, dup := kinds[name]; dup {
			add(origin, name, "duplicate name %q: already declared as a %s%s (names are unique across processors, memories and interconnects)", name, prev, at(origins[name]))
			return
		}
		kinds[name], origins[name] = kind, origin
	}
	if len(m.Processors) == 0 {
		add(m.Origin, m.Name, "machine has no processor: expected at least one")
	}
	for _, p := range m.Processors {
		declare(p.Name, "processor", p.Origin)
	}
	for _, x := range m.Memories {
		declare(x.Name, "memory", x.Origin)
	}
	for _, ic := range m.Interconnects {
		declare(ic.Name, "interconnect", ic.Origin)
	}
	nonNeg := func(origin, name, what string, v int64) {
		if v < 0 {
			add(origin, name, "%s %s is %d: expected ≥ 0", name, what, v)
		}
	}
	clock := func(origin, name string, hz float64) {
		if !(hz > 0) || hz > 1e15 {
			add(origin, name, "%s has clock rate %g Hz: expected a positive rate such as 1GHz", name, hz)
		}
	}
	stair := func(origin, name, what string, s Staircase) {
		nonNeg(origin, name, what+" fixed cost", s.Fixed)
		nonNeg(origin, name, what+" unit", s.Unit)
		nonNeg(origin, name, what+" unit cost", s.UnitCost)
		if s.UnitCost > 0 && s.Unit == 0 {
			add(origin, name, "%s %s has a unit cost but no unit: expected a unit in bytes", name, what)
		}
	}
	for _, p := range m.Processors {
		clock(p.Origin, p.Name, p.ClockHz)
		if p.Units < 1 {
			add(p.Origin, p.Name, "processor %s has %d units: expected ≥ 1", p.Name, p.Units)
		}
		nonNeg(p.Origin, p.Name, "push acquire cost", p.PushAcq)
		nonNeg(p.Origin, p.Name, "pop discard cost", p.PopDisc)
		nonNeg(p.Origin, p.Name, "wake latency", p.WakeLatency)
		nonNeg(p.Origin, p.Name, "wake cost", p.WakeCost)
		nonNeg(p.Origin, p.Name, "firing cost", p.FiringCost)
		nonNeg(p.Origin, p.Name, "round cost", p.RoundCost)
		nonNeg(p.Origin, p.Name, "spin time", p.SpinTime)
		nonNeg(p.Origin, p.Name, "time slice", p.TimeSlice)
		nonNeg(p.Origin, p.Name, "round time", p.RoundTime)
		nonNeg(p.Origin, p.Name, "threads", p.Threads)
		stair(p.Origin, p.Name, "push send", p.PushSend)
		stair(p.Origin, p.Name, "pop acquire", p.PopAcq)
		for _, a := range p.AddressSpace {
			switch kinds[a.Memory] {
			case "memory":
			case "":
				add(p.Origin, p.Name, "processor %s: address space names unknown memory %q%s", p.Name, a.Memory, yamlpos.Suggest(a.Memory, m.memoryNames()))
			default:
				add(p.Origin, p.Name, "processor %s: address space names %q, a %s: expected a memory", p.Name, a.Memory, kinds[a.Memory])
			}
		}
	}
	for _, x := range m.Memories {
		clock(x.Origin, x.Name, x.ClockHz)
		nonNeg(x.Origin, x.Name, "size", x.Size)
		nonNeg(x.Origin, x.Name, "latency", x.Latency)
		nonNeg(x.Origin, x.Name, "bandwidth", x.Bandwidth)
	}
	onBus := map[string]bool{}
	for _, ic := range m.Interconnects {
		w := ic.Origin
		clock(w, ic.Name, ic.ClockHz)
		nonNeg(w, ic.Name, "start latency (L)", ic.StartLatency)
		nonNeg(w, ic.Name, "start cost (S)", ic.StartCost)
		nonNeg(w, ic.Name, "bandwidth (B)", ic.Bandwidth)
		nonNeg(w, ic.Name, "finish cost (F)", ic.FinishCost)
		if ic.Channels < 1 {
			add(w, ic.Name, "interconnect %s has %d channels: expected ≥ 1", ic.Name, ic.Channels)
		}
		if len(ic.Elements) < 2 {
			add(w, ic.Name, "interconnect %s joins %d element(s): expected at least two processors or memories", ic.Name, len(ic.Elements))
		}
		seen := map[string]bool{}
		for _, e := range ic.Elements {
			if seen[e] {
				add(w, ic.Name, "interconnect %s lists element %q twice", ic.Name, e)
			}
			seen[e] = true
			onBus[e] = true
			switch kinds[e] {
			case "processor", "memory":
			case "interconnect":
				add(w, ic.Name, "interconnect %s lists interconnect %q as an element: the topology is bipartite, interconnects join processors and memories only", ic.Name, e)
			default:
				add(w, ic.Name, "interconnect %s names unknown element %q%s", ic.Name, e, yamlpos.Suggest(e, m.elementNames()))
			}
		}
		for _, e := range sortedKeys(ic.Duplex) {
			if !seen[e] {
				add(w, ic.Name, "interconnect %s gives duplex for %q, which is not one of its elements (%s)", ic.Name, e, strings.Join(ic.Elements, ", "))
			}
		}
		for _, e := range sortedKeys(ic.Routing) {
			if !seen[e] {
				add(w, ic.Name, "interconnect %s gives routing for %q, which is not one of its elements (%s)", ic.Name, e, strings.Join(ic.Elements, ", "))
			}
			switch r := ic.Routing[e]; r {
			case NoRouting, StoreAndForward, CutThrough:
			default:
				add(w, ic.Name, "interconnect %s: routing %q for %s: expected none, store-and-forward or cut-through", ic.Name, r, e)
			}
		}
	}
	if len(m.Processors)+len(m.Memories) > 1 {
		for _, p := range m.Processors {
			if !onBus[p.Name] && p.Name != "" {
				add(p.Origin, p.Name, "processor %s is on no interconnect: expected it among the elements of one (processors and memories connect only through interconnects)", p.Name)
			}
		}
		for _, x := range m.Memories {
			if !onBus[x.Name] && x.Name != "" {
				add(x.Origin, x.Name, "memory %s is on no interconnect: expected it among the elements of one", x.Name)
			}
		}
	}
	for _, id := range sortedKeys(m.Aliases) {
		if m.Processor(m.Aliases[id]) == nil {
			add(m.Origin, m.Name, "alias %s names processor %q, which the machine does not have", id, m.Aliases[id])
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].String() < ps[j].String() })
	return &ValidationError{Machine: m.Name, Problems: ps}
}

func (m *Machine) memoryNames() []string {
	var s []string
	for _, x := range m.Memories {
		s = append(s, x.Name)
	}
	return s
}

func (m *Machine) elementNames() []string {
	var s []string
	for _, p := range m.Processors {
		s = append(s, p.Name)
	}
	return append(s, m.memoryNames()...)
}

func at(origin string) string {
	if origin == "" {
		return ""
	}
	return " at " + origin
}

func sortedKeys[V any](mp map[string]V) []string {
	ks := make([]string, 0, len(mp))
	for k := range mp {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
