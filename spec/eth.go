package spec

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
)

// xel is an XML element with its position.
type xel struct {
	name      string
	attrs     []xml.Attr
	line, col int
	kids      []*xel
}

// xp reads an ETH XML file.
type xp struct{ yp }

func (x *xp) errAt(e *xel, format string, args ...any) {
	x.st.Add(&Error{File: x.File, Line: e.line, Col: e.col, Msg: fmt.Sprintf(format, args...)})
}

func (x *xp) posOf(e *xel) string { return yamlpos.Origin(x.File, e.line, e.col) }

// parse reads the document into a tree of elements; nil on a syntax error.
func (x *xp) parse(data []byte) *xel {
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []*xel
	var root *xel
	count := 0
	for {
		line, col := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			l, c := d.InputPos()
			msg := err.Error()
			if se, ok := err.(*xml.SyntaxError); ok {
				msg, l = se.Msg, se.Line
			}
			x.st.Add(&Error{File: x.File, Line: l, Col: c, Msg: "malformed XML: " + msg})
			return nil
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if count > yamlpos.DefaultLimits.Nodes || len(stack) >= yamlpos.DefaultLimits.Nesting {
				x.st.Add(&Error{File: x.File, Line: line, Col: col, Msg: "document too large or too deeply nested"})
				return nil
			}
			e := &xel{name: t.Name.Local, attrs: append([]xml.Attr(nil), t.Attr...), line: line, col: col}
			if t.Name.Space != "" {
				e.name = t.Name.Space + ":" + t.Name.Local
			}
			if len(stack) == 0 {
				root = e
			} else {
				parent := stack[len(stack)-1]
				parent.kids = append(parent.kids, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if root == nil {
		x.st.Add(&Error{File: x.File, Msg: "empty document: expected an XML element"})
	}
	return root
}

// attrs returns an element's attributes, reporting unknown ones and
// missing required ones (allowed names ending in "!").
func (x *xp) attrs(e *xel, allowed ...string) map[string]string {
	m := map[string]string{}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = strings.TrimSuffix(a, "!")
	}
	for _, a := range e.attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue
		}
		n := a.Name.Local
		if a.Name.Space != "" {
			n = a.Name.Space + ":" + n
		}
		if !slices.Contains(names, n) {
			x.errAt(e, "<%s>: unknown attribute %q%s; allowed: %s", e.name, n, yamlpos.DidYouMean(n, names), strings.Join(names, ", "))
			continue
		}
		if _, dup := m[n]; dup {
			x.errAt(e, "<%s>: duplicate attribute %q", e.name, n)
			continue
		}
		m[n] = a.Value
	}
	for _, a := range allowed {
		if n, ok := strings.CutSuffix(a, "!"); ok {
			if _, has := m[n]; !has {
				x.errAt(e, "<%s>: missing attribute %q", e.name, n)
			}
		}
	}
	return m
}

func (x *xp) unknownElement(e, parent *xel, allowed ...string) {
	x.errAt(e, "<%s>: unknown element <%s>%s; allowed: %s", parent.name, e.name, yamlpos.DidYouMean(e.name, allowed), "<"+strings.Join(allowed, ">, <")+">")
}

// xint reads an integer attribute in [lo, hi].
func (x *xp) xint(e *xel, what, s string, lo, hi int64) (int, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < lo || v > hi {
		x.errAt(e, "<%s>: %s=%q: expected an integer from %d to %d", e.name, what, yamlpos.Clip(s), lo, hi)
		return 0, false
	}
	return int(v), true
}

