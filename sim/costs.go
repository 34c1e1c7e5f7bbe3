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
// ("costs", "profile", "graph" or "none" for a zero default). Precedence:
// the cost file's entry for p's name, then for p's kind, then "*", then
// the profile's mean, then the graph's Actor.Cost.
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
			return Cost{Seconds: s}, "profile"
		}
	}
	if a.Cost > 0 {
		return Cost{Seconds: a.Cost.Seconds()}, "graph"
	}
	return Cost{}, "none"
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

// FileError is a problem in a cost, profile or control file at a position.
type FileError struct {
	File      string
	Line, Col int
	Msg       string
}

// Error renders "file:line:col: msg".
func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// FileErrors lists every problem found in a file.
type FileErrors []*FileError

// Error renders one problem per line.
func (l FileErrors) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

type yreader struct {
	file string
	errs FileErrors
}

func (r *yreader) errorf(n *yaml.Node, format string, args ...any) {
	e := &FileError{File: r.file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	r.errs = append(r.errs, e)
}

func (r *yreader) root(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		r.errs = append(r.errs, &FileError{File: r.file, Msg: strings.TrimPrefix(err.Error(), "yaml: ")})
		return nil
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return deref(doc.Content[0])
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

type pair struct{ k, v *yaml.Node }

func (r *yreader) pairs(n *yaml.Node, what string, allowed ...string) []pair {
	n = deref(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		r.errorf(n, "%s: expected a mapping, found %s", what, describe(n))
		return nil
	}
	var out []pair
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			r.errorf(k, "%s: expected a name as key, found %s", what, describe(k))
			continue
		}
		if seen[k.Value] {
			r.errorf(k, "%s: duplicate key %q", what, k.Value)
			continue
		}
		seen[k.Value] = true
		if len(allowed) > 0 && !slicesContains(allowed, k.Value) {
			r.errorf(k, "%s: unknown key %q: allowed keys: %s", what, k.Value, strings.Join(allowed, ", "))
			continue
		}
		out = append(out, pair{k, v})
	}
	return out
}

