package spec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

var (
	graphKeys   = []string{"kind", "go", "name", "doc", "actors", "inputs", "outputs", "channels", "pipeline"}
	actorKeys   = []string{"doc", "in", "out", "cost", "stateful", "io", "process", "use", "with", "kernel", "graph", "attrs", "iterations", "swap", "flowmodel"}
	portKeys    = []string{"type", "rate", "block", "doc", "history"}
	kernelKeys  = []string{"opencl", "cuda", "go", "entry", "elementwise", "param"}
	channelKeys = []string{"from", "to", "name", "capacity", "initial", "values", "doc"}
)

// Load reads a graph file, choosing the format from its extension: .yaml
// or .yml for the YAML graph format, .xml for SDF3's XML (an <sdf3> root,
// read with DefaultSDF3TimeUnit) or else the ETH XML graph format. It
// resolves no flow-models and confines no path (LoadWith does).
func Load(path string) (*graph.Graph, error) {
	return LoadWith(context.Background(), path, Options{})
}

// LoadWith is Load with options: a file root and a flow-model resolver;
// the resolver's fetches end when ctx does.
func LoadWith(ctx context.Context, path string, o Options) (*graph.Graph, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		data, err := readFile(path)
		if err != nil {
			return nil, err
		}
		return ParseGraphWith(ctx, path, data, o)
	case ".xml":
		data, err := readFile(path)
		if err != nil {
			return nil, err
		}
		if IsSDF3(data) {
			return ImportSDF3Graph(path, data, 0)
		}
		return ImportETHGraphWith(path, data, o)
	}
	return nil, ErrorList{{File: path, Msg: "unknown graph file format: expected a .yaml, .yml or .xml file"}}
}

// LoadGraph reads a YAML graph file. Kernel files and composite graph files
// it names are resolved relative to the file's directory.
func LoadGraph(path string) (*graph.Graph, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseGraph(path, data)
}

// ParseGraph parses a YAML graph. name is the file name used in error
// positions and Origin fields; relative kernel and composite graph paths are
// resolved against its directory. The graph is validated (graph.Validate)
// and every problem found, in the YAML or in the graph, is returned at once
// as an ErrorList; the graph is returned only when there is none.
func ParseGraph(name string, data []byte) (*graph.Graph, error) {
	return ParseGraphWith(context.Background(), name, data, Options{})
}

// ParseGraphWith is ParseGraph with options: a file root and a flow-model
// resolver; the resolver's fetches end when ctx does.
func ParseGraphWith(ctx context.Context, name string, data []byte, o Options) (*graph.Graph, error) {
	g, _, err := parseGraphDoc(ctx, name, data, o, nil)
	return g, err
}

// parseGraphDoc is ParseGraphWith that also returns the document's root
// node (nil with the error), for a caller that reads more of the file
// without parsing it again. check, when set, judges the root node before
// the graph is read: its error is returned as it is.
func parseGraphDoc(ctx context.Context, name string, data []byte, o Options, check func(*yaml.Node) error) (*graph.Graph, *yaml.Node, error) {
	st := newState()
	st.ctx, st.opts = ctx, o
	p := st.reader(name)
	st.loading = append(st.loading, filepath.Clean(name))
	root := p.parseDoc(data)
	if root != nil && check != nil {
		if err := check(root); err != nil {
			return nil, nil, err
		}
	}
	var g *graph.Graph
	if root != nil {
		g = p.parseGraphRoot(root, defaultName(name))
	}
	if g != nil && !st.Truncated() {
		st.validate(g, name)
	}
	if err := st.Err(); err != nil {
		return nil, nil, err
	}
	g.Origin = name
	return g, root, nil
}

func defaultName(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// readFile reads a regular file of bounded size.
func readFile(path string) ([]byte, error) {
	fail := func(msg string) error { return ErrorList{{File: path, Msg: msg}} }
	fi, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fail("cannot read the file: " + err.Error())
	}
	if !fi.Mode().IsRegular() {
		return nil, fail("cannot read the file: expected a regular file")
	}
	if fi.Size() > maxFileSize {
		return nil, fail(fmt.Sprintf("file too large: %d bytes, expected at most %d", fi.Size(), maxFileSize))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail("cannot read the file: " + err.Error())
	}
	return data, nil
}

