package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
	"github.com/sluicehq/sluice/machine"
)

// Cost is the processing time of one firing of an actor on a processor:
// seconds, or cycles of the processor's clock, or Never (the actor cannot
// run there).
type Cost struct {
	// Seconds is the time when Cycles is false.
	Seconds float64
	// Cycles is the time in cycles when IsCycles is true.
	Cycles int64
	// IsCycles selects Cycles over Seconds.
	IsCycles bool
	// Never marks a processor the actor cannot run on.
	Never bool
}

// On returns the cost in seconds on processor p (+Inf when Never).
func (c Cost) On(p *machine.Processor) float64 {
	switch {
	case c.Never:
		return math.Inf(1)
	case c.IsCycles:
		return p.Seconds(c.Cycles)
	}
	return c.Seconds
}

// Control is the control node wrapping an actor's firings (seed 004 §3.3.3):
// If runs a firing only when the control variable is 1 (0 when Invert);
// While repeats the firing as many times as the control variable says.
type Control struct {
	// If or While names the control variable (one of them is set).
	If, While string
	// Invert negates an If.
	Invert bool
}

// IsZero reports whether no control node is given.
func (c Control) IsZero() bool { return c.If == "" && c.While == "" }

// Costs holds the per-firing costs of actors on processors, the control
// nodes of conditional actors and the statistical model of their control
// variables. The zero value is usable: every actor then costs its
// graph.Actor.Cost on every processor.
type Costs struct {
	// Actors maps actor name → target → cost, where target is a processor
	// name, a processor kind, or "*" for any processor.
	Actors map[string]map[string]Cost
	// Profile maps actor name → mean firing time in seconds, measured (by
	// `sluice run --profile`); it is the default cost on every processor,
	// ahead of graph.Actor.Cost.
	Profile map[string]float64
	// Kernels describes the Profile entries measured as kernel actors
	// (a profile's kind: kernel entries): such a mean is a cost on gpu
	// processors only, and Build turns it into the kernel's time per
	// firing (KernelProfile.FiringTime).
	Kernels map[string]KernelProfile
	// AtG maps a G (firings per kernel invocation) → the profile measured
	// with the kernel actors at that G (AddAtG: CPU actors' means, and
	// kernel actors' own times, KernelProfile.Own). Beside kernel actors a
	// CPU actor's firing time depends on their G: it reads or writes the
	// windows their invocations copy, which stay in the CPU's cache at
	// small G and not at large (the image pipeline's per-frame sums:
	// 8.2–9.1 µs beside G 64, 13.5–22.6 µs beside G 256); and a kernel's
	// time per invocation grows with G past what the GPU runs at once.
	// Build costs an actor placed on a processor other than a GPU from
	// the profile of the G nearest its context G (ContextG), and a kernel
	// actor on a GPU from the profile of the G nearest its own, ahead of
	// every other cost.
	AtG map[int64]*Profile
	// Burn, when set, charges its actors (those sluice run gives a
	// synthetic implementation: a busy loop on the clock for the declared
	// cost) what such a loop lasts on the target host, instead of the
	// declared cost (Lookup).
	Burn *Burn
	// Control maps actor name → its control node.
	Control map[string]Control
	// Probabilities gives, for the statistical mode, the probability that
	// an if control variable is 1 (Bernoulli); 0.5 when not given.
	Probabilities map[string]float64
	// Loops gives, for the statistical mode, the iteration count of a
	// while control variable (the seed's statistical model has none).
	Loops map[string]int64
	// Origin is the file the costs came from, if any.
	Origin string
}

// Lookup returns the cost of one firing of a on p and where it came from
// ("costs", "profile", "graph", "burn" for a declared cost charged as
// Burn's loop lasts, or "none" for a zero default), whatever
// the mapping (Build looks at AtG first). Precedence:
// the cost file's entry for p's name, then for p's kind, then "*", then
// the profile's mean (a kernel actor's on gpu processors only), then the
// graph's Actor.Cost (through Burn for Burn's actors).
func (c *Costs) Lookup(a *graph.Actor, p *machine.Processor) (Cost, string) {
	if c != nil {
		if m, ok := c.Actors[a.Name]; ok {
			for _, k := range []string{p.Name, p.Kind, "*"} {
				if v, ok := m[k]; ok {
					return v, "costs"
				}
			}
		}
		if s, ok := c.Profile[a.Name]; ok {
			if _, kernel := c.Kernels[a.Name]; !kernel || p.Kind == "gpu" {
				return Cost{Seconds: s}, "profile"
			}
		}
	}
	if a.Cost > 0 {
		if c != nil && c.Burn != nil && c.Burn.Actors[a.Name] {
			return Cost{Seconds: c.Burn.Time(a.Cost.Seconds())}, "burn"
		}
		return Cost{Seconds: a.Cost.Seconds()}, "graph"
	}
	return Cost{}, "none"
}