func slicesContains(l []string, s string) bool {
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

// ParseCosts reads a cost file from bytes; file names it in errors. A
// relative profile path is resolved against the file's directory.
func ParseCosts(file string, data []byte) (*Costs, error) {
	r := &yreader{file: file}
	c := &Costs{Actors: map[string]map[string]Cost{}, Control: map[string]Control{},
		Probabilities: map[string]float64{}, Loops: map[string]int64{}, Origin: file}
	root := r.root(data)
	unit := "cycles"
	ps := r.pairs(root, "costs", "unit", "costs", "profile", "control", "probabilities", "loops")
	for _, p := range ps {
		if p.k.Value == "unit" {
			u := p.v.Value
			if _, ok := unitPerSecond[u]; !ok && u != "cycles" {
				r.errorf(p.v, "unit: expected cycles, s, ms, us or ns, found %s", describe(p.v))
				continue
			}
			unit = u
		}
	}
	cost := func(n *yaml.Node, what string) (Cost, bool) {
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			r.errorf(n, "%s: expected a cost such as 3, 2.5ms or \"3000 cycles\", found %s", what, describe(n))
			return Cost{}, false
		}
		v, err := parseCost(n.Value, unit)
		if err != nil {
			r.errorf(n, "%s: %v", what, err)
			return Cost{}, false
		}
		return v, true
	}
	for _, p := range ps {
		switch p.k.Value {
		case "costs":
			for _, a := range r.pairs(p.v, "costs") {
				m := map[string]Cost{}
				if a.v.Kind == yaml.ScalarNode {
					if v, ok := cost(a.v, "cost of "+a.k.Value); ok {
						m["*"] = v
					}
				} else {
					for _, t := range r.pairs(a.v, "costs of "+a.k.Value) {
						if v, ok := cost(t.v, "cost of "+a.k.Value+" on "+t.k.Value); ok {
							m[t.k.Value] = v
						}
					}
				}
				c.Actors[a.k.Value] = m
			}
		case "profile":
			if p.v.Kind != yaml.ScalarNode {
				r.errorf(p.v, "profile: expected a file name, found %s", describe(p.v))
				continue
			}
			path := p.v.Value
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(file), path)
			}
			prof, err := LoadProfile(path)
			if err != nil {
				r.errorf(p.v, "profile: %v", err)
				continue
			}
			c.Profile = prof
		case "control":
			for _, a := range r.pairs(p.v, "control") {
				var ct Control
				for _, f := range r.pairs(a.v, "control of "+a.k.Value, "if", "while") {
					name := strings.TrimSpace(f.v.Value)
					if f.v.Kind != yaml.ScalarNode || name == "" || name == "!" {
						r.errorf(f.v, "control of %s: %s: expected a control variable name, found %s", a.k.Value, f.k.Value, describe(f.v))
						continue
					}
					if f.k.Value == "if" {
						ct.Invert = strings.HasPrefix(name, "!")
						ct.If = strings.TrimSpace(strings.TrimPrefix(name, "!"))
					} else {
						ct.While = name
					}
				}
				if ct.If != "" && ct.While != "" {
					r.errorf(a.k, "control of %s: expected one of if or while, found both", a.k.Value)
				}
				c.Control[a.k.Value] = ct
			}
		case "probabilities":
			for _, f := range r.pairs(p.v, "probabilities") {
				v, err := strconv.ParseFloat(f.v.Value, 64)
				if f.v.Kind != yaml.ScalarNode || err != nil || v < 0 || v > 1 {
					r.errorf(f.v, "probability of %s: expected a number from 0 to 1, found %s", f.k.Value, describe(f.v))
					continue
				}
				c.Probabilities[f.k.Value] = v
			}
		case "loops":
			for _, f := range r.pairs(p.v, "loops") {
				v, err := strconv.ParseInt(f.v.Value, 10, 64)
				if f.v.Kind != yaml.ScalarNode || err != nil || v < 0 || v > 1<<20 {
					r.errorf(f.v, "loop count of %s: expected an integer from 0 to 1048576, found %s", f.k.Value, describe(f.v))
					continue
				}
				c.Loops[f.k.Value] = v
			}
		}
	}
	if len(r.errs) > 0 {
		return nil, r.errs
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
	r := &yreader{file: file}
	root := r.root(data)
	ps := r.pairs(root, "profile")
	for _, p := range ps {
		if p.k.Value == "actors" && p.v.Kind == yaml.MappingNode {
			ps = r.pairs(p.v, "profile actors")
			break
		}
	}
	out := map[string]float64{}
	for _, p := range ps {
		if p.v.Kind != yaml.MappingNode {
			continue // header fields such as graph: or wall_ns:
		}
		found := false
		for _, f := range r.pairs(p.v, "profile of "+p.k.Value) {
			if f.k.Value != "mean_ns" {
				continue
			}
			v, err := strconv.ParseFloat(f.v.Value, 64)
			if f.v.Kind != yaml.ScalarNode || err != nil || v < 0 || math.IsInf(v, 0) {
				r.errorf(f.v, "profile of %s: mean_ns: expected a non-negative number of nanoseconds, found %s", p.k.Value, describe(f.v))
				continue
			}
			out[p.k.Value] = v / 1e9
			found = true
		}
		if !found && len(r.errs) == 0 {
			r.errorf(p.k, "profile of %s: expected mean_ns", p.k.Value)
		}
	}
	if len(r.errs) > 0 {
		return nil, r.errs
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
	r := &yreader{file: path}
	root := r.root(b)
	out := map[string][]int64{}
	for _, p := range r.pairs(root, "controls") {
		if p.v.Kind != yaml.SequenceNode {
			r.errorf(p.v, "control variable %s: expected a list of outcomes, found %s", p.k.Value, describe(p.v))
			continue
		}
		vals := make([]int64, 0, len(p.v.Content))
		for _, it := range p.v.Content {
			v, err := strconv.ParseInt(it.Value, 10, 64)
			if it.Kind != yaml.ScalarNode || err != nil || v < 0 {
				r.errorf(it, "control variable %s: expected a non-negative integer outcome, found %s", p.k.Value, describe(it))
				continue
			}
			vals = append(vals, v)
		}
		out[p.k.Value] = vals
	}
	if len(r.errs) > 0 {
		return nil, r.errs
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