// readFileIn reads name, as written in a file in dir, through root (nil:
// unconfined), with readFile's checks; host is its path on the host, for
// messages.
func readFileIn(root *fsroot.Root, dir, name, host string) ([]byte, error) {
	if root == nil {
		return readFile(host)
	}
	fi, err := root.Stat(dir, name)
	if err == nil && !fi.Mode().IsRegular() {
		return nil, errors.New("cannot read the file: expected a regular file")
	}
	if err == nil && fi.Size() > maxFileSize {
		return nil, fmt.Errorf("file too large: %d bytes, expected at most %d", fi.Size(), maxFileSize)
	}
	if err != nil {
		var esc *fsroot.EscapeError
		if errors.As(err, &esc) {
			return nil, err
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, errors.New("cannot read the file: " + err.Error())
	}
	return root.ReadFile(dir, name)
}

// validate runs graph.Validate and adds its problems to the error list,
// leaving out those that only repeat a mistake already reported.
func (st *state) validate(g *graph.Graph, file string) {
	err := g.Validate()
	var ve *graph.ValidationError
	if !errors.As(err, &ve) {
		return
	}
	for _, pr := range ve.Problems {
		if c := classify(pr.Msg); c != "" && st.quiet[pr.Where+"|"+c] {
			continue
		}
		e := yamlpos.At(file, pr.Where, pr.Msg)
		e.Consequence = true
		st.Add(e)
	}
}

func classify(msg string) string {
	switch {
	case strings.Contains(msg, "has no token type"):
		return "type"
	case strings.Contains(msg, "has no rate"):
		return "rate"
	case strings.Contains(msg, "is not connected"):
		return "conn"
	}
	return ""
}

func (st *state) hush(origin, class string) { st.quiet[origin+"|"+class] = true }

// parseGraphFile parses a YAML document holding a graph (nil when the
// document is not YAML or empty).
func (p *yp) parseGraphFile(data []byte, defName string) *graph.Graph {
	if root := p.parseDoc(data); root != nil {
		return p.parseGraphRoot(root, defName)
	}
	return nil
}

// parseDoc parses a YAML document that should hold a graph and returns its
// root node, or nil (the problem recorded) when it is not YAML or empty.
func (p *yp) parseDoc(data []byte) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		p.SyntaxErrorIn(err, data)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.st.Add(&Error{File: p.File, Msg: "empty file: expected a graph (name, actors, channels, ...)"})
		return nil
	}
	return doc.Content[0]
}

// parseGraphRoot reads the graph of a document's root node.
func (p *yp) parseGraphRoot(root *yaml.Node, defName string) *graph.Graph {
	g := p.parseGraph(root, defName)
	g.Origin = p.File
	m := yamlpos.Index(p.Fields(root, "graph", nil))
	p.CheckKind(m, "graph")
	if f, ok := m["go"]; ok {
		g.GoPackages = p.goPackages(f.V)
	}
	return g
}

type gctx struct {
	g      *graph.Graph
	broken map[*graph.Actor]bool // actors whose declaration was unreadable
}

// parseGraph reads a graph mapping (a file's root or an inline composite).
func (p *yp) parseGraph(n *yaml.Node, defName string) *graph.Graph {
	p.st.graphs++
	if p.st.graphs > maxGraphs || p.st.gdepth >= maxDepth {
		if nn := p.Node(n); nn != nil {
			p.Errorf(nn, "graph %s: too many composite graphs (at most %d, nested at most %d deep)", defName, maxGraphs, maxDepth)
		}
		return graph.New(defName)
	}
	p.st.gdepth++
	defer func() { p.st.gdepth-- }()
	fs := p.Fields(n, "graph", graphKeys)
	m := yamlpos.Index(fs)
	name := defName
	if f, ok := m["name"]; ok {
		if s, ok := p.Str(f.V, "name"); ok {
			name = s
		}
	}
	g := graph.New(name)
	if n := p.Node(n); n != nil {
		g.Origin = p.Pos(n)
	}
	c := &gctx{g: g, broken: map[*graph.Actor]bool{}}
	if f, ok := m["actors"]; ok {
		for _, af := range p.Fields(f.V, "actors", nil) {
			p.parseActor(c, af)
		}
	}
	if f, ok := m["inputs"]; ok {
		p.parseBoundaries(c, graph.In, f.V)
	}
	if f, ok := m["outputs"]; ok {
		p.parseBoundaries(c, graph.Out, f.V)
	}
	if f, ok := m["channels"]; ok {
		p.parseChannels(c, f.V)
	}
	if f, ok := m["shared"]; ok {
		p.parseShared(c, f.V)
	}
	return g
}

