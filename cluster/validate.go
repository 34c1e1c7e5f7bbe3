package cluster

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/graph"
)

// A worker checks every request it handles against its RequestLimits
// before it acts on it (docs/security.md): a request
// outside them is answered with ok: false and one sentence naming the
// field, what was expected and what was found. Nothing a client sends
// reaches a NATS subject, an allocation or the runtime unchecked.

// MaxJobID is the longest job ID a worker accepts: job IDs are one NATS
// subject token of letters, digits, '-' and '_' (the client's are NUIDs,
// 22 characters).
const MaxJobID = 64

// RequestLimits bound what one request may ask of a worker. A zero field
// takes its default (DefaultRequestLimits).
type RequestLimits struct {
	// MaxRequestBytes is the largest request message (JSON) accepted.
	MaxRequestBytes int `json:"max_request_bytes"`
	// MaxDepth is the deepest JSON nesting of a request.
	MaxDepth int `json:"max_depth"`
	// MaxChannelBytes bounds one stream's channel (capacity × token size)
	// and one port's firing window (rate × token size).
	MaxChannelBytes int64 `json:"max_channel_bytes"`
	// MaxChunk is the largest data message (bytes) a request may ask for.
	MaxChunk int `json:"max_chunk"`
	// MaxReplicas bounds a placement's replicas.
	MaxReplicas int `json:"max_replicas"`
	// MaxWork bounds a kernel placement's work-groups and work-items.
	MaxWork int `json:"max_work"`
	// MaxRate bounds a port's tokens per firing (each phase of a
	// cyclo-static rate).
	MaxRate int `json:"max_rate"`
	// MaxPorts bounds an actor's inputs plus outputs; MaxPhases a rate's
	// phases.
	MaxPorts  int `json:"max_ports"`
	MaxPhases int `json:"max_phases"`
	// MaxImpls bounds an actor's implementations; MaxAttrs its attributes
	// and swap pairs.
	MaxImpls int `json:"max_impls"`
	MaxAttrs int `json:"max_attrs"`
	// MaxIterations bounds an actor's iterations per firing.
	MaxIterations int `json:"max_iterations"`
	// MaxName bounds names (actor, port, client, entry, attribute).
	MaxName int `json:"max_name"`
	// MaxInFlight bounds the snapshot, hold and release requests of one
	// job waiting for an answer at once.
	MaxInFlight int `json:"max_in_flight"`
}

// DefaultRequestLimits are the limits a worker applies when its options
// leave them zero.
func DefaultRequestLimits() RequestLimits {
	return RequestLimits{
		MaxRequestBytes: 4 << 20,
		MaxDepth:        64,
		MaxChannelBytes: 256 << 20,
		MaxChunk:        16 << 20,
		MaxReplicas:     1024,
		MaxWork:         1 << 24,
		MaxRate:         1 << 26,
		MaxPorts:        256,
		MaxPhases:       4096,
		MaxImpls:        16,
		MaxAttrs:        256,
		MaxIterations:   1 << 20,
		MaxName:         256,
		MaxInFlight:     16,
	}
}

// withDefaults fills the zero fields of l from DefaultRequestLimits.
func (l RequestLimits) withDefaults() RequestLimits {
	d := DefaultRequestLimits()
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxRequestBytes, d.MaxRequestBytes)
	set(&l.MaxDepth, d.MaxDepth)
	if l.MaxChannelBytes <= 0 {
		l.MaxChannelBytes = d.MaxChannelBytes
	}
	set(&l.MaxChunk, d.MaxChunk)
	set(&l.MaxReplicas, d.MaxReplicas)
	set(&l.MaxWork, d.MaxWork)
	set(&l.MaxRate, d.MaxRate)
	set(&l.MaxPorts, d.MaxPorts)
	set(&l.MaxPhases, d.MaxPhases)
	set(&l.MaxImpls, d.MaxImpls)
	set(&l.MaxAttrs, d.MaxAttrs)
	set(&l.MaxIterations, d.MaxIterations)
	set(&l.MaxName, d.MaxName)
	set(&l.MaxInFlight, d.MaxInFlight)
	return l
}

// fieldError is a refused field: where, what was expected, what was found.
type fieldError struct {
	field, expected, found string
}

func (e *fieldError) Error() string {
	return fmt.Sprintf("field %s: expected %s, found %s", e.field, e.expected, e.found)
}

func bad(field, expected string, found any) error {
	return &fieldError{field: field, expected: expected, found: shown(found)}
}