// Burn is how long a busy loop on the clock lasts for a declared cost on
// a host (calibrate.BurnLoad): Extra seconds plus Stretch times the cost
// more. Actors names the actors (flattened names) that run such a loop.
type Burn struct {
	Extra   float64
	Stretch float64
	Actors  map[string]bool
}

// burn is c's Burn (nil for nil costs).
func (c *Costs) burn() *Burn {
	if c == nil {
		return nil
	}
	return c.Burn
}

// Time is how long the loop for declared cost d (seconds) lasts.
func (b *Burn) Time(d float64) float64 { return d*(1+b.Stretch) + b.Extra }

// kernel returns the kernel profile of actor name, if its profile entry
// was measured as a kernel actor.
func (c *Costs) kernel(name string) (KernelProfile, bool) {
	if c == nil {
		return KernelProfile{}, false
	}
	k, ok := c.Kernels[name]
	return k, ok
}

// ControlOf returns the control node of actor a: the cost file's, else the
// actor's attributes "if" (a variable name, "!name" to invert) or "while".
func (c *Costs) ControlOf(a *graph.Actor) (Control, error) {
	if c != nil {
		if ct, ok := c.Control[a.Name]; ok {
			return ct, nil
		}
	}
	iff, w := a.Attrs["if"], a.Attrs["while"]
	if iff != "" && w != "" {
		return Control{}, fmt.Errorf("actor %s has both if and while attributes: expected one control node", a.Name)
	}
	if iff != "" {
		inv := strings.HasPrefix(iff, "!")
		return Control{If: strings.TrimSpace(strings.TrimPrefix(iff, "!")), Invert: inv}, nil
	}
	return Control{While: strings.TrimSpace(w)}, nil
}

// LoadCosts reads a cost file (see docs/simulate.md). Errors carry
// file:line:col.
func LoadCosts(path string) (*Costs, error) {
	b, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return ParseCosts(path, b)
}

