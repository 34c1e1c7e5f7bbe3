package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
)

// EditJSON is the body of POST /api/edit: the YAML as the page holds it
// and the operations to apply to it, in order.
type EditJSON struct {
	YAML string   `json:"yaml"`
	Ops  []OpJSON `json:"ops"`
}

// OpJSON is one edit of the drawing. Op says which; the other fields are
// its arguments:
//
//	add_actor      name; in, out (ports); use and with (a built-in), kernel
//	               and entry (an OpenCL .cl or CUDA .cu file), graph (a
//	               composite's file: its ports come from the subgraph's
//	               inputs and outputs when in and out are empty); cost
//	remove_actor   actor (its channels go too)
//	set_actor      actor; cost ("" removes it), stateful
//	add_port       actor, dir ("in" or "out"), name, type, rate
//	remove_port    actor, port (its channels go too)
//	set_port       actor, port; rate and/or type
//	add_channel    from, to ("actor.port"); capacity, initial
//	remove_channel from, to
//	set_channel    from, to; capacity, initial (0 removes the key)
type OpJSON struct {
	Op       string         `json:"op"`
	Actor    string         `json:"actor,omitempty"`
	Name     string         `json:"name,omitempty"`
	Port     string         `json:"port,omitempty"`
	Dir      string         `json:"dir,omitempty"`
	Type     string         `json:"type,omitempty"`
	Rate     string         `json:"rate,omitempty"`
	In       []PortJSON     `json:"in,omitempty"`
	Out      []PortJSON     `json:"out,omitempty"`
	Use      string         `json:"use,omitempty"`
	With     map[string]any `json:"with,omitempty"`
	Kernel   string         `json:"kernel,omitempty"`
	Entry    string         `json:"entry,omitempty"`
	Graph    string         `json:"graph,omitempty"`
	Cost     *string        `json:"cost,omitempty"`
	Stateful *bool          `json:"stateful,omitempty"`
	From     string         `json:"from,omitempty"`
	To       string         `json:"to,omitempty"`
	Capacity *int           `json:"capacity,omitempty"`
	Initial  *int           `json:"initial,omitempty"`
}

// postEdit applies the operations to the YAML sent and answers the new
// YAML with its graph and check's report (see findingsAnswer), or 422 with
// the operation that failed and why. Without operations it checks the YAML
// as sent: the page checks its text this way at each keystroke.
func (s *Server) postEdit(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var e EditJSON
	if err := json.Unmarshal(body, &e); err != nil {
		writeErr(w, http.StatusBadRequest, "body: expected JSON {\"yaml\": …, \"ops\": […]}, found: "+err.Error())
		return
	}
	out := []byte(e.YAML)
	if len(e.Ops) > 0 {
		var err error
		if out, err = s.applyEdits(out, e.Ops); err != nil {
			writeErr(w, http.StatusUnprocessableEntity, err.Error())
			return
		}
	}
	s.findingsAnswer(w, s.editorName(), out)
}

// findingsAnswer writes check's answer for the YAML data of file name, 200
// in every case: YAML that does not parse or a graph that does not
// validate is a finding, not a failed request. Its report then has valid
// false and errors, one line per problem with its file:line:col, and its
// graph is the sketch of what the YAML draws (null when it does not
// parse).
func (s *Server) findingsAnswer(w http.ResponseWriter, name string, data []byte) {
	g, err := s.loadForPage(name, data)
	if err != nil {
		lines := graph.ErrorLines(err)
		var re *refusedError
		if errors.As(err, &re) {
			lines = re.Lines
		}
		writeJSON(w, http.StatusOK, CheckResult{YAML: string(data), Graph: sketch(data),
			Report: &analysis.Report{Valid: false, Errors: lines}})
		return
	}
	writeJSON(w, http.StatusOK, CheckResult{YAML: string(data), Graph: EncodeGraph(g), Report: s.report(g),
		Mapping: placements(s.currentMapping(), g)})
}