func (p *yp) parseActor(c *gctx, f yamlpos.Field) {
	a := c.g.AddActor(f.Key, graph.At(p.Pos(f.K)))
	what := "actor " + f.Key
	n := p.Node(f.V)
	if n == nil || n.Kind != yaml.MappingNode {
		if n != nil {
			p.Errorf(n, "%s: expected a mapping (in, out, kernel, ...), found %s", what, yamlpos.Kind(n))
		}
		c.broken[a] = true
		return
	}
	m := yamlpos.Index(p.Fields(n, what, actorKeys))
	process := false
	if f, ok := m["process"]; ok {
		process, _ = p.Bool(f.V, what+": process")
		a.Stateful = a.Stateful || process
	}
	if f, ok := m["stateful"]; ok {
		if v, ok := p.Bool(f.V, what+": stateful"); ok {
			a.Stateful = v || process
		}
	}
	if f, ok := m["io"]; ok {
		a.IO, _ = p.Bool(f.V, what+": io")
	}
	if f, ok := m["cost"]; ok {
		a.Cost, _ = p.Duration(f.V, what+": cost")
	}
	if f, ok := m["in"]; ok {
		p.parsePorts(c, a, graph.In, f.V, process)
	}
	if f, ok := m["out"]; ok {
		p.parsePorts(c, a, graph.Out, f.V, process)
	}
	defer p.parseElementwise(a, m, what)
	if f, ok := m["use"]; ok {
		if s, ok := p.Str(f.V, what+": use"); ok {
			im := graph.Impl{Kind: graph.ImplBuiltin, Source: s}
			if w, ok := m["with"]; ok {
				if wn := p.Node(w.V); wn != nil && wn.Kind != yaml.MappingNode {
					p.Errorf(wn, "%s: with: expected a mapping of parameters, found %s", what, yamlpos.Kind(wn))
				} else if v, ok := p.Value(w.V, what+": with").(map[string]any); ok {
					im.Params = v
				}
			}
			a.Impls = append(a.Impls, im)
		}
	} else if w, ok := m["with"]; ok {
		p.Errorf(w.K, "%s: with: gives parameters to a built-in actor: expected a use: key naming it", what)
	}
	if f, ok := m["kernel"]; ok {
		p.parseKernel(a, f.V, what)
	}
	if f, ok := m["attrs"]; ok {
		for _, af := range p.Fields(f.V, what+": attrs", nil) {
			if s, ok := p.Str(af.V, what+": attrs."+af.Key); ok {
				if a.Attrs == nil {
					a.Attrs = map[string]string{}
				}
				a.Attrs[af.Key] = s
			}
		}
	}
	if f, ok := m["iterations"]; ok {
		if v, ok := p.Int(f.V, what+": iterations", 0, math.MaxInt32); ok {
			a.Iterations = int(v)
		}
	}
	if f, ok := m["swap"]; ok { // swap: {output: input}
		for _, sf := range p.Fields(f.V, what+": swap", nil) {
			if s, ok := p.Str(sf.V, what+": swap."+sf.Key); ok {
				if a.Swap == nil {
					a.Swap = map[string]string{}
				}
				a.Swap[sf.Key] = s
			}
		}
	}
	if _, ok := m["flowmodel"]; ok {
		if !p.parseFlowModel(a, m, what) {
			c.broken[a] = true
		}
	}
	if f, ok := m["graph"]; ok {
		for _, k := range []string{"use", "kernel", "process"} {
			if o, ok := m[k]; ok {
				p.Errorf(o.K, "%s: a composite actor (graph:) has no %s: its body is its subgraph", what, k)
			}
		}
		a.Sub = p.parseSub(f.V, a.Name, what)
	}
	p.parsePattern(a, m, what)
	p.parseState(a, m, what)
}

