package machine

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is one problem in a machine file at a position (Line and Col count
// from 1; zero when unknown).
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

// Error renders "file:line:col: msg".
func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	}
	return e.Msg
}

// ErrorList is every problem found in a machine file, in file order.
type ErrorList []*Error

// Error renders one problem per line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems as errors.
func (l ErrorList) Unwrap() []error {
	es := make([]error, len(l))
	for i, e := range l {
		es[i] = e
	}
	return es
}

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
	topKeys  = []string{"name", "processors", "memories", "interconnects"}
	procKeys = []string{"kind", "clock", "units", "io", "address_space", "push_acquire_cost", "push_send_fixed_cost",
		"push_send_unit", "push_send_unit_cost", "pop_acquire_fixed_cost", "pop_acquire_unit", "pop_acquire_unit_cost", "pop_discard_cost",
		"wake_latency"}
	memKeys = []string{"clock", "size", "latency", "bandwidth"}
	icKeys  = []string{"elements", "clock", "duplex", "routing", "start_latency", "start_cost", "bandwidth", "finish_cost",
		"channels", "multiplexable"}
	aliases = map[string]string{
		"clockRate": "clock", "hasIO": "io", "addressSpace": "address_space", "pushAcqCost": "push_acquire_cost",
		"pushSendFixedCost": "push_send_fixed_cost", "pushSendUnit": "push_send_unit", "pushSendUnitCost": "push_send_unit_cost",
		"popAcqFixedCost": "pop_acquire_fixed_cost", "popAcqUnit": "pop_acquire_unit", "popAcqUnitCost": "pop_acquire_unit_cost",
		"popDiscCost": "pop_discard_cost", "interfaceDuplex": "duplex", "interfaceRouting": "routing",
		"startLatency": "start_latency", "startCost": "start_cost", "bandwidthPerCh": "bandwidth", "finishCost": "finish_cost",
		"numChannels": "channels", "L": "start_latency", "S": "start_cost", "B": "bandwidth", "F": "finish_cost",
	}
)

type parser struct {
	file  string
	errs  ErrorList
	depth int
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	e := &Error{File: p.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	p.errs = append(p.errs, e)
}

func (p *parser) pos(n *yaml.Node) string { return fmt.Sprintf("%s:%d:%d", p.file, n.Line, n.Column) }

type kv struct {
	key  string
	k, v *yaml.Node
}

// fields returns the pairs of a mapping, reporting duplicates and keys not
// allowed (aliases are translated).
func (p *parser) fields(n *yaml.Node, what string, allowed []string) []kv {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: expected a mapping, found %s", what, describe(n))
		return nil
	}
	var out []kv
	seen := map[string]*yaml.Node{}
	var merged []kv
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			if p.depth > 16 {
				p.errorf(k, "%s: merge keys nested too deep", what)
				continue
			}
			p.depth++
			for v != nil && v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, it := range v.Content {
					merged = append(merged, p.fields(it, what, allowed)...)
				}
			} else {
				merged = append(merged, p.fields(v, what, allowed)...)
			}
			p.depth--
			continue
		}
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "%s: expected a name as key, found %s", what, describe(k))
			continue
		}
		key := k.Value
		if allowed != nil {
			if a, ok := aliases[key]; ok {
				key = a
			}
		}
		if prev, dup := seen[key]; dup {
			p.errorf(k, "%s: duplicate key %q (first at line %d, column %d)", what, k.Value, prev.Line, prev.Column)
			continue
		}
		seen[key] = k
		if allowed != nil && !contains(allowed, key) {
			p.errorf(k, "%s: unknown key %q%s; allowed keys: %s", what, k.Value, suggest(k.Value, allowed), strings.Join(allowed, ", "))
			continue
		}
		out = append(out, kv{key, k, v})
	}
	for _, f := range merged {
		if seen[f.key] == nil {
			seen[f.key] = f.k
			out = append(out, f)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing (null)"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return strconv.Quote(v)
	}
	return "an unknown node"
}

func (p *parser) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, "%s: expected a string, found %s", what, describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if n.Decode(&b) == nil {
			return b, true
		}
	}
	p.errorf(n, "%s: expected true or false, found %s", what, describe(n))
	return false, false
}

// count reads a non-negative integer count of cycles or elements.
func (p *parser) count(n *yaml.Node, what string) (int64, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var v int64
		if n.Decode(&v) == nil && v >= 0 && v <= 1<<53 {
			return v, true
		}
	}
	p.errorf(n, "%s: expected a non-negative integer, found %s", what, describe(n))
	return 0, false
}

var sizeRE = regexp.MustCompile(`^\s*([0-9]+)\s*([KMGT]i?B|B)?\s*$`)