func readLimited(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if st.Size() > 64<<20 {
		return nil, fmt.Errorf("sim: %s is %d bytes: expected at most 64 MiB", path, st.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return b, nil
}

// FileError is a problem in a cost, profile or control file at a position;
// Error() renders "file:line:col: msg".
type FileError = yamlpos.Error

// FileErrors lists every problem found in a file.
type FileErrors = yamlpos.ErrorList

var durRE = regexp.MustCompile(`^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs|ns|ps|cycles?|c)?\s*$`)

// unitPerSecond divides a value in the unit to give seconds (division keeps
// "7ns" exactly 7e-9).
var unitPerSecond = map[string]float64{"s": 1, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9, "ps": 1e12}

// parseCost reads "3", "2.5ms", "3000 cycles", "never"; bare numbers are in
// unit ("cycles" or a time unit).
func parseCost(s, unit string) (Cost, error) {
	if strings.TrimSpace(s) == "never" || strings.TrimSpace(s) == "-" {
		return Cost{Never: true}, nil
	}
	m := durRE.FindStringSubmatch(s)
	if m == nil {
		return Cost{}, fmt.Errorf("cost %q: expected a number, a duration such as 2.5ms or 40us, a count such as \"3000 cycles\", or never", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(v, 0) || v < 0 {
		return Cost{}, fmt.Errorf("cost %q: expected a finite non-negative number", s)
	}
	u := m[2]
	if u == "" {
		u = unit
	}
	switch u {
	case "c", "cycle", "cycles":
		if v != math.Trunc(v) || v > 1<<53 {
			return Cost{}, fmt.Errorf("cost %q: expected a whole number of cycles", s)
		}
		return Cost{Cycles: int64(v), IsCycles: true}, nil
	}
	return Cost{Seconds: v / unitPerSecond[u]}, nil
}

var (
	costKeys    = []string{"kind", "unit", "costs", "profile", "control", "probabilities", "loops"}
	controlKeys = []string{"if", "while"}
)

// ParseCosts reads a cost file from bytes; file names it in errors. A
// relative profile path is resolved against the file's directory.
func ParseCosts(file string, data []byte) (*Costs, error) {
	r := yamlpos.NewReader(file)
	c := &Costs{Actors: map[string]map[string]Cost{}, Control: map[string]Control{},
		Probabilities: map[string]float64{}, Loops: map[string]int64{}, Origin: file}
	root := r.Parse(data)
	unit := "cycles"
	ps := r.Fields(root, "costs", costKeys)
	r.CheckKind(yamlpos.Index(ps), "costs")
	for _, p := range ps {
		if p.K.Value == "unit" {
			u := p.V.Value
			if _, ok := unitPerSecond[u]; !ok && u != "cycles" {
				r.Errorf(p.V, "unit: expected cycles, s, ms, us or ns, found %s", yamlpos.Kind(p.V))
				continue
			}
			unit = u
		}
	}
	cost := func(n *yaml.Node, what string) (Cost, bool) {
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			r.Errorf(n, "%s: expected a cost such as 3, 2.5ms or \"3000 cycles\", found %s", what, yamlpos.Kind(n))
			return Cost{}, false
		}
		v, err := parseCost(n.Value, unit)
		if err != nil {
			r.Errorf(n, "%s: %v", what, err)
			return Cost{}, false
		}
		return v, true
	}
	for _, p := range ps {
		switch p.K.Value {
		case "costs":
			for _, a := range r.Fields(p.V, "costs", nil) {
				m := map[string]Cost{}
				if a.V.Kind == yaml.ScalarNode {
					if v, ok := cost(a.V, "cost of "+a.K.Value); ok {
						m["*"] = v
					}
				} else {
					for _, t := range r.Fields(a.V, "costs of "+a.K.Value, nil) {
						if v, ok := cost(t.V, "cost of "+a.K.Value+" on "+t.K.Value); ok {
							m[t.K.Value] = v
						}
					}
				}
				c.Actors[a.K.Value] = m
			}
		case "profile":
			if p.V.Kind != yaml.ScalarNode {
				r.Errorf(p.V, "profile: expected a file name, found %s", yamlpos.Kind(p.V))
				continue
			}
			path := p.V.Value
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(file), path)
			}
			prof, err := LoadProfileFull(path)
			if err != nil {
				r.Errorf(p.V, "profile: %v", err)
				continue
			}
			c.Profile, c.Kernels = prof.Mean, prof.Kernels
		case "control":
			for _, a := range r.Fields(p.V, "control", nil) {
				var ct Control
				for _, f := range r.Fields(a.V, "control of "+a.K.Value, controlKeys) {
					name := strings.TrimSpace(f.V.Value)
					if f.V.Kind != yaml.ScalarNode || name == "" || name == "!" {
						r.Errorf(f.V, "control of %s: %s: expected a control variable name, found %s", a.K.Value, f.K.Value, yamlpos.Kind(f.V))
						continue
					}
					if f.K.Value == "if" {
						ct.Invert = strings.HasPrefix(name, "!")
						ct.If = strings.TrimSpace(strings.TrimPrefix(name, "!"))
					} else {
						ct.While = name
					}
				}
				if ct.If != "" && ct.While != "" {
					r.Errorf(a.K, "control of %s: expected one of if or while, found both", a.K.Value)
				}
				c.Control[a.K.Value] = ct
			}
		case "probabilities":
			for _, f := range r.Fields(p.V, "probabilities", nil) {
				w := "probability of " + f.K.Value
				if v, ok := r.Number(f.V, w); ok && (v < 0 || v > 1) {
					r.Errorf(f.V, "%s: %g out of range: expected 0 to 1", w, v)
				} else if ok {
					c.Probabilities[f.K.Value] = v
				}
			}
		case "loops":
			for _, f := range r.Fields(p.V, "loops", nil) {
				if v, ok := r.Int(f.V, "loop count of "+f.K.Value, 0, 1<<20); ok {
					c.Loops[f.K.Value] = v
				}
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadProfile reads a profile written by `sluice run --profile`: YAML
// mapping actor name → statistics, of which mean_ns (the mean firing time
// in nanoseconds) is used; min_ns, max_ns, firings and other keys are
// ignored. The mapping may also sit under a top-level "actors:" key. It
// returns actor → mean seconds.
func LoadProfile(path string) (map[string]float64, error) {
	b, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return ParseProfile(path, b)
}

// ParseProfile is LoadProfile on bytes.
func ParseProfile(file string, data []byte) (map[string]float64, error) {
	p, err := ParseProfileFull(file, data)
	if err != nil {
		return nil, err
	}
	return p.Mean, nil
}

// KernelProfile is how a kernel actor's profile entry was measured: on
// Device, WorkGroups firings per invocation, invocations enqueued by Mode
// ("callback" or "enqueue-ahead", runtime.DeviceMode).
type KernelProfile struct {
	Device     string
	WorkGroups int64
	Mode       string
}

// Own reports whether the entry's mean is each invocation's own time
// (one invocation in flight at a time: `sluice run --device-mode
// callback`). With enqueue-ahead, several kernel actors' invocations are
// in flight on one device and each completion's interval goes to
// whichever completed first: the means are shares of the device's time,
// not per-actor costs.
func (k KernelProfile) Own() bool { return k.Mode == "callback" }

// FiringTime is the kernel's time per firing on p from a profile mean
// (seconds per firing, an invocation's time over its G firings, launch
// included): the mean less the launch (p's firing cost) spread over the
// profiled G, at least 0. The simulator adds the launch once per
// invocation, so an invocation of G firings costs G × FiringTime +
// launch, which is the measured invocation at the profiled G.
func (k KernelProfile) FiringTime(mean float64, p *machine.Processor) float64 {
	return max(0, mean-p.Seconds(p.FiringCost)/float64(max(1, k.WorkGroups)))
}

// KernelFiringTime is the kernel's time per firing on proc that the
// simulator uses for kernel actor a, whose profile entry (mean seconds per
// firing) was measured as kp (kernels: all of the profile's kernel
// actors). From a callback-mode entry (KernelProfile.Own), the copies of
// its host-staged ports (HostCopyTime) are taken out first, since the
// simulator charges them on the link, and what is left is at least the
// launch's share of the profiled invocation (clamped reports that this
// floor was hit); then KernelProfile.FiringTime takes out the launch,
// which the simulator adds once per invocation.
func KernelFiringTime(g *graph.Graph, a *graph.Actor, mean float64, kp KernelProfile, kernels map[string]KernelProfile, mach *machine.Machine, proc *machine.Processor) (t float64, clamped bool) {
	if kp.Own() {
		if cp := HostCopyTime(g, a, kp, kernels, mach, proc); cp > 0 {
			floor := proc.Seconds(proc.FiringCost) / float64(max(1, kp.WorkGroups))
			clamped = mean-cp < floor
			mean = max(mean-cp, floor)
		}
	}
	return kp.FiringTime(mean, proc), clamped
}

// HostCopyTime is the time per firing that a profile entry of kernel actor
// a, measured as kp with one invocation in flight (KernelProfile.Own),
// spent in the copies of its host-staged ports, as the simulator charges
// them on the link between proc (the GPU it is simulated on) and the host:
// per such port, its bytes per firing over the link's bandwidth plus the
// link's start latency, start and finish costs spread over the profiled
// invocation's G firings. A port is host-staged when, in the profiled
// run, its channel's other end was not a kernel actor on the same device
// (kernels: the profile's kernel actors); a channel between two kernel
// actors of one device is a ring in device memory and is not copied. 0
// when no link joins proc to a processor of another kind.
func HostCopyTime(g *graph.Graph, a *graph.Actor, kp KernelProfile, kernels map[string]KernelProfile, mach *machine.Machine, proc *machine.Processor) float64 {
	link := hostLink(mach, proc)
	if g == nil || a == nil || link == nil {
		return 0
	}
	var t float64
	for _, c := range g.Channels {
		if c.From == nil || c.To == nil {
			continue
		}
		var other *graph.Actor
		var bytes int64
		size := int64(max(1, c.From.Type.Size))
		switch {
		case c.From.Actor == a && c.To.Actor == a:
			continue // a self-loop stays on the device
		case c.From.Actor == a:
			other, bytes = c.To.Actor, int64(c.From.Rate.Max())*size
		case c.To.Actor == a:
			other, bytes = c.From.Actor, int64(c.To.Rate.Max())*size
		default:
			continue
		}
		if k, ok := kernels[other.Name]; ok && k.Device == kp.Device {
			continue // a ring in device memory in the profiled run
		}
		cyc := float64(link.StartLatency+link.StartCost+link.FinishCost) / float64(max(1, kp.WorkGroups))
		if link.Bandwidth > 0 {
			cyc += float64(bytes) / float64(link.Bandwidth)
		}
		t += cyc / link.ClockHz
	}
	return t
}

// hostLink is the first interconnect (in machine order) that joins
// processor p to a processor of another kind (a GPU's PCIe link to the
// host), not a credit link; nil when none does.
func hostLink(m *machine.Machine, p *machine.Processor) *machine.Interconnect {
	if m == nil || p == nil {
		return nil
	}
	for _, ic := range m.Interconnects {
		if ic.Credits || indexOf(ic.Elements, p.Name) < 0 {
			continue
		}
		for _, el := range ic.Elements {
			if i := m.ProcessorIndex(el); i >= 0 && m.Processors[i].Kind != p.Kind {
				return ic
			}
		}
	}
	return nil
}

// Profile is a profile file read by ParseProfileFull: each actor's mean
// firing time, and how its kernel actors were measured.
type Profile struct {
	// Mean maps actor name → mean firing time in seconds.
	Mean map[string]float64
	// Kernels maps the kernel actors' names (kind: kernel) → how they
	// were measured.
	Kernels map[string]KernelProfile
}

// LoadProfileFull is ParseProfileFull on a file.
func LoadProfileFull(path string) (*Profile, error) {
	b, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return ParseProfileFull(path, b)
}

// ParseProfileFull reads a profile (LoadProfile) with its kernel actors'
// entries (kind: kernel, device, work_groups, device_mode).
func ParseProfileFull(file string, data []byte) (*Profile, error) {
	r := yamlpos.NewReader(file)
	root := r.Parse(data)
	ps := r.Fields(root, "profile", nil)
	for _, p := range ps {
		if p.K.Value == "actors" && p.V.Kind == yaml.MappingNode {
			ps = r.Fields(p.V, "profile actors", nil)
			break
		}
	}
	out := &Profile{Mean: map[string]float64{}, Kernels: map[string]KernelProfile{}}
	for _, p := range ps {
		if p.V.Kind != yaml.MappingNode {
			continue // header fields such as graph: or wall_ns:
		}
		found, kernel := false, false
		var kp KernelProfile
		for _, f := range r.Fields(p.V, "profile of "+p.K.Value, nil) {
			switch f.K.Value {
			case "kind":
				kernel = f.V.Value == "kernel"
			case "device":
				kp.Device = f.V.Value
			case "device_mode":
				kp.Mode = f.V.Value
			case "work_groups":
				if v, ok := r.Int(f.V, "profile of "+p.K.Value+": work_groups", 1, math.MaxInt32); ok {
					kp.WorkGroups = v
				}
			case "mean_ns":
				w := "profile of " + p.K.Value + ": mean_ns"
				v, ok := r.Number(f.V, w)
				if !ok {
					continue
				}
				if !(v >= 0 && v <= math.MaxFloat64) {
					r.Errorf(f.V, "%s: expected a non-negative number of nanoseconds, found %s", w, yamlpos.Kind(f.V))
					continue
				}
				out.Mean[p.K.Value] = v / 1e9
				found = true
			}
		}
		if kernel {
			out.Kernels[p.K.Value] = kp
		}
		if !found && len(r.Errs) == 0 {
			r.Errorf(p.K, "profile of %s: expected mean_ns", p.K.Value)
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// LoadControls reads control variables for the trace-driven mode: a YAML
// mapping from control variable name to its list of outcomes (0/1 for an
// if, iteration counts for a while), as recorded from a real execution.
func LoadControls(path string) (map[string][]int64, error) {
	b, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	r := yamlpos.NewReader(path)
	root := r.Parse(b)
	out := map[string][]int64{}
	for _, p := range r.Fields(root, "controls", nil) {
		w := "control variable " + p.K.Value
		items := r.List(p.V, w, "a list of outcomes")
		vals := make([]int64, 0, len(items))
		for _, it := range items {
			if v, ok := r.Int(it, w, 0, math.MaxInt64); ok {
				vals = append(vals, v)
			}
		}
		out[p.K.Value] = vals
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedNames[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