func (p *yp) parsePorts(c *gctx, a *graph.Actor, dir graph.Direction, n *yaml.Node, process bool) {
	what := fmt.Sprintf("actor %s: %s", a.Name, dir)
	for _, f := range p.Fields(n, what, nil) {
		pos := p.Pos(f.K)
		pw := fmt.Sprintf("port %s.%s", a.Name, f.Key)
		var (
			typ     graph.TokenType
			rate    graph.Rate
			block   int64
			history int64
			typeOK  bool
			rateOK  bool
			hasRate bool
		)
		pn := p.Node(f.V)
		if pn != nil && pn.Kind == yaml.MappingNode {
			m := yamlpos.Index(p.Fields(pn, pw, portKeys))
			if t, ok := m["type"]; ok {
				typ, typeOK = p.tokenType(t.V, pw+": type")
			} else {
				typeOK = true // reported by validation: no token type
			}
			if r, ok := m["rate"]; ok {
				hasRate = true
				rate, rateOK = p.rate(r.V, pw+": rate")
				if rateOK && process && !rate.IsDynamic() {
					p.Errorf(r.V, "%s: rate %s on a process: a process (process: true) has dynamic rates; leave rate out or remove process", pw, rate)
				}
			} else {
				rateOK = true
			}
			if h, ok := m["history"]; ok {
				if dir != graph.In {
					p.Errorf(h.K, "%s: history: is kept on input ports only", pw)
				} else {
					history, _ = p.Int(h.V, pw+": history", 1, maxRate)
				}
			}
			if b, ok := m["block"]; ok {
				if dir == graph.In {
					p.Errorf(b.K, "%s: block: blocks are defined on output ports only", pw)
				} else {
					block, _ = p.Int(b.V, pw+": block", 1, maxRate)
				}
			}
		} else if pn != nil {
			p.Errorf(pn, "%s: expected a mapping such as {type: f32, rate: 1}, found %s", pw, yamlpos.Kind(pn))
		}
		if process && !hasRate {
			rate, rateOK = graph.Dynamic(), true
		}
		port := a.AddPort(f.Key, dir, typ, rate, pos)
		port.Block = int(block)
		port.History = int(history)
		if !typeOK {
			p.st.hush(pos, "type")
		}
		if !rateOK {
			p.st.hush(pos, "rate")
		}
	}
}

// tokenType reads a token type name (graph.ParseTokenType) of bounded size.
func (p *yp) tokenType(n *yaml.Node, what string) (graph.TokenType, bool) {
	s, ok := p.Str(n, what)
	if !ok {
		return graph.TokenType{}, false
	}
	return p.checkType(s, func(format string, args ...any) { p.Errorf(n, format, args...) }, what)
}

func (p *yp) checkType(s string, fail func(string, ...any), what string) (graph.TokenType, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]"); i > 1 {
			if n, err := strconv.ParseInt(s[1:i], 10, 64); err != nil || n > maxTokenSize {
				fail("%s: token type %q: expected [N]scalar with 0 < N ≤ %d", what, yamlpos.Clip(s), maxTokenSize)
				return graph.TokenType{}, false
			}
		}
	}
	t, err := graph.ParseTokenType(s)
	if err != nil {
		fail("%s: %v", what, err)
		return graph.TokenType{}, false
	}
	if t.Size <= 0 || t.Size > maxTokenSize {
		fail("%s: token type %q is %d bytes: expected at most %d", what, yamlpos.Clip(s), t.Size, maxTokenSize)
		return graph.TokenType{}, false
	}
	return t, true
}

// rate reads a positive integer (SDF), a list of phases (CSDF) or dynamic.
func (p *yp) rate(n *yaml.Node, what string) (graph.Rate, bool) {
	n = p.Node(n)
	if n == nil {
		return graph.Rate{}, false
	}
	const want = "expected a positive integer, a list of phases such as [1, 2, 1], or dynamic"
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!int":
		v, ok := p.Int(n, what, 1, maxRate)
		return graph.SDF(int(v)), ok
	case n.Kind == yaml.ScalarNode && (n.Value == "dynamic" || n.Value == "kpn"):
		return graph.Dynamic(), true
	case n.Kind == yaml.SequenceNode:
		if len(n.Content) == 0 || len(n.Content) > maxPhases {
			p.Errorf(n, "%s: %d phases: expected 1 to %d", what, len(n.Content), maxPhases)
			return graph.Rate{}, false
		}
		ph := make([]int, 0, len(n.Content))
		var sum int64
		ok := true
		for _, c := range n.Content {
			v, k := p.Int(c, what+" phase", 0, maxRate)
			ok = ok && k
			sum += v
			ph = append(ph, int(v))
		}
		if !ok {
			return graph.Rate{}, false
		}
		if sum == 0 || sum > maxRate {
			p.Errorf(n, "%s: phases sum to %d: expected 1 to %d tokens per cycle", what, sum, maxRate)
			return graph.Rate{}, false
		}
		return graph.CSDF(ph...), true
	}
	p.Errorf(n, "%s: %s, found %s", what, want, yamlpos.Kind(n))
	return graph.Rate{}, false
}