// bytes reads a size: an integer or "16KiB", "4 MB", "1GiB".
func (p *parser) bytes(n *yaml.Node, what string) (int64, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		return p.count(n, what)
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if m := sizeRE.FindStringSubmatch(n.Value); m != nil {
			v, err := strconv.ParseInt(m[1], 10, 64)
			mul := map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
				"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m[2]]
			if err == nil && v <= (1<<62)/mul {
				return v * mul, true
			}
		}
	}
	p.errorf(n, "%s: expected a size in bytes such as 4096, 16KiB or 1GB, found %s", what, describe(n))
	return 0, false
}

var clockRE = regexp.MustCompile(`^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKMGT]?Hz)?\s*$`)

// clock reads a clock rate: a number in GHz (as Figure 14 gives it) or a
// string with a unit: "1Hz", "800MHz", "3.2 GHz".
func (p *parser) clock(n *yaml.Node, what string) (float64, bool) {
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
	p.errorf(n, "%s: expected a positive clock rate such as 1GHz, 800MHz, 1Hz or a number of GHz, found %s", what, describe(n))
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
	p := &parser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		e := &Error{File: file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			if _, rest, ok := strings.Cut(e.Msg, "line "); ok {
				if ln, _, ok := strings.Cut(rest, ":"); ok {
					e.Line, _ = strconv.Atoi(ln)
				}
			}
		}
		return nil, ErrorList{e}
	}
	if len(doc.Content) == 0 {
		return nil, ErrorList{{File: file, Msg: "empty machine file: expected processors and interconnects"}}
	}
	root := doc.Content[0]
	m := &Machine{Origin: file}
	if root.Kind == yaml.MappingNode {
		m.Origin = p.pos(root)
	}
	for _, f := range p.fields(root, "machine", topKeys) {
		switch f.key {
		case "name":
			m.Name, _ = p.str(f.v, "name")
		case "processors":
			for _, e := range p.fields(f.v, "processors", nil) {
				m.Processors = append(m.Processors, p.processor(e))
			}
		case "memories":
			for _, e := range p.fields(f.v, "memories", nil) {
				m.Memories = append(m.Memories, p.memory(e))
			}
		case "interconnects":
			for _, e := range p.fields(f.v, "interconnects", nil) {
				m.Interconnects = append(m.Interconnects, p.interconnect(e))
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
				if f, l, c, ok := splitPos(pr.Where); ok && f == file {
					e.Line, e.Col = l, c
				}
				p.errs = append(p.errs, e)
			}
		}
	}
	if len(p.errs) > 0 {
		sort.SliceStable(p.errs, func(i, j int) bool {
			a, b := p.errs[i], p.errs[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Col < b.Col
		})
		return nil, p.errs
	}
	return m, nil
}

func splitPos(s string) (string, int, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, 0, false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j <= 0 {
		return "", 0, 0, false
	}
	l, err1 := strconv.Atoi(s[j+1 : i])
	c, err2 := strconv.Atoi(s[i+1:])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return s[:j], l, c, true
}

func (p *parser) processor(e kv) *Processor {
	pr := &Processor{Name: e.k.Value, Kind: "cpu", ClockHz: 1e9, Units: 1, Origin: p.pos(e.k)}
	what := "processor " + e.k.Value
	for _, f := range p.fields(e.v, what, procKeys) {
		w := what + ": " + f.k.Value
		switch f.key {
		case "kind":
			pr.Kind, _ = p.str(f.v, w)
		case "clock":
			if hz, ok := p.clock(f.v, w); ok {
				pr.ClockHz = hz
			}
		case "units":
			u, _ := p.count(f.v, w)
			pr.Units = int(min(u, 1<<20))
		case "io":
			pr.HasIO, _ = p.boolean(f.v, w)
		case "address_space":
			pr.AddressSpace = p.addressSpace(f.v, w)
		case "push_acquire_cost":
			pr.PushAcq, _ = p.count(f.v, w)
		case "push_send_fixed_cost":
			pr.PushSend.Fixed, _ = p.count(f.v, w)
		case "push_send_unit":
			pr.PushSend.Unit, _ = p.bytes(f.v, w)
		case "push_send_unit_cost":
			pr.PushSend.UnitCost, _ = p.count(f.v, w)
		case "pop_acquire_fixed_cost":
			pr.PopAcq.Fixed, _ = p.count(f.v, w)
		case "pop_acquire_unit":
			pr.PopAcq.Unit, _ = p.bytes(f.v, w)
		case "pop_acquire_unit_cost":
			pr.PopAcq.UnitCost, _ = p.count(f.v, w)
		case "pop_discard_cost":
			pr.PopDisc, _ = p.count(f.v, w)
		case "wake_latency":
			pr.WakeLatency, _ = p.count(f.v, w)
		}
	}
	return pr
}

