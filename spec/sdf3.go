package spec

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
)

// DefaultSDF3TimeUnit is the duration of one SDF3 time unit when the user
// states none: SDF3's execution times are abstract (clock cycles, or any
// unit the graph's author chose), and sluice needs a duration to burn.
const DefaultSDF3TimeUnit = time.Microsecond

// IsSDF3 reports whether data looks like an SDF3 document: an XML document
// whose root element is <sdf3>.
func IsSDF3(data []byte) bool {
	d := data
	for {
		d = bytes.TrimLeft(d, " \t\r\n\ufeff")
		switch {
		case bytes.HasPrefix(d, []byte("<?")):
			i := bytes.Index(d, []byte("?>"))
			if i < 0 {
				return false
			}
			d = d[i+2:]
		case bytes.HasPrefix(d, []byte("<!--")):
			i := bytes.Index(d, []byte("-->"))
			if i < 0 {
				return false
			}
			d = d[i+3:]
		case bytes.HasPrefix(d, []byte("<!")):
			i := bytes.IndexByte(d, '>')
			if i < 0 {
				return false
			}
			d = d[i+1:]
		default:
			rest, ok := bytes.CutPrefix(d, []byte("<sdf3"))
			return ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '>' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '/')
		}
	}
}

// ImportSDF3Graph reads an application graph in the XML format of SDF3, the
// SDF For Free tool set: an <sdf3 type="sdf"> or <sdf3 type="csdf"> root
// holding an <applicationGraph> with an <sdf> (or <csdf>) element of
// <actor>s (with <port name type rate>) and <channel>s (srcActor, srcPort,
// dstActor, dstPort, initialTokens), and <sdfProperties> (or
// <csdfProperties>) giving each actor's <executionTime time> on its default
// processor and each channel's <tokenSize sz>.
//
// Each execution time, multiplied by unit (DefaultSDF3TimeUnit when zero),
// becomes the actor's cost; a CSDF actor's per-phase times ("1,2,1") give
// it their mean, so one cycle of its phases costs what SDF3 says. A token
// size, in bits as SDF3 sizes memories, becomes the opaque token type
// bytesN (N rounded up, at least 1); a channel without one carries 1-byte
// tokens. The architecture graph, mapping and other properties SDF3 files
// may hold are not read. The graph is validated and every problem is
// reported at once as an ErrorList.
func ImportSDF3Graph(name string, data []byte, unit time.Duration) (*graph.Graph, error) {
	if unit <= 0 {
		unit = DefaultSDF3TimeUnit
	}
	st := newState()
	x := &xp{*st.reader(name)}
	root := x.parse(data)
	if root == nil {
		return nil, st.Err()
	}
	if root.name != "sdf3" {
		x.errAt(root, "expected an <sdf3> root element, found <%s>", root.name)
		return nil, st.Err()
	}
	csdf := false
	switch t := x.attr(root, "type"); t {
	case "sdf", "":
	case "csdf":
		csdf = true
	default:
		x.errAt(root, "<sdf3>: type=%q: expected sdf or csdf (sluice reads SDF3's application graphs of those two kinds)", yamlpos.Clip(t))
		return nil, st.Err()
	}
	graphEl, propsEl := "sdf", "sdfProperties"
	if csdf {
		graphEl, propsEl = "csdf", "csdfProperties"
	}
	app := x.child(root, "applicationGraph")
	if app == nil {
		x.errAt(root, "<sdf3>: missing <applicationGraph>")
		return nil, st.Err()
	}
	ge := x.child(app, graphEl)
	if ge == nil {
		x.errAt(app, "<applicationGraph>: missing <%s> (the graph's actors and channels)", graphEl)
		return nil, st.Err()
	}
	g := graph.New(defaultName(name))
	if n := x.attr(app, "name"); n != "" {
		g.Name = n
	} else if n := x.attr(ge, "name"); n != "" {
		g.Name = n
	}
	r := &sdf3Reader{x: x, g: g, csdf: csdf, unit: unit, chans: map[string]*xel{}, sizes: map[string]int{}}
	if pe := x.child(app, propsEl); pe != nil {
		r.properties(pe)
	}
	for _, k := range ge.kids {
		switch k.name {
		case "actor":
			r.actor(k)
		case "channel":
			r.channel(k)
		default:
			x.unknownElement(k, ge, "actor", "channel")
		}
	}
	for an, e := range r.times {
		if g.Actor(an) == nil {
			x.errAt(e, "<actorProperties>: actor=%q: no such actor in <%s>", yamlpos.Clip(an), graphEl)
		}
	}
	for cn, e := range r.sizeAt {
		if _, ok := r.chans[cn]; !ok {
			x.errAt(e, "<channelProperties>: channel=%q: no such channel in <%s>", yamlpos.Clip(cn), graphEl)
		}
	}
	st.validate(g, name)
	if err := st.Err(); err != nil {
		return nil, err
	}
	g.Origin = name
	return g, nil
}