func (p *yp) parseKernel(a *graph.Actor, n *yaml.Node, what string) {
	what += ": kernel"
	fs := p.Fields(n, what, kernelKeys)
	m := yamlpos.Index(fs)
	entry := ""
	if f, ok := m["entry"]; ok {
		entry, _ = p.Str(f.V, what+": entry")
	}
	count := 0
	for _, f := range fs {
		var k graph.ImplKind
		switch f.Key {
		case "opencl":
			k = graph.ImplOpenCL
		case "cuda":
			k = graph.ImplCUDA
		case "elementwise":
			count++ // read by parseElementwise, once iterations are known
			continue
		case "go":
			count++
			if s, ok := p.Str(f.V, what+": go"); ok {
				a.Impls = append(a.Impls, graph.Impl{Kind: graph.ImplGo, Source: s})
			}
			continue
		default:
			continue
		}
		count++
		s, ok := p.Str(f.V, what+": "+f.Key)
		if !ok {
			continue
		}
		path, ok := p.sourceFile(s, func(format string, args ...any) { p.Errorf(f.V, format, args...) }, what+": "+f.Key)
		if ok {
			a.Impls = append(a.Impls, graph.Impl{Kind: k, Source: path, Entry: entry})
		}
	}
	if nn := p.Node(n); count == 0 && nn != nil && nn.Kind == yaml.MappingNode {
		p.Errorf(nn, "%s: expected at least one of opencl, cuda, go or elementwise", what)
	}
}

// sourceFile resolves a kernel file against the spec file's directory and
// checks that it exists.
func (p *yp) sourceFile(s string, fail func(string, ...any), what string) (string, bool) {
	if strings.TrimSpace(s) == "" {
		fail("%s: expected a file name, found an empty string", what)
		return "", false
	}
	path, err := p.st.opts.Root.HostPath(p.dir, s)
	if err != nil {
		fail("%s: %v", what, err)
		return "", false
	}
	fi, err := p.st.opts.Root.Stat(p.dir, s)
	if esc := (*fsroot.EscapeError)(nil); errors.As(err, &esc) {
		fail("%s: %v", what, err)
		return "", false
	}
	if err != nil || !fi.Mode().IsRegular() {
		fail("%s: kernel file %q not found (looked for %s, relative to the spec file's directory)", what, yamlpos.Clip(s), path)
		return "", false
	}
	return path, true
}

// parseSub reads a composite actor's body: a file name or an inline graph.
func (p *yp) parseSub(n *yaml.Node, actor, what string) *graph.Graph {
	n = p.Node(n)
	if n == nil {
		return nil
	}
	if n.Kind == yaml.MappingNode {
		return p.parseGraph(n, actor)
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.Errorf(n, "%s: graph: expected a file name or an inline graph mapping, found %s", what, yamlpos.Kind(n))
		return nil
	}
	path, err := p.st.opts.Root.HostPath(p.dir, n.Value)
	if err != nil {
		p.Errorf(n, "%s: graph: %v", what, err)
		return nil
	}
	clean := filepath.Clean(path)
	for _, l := range p.st.loading {
		if l == clean {
			p.Errorf(n, "%s: graph file %q includes itself (%s → %s)", what, yamlpos.Clip(n.Value), strings.Join(p.st.loading, " → "), clean)
			return nil
		}
	}
	data, err := readFileIn(p.st.opts.Root, p.dir, n.Value, path)
	if err != nil {
		var el ErrorList
		if errors.As(err, &el) && len(el) == 1 {
			err = errors.New(el[0].Msg)
		}
		p.Errorf(n, "%s: graph file %q: %v", what, yamlpos.Clip(n.Value), err)
		return nil
	}
	sub := p.st.reader(path)
	p.st.loading = append(p.st.loading, clean)
	g := sub.parseGraphFile(data, defaultName(path))
	p.st.loading = p.st.loading[:len(p.st.loading)-1]
	return g
}