func (p *parser) addressSpace(n *yaml.Node, what string) []AddressRange {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of memories (names, or {memory: name, base: address}), found %s", what, describe(n))
		return nil
	}
	var out []AddressRange
	for _, it := range n.Content {
		if it.Kind == yaml.ScalarNode {
			if s, ok := p.str(it, what); ok {
				out = append(out, AddressRange{Memory: s})
			}
			continue
		}
		var ar AddressRange
		for _, f := range p.fields(it, what, []string{"memory", "base"}) {
			switch f.key {
			case "memory":
				ar.Memory, _ = p.str(f.v, what+": memory")
			case "base":
				v, err := strconv.ParseUint(f.v.Value, 0, 64)
				if f.v.Kind != yaml.ScalarNode || err != nil {
					p.errorf(f.v, "%s: base: expected an address such as 0x10000, found %s", what, describe(f.v))
				}
				ar.Base = v
			}
		}
		if ar.Memory == "" {
			p.errorf(it, "%s: address range without a memory: expected {memory: name, base: address}", what)
			continue
		}
		out = append(out, ar)
	}
	return out
}

func (p *parser) memory(e kv) *Memory {
	m := &Memory{Name: e.k.Value, ClockHz: 1e9, Origin: p.pos(e.k)}
	what := "memory " + e.k.Value
	for _, f := range p.fields(e.v, what, memKeys) {
		w := what + ": " + f.k.Value
		switch f.key {
		case "clock":
			if hz, ok := p.clock(f.v, w); ok {
				m.ClockHz = hz
			}
		case "size":
			m.Size, _ = p.bytes(f.v, w)
		case "latency":
			m.Latency, _ = p.count(f.v, w)
		case "bandwidth":
			m.Bandwidth, _ = p.bytes(f.v, w)
		}
	}
	return m
}

func (p *parser) interconnect(e kv) *Interconnect {
	ic := &Interconnect{Name: e.k.Value, ClockHz: 1e9, Channels: 1, Multiplexable: true, Origin: p.pos(e.k)}
	what := "interconnect " + e.k.Value
	hasElements := false
	for _, f := range p.fields(e.v, what, icKeys) {
		w := what + ": " + f.k.Value
		switch f.key {
		case "elements":
			hasElements = true
			if f.v.Kind != yaml.SequenceNode {
				p.errorf(f.v, "%s: expected a list of processor and memory names, found %s", w, describe(f.v))
				continue
			}
			for _, it := range f.v.Content {
				if s, ok := p.str(it, w); ok {
					ic.Elements = append(ic.Elements, s)
				}
			}
		case "clock":
			if hz, ok := p.clock(f.v, w); ok {
				ic.ClockHz = hz
			}
		case "duplex":
			if f.v.Kind == yaml.ScalarNode {
				if b, ok := p.boolean(f.v, w); ok && !b {
					ic.Duplex = map[string]bool{"*": false}
				}
				continue
			}
			ic.Duplex = map[string]bool{}
			for _, d := range p.fields(f.v, w, nil) {
				ic.Duplex[d.k.Value], _ = p.boolean(d.v, w+": "+d.k.Value)
			}
		case "routing":
			ic.Routing = map[string]Routing{}
			if f.v.Kind == yaml.ScalarNode {
				if r, ok := parseRouting(f.v.Value); ok {
					ic.Routing["*"] = r
				} else {
					p.errorf(f.v, "%s: expected none, store-and-forward or cut-through, found %s", w, describe(f.v))
				}
				continue
			}
			for _, d := range p.fields(f.v, w, nil) {
				if r, ok := parseRouting(d.v.Value); ok && d.v.Kind == yaml.ScalarNode {
					ic.Routing[d.k.Value] = r
				} else {
					p.errorf(d.v, "%s: %s: expected none, store-and-forward or cut-through, found %s", w, d.k.Value, describe(d.v))
				}
			}
		case "start_latency":
			ic.StartLatency, _ = p.count(f.v, w)
		case "start_cost":
			ic.StartCost, _ = p.count(f.v, w)
		case "bandwidth":
			ic.Bandwidth, _ = p.bytes(f.v, w)
		case "finish_cost":
			ic.FinishCost, _ = p.count(f.v, w)
		case "channels":
			c, _ := p.count(f.v, w)
			ic.Channels = int(min(c, 1<<20))
		case "multiplexable":
			ic.Multiplexable, _ = p.boolean(f.v, w)
		}
	}
	if !hasElements {
		p.errorf(e.k, "%s has no elements: expected elements: [processor or memory names]", what)
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
