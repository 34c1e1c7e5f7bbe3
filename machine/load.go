package machine

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

// Error is one problem in a machine file at a position (Line and Col count
// from 1; zero when unknown); Error() renders "file:line:col: msg".
type Error = yamlpos.Error

// ErrorList is every problem found in a machine file, in file order.
type ErrorList = yamlpos.ErrorList

const maxFile = 4 << 20

// Load reads and validates a machine file (see docs/simulate.md for the
// format). Every problem is reported at once as an ErrorList with
// file:line:col positions, validation problems included.
func Load(path string) (*Machine, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("machine: %w", err)
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("machine: %s is %d bytes: expected at most %d", path, st.Size(), maxFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("machine: %w", err)
	}
	return Parse(path, b)
}

// field names accepted, with the ASM's Figure 14 spellings as aliases.
var (
	topKeys  = []string{"kind", "name", "processors", "memories", "interconnects", "calibration", "aliases"}
	procKeys = []string{"kind", "clock", "units", "io", "address_space", "push_acquire_cost", "push_send_fixed_cost",
		"push_send_unit", "push_send_unit_cost", "pop_acquire_fixed_cost", "pop_acquire_unit", "pop_acquire_unit_cost", "pop_discard_cost",
		"wake_latency", "wake_cost", "pool", "firing_cost", "round_cost", "spin_time", "time_slice", "round_time", "threads", "issue_cost", "copy_issue_cost"}
	memKeys = []string{"clock", "size", "latency", "bandwidth"}
	icKeys  = []string{"elements", "clock", "duplex", "routing", "start_latency", "start_cost", "bandwidth", "finish_cost",
		"channels", "multiplexable", "credits"}
	aliases = map[string]string{
		"clockRate": "clock", "hasIO": "io", "addressSpace": "address_space", "pushAcqCost": "push_acquire_cost",
		"pushSendFixedCost": "push_send_fixed_cost", "pushSendUnit": "push_send_unit", "pushSendUnitCost": "push_send_unit_cost",
		"popAcqFixedCost": "pop_acquire_fixed_cost", "popAcqUnit": "pop_acquire_unit", "popAcqUnitCost": "pop_acquire_unit_cost",
		"popDiscCost": "pop_discard_cost", "interfaceDuplex": "duplex", "interfaceRouting": "routing",
		"startLatency": "start_latency", "startCost": "start_cost", "bandwidthPerCh": "bandwidth", "finishCost": "finish_cost",
		"numChannels": "channels", "L": "start_latency", "S": "start_cost", "B": "bandwidth", "F": "finish_cost",
	}
)

type parser struct{ *yamlpos.Reader }

// count reads a non-negative integer count of cycles or elements.
func (p *parser) count(n *yaml.Node, what string) (int64, bool) { return p.Int(n, what, 0, 1<<53) }

var clockRE = regexp.MustCompile(`^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKMGT]?Hz)?\s*$`)

// clock reads a clock rate: a number in GHz (as Figure 14 gives it) or a
// string with a unit: "1Hz", "800MHz", "3.2 GHz".
func (p *parser) clock(n *yaml.Node, what string) (float64, bool) {
	if n = p.Node(n); n == nil {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		var v float64
		if n.Decode(&v) == nil && v > 0 {
			return v * 1e9, true
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if m := clockRE.FindStringSubmatch(n.Value); m != nil && m[2] != "" {
			v, err := strconv.ParseFloat(m[1], 64)
			mul := map[string]float64{"Hz": 1, "kHz": 1e3, "KHz": 1e3, "MHz": 1e6, "GHz": 1e9, "THz": 1e12}[m[2]]
			if err == nil && v > 0 {
				return v * mul, true
			}
		}
	}
	p.Errorf(n, "%s: expected a positive clock rate such as 1GHz, 800MHz, 1Hz or a number of GHz, found %s", what, yamlpos.Kind(n))
	return 0, false
}

func parseRouting(s string) (Routing, bool) {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(s)) {
	case "none", "no":
		return NoRouting, true
	case "storeandforward", "saf":
		return StoreAndForward, true
	case "cutthrough", "ct":
		return CutThrough, true
	}
	return "", false
}