func (p *yp) parseBoundaries(c *gctx, dir graph.Direction, n *yaml.Node) {
	what := "inputs"
	if dir == graph.Out {
		what = "outputs"
	}
	for _, f := range p.Fields(n, what, nil) {
		vn := p.Node(f.V)
		s, ok := p.Str(vn, what+"."+f.Key)
		if !ok {
			continue
		}
		an, pn, ok := splitRef(s)
		if !ok {
			p.Errorf(vn, "%s.%s: expected actor.port, found %q", what, f.Key, yamlpos.Clip(s))
			continue
		}
		if c.g.Actor(an) == nil { // reported here: graph.Validate's suggestion is quadratic
			names := make([]string, len(c.g.Actors))
			for i, a := range c.g.Actors {
				names[i] = a.Name
			}
			p.Errorf(vn, "graph %s %q is bound to unknown actor %q%s", what[:len(what)-1], f.Key, yamlpos.Clip(an), yamlpos.Suggest(an, names))
			continue
		}
		c.g.Expose(dir, f.Key, an, pn, p.Pos(vn))
	}
}

func splitRef(ref string) (string, string, bool) {
	i := strings.LastIndexByte(ref, '.')
	if i <= 0 || i == len(ref)-1 {
		return "", "", false
	}
	return ref[:i], ref[i+1:], true
}

func (p *yp) parseChannels(c *gctx, n *yaml.Node) {
	n = p.Node(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return
	}
	if n.Kind != yaml.SequenceNode {
		p.Errorf(n, "channels: expected a list of {from: actor.port, to: actor.port, ...}, found %s", yamlpos.Kind(n))
		return
	}
	for i, cn := range n.Content {
		p.parseChannel(c, cn, fmt.Sprintf("channels[%d]", i))
	}
}

func (p *yp) parseChannel(c *gctx, cn *yaml.Node, what string) {
	cn = p.Node(cn)
	if cn == nil {
		return
	}
	if cn.Kind != yaml.MappingNode {
		p.Errorf(cn, "%s: expected a mapping such as {from: a.out, to: b.in}, found %s", what, yamlpos.Kind(cn))
		return
	}
	m := yamlpos.Index(p.Fields(cn, what, channelKeys))
	var ends [2]*graph.Port
	okEnds := true
	for i, k := range []string{"from", "to"} {
		f, ok := m[k]
		if !ok {
			p.Errorf(cn, "%s: missing %s: (expected actor.port)", what, k)
			okEnds = false
			continue
		}
		dir := graph.Out
		if k == "to" {
			dir = graph.In
		}
		ends[i] = p.portRef(c, f.V, dir, what+": "+k)
		okEnds = okEnds && ends[i] != nil
	}
	opts := []graph.ChannelOption{graph.ChannelAt(p.Pos(cn))}
	if f, ok := m["name"]; ok {
		if s, ok := p.Str(f.V, what+": name"); ok {
			opts = append(opts, graph.Named(s))
		}
	}
	if f, ok := m["capacity"]; ok {
		if v, ok := p.Int(f.V, what+": capacity", 1, maxRate); ok {
			opts = append(opts, graph.Capacity(int(v)))
		}
	}
	initial, hasInitial := int64(0), false
	if f, ok := m["initial"]; ok {
		initial, hasInitial = p.Int(f.V, what+": initial", 0, maxRate)
		if hasInitial {
			opts = append(opts, graph.Initial(int(initial)))
		}
	}
	if !okEnds {
		for _, e := range ends {
			if e != nil {
				p.st.hush(e.Origin, "conn")
			}
		}
		return
	}
	if f, ok := m["values"]; ok && !ends[0].Type.IsZero() {
		data, count, ok := p.encodeValues(ends[0].Type, f.V, what+": values")
		if ok {
			if hasInitial && int64(count) != initial {
				p.Errorf(f.V, "%s: %d values for %d initial tokens: expected as many values as initial tokens (or leave initial out)", what, count, initial)
			} else {
				opts = append(opts, graph.Initial(count), graph.InitialData(data))
			}
		}
	}
	c.g.Join(ends[0], ends[1], opts...)
}