// editorName is the name positions and relative paths use for YAML the
// page sends: FILE, or editor.yaml in the working directory.
func (s *Server) editorName() string {
	if s.File == "" {
		return "editor.yaml"
	}
	return s.File
}

// applyEdits applies ops to data and returns the new YAML.
func (s *Server) applyEdits(data []byte, ops []OpJSON) ([]byte, error) {
	name := s.editorName()
	d, err := parseDoc(data, strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)))
	if err != nil {
		return nil, err
	}
	for i, op := range ops {
		if err := s.apply(d, op); err != nil {
			return nil, fmt.Errorf("ops[%d] %s: %w", i, op.Op, err)
		}
	}
	if orig, err := parseDoc(data, ""); err == nil && len(bytes.TrimSpace(data)) > 0 {
		if out, ok := splice(data, orig.root, d.root); ok {
			return out, nil
		}
	}
	return d.bytes()
}

func (s *Server) apply(d *yamlDoc, op OpJSON) error {
	switch op.Op {
	case "add_actor":
		return s.addActor(d, op)
	case "remove_actor":
		return removeActor(d, op.Actor)
	case "set_actor":
		return setActor(d, op)
	case "add_port":
		return addPort(d, op)
	case "remove_port":
		return removePort(d, op.Actor, op.Port)
	case "set_port":
		return setPort(d, op)
	case "add_channel":
		return addChannel(d, op)
	case "remove_channel":
		chans, i, err := d.channelIndex(op.From, op.To)
		if err != nil {
			return err
		}
		chans.Content = append(chans.Content[:i], chans.Content[i+1:]...)
		return nil
	case "set_channel":
		return setChannel(d, op)
	}
	return fmt.Errorf("unknown operation %q: expected add_actor, remove_actor, set_actor, add_port, remove_port, set_port, add_channel, remove_channel or set_channel", op.Op)
}

// validName reports whether s may name an actor or a port.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func (s *Server) addActor(d *yamlDoc, op OpJSON) error {
	if !validName(op.Name) {
		return fmt.Errorf("name %q: expected letters, digits, _ or -", op.Name)
	}
	actors, err := d.section("actors", yaml.MappingNode)
	if err != nil {
		return err
	}
	if mapGet(actors, op.Name) != nil {
		return fmt.Errorf("actor %q: expected a new name, found an actor of that name", op.Name)
	}
	a := flowMap()
	if op.Graph != "" && len(op.In)+len(op.Out) == 0 {
		if op.In, op.Out, err = s.compositePorts(op.Graph); err != nil {
			return err
		}
	}
	for _, dir := range []struct {
		key   string
		ports []PortJSON
	}{{"in", op.In}, {"out", op.Out}} {
		if len(dir.ports) == 0 {
			continue
		}
		m := flowMap()
		for _, p := range dir.ports {
			pn, err := portNode(p)
			if err != nil {
				return err
			}
			mapSet(m, p.Name, pn)
		}
		mapSet(a, dir.key, m)
	}
	if err := implNodes(a, op); err != nil {
		return err
	}
	if op.Cost != nil && *op.Cost != "" {
		mapSet(a, "cost", scalar(*op.Cost))
	}
	mapSet(actors, op.Name, a)
	return nil
}

// implNodes writes the actor's use/with, kernel or graph keys.
func implNodes(a *yaml.Node, op OpJSON) error {
	if op.Use != "" {
		mapSet(a, "use", scalar(op.Use))
		if len(op.With) > 0 {
			var with yaml.Node
			if err := with.Encode(op.With); err != nil {
				return fmt.Errorf("with: %v", err)
			}
			with.Style = yaml.FlowStyle
			mapSet(a, "with", &with)
		}
	}
	if op.Kernel != "" {
		k := flowMap()
		switch strings.ToLower(filepath.Ext(op.Kernel)) {
		case ".cl":
			mapSet(k, "opencl", scalar(op.Kernel))
		case ".cu":
			mapSet(k, "cuda", scalar(op.Kernel))
		default:
			return fmt.Errorf("kernel %q: expected an OpenCL .cl or a CUDA .cu file", op.Kernel)
		}
		if op.Entry != "" {
			mapSet(k, "entry", scalar(op.Entry))
		}
		mapSet(a, "kernel", k)
	}
	if op.Graph != "" {
		mapSet(a, "graph", scalar(op.Graph))
	}
	return nil
}