// sdf3Reader holds what one SDF3 document has said so far.
type sdf3Reader struct {
	x      *xp
	g      *graph.Graph
	csdf   bool
	unit   time.Duration
	times  map[string]*xel // actor → its chosen <executionTime>
	sizeAt map[string]*xel // channel → its <tokenSize>
	sizes  map[string]int  // channel → token size in bytes
	chans  map[string]*xel
}

// attr returns an attribute's value ("" when absent). SDF3 files carry
// many attributes sluice does not use, so unknown ones are not reported.
func (x *xp) attr(e *xel, name string) string {
	for _, a := range e.attrs {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// child returns e's first child element named name.
func (x *xp) child(e *xel, name string) *xel {
	for _, k := range e.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

func (r *sdf3Reader) properties(pe *xel) {
	r.times = map[string]*xel{}
	r.sizeAt = map[string]*xel{}
	for _, k := range pe.kids {
		switch k.name {
		case "actorProperties":
			an := r.x.attr(k, "actor")
			if an == "" {
				r.x.errAt(k, "<actorProperties>: missing attribute \"actor\"")
				continue
			}
			// The default processor's time, else the first processor's.
			var chosen *xel
			for _, p := range k.kids {
				if p.name != "processor" {
					continue
				}
				et := r.x.child(p, "executionTime")
				if et == nil {
					continue
				}
				if chosen == nil || r.x.attr(p, "default") == "true" {
					chosen = et
				}
			}
			if chosen != nil {
				r.times[an] = chosen
			}
		case "channelProperties":
			cn := r.x.attr(k, "channel")
			ts := r.x.child(k, "tokenSize")
			if cn == "" || ts == nil {
				continue
			}
			r.sizeAt[cn] = ts
			bits, err := strconv.ParseInt(strings.TrimSpace(r.x.attr(ts, "sz")), 10, 64)
			if err != nil || bits < 0 || bits > 8*maxTokenSize {
				r.x.errAt(ts, "<tokenSize>: sz=%q: expected a token size in bits from 0 to %d", yamlpos.Clip(r.x.attr(ts, "sz")), int64(8*maxTokenSize))
				continue
			}
			r.sizes[cn] = max(1, int((bits+7)/8))
		}
	}
}

func (r *sdf3Reader) actor(e *xel) {
	an := r.x.attr(e, "name")
	if an == "" {
		r.x.errAt(e, "<actor>: missing attribute \"name\"")
		return
	}
	if r.g.Actor(an) != nil {
		r.x.errAt(e, "<actor>: a second actor named %q", yamlpos.Clip(an))
		return
	}
	a := r.g.AddActor(an, graph.At(r.x.posOf(e)))
	if t := r.x.attr(e, "type"); t != "" {
		if a.Attrs == nil {
			a.Attrs = map[string]string{}
		}
		a.Attrs["sdf3.type"] = t
	}
	for _, k := range e.kids {
		if k.name != "port" {
			continue // SDF3 allows other elements on an actor; sluice reads ports
		}
		pn, pt, rs := r.x.attr(k, "name"), r.x.attr(k, "type"), r.x.attr(k, "rate")
		if pn == "" {
			r.x.errAt(k, "<port>: missing attribute \"name\"")
			continue
		}
		dir := graph.In
		switch pt {
		case "in":
		case "out":
			dir = graph.Out
		default:
			r.x.errAt(k, "<port>: type=%q: expected in or out", yamlpos.Clip(pt))
			continue
		}
		rate, ok := r.x.xrate(k, rs)
		if !ok {
			r.x.st.hush(r.x.posOf(k), "rate")
		} else if rate.IsDynamic() {
			r.x.errAt(k, "<port>: rate=%q: expected a number of tokens (SDF3 graphs are static)", yamlpos.Clip(rs))
			continue
		} else if !r.csdf && rate.Phases() > 1 {
			r.x.errAt(k, "<port>: rate=%q: phases in an SDF graph; expected one number, or <sdf3 type=\"csdf\">", yamlpos.Clip(rs))
			continue
		}
		a.AddPort(pn, dir, graph.TokenType{}, rate, r.x.posOf(k))
	}
	if et, ok := r.times[an]; ok {
		a.Cost = r.cost(et)
	}
}

// cost reads an <executionTime time="…"> as a duration per firing.
func (r *sdf3Reader) cost(et *xel) time.Duration {
	s := r.x.attr(et, "time")
	parts := strings.Split(s, ",")
	var sum float64
	for _, f := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 || v > 1e15 {
			r.x.errAt(et, "<executionTime>: time=%q: expected a non-negative number of time units, or one per phase such as \"1,2,1\"", yamlpos.Clip(s))
			return 0
		}
		sum += v
	}
	mean := sum / float64(len(parts))
	return time.Duration(mean * float64(r.unit))
}

func (r *sdf3Reader) channel(e *xel) {
	cn := r.x.attr(e, "name")
	if cn == "" {
		r.x.errAt(e, "<channel>: missing attribute \"name\"")
		return
	}
	if _, dup := r.chans[cn]; dup {
		r.x.errAt(e, "<channel>: a second channel named %q", yamlpos.Clip(cn))
		return
	}
	r.chans[cn] = e
	opts := []graph.ChannelOption{graph.ChannelAt(r.x.posOf(e)), graph.Named(cn)}
	if s := r.x.attr(e, "initialTokens"); s != "" {
		if v, ok := r.x.xint(e, "initialTokens", s, 0, maxRate); ok && v > 0 {
			opts = append(opts, graph.Initial(v))
		}
	}
	c := &gctx{g: r.g, broken: map[*graph.Actor]bool{}}
	fail := func(f string, args ...any) { r.x.errAt(e, f, args...) }
	var ends [2]*graph.Port
	for i, end := range [2][2]string{{"srcActor", "srcPort"}, {"dstActor", "dstPort"}} {
		an, pn := r.x.attr(e, end[0]), r.x.attr(e, end[1])
		if an == "" || pn == "" {
			r.x.errAt(e, "<channel>: missing attribute %q or %q", end[0], end[1])
			continue
		}
		dir := graph.Out
		if i == 1 {
			dir = graph.In
		}
		ends[i] = lookupPort(c, r.x.st, an, pn, dir, fail, "<channel "+yamlpos.Clip(cn)+">")
	}
	if ends[0] == nil || ends[1] == nil {
		for _, p := range ends {
			if p != nil {
				r.x.st.hush(p.Origin, "conn")
			}
		}
		return
	}
	size := 1
	if n, ok := r.sizes[cn]; ok {
		size = n
	}
	typ := graph.TokenType{Name: "bytes" + strconv.Itoa(size), Size: size}
	for _, p := range ends {
		if p.Type.IsZero() {
			p.Type = typ
		} else if p.Type != typ {
			r.x.errAt(e, "<channel>: %d-byte tokens for port %s, which another channel gives %d-byte tokens: expected one token size per port", size, p.FullName(), p.Type.Size)
		}
	}
	r.g.Join(ends[0], ends[1], opts...)
}