// xrate reads a rate attribute: "4", "1,2,1" (CSDF) or "dynamic".
func (x *xp) xrate(e *xel, s string) (graph.Rate, bool) {
	s = strings.TrimSpace(s)
	if s == "dynamic" || s == "kpn" {
		return graph.Dynamic(), true
	}
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), ",")
	if len(parts) > maxPhases {
		x.errAt(e, "<%s>: rate has %d phases: expected at most %d", e.name, len(parts), maxPhases)
		return graph.Rate{}, false
	}
	ph := make([]int, 0, len(parts))
	var sum int64
	for _, f := range parts {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || v < 0 || v > maxRate {
			x.errAt(e, "<%s>: rate=%q: expected a positive integer, phases such as \"1,2,1\", or dynamic", e.name, yamlpos.Clip(s))
			return graph.Rate{}, false
		}
		sum += v
		ph = append(ph, int(v))
	}
	if sum <= 0 || sum > maxRate {
		x.errAt(e, "<%s>: rate=%q: expected 1 to %d tokens per firing (cycle)", e.name, yamlpos.Clip(s), maxRate)
		return graph.Rate{}, false
	}
	if len(ph) == 1 {
		return graph.SDF(ph[0]), true
	}
	return graph.CSDF(ph...), true
}

// ImportETHGraph reads an SDF graph in the XML format of the ETH Zurich
// OpenCL framework (<graph>, <actor>, <port>, <src>, <channel>, <sender>,
// <receiver>). name is used in positions and to resolve <src location> files.
// Each channel's tokensize N gives both its ports the opaque token type
// bytesN; a <src type="c"> file becomes an OpenCL implementation (ETH
// synthesizes OpenCL kernels from the C actor source). The graph is
// validated and every problem is reported at once as an ErrorList. It
// confines no path (ImportETHGraphWith does).
func ImportETHGraph(name string, data []byte) (*graph.Graph, error) {
	return ImportETHGraphWith(name, data, Options{})
}

// ImportETHGraphWith is ImportETHGraph with options: every <src location>
// is read through o.Root, as a YAML graph's kernel: sources are, so one
// that is absolute, climbs above the root with .. or leads out of it
// through a symbolic link is refused at its <src> element with fsroot's
// rule, quoting nothing of the file it names.
func ImportETHGraphWith(name string, data []byte, o Options) (*graph.Graph, error) {
	st := newState()
	st.opts = o
	x := &xp{*st.reader(name)}
	root := x.parse(data)
	if root == nil {
		return nil, st.Err()
	}
	if root.name != "graph" {
		x.errAt(root, "expected a <graph> root element, found <%s>", root.name)
		return nil, st.Err()
	}
	ga := x.attrs(root, "name")
	g := graph.New(defaultName(name))
	if n, ok := ga["name"]; ok && n != "" {
		g.Name = n
	}
	c := &gctx{g: g, broken: map[*graph.Actor]bool{}}
	var channels []*xel
	for _, k := range root.kids {
		switch k.name {
		case "actor":
			x.ethActor(c, k)
		case "channel":
			channels = append(channels, k)
		default:
			x.unknownElement(k, root, "actor", "channel")
		}
	}
	connected := map[*graph.Port]bool{}
	for _, k := range channels {
		x.ethChannel(c, k, connected)
	}
	for _, a := range g.Actors {
		for _, p := range a.Ports() {
			if !connected[p] {
				st.hush(p.Origin, "type") // its token size comes from a channel; "not connected" says it
			}
		}
	}
	st.validate(g, name)
	if err := st.Err(); err != nil {
		return nil, err
	}
	g.Origin = name
	return g, nil
}