// compositePorts gives a composite of the graph file its ports: one per
// input and output of the subgraph, of the inner port's type, at the rate
// of one iteration of the subgraph.
func (s *Server) compositePorts(file string) (in, out []PortJSON, err error) {
	sub, err := s.loadNamed(filepath.Dir(s.editorName()), file)
	if err != nil {
		return nil, nil, fmt.Errorf("graph %s: %w", file, errors.New(strings.Join(graph.ErrorLines(err), "; ")))
	}
	rv, err := analysis.RepetitionVector(sub)
	if err != nil {
		return nil, nil, fmt.Errorf("graph %s: %v", file, err)
	}
	bind := func(bs []graph.Boundary) ([]PortJSON, error) {
		var ps []PortJSON
		for _, b := range bs {
			p := sub.Actor(b.Actor).Port(b.Port)
			if p.Rate.IsCSDF() || p.Rate.IsDynamic() {
				return nil, fmt.Errorf("graph %s: boundary %s is on %s, whose rate %s is not a fixed one: give the ports", file, b.Name, p.FullName(), p.Rate)
			}
			ps = append(ps, PortJSON{Name: b.Name, Type: p.Type.String(), Rate: strconv.FormatInt(int64(p.Rate.Sum())*rv.Firings[b.Actor], 10)})
		}
		return ps, nil
	}
	if in, err = bind(sub.Inputs); err != nil {
		return nil, nil, err
	}
	out, err = bind(sub.Outputs)
	return in, out, err
}

func portNode(p PortJSON) (*yaml.Node, error) {
	if !validName(p.Name) {
		return nil, fmt.Errorf("port name %q: expected letters, digits, _ or -", p.Name)
	}
	if _, err := graph.ParseTokenType(p.Type); err != nil {
		return nil, fmt.Errorf("port %s: %v", p.Name, err)
	}
	rate, err := rateNode(p.Rate)
	if err != nil {
		return nil, fmt.Errorf("port %s: %v", p.Name, err)
	}
	n := flowMap()
	mapSet(n, "type", scalar(p.Type))
	mapSet(n, "rate", rate)
	return n, nil
}

// removeActor removes the actor, the channels touching it and the graph
// inputs and outputs bound to it.
func removeActor(d *yamlDoc, name string) error {
	if !mapDelete(mapGet(d.root, "actors"), name) {
		return fmt.Errorf("actor %q: expected an actor of the graph, found none", name)
	}
	removeChannels(d, func(from, to string) bool { return endActor(from) == name || endActor(to) == name })
	for _, key := range []string{"inputs", "outputs"} {
		b := mapGet(d.root, key)
		if b == nil || b.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(b.Content); {
			if endActor(b.Content[i+1].Value) == name {
				b.Content = append(b.Content[:i], b.Content[i+2:]...)
				continue
			}
			i += 2
		}
	}
	return nil
}

// removeChannels removes the channels for which drop(from, to) holds.
func removeChannels(d *yamlDoc, drop func(from, to string) bool) {
	chans := mapGet(d.root, "channels")
	if chans == nil || chans.Kind != yaml.SequenceNode {
		return
	}
	kept := chans.Content[:0]
	for _, c := range chans.Content {
		if c.Kind == yaml.MappingNode && drop(value(mapGet(c, "from")), value(mapGet(c, "to"))) {
			continue
		}
		kept = append(kept, c)
	}
	chans.Content = kept
}