// shown renders a found value for a message: strings quoted and cut to
// 64 bytes, numbers as they are.
func shown(v any) string {
	if s, ok := v.(string); ok {
		if len(s) > 64 {
			cut := 64
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
		}
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// validJobID checks that id is one NATS subject token of at most MaxJobID
// letters, digits, '-' and '_'.
func validJobID(field, id string) error {
	const want = "a job ID of 1 to 64 letters, digits, '-' or '_' (one NATS subject token)"
	if id == "" || len(id) > MaxJobID {
		return bad(field, want, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return bad(field, want, id)
		}
	}
	return nil
}

// validName checks a name: 1 to max bytes of printable UTF-8 (empty
// allowed when optional).
func validName(field, s string, max int, optional bool) error {
	want := fmt.Sprintf("a name of 1 to %d printable characters", max)
	if optional {
		want = fmt.Sprintf("at most %d printable characters", max)
	}
	if s == "" && optional {
		return nil
	}
	if s == "" || len(s) > max || !utf8.ValidString(s) {
		return bad(field, want, s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return bad(field, want, s)
		}
	}
	return nil
}

// checkDepth refuses JSON nested deeper than max (arrays and objects,
// outside strings), before it is decoded.
func checkDepth(data []byte, max int) error {
	depth, inStr, esc := 0, false, false
	for _, c := range data {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
			if depth > max {
				return bad("(request)", fmt.Sprintf("JSON nested at most %d deep", max), fmt.Sprintf("nesting deeper than %d", max))
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// checkMessage is the first check of every request: its size and nesting.
func (l RequestLimits) checkMessage(data []byte) error {
	if len(data) > l.MaxRequestBytes {
		return bad("(request)", fmt.Sprintf("a request of at most %d bytes", l.MaxRequestBytes), fmt.Sprintf("%d bytes", len(data)))
	}
	return checkDepth(data, l.MaxDepth)
}

// validateRun checks every field of a run request against the limits and
// the worker's devices (ids).
func (l RequestLimits) validateRun(req *RunRequest, ids []string) error {
	if err := validJobID("job", req.Job); err != nil {
		return err
	}
	if err := validName("client", req.Client, l.MaxName, true); err != nil {
		return err
	}
	found := false
	for _, id := range ids {
		found = found || id == req.Device
	}
	if !found {
		return bad("device", "one of the worker's devices ("+strings.Join(ids, ", ")+")", req.Device)
	}
	if err := validImplKind("impl", req.Impl, true); err != nil {
		return err
	}
	if req.WorkGroups < 0 || req.WorkGroups > l.MaxWork {
		return bad("work_groups", fmt.Sprintf("0 to %d", l.MaxWork), req.WorkGroups)
	}
	if req.WorkItems < 0 || req.WorkItems > l.MaxWork {
		return bad("work_items", fmt.Sprintf("0 to %d", l.MaxWork), req.WorkItems)
	}
	if req.Replicas < 0 || req.Replicas > l.MaxReplicas {
		return bad("replicas", fmt.Sprintf("0 to %d (the worker's limit)", l.MaxReplicas), req.Replicas)
	}
	if req.Target < -1 {
		return bad("target", "-1 (until the inputs end) or a number of firings ≥ 0", req.Target)
	}
	if req.Chunk < 0 || req.Chunk > l.MaxChunk {
		return bad("chunk", fmt.Sprintf("0 (the default, %d) to %d bytes", DefaultChunk, l.MaxChunk), req.Chunk)
	}
	switch req.Transport {
	case "", "nats", "tcp":
	default:
		return bad("transport", `"nats" or "tcp"`, req.Transport)
	}
	if err := l.validateActor("actor", &req.Actor); err != nil {
		return err
	}
	if len(req.Ins) != len(req.Actor.Inputs) {
		return bad("ins", fmt.Sprintf("one stream per input of actor %s (%d)", req.Actor.Name, len(req.Actor.Inputs)), fmt.Sprintf("%d streams", len(req.Ins)))
	}
	if len(req.Outs) != len(req.Actor.Outputs) {
		return bad("outs", fmt.Sprintf("one stream per output of actor %s (%d)", req.Actor.Name, len(req.Actor.Outputs)), fmt.Sprintf("%d streams", len(req.Outs)))
	}
	for i, s := range req.Ins {
		if err := l.validateStream(fmt.Sprintf("ins[%d]", i), s, req.Actor.Inputs[i]); err != nil {
			return err
		}
	}
	for i, s := range req.Outs {
		if err := l.validateStream(fmt.Sprintf("outs[%d]", i), s, req.Actor.Outputs[i]); err != nil {
			return err
		}
	}
	for port, d := range req.Distribution {
		ok := false
		for _, p := range req.Actor.Outputs {
			ok = ok || p.Name == port
		}
		if !ok {
			return bad("distribution", "output port names of actor "+req.Actor.Name, port)
		}
		if d != graph.Consecutive && d != graph.Strided && d != "" {
			return bad("distribution."+port, `"consecutive" or "strided"`, string(d))
		}
	}
	if s := req.Resume; s != nil {
		if s.Firing < 0 {
			return bad("resume.firing", "a firing ≥ 0", s.Firing)
		}
		if len(s.History) > len(req.Actor.Inputs) {
			return bad("resume.history", fmt.Sprintf("at most one window per input (%d)", len(req.Actor.Inputs)), len(s.History))
		}
		if len(s.Declared) > max(1, req.Replicas) {
			return bad("resume.declared", fmt.Sprintf("at most one state per replica (%d)", max(1, req.Replicas)), len(s.Declared))
		}
	}
	return nil
}

func validImplKind(field string, k graph.ImplKind, optional bool) error {
	switch k {
	case graph.ImplGo, graph.ImplBuiltin, graph.ImplOpenCL, graph.ImplCUDA:
		return nil
	case "":
		if optional {
			return nil
		}
	}
	return bad(field, "go, builtin, opencl or cuda", string(k))
}

// validateActor checks a shipped actor: names, ports, rates, token types,
// implementations, attributes.
func (l RequestLimits) validateActor(field string, a *ActorSpec) error {
	if err := validName(field+".name", a.Name, l.MaxName, false); err != nil {
		return err
	}
	if n := len(a.Inputs) + len(a.Outputs); n > l.MaxPorts {
		return bad(field+".inputs+outputs", fmt.Sprintf("at most %d ports", l.MaxPorts), n)
	}
	seen := map[string]bool{}
	for dir, ps := range map[string][]PortSpec{"inputs": a.Inputs, "outputs": a.Outputs} {
		for i, p := range ps {
			f := fmt.Sprintf("%s.%s[%d]", field, dir, i)
			if err := validName(f+".name", p.Name, l.MaxName, false); err != nil {
				return err
			}
			if seen[dir+"/"+p.Name] {
				return bad(f+".name", "a port name not used twice", p.Name)
			}
			seen[dir+"/"+p.Name] = true
			if err := l.validatePort(f, p); err != nil {
				return err
			}
		}
	}
	if a.Iterations < 0 || a.Iterations > l.MaxIterations {
		return bad(field+".iterations", fmt.Sprintf("0 to %d", l.MaxIterations), a.Iterations)
	}
	if len(a.Attrs) > l.MaxAttrs {
		return bad(field+".attrs", fmt.Sprintf("at most %d attributes", l.MaxAttrs), len(a.Attrs))
	}
	for k, v := range a.Attrs {
		if err := validName(field+".attrs key", k, l.MaxName, false); err != nil {
			return err
		}
		if len(v) > 64<<10 {
			return bad(field+".attrs."+k, "a value of at most 65536 bytes", fmt.Sprintf("%d bytes", len(v)))
		}
	}
	if len(a.Swap) > l.MaxAttrs {
		return bad(field+".swap", fmt.Sprintf("at most %d pairs", l.MaxAttrs), len(a.Swap))
	}
	for k, v := range a.Swap {
		if err := validName(field+".swap key", k, l.MaxName, false); err != nil {
			return err
		}
		if err := validName(field+".swap."+k, v, l.MaxName, false); err != nil {
			return err
		}
	}
	if len(a.Impls) > l.MaxImpls {
		return bad(field+".impls", fmt.Sprintf("at most %d implementations", l.MaxImpls), len(a.Impls))
	}
	for i, im := range a.Impls {
		f := fmt.Sprintf("%s.impls[%d]", field, i)
		if err := validImplKind(f+".kind", im.Kind, false); err != nil {
			return err
		}
		if err := validName(f+".entry", im.Entry, l.MaxName, true); err != nil {
			return err
		}
		switch im.Kind {
		case graph.ImplOpenCL, graph.ImplCUDA:
			// A kernel travels as its source text: a path alone would
			// name a file of the worker's.
			if len(im.Code) == 0 {
				return bad(f+".code", "the kernel's source text (a kernel is shipped, never read from the worker's files)", "none")
			}
		default:
			if err := validName(f+".source", im.Source, l.MaxName, false); err != nil {
				return err
			}
			if len(im.Code) != 0 {
				return bad(f+".code", "no code for a "+string(im.Kind)+" implementation", fmt.Sprintf("%d bytes", len(im.Code)))
			}
		}
	}
	return nil
}

// validatePort checks a port's token type and rate.
func (l RequestLimits) validatePort(field string, p PortSpec) error {
	t, err := graph.ParseTokenType(p.Type)
	if err != nil {
		return bad(field+".type", "a token type (f32, [4]u8, bytes16 …)", p.Type)
	}
	if int64(t.Size) > l.MaxChannelBytes {
		return bad(field+".type", fmt.Sprintf("a token of at most %d bytes", l.MaxChannelBytes), fmt.Sprintf("%s (%d bytes)", p.Type, t.Size))
	}
	if len(p.Rate) > 16*l.MaxPhases {
		return bad(field+".rate", fmt.Sprintf("a rate of at most %d phases", l.MaxPhases), fmt.Sprintf("%d bytes", len(p.Rate)))
	}
	r, err := graph.ParseRate(p.Rate)
	if err != nil {
		return bad(field+".rate", "a count of tokens per firing, a list of them, or dynamic", p.Rate)
	}
	if n := len(r.List()); n > l.MaxPhases {
		return bad(field+".rate", fmt.Sprintf("at most %d phases", l.MaxPhases), n)
	}
	m := r.Max()
	if m > l.MaxRate {
		return bad(field+".rate", fmt.Sprintf("at most %d tokens per firing (the worker's limit)", l.MaxRate), m)
	}
	if int64(m) > l.MaxChannelBytes/int64(t.Size) {
		return bad(field+".rate", fmt.Sprintf("a firing window of at most %d bytes", l.MaxChannelBytes), fmt.Sprintf("%d tokens of %d bytes", m, t.Size))
	}
	if p.Block < 0 || p.Block > max(m, 1) {
		return bad(field+".block", fmt.Sprintf("0 to the rate (%d)", m), p.Block)
	}
	return nil
}

// validateStream checks a stream's capacity and size for its port.
func (l RequestLimits) validateStream(field string, s StreamSpec, p PortSpec) error {
	t, _ := graph.ParseTokenType(p.Type) // checked by validatePort
	if s.Capacity < 0 {
		return bad(field+".capacity", "a capacity ≥ 0 tokens", s.Capacity)
	}
	if int64(s.Capacity) > l.MaxChannelBytes/int64(max(t.Size, 1)) {
		return bad(field+".capacity", fmt.Sprintf("at most %d bytes of %s tokens (%d tokens; the worker's limit)", l.MaxChannelBytes, p.Type, l.MaxChannelBytes/int64(max(t.Size, 1))), s.Capacity)
	}
	if s.Bytes < -1 {
		return bad(field+".bytes", "-1 (unknown) or a size ≥ 0", s.Bytes)
	}
	return nil
}

// validateSnapRequest checks a snapshot request: a firing, 8 bytes little
// endian, in 0 … 2⁶².
func validateSnapRequest(data []byte) (int64, error) {
	if len(data) != 8 {
		return 0, bad("(snapshot request)", "8 bytes (a firing, little endian)", fmt.Sprintf("%d bytes", len(data)))
	}
	f := binary.LittleEndian.Uint64(data)
	if f > math.MaxInt64/2 {
		return 0, bad("(snapshot request) firing", "a firing from 0 to 2⁶²", f)
	}
	return int64(f), nil
}

// consoleActors are the built-in actors that use the standard input or
// output of the process that runs them, and what to use on a worker
// instead.
var consoleActors = map[string]struct{ stream, use string }{
	"stdin":  {"reads the worker's standard input, which no client can feed", "read a file under the worker's --data-dir with file.read or csv.read"},
	"stdout": {"would write to the worker's standard output, which the client never sees", "write a file under the worker's --data-dir with file.write or csv.write"},
}

// refuseConsole refuses an actor that would read the worker's standard
// input or write its standard output (the built-ins stdin and stdout),
// with a sentence naming the actor and what to do instead.
func refuseConsole(worker string, a *ActorSpec) error {
	for _, im := range a.Impls {
		c, ok := consoleActors[im.Source]
		if im.Kind != graph.ImplBuiltin || !ok {
			continue
		}
		return fmt.Errorf("worker %s refuses actor %s (use: %s): it %s; map %s to the client (leave it off worker: and any: placements) so that it runs where sluice run does, or %s", worker, shown(a.Name), im.Source, c.stream, shown(a.Name), c.use)
	}
	return nil
}