func (x *xp) ethActor(c *gctx, e *xel) {
	at := x.attrs(e, "name!")
	a := c.g.AddActor(at["name"], graph.At(x.posOf(e)))
	for _, k := range e.kids {
		switch k.name {
		case "port":
			pa := x.attrs(k, "type!", "name!", "rate!", "blocksize")
			dir := graph.In
			switch pa["type"] {
			case "in":
			case "out":
				dir = graph.Out
			default:
				if _, has := pa["type"]; has {
					x.errAt(k, "<port>: type=%q: expected in or out", yamlpos.Clip(pa["type"]))
				}
			}
			var r graph.Rate
			if s, ok := pa["rate"]; ok {
				var rok bool
				if r, rok = x.xrate(k, s); !rok {
					x.st.hush(x.posOf(k), "rate")
				}
			}
			if pa["name"] == "" {
				if _, has := pa["name"]; has {
					x.errAt(k, "<port>: empty name")
				}
				continue
			}
			p := a.AddPort(pa["name"], dir, graph.TokenType{}, r, x.posOf(k))
			if s, ok := pa["blocksize"]; ok {
				if dir == graph.In {
					x.errAt(k, "<port>: blocksize on an input port: blocks are defined on output ports only")
				} else if b, ok := x.xint(k, "blocksize", s, 1, maxRate); ok {
					p.Block = b
				}
			}
		case "src":
			sa := x.attrs(k, "type!", "location!")
			var kind graph.ImplKind
			switch strings.ToLower(sa["type"]) {
			case "c", "c++", "cpp", "cl", "opencl":
				kind = graph.ImplOpenCL
			case "cu", "cuda":
				kind = graph.ImplCUDA
			case "":
				continue
			default:
				x.errAt(k, "<src>: type=%q: expected c (C actor source, synthesized into an OpenCL kernel), cl or cuda", yamlpos.Clip(sa["type"]))
				continue
			}
			if loc, ok := sa["location"]; ok {
				if path, ok := x.sourceFile(loc, func(f string, args ...any) { x.errAt(k, f, args...) }, "<src> location"); ok {
					a.Impls = append(a.Impls, graph.Impl{Kind: kind, Source: path})
				}
			}
		default:
			x.unknownElement(k, e, "port", "src")
		}
	}
}

func (x *xp) ethChannel(c *gctx, e *xel, connected map[*graph.Port]bool) {
	ca := x.attrs(e, "capacity", "tokensize!", "name")
	opts := []graph.ChannelOption{graph.ChannelAt(x.posOf(e))}
	if n, ok := ca["name"]; ok {
		opts = append(opts, graph.Named(n))
	}
	if s, ok := ca["capacity"]; ok {
		if v, ok := x.xint(e, "capacity", s, 1, maxRate); ok {
			opts = append(opts, graph.Capacity(v))
		}
	}
	var typ graph.TokenType
	typeOK := false
	if s, ok := ca["tokensize"]; ok {
		if v, ok := x.xint(e, "tokensize", s, 1, maxTokenSize); ok {
			typ, typeOK = graph.TokenType{Name: "bytes" + strconv.Itoa(v), Size: v}, true
		}
	}
	var ends [2]*graph.Port
	var seen [2]bool
	for _, k := range e.kids {
		i, dir := 0, graph.Out
		switch k.name {
		case "sender":
		case "receiver":
			i, dir = 1, graph.In
		default:
			x.unknownElement(k, e, "sender", "receiver")
			continue
		}
		if seen[i] {
			x.errAt(k, "<channel>: more than one <%s>: a channel joins one sender to one receiver", k.name)
			continue
		}
		seen[i] = true
		ka := x.attrs(k, "actor!", "port!")
		an, pn := ka["actor"], ka["port"]
		if an == "" || pn == "" {
			continue
		}
		ends[i] = lookupPort(c, x.st, an, pn, dir, func(f string, args ...any) { x.errAt(k, f, args...) }, "<"+k.name+">")
	}
	for i, k := range []string{"sender", "receiver"} {
		if !seen[i] {
			x.errAt(e, "<channel>: missing <%s actor=\"...\" port=\"...\"/>", k)
		}
	}
	for _, p := range ends {
		if p == nil {
			continue
		}
		connected[p] = true
		if !typeOK {
			x.st.hush(p.Origin, "type")
			continue
		}
		if p.Type.IsZero() {
			p.Type = typ
		} else if p.Type != typ {
			x.errAt(e, "<channel>: tokensize %d for port %s, which another channel gives %d-byte tokens: expected the same tokensize on every channel of a port", typ.Size, p.FullName(), p.Type.Size)
		}
	}
	if ends[0] == nil || ends[1] == nil {
		for _, p := range ends {
			if p != nil {
				x.st.hush(p.Origin, "conn")
			}
		}
		return
	}
	c.g.Join(ends[0], ends[1], opts...)
}