func setActor(d *yamlDoc, op OpJSON) error {
	a, err := d.actor(op.Actor)
	if err != nil {
		return err
	}
	if op.Cost != nil {
		if *op.Cost == "" {
			mapDelete(a, "cost")
		} else {
			mapSet(a, "cost", scalar(*op.Cost))
		}
	}
	if op.Stateful != nil {
		if *op.Stateful {
			mapSet(a, "stateful", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
		} else {
			mapDelete(a, "stateful")
		}
	}
	return nil
}

func addPort(d *yamlDoc, op OpJSON) error {
	a, err := d.actor(op.Actor)
	if err != nil {
		return err
	}
	if op.Dir != "in" && op.Dir != "out" {
		return fmt.Errorf("dir %q: expected in or out", op.Dir)
	}
	if _, err := d.port(op.Actor, op.Name); err == nil {
		return fmt.Errorf("port %s.%s: expected a new name, found a port of that name", op.Actor, op.Name)
	}
	pn, err := portNode(PortJSON{Name: op.Name, Type: op.Type, Rate: op.Rate})
	if err != nil {
		return err
	}
	ports := mapGet(a, op.Dir)
	if ports == nil {
		ports = flowMap()
		mapSet(a, op.Dir, ports)
	}
	mapSet(ports, op.Name, pn)
	return nil
}

func removePort(d *yamlDoc, actor, port string) error {
	a, err := d.actor(actor)
	if err != nil {
		return err
	}
	if !mapDelete(mapGet(a, "in"), port) && !mapDelete(mapGet(a, "out"), port) {
		return fmt.Errorf("port %s.%s: expected a port of %s, found none", actor, port, actor)
	}
	ref := actor + "." + port
	removeChannels(d, func(from, to string) bool { return from == ref || to == ref })
	return nil
}

func setPort(d *yamlDoc, op OpJSON) error {
	p, err := d.port(op.Actor, op.Port)
	if err != nil {
		return err
	}
	if op.Rate != "" {
		r, err := rateNode(op.Rate)
		if err != nil {
			return err
		}
		mapSet(p, "rate", r)
	}
	if op.Type != "" {
		if _, err := graph.ParseTokenType(op.Type); err != nil {
			return err
		}
		mapSet(p, "type", scalar(op.Type))
	}
	return nil
}

func addChannel(d *yamlDoc, op OpJSON) error {
	for _, ref := range []string{op.From, op.To} {
		a, p, ok := strings.Cut(ref, ".")
		if !ok {
			return fmt.Errorf("%q: expected actor.port", ref)
		}
		if _, err := d.port(a, p); err != nil {
			return err
		}
	}
	if _, _, err := d.channelIndex(op.From, op.To); err == nil {
		return fmt.Errorf("channel %s -> %s: expected a new channel, found one already", op.From, op.To)
	}
	chans, err := d.section("channels", yaml.SequenceNode)
	if err != nil {
		return err
	}
	c := flowMap()
	mapSet(c, "from", scalar(op.From))
	mapSet(c, "to", scalar(op.To))
	setInts(c, op)
	chans.Content = append(chans.Content, c)
	return nil
}

func setChannel(d *yamlDoc, op OpJSON) error {
	chans, i, err := d.channelIndex(op.From, op.To)
	if err != nil {
		return err
	}
	setInts(chans.Content[i], op)
	return nil
}

// setInts sets a channel's capacity and initial tokens (0 removes them).
func setInts(c *yaml.Node, op OpJSON) {
	for _, f := range []struct {
		key string
		v   *int
	}{{"capacity", op.Capacity}, {"initial", op.Initial}} {
		switch {
		case f.v == nil:
		case *f.v == 0:
			mapDelete(c, f.key)
		default:
			mapSet(c, f.key, scalar(strconv.Itoa(*f.v)))
		}
	}
}