// Parse reads a machine description from YAML bytes; file names it in
// errors. The machine is validated: problems found by Validate are reported
// at the position of the element they concern.
func Parse(file string, data []byte) (*Machine, error) {
	p := &parser{yamlpos.NewReader(file)}
	p.Rename = aliases
	root := p.Parse(data)
	if root == nil {
		if len(p.Errs) == 0 {
			p.Errorf(nil, "empty machine file: expected processors and interconnects")
		}
		return nil, p.Err()
	}
	m := &Machine{Origin: file}
	if root.Kind == yaml.MappingNode {
		m.Origin = p.Pos(root)
	}
	fields := p.Fields(root, "machine", topKeys)
	p.CheckKind(yamlpos.Index(fields), "machine")
	for _, f := range fields {
		switch f.Key {
		case "name":
			m.Name, _ = p.Str(f.V, "name")
		case "processors":
			for _, e := range p.Fields(f.V, "processors", nil) {
				m.Processors = append(m.Processors, p.processor(e))
			}
		case "memories":
			for _, e := range p.Fields(f.V, "memories", nil) {
				m.Memories = append(m.Memories, p.memory(e))
			}
		case "interconnects":
			for _, e := range p.Fields(f.V, "interconnects", nil) {
				m.Interconnects = append(m.Interconnects, p.interconnect(e))
			}
		case "aliases":
			m.Aliases = map[string]string{}
			for _, e := range p.Fields(f.V, "aliases", nil) {
				if v, ok := p.Str(e.V, "aliases: "+e.K.Value); ok {
					m.Aliases[e.K.Value] = v
				}
			}
		case "calibration":
			m.Calibration = map[string]string{}
			for _, e := range p.Fields(f.V, "calibration", nil) {
				if v, ok := p.Str(e.V, "calibration: "+e.K.Value); ok {
					m.Calibration[e.K.Value] = v
				}
			}
		}
	}
	if m.Name == "" {
		base := file[strings.LastIndexAny(file, `/\`)+1:]
		m.Name = strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
	}
	if err := m.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			for _, pr := range ve.Problems {
				e := &Error{File: file, Msg: pr.Msg}
				if f, l, c, ok := yamlpos.ParseOrigin(pr.Where); ok && f == file {
					e.Line, e.Col = l, c
				}
				p.Add(e)
			}
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

func (p *parser) processor(e yamlpos.Field) *Processor {
	pr := &Processor{Name: e.K.Value, Kind: "cpu", ClockHz: 1e9, Units: 1, Origin: p.Pos(e.K)}
	what := "processor " + e.K.Value
	for _, f := range p.Fields(e.V, what, procKeys) {
		w := what + ": " + f.K.Value
		switch f.Key {
		case "kind":
			pr.Kind, _ = p.Str(f.V, w)
		case "clock":
			if hz, ok := p.clock(f.V, w); ok {
				pr.ClockHz = hz
			}
		case "units":
			u, _ := p.count(f.V, w)
			pr.Units = int(min(u, 1<<20))
		case "io":
			pr.HasIO, _ = p.Bool(f.V, w)
		case "address_space":
			pr.AddressSpace = p.addressSpace(f.V, w)
		case "push_acquire_cost":
			pr.PushAcq, _ = p.count(f.V, w)
		case "push_send_fixed_cost":
			pr.PushSend.Fixed, _ = p.count(f.V, w)
		case "push_send_unit":
			pr.PushSend.Unit, _ = p.Size(f.V, w)
		case "push_send_unit_cost":
			pr.PushSend.UnitCost, _ = p.count(f.V, w)
		case "pop_acquire_fixed_cost":
			pr.PopAcq.Fixed, _ = p.count(f.V, w)
		case "pop_acquire_unit":
			pr.PopAcq.Unit, _ = p.Size(f.V, w)
		case "pop_acquire_unit_cost":
			pr.PopAcq.UnitCost, _ = p.count(f.V, w)
		case "pop_discard_cost":
			pr.PopDisc, _ = p.count(f.V, w)
		case "wake_latency":
			pr.WakeLatency, _ = p.count(f.V, w)
		case "wake_cost":
			pr.WakeCost, _ = p.count(f.V, w)
		case "pool":
			pr.Pool, _ = p.Bool(f.V, w)
		case "firing_cost":
			pr.FiringCost, _ = p.count(f.V, w)
		case "round_cost":
			pr.RoundCost, _ = p.count(f.V, w)
		case "spin_time":
			pr.SpinTime, _ = p.count(f.V, w)
		case "time_slice":
			pr.TimeSlice, _ = p.count(f.V, w)
		case "round_time":
			pr.RoundTime, _ = p.count(f.V, w)
		case "threads":
			pr.Threads, _ = p.count(f.V, w)
		case "issue_cost":
			pr.IssueCost, _ = p.count(f.V, w)
		case "copy_issue_cost":
			pr.CopyIssueCost, _ = p.count(f.V, w)
		}
	}
	return pr
}

func (p *parser) addressSpace(n *yaml.Node, what string) []AddressRange {
	var out []AddressRange
	for _, it := range p.List(n, what, "a list of memories (names, or {memory: name, base: address})") {
		if it.Kind == yaml.ScalarNode {
			if s, ok := p.Str(it, what); ok {
				out = append(out, AddressRange{Memory: s})
			}
			continue
		}
		var ar AddressRange
		for _, f := range p.Fields(it, what, []string{"memory", "base"}) {
			switch f.Key {
			case "memory":
				ar.Memory, _ = p.Str(f.V, what+": memory")
			case "base":
				v, err := strconv.ParseUint(f.V.Value, 0, 64)
				if f.V.Kind != yaml.ScalarNode || err != nil {
					p.Errorf(f.V, "%s: base: expected an address such as 0x10000, found %s", what, yamlpos.Kind(f.V))
				}
				ar.Base = v
			}
		}
		if ar.Memory == "" {
			p.Errorf(it, "%s: address range without a memory: expected {memory: name, base: address}", what)
			continue
		}
		out = append(out, ar)
	}
	return out
}

func (p *parser) memory(e yamlpos.Field) *Memory {
	m := &Memory{Name: e.K.Value, ClockHz: 1e9, Origin: p.Pos(e.K)}
	what := "memory " + e.K.Value
	for _, f := range p.Fields(e.V, what, memKeys) {
		w := what + ": " + f.K.Value
		switch f.Key {
		case "clock":
			if hz, ok := p.clock(f.V, w); ok {
				m.ClockHz = hz
			}
		case "size":
			m.Size, _ = p.Size(f.V, w)
		case "latency":
			m.Latency, _ = p.count(f.V, w)
		case "bandwidth":
			m.Bandwidth, _ = p.Size(f.V, w)
		}
	}
	return m
}

func (p *parser) interconnect(e yamlpos.Field) *Interconnect {
	ic := &Interconnect{Name: e.K.Value, ClockHz: 1e9, Channels: 1, Multiplexable: true, Origin: p.Pos(e.K)}
	what := "interconnect " + e.K.Value
	hasElements := false
	for _, f := range p.Fields(e.V, what, icKeys) {
		w := what + ": " + f.K.Value
		switch f.Key {
		case "elements":
			hasElements = true
			for _, it := range p.List(f.V, w, "a list of processor and memory names") {
				if s, ok := p.Str(it, w); ok {
					ic.Elements = append(ic.Elements, s)
				}
			}
		case "clock":
			if hz, ok := p.clock(f.V, w); ok {
				ic.ClockHz = hz
			}
		case "duplex":
			if f.V.Kind == yaml.ScalarNode {
				if b, ok := p.Bool(f.V, w); ok && !b {
					ic.Duplex = map[string]bool{"*": false}
				}
				continue
			}
			ic.Duplex = map[string]bool{}
			for _, d := range p.Fields(f.V, w, nil) {
				ic.Duplex[d.K.Value], _ = p.Bool(d.V, w+": "+d.K.Value)
			}
		case "routing":
			ic.Routing = map[string]Routing{}
			if f.V.Kind == yaml.ScalarNode {
				if r, ok := parseRouting(f.V.Value); ok {
					ic.Routing["*"] = r
				} else {
					p.Errorf(f.V, "%s: expected none, store-and-forward or cut-through, found %s", w, yamlpos.Kind(f.V))
				}
				continue
			}
			for _, d := range p.Fields(f.V, w, nil) {
				if r, ok := parseRouting(d.V.Value); ok && d.V.Kind == yaml.ScalarNode {
					ic.Routing[d.K.Value] = r
				} else {
					p.Errorf(d.V, "%s: %s: expected none, store-and-forward or cut-through, found %s", w, d.K.Value, yamlpos.Kind(d.V))
				}
			}
		case "start_latency":
			ic.StartLatency, _ = p.count(f.V, w)
		case "start_cost":
			ic.StartCost, _ = p.count(f.V, w)
		case "bandwidth":
			ic.Bandwidth, _ = p.Size(f.V, w)
		case "finish_cost":
			ic.FinishCost, _ = p.count(f.V, w)
		case "channels":
			c, _ := p.count(f.V, w)
			ic.Channels = int(min(c, 1<<20))
		case "multiplexable":
			ic.Multiplexable, _ = p.Bool(f.V, w)
		case "credits":
			ic.Credits, _ = p.Bool(f.V, w)
		}
	}
	if !hasElements {
		p.Errorf(e.K, "%s has no elements: expected elements: [processor or memory names]", what)
	}
	// "*" entries (a scalar duplex or routing) apply to every element.
	if d, ok := ic.Duplex["*"]; ok {
		delete(ic.Duplex, "*")
		for _, el := range ic.Elements {
			ic.Duplex[el] = d
		}
	}
	if r, ok := ic.Routing["*"]; ok {
		delete(ic.Routing, "*")
		for _, el := range ic.Elements {
			ic.Routing[el] = r
		}
	}
	return ic
}