// ImportETHMapping reads a mapping in the XML format of the ETH Zurich
// OpenCL framework: a <binding> root (or a <mapping> root holding several
// <binding> elements), each binding naming one or more <actor name> (with
// <port name work-dist> per output port), a <device name>, <workgroups
// count> and <workitems count>.
func ImportETHMapping(name string, data []byte) (*graph.Mapping, error) {
	st := newState()
	x := &xp{*st.reader(name)}
	root := x.parse(data)
	if root == nil {
		return nil, st.Err()
	}
	mp := &graph.Mapping{Name: defaultName(name), Actors: map[string]*graph.Placement{}, Origin: name}
	switch root.name {
	case "binding":
		x.ethBinding(mp, root)
	case "mapping":
		if n := x.attrs(root, "name")["name"]; n != "" {
			mp.Name = n
		}
		for _, k := range root.kids {
			if k.name == "binding" {
				x.ethBinding(mp, k)
			} else {
				x.unknownElement(k, root, "binding")
			}
		}
	default:
		x.errAt(root, "expected a <binding> or <mapping> root element, found <%s>", root.name)
	}
	if err := st.Err(); err != nil {
		return nil, err
	}
	return mp, nil
}

func (x *xp) ethBinding(mp *graph.Mapping, b *xel) {
	x.attrs(b)
	var shared graph.Placement
	var actors []*xel
	seen := map[string]*xel{}
	once := func(k *xel) bool {
		if prev, dup := seen[k.name]; dup {
			x.errAt(k, "<binding>: more than one <%s> (first at line %d, column %d)", k.name, prev.line, prev.col)
			return false
		}
		seen[k.name] = k
		return true
	}
	for _, k := range b.kids {
		switch k.name {
		case "actor":
			actors = append(actors, k)
		case "device":
			if once(k) {
				shared.Device = x.attrs(k, "name!")["name"]
			}
		case "workgroups", "workitems":
			if !once(k) {
				continue
			}
			if s, ok := x.attrs(k, "count!")["count"]; ok {
				v, _ := x.xint(k, "count", s, 1, maxRate)
				if k.name == "workgroups" {
					shared.WorkGroups = v
				} else {
					shared.WorkItems = v
				}
			}
		default:
			x.unknownElement(k, b, "actor", "device", "workgroups", "workitems")
		}
	}
	if len(actors) == 0 {
		x.errAt(b, "<binding>: missing <actor name=\"...\">")
	}
	for _, a := range actors {
		n, ok := x.attrs(a, "name!")["name"]
		if !ok {
			continue
		}
		pl := shared
		pl.Origin = x.posOf(a)
		for _, k := range a.kids {
			if k.name != "port" {
				x.unknownElement(k, a, "port")
				continue
			}
			pa := x.attrs(k, "name!", "work-dist")
			d, ok := pa["work-dist"]
			if !ok || pa["name"] == "" {
				continue
			}
			if d != string(graph.Consecutive) && d != string(graph.Strided) {
				x.errAt(k, "<port>: work-dist=%q: expected consecutive or strided%s", yamlpos.Clip(d), yamlpos.DidYouMean(d, []string{"consecutive", "strided"}))
				continue
			}
			if pl.Distribution == nil {
				pl.Distribution = map[string]graph.Distribution{}
			}
			pl.Distribution[pa["name"]] = graph.Distribution(d)
		}
		if prev, dup := mp.Actors[n]; dup {
			x.errAt(a, "actor %q is bound twice (first at %s)", n, prev.Origin)
			continue
		}
		mp.Actors[n] = &pl
	}
}