// portRef resolves "actor.port" to a port of the given direction,
// reporting unknown names at the node with a suggestion.
func (p *yp) portRef(c *gctx, n *yaml.Node, dir graph.Direction, what string) *graph.Port {
	n = p.Node(n)
	s, ok := p.Str(n, what)
	if !ok {
		return nil
	}
	an, pn, ok := splitRef(s)
	if !ok {
		p.Errorf(n, "%s: expected actor.port, found %q", what, yamlpos.Clip(s))
		if a := c.g.Actor(s); a != nil { // "A" for "A.o": its ports are not unconnected
			for _, q := range a.Ports() {
				p.st.hush(q.Origin, "conn")
			}
		}
		return nil
	}
	return lookupPort(c, p.st, an, pn, dir, func(f string, args ...any) { p.Errorf(n, f, args...) }, what)
}

// lookupPort finds actor.port of the given direction, reporting unknown
// names through fail with a suggestion.
func lookupPort(c *gctx, st *state, an, pn string, dir graph.Direction, fail func(string, ...any), what string) *graph.Port {
	a := c.g.Actor(an)
	if a == nil {
		names := make([]string, len(c.g.Actors))
		for i, x := range c.g.Actors {
			names[i] = x.Name
		}
		fail("%s: unknown actor %q in %q%s", what, yamlpos.Clip(an), yamlpos.Clip(an+"."+pn), yamlpos.Suggest(an, names))
		if alt := yamlpos.Closest(an, names); alt != "" {
			if q := c.g.Actor(alt).Port(pn); q != nil {
				st.hush(q.Origin, "conn")
			}
		}
		return nil
	}
	port := a.Port(pn)
	if port == nil {
		if c.broken[a] {
			return nil
		}
		var names []string
		for _, q := range a.Ports() {
			if q.Dir == dir {
				names = append(names, q.Name)
			}
		}
		fail("%s: unknown %sput port %q on actor %q%s", what, dir, yamlpos.Clip(pn), an, yamlpos.Suggest(pn, names))
		if alt := yamlpos.Closest(pn, names); alt != "" {
			st.hush(a.Port(alt).Origin, "conn")
		}
		return nil
	}
	if port.Dir != dir {
		fail("%s: %s.%s is an %sput port: expected an %sput port (a channel goes from an output to an input)", what, an, pn, port.Dir, dir)
		st.hush(port.Origin, "conn")
		return nil
	}
	return port
}

// goPackages reads a graph's `go:` key: the Go packages that register its
// Go actors, as a list (or one string) of import paths or directories. A
// directory ("." or one starting with ./ or ../, or absolute) is resolved
// against the graph file's directory.
func (p *yp) goPackages(n *yaml.Node) []string {
	var items []*yaml.Node
	if nn := p.Node(n); nn != nil && nn.Kind == yaml.ScalarNode {
		items = []*yaml.Node{nn}
	} else {
		items = p.List(n, "go", "Go package paths (import paths or directories such as .)")
	}
	var out []string
	for _, it := range items {
		s, ok := p.Str(it, "go")
		if !ok {
			continue
		}
		if s == "" {
			p.Errorf(it, "go: expected a Go package (an import path or a directory such as .), found an empty string")
			continue
		}
		if s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || filepath.IsAbs(s) {
			dir, err := p.st.opts.Root.HostPath(p.dir, s)
			if err != nil {
				p.Errorf(it, "go: %v", err)
				continue
			}
			fi, err := p.st.opts.Root.Stat(p.dir, s)
			if esc := (*fsroot.EscapeError)(nil); errors.As(err, &esc) {
				p.Errorf(it, "go: %v", err)
				continue
			}
			if err != nil || !fi.IsDir() {
				p.Errorf(it, "go: %s: expected a directory holding a Go package, found none at %s", s, dir)
				continue
			}
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
			// The go command finds a package's module from its real path.
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			s = dir
		}
		out = append(out, s)
	}
	return out
}
