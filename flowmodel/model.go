// Package flowmodel is sluice's portable kernel package: one YAML file that
// carries a kernel (OpenCL C and/or CUDA C source, or the name of a Go
// built-in), its input and output streams, its constant parameters and the
// requirements a device must meet to run it. A Host (Local, or Remote over a
// cluster's NATS connection) lists and queries devices, maps a Model onto
// one, and returns an Instance whose input and output buffers the caller
// writes and reads and which it fires, optionally many times with swap
// pairs exchanging output and input buffers on the device.
package flowmodel

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/graph"
)

// Model is one flow-model: a kernel with its streams, parameters and
// requirements. Kernel arguments are, in order: the input streams, the
// output streams, then the parameters as declared.
type Model struct {
	// Kind is "flowmodel" when the file says what it is (optional).
	Kind string `yaml:"kind,omitempty" json:"-"`
	// Name names the flow-model.
	Name string `yaml:"name" json:"name"`
	// Kernel is the code the flow-model fires.
	Kernel Kernel `yaml:"kernel" json:"kernel"`
	// In and Out are the input and output streams.
	In  []Stream `yaml:"in" json:"in"`
	Out []Stream `yaml:"out" json:"out"`
	// Params are constant kernel arguments after the streams.
	Params []Param `yaml:"params,omitempty" json:"params,omitempty"`
	// Range is the launch shape (default: Global = the first output
	// stream's length, Local chosen by the driver).
	Range Range `yaml:"range,omitempty" json:"range,omitempty"`
	// Swap lists output/input pairs exchanged after each iteration when
	// the model is fired more than once.
	Swap []SwapPair `yaml:"swap,omitempty" json:"swap,omitempty"`
	// Requires is what a device must offer to run the model.
	Requires Requirements `yaml:"requires,omitempty" json:"requires,omitempty"`

	file string // where the model was loaded from, for messages
}

// Kernel is a flow-model's code: OpenCL C and/or CUDA C source (inline, or
// a file relative to the model) with an entry point, or a Go built-in.
type Kernel struct {
	// OpenCL and CUDA are kernel source texts.
	OpenCL string `yaml:"opencl,omitempty" json:"opencl,omitempty"`
	CUDA   string `yaml:"cuda,omitempty" json:"cuda,omitempty"`
	// OpenCLFile and CUDAFile name source files relative to the model's
	// path or URL; Load reads them into OpenCL and CUDA.
	OpenCLFile string `yaml:"opencl_file,omitempty" json:"opencl_file,omitempty"`
	CUDAFile   string `yaml:"cuda_file,omitempty" json:"cuda_file,omitempty"`
	// Entry is the kernel function's name.
	Entry string `yaml:"entry,omitempty" json:"entry,omitempty"`
	// Builtin names a Go built-in registered with RegisterBuiltin; it runs
	// on the "cpu" device.
	Builtin string `yaml:"builtin,omitempty" json:"builtin,omitempty"`
	// Options are compiler options.
	Options string `yaml:"options,omitempty" json:"options,omitempty"`
}

// Stream is one input or output stream: Length tokens of Type.
type Stream struct {
	Name   string `yaml:"name" json:"name"`
	Type   string `yaml:"type" json:"type"`
	Length int    `yaml:"length" json:"length"`
	line   int
}

// UnmarshalYAML decodes a stream, remembering its line for messages.
func (s *Stream) UnmarshalYAML(n *yaml.Node) error {
	type plain Stream
	var p plain
	if err := decodeStrict(n, &p); err != nil {
		return err
	}
	*s = Stream(p)
	s.line = n.Line
	return nil
}

// Bytes returns the stream's size in bytes.
func (s Stream) Bytes() int64 { return int64(s.Length) * int64(typeSize(s.Type)) }

// Param is a constant kernel argument: a scalar Value of Type, or Local
// bytes of __local (shared) memory.
type Param struct {
	Name  string  `yaml:"name" json:"name"`
	Type  string  `yaml:"type,omitempty" json:"type,omitempty"`
	Value float64 `yaml:"value,omitempty" json:"value,omitempty"`
	Local int     `yaml:"local,omitempty" json:"local,omitempty"`
	line  int
}

// UnmarshalYAML decodes a parameter, remembering its line for messages.
func (p *Param) UnmarshalYAML(n *yaml.Node) error {
	type plain Param
	var q plain
	if err := decodeStrict(n, &q); err != nil {
		return err
	}
	*p = Param(q)
	p.line = n.Line
	return nil
}

// Range is a launch shape: Global work-items in all, in work-groups of
// Local (empty: the driver chooses).
type Range struct {
	Global []int `yaml:"global,omitempty" json:"global,omitempty"`
	Local  []int `yaml:"local,omitempty" json:"local,omitempty"`
}

// SwapPair names an output stream and an input stream whose device
// buffers are exchanged after each iteration.
type SwapPair struct {
	Out string `yaml:"out" json:"out"`
	In  string `yaml:"in" json:"in"`
}

// typeSize returns the size of a stream's token type, a scalar of the
// graph's table (graph.ScalarSize), or 0 when it is none: a flow-model
// carries the token types a graph does, no others.
func typeSize(t string) int {
	s, _ := graph.ScalarSize(t)
	return s
}

// knownTypes lists the token types for messages.
func knownTypes() string { return strings.Join(graph.ScalarTypes(), ", ") }

// decodeStrict decodes n into v, refusing unknown fields.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(v); err != nil {
		// Lines in the re-encoded node are relative to n: make them absolute.
		return fmt.Errorf("near line %d: %s", n.Line, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// Parse reads a flow-model from YAML; file names it in messages. Kernel
// files (opencl_file, cuda_file) are not read: Load does that.
func Parse(file string, data []byte) (*Model, error) {
	var m Model
	d := yaml.NewDecoder(bytes.NewReader(data))
	d.KnownFields(true)
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	m.file = file
	return &m, nil
}

// File returns where the model was loaded from ("" when built in Go).
func (m *Model) File() string { return m.file }

// at formats a position in the model's file.
func (m *Model) at(line int) string {
	f := m.file
	if f == "" {
		f = "flow-model " + m.Name
	}
	if line > 0 {
		return fmt.Sprintf("%s:%d", f, line)
	}
	return f
}

// Stream returns the input or output stream named name and whether it is
// an input.
func (m *Model) Stream(name string) (s Stream, input bool, ok bool) {
	for _, s := range m.In {
		if s.Name == name {
			return s, true, true
		}
	}
	for _, s := range m.Out {
		if s.Name == name {
			return s, false, true
		}
	}
	return Stream{}, false, false
}

// streamNames lists every stream name for messages.
func (m *Model) streamNames() string {
	var n []string
	for _, s := range append(append([]Stream(nil), m.In...), m.Out...) {
		n = append(n, s.Name)
	}
	return strings.Join(n, ", ")
}

// Validate checks the model: a name, exactly one kind of kernel with an
// entry point, streams with known types and positive lengths and unique
// names, parameters of known scalar types, swap pairs naming an output and
// an input of equal size, and well-formed requirements.
func (m *Model) Validate() error {
	var errs []string
	bad := func(line int, format string, args ...any) {
		errs = append(errs, m.at(line)+": "+fmt.Sprintf(format, args...))
	}
	if m.Name == "" {
		bad(0, "missing name: expected a flow-model name")
	}
	if m.Kind != "" && m.Kind != "flowmodel" {
		bad(0, "kind: this file is read as a flowmodel, but it says kind: %s", m.Kind)
	}
	k := m.Kernel
	if k.Builtin == "" && k.OpenCL == "" && k.CUDA == "" {
		bad(0, "kernel: expected opencl, cuda (source or _file) or builtin, found none")
	}
	if k.Builtin != "" && (k.OpenCL != "" || k.CUDA != "") {
		bad(0, "kernel: builtin %q excludes opencl/cuda source", k.Builtin)
	}
	if k.Builtin == "" && k.Entry == "" {
		bad(0, "kernel: missing entry: expected the kernel function's name")
	}
	if len(m.Out) == 0 {
		bad(0, "out: expected at least one output stream")
	}
	seen := map[string]bool{}
	for _, s := range append(append([]Stream(nil), m.In...), m.Out...) {
		switch {
		case s.Name == "":
			bad(s.line, "stream without a name")
		case seen[s.Name]:
			bad(s.line, "stream %q declared twice", s.Name)
		}
		seen[s.Name] = true
		if typeSize(s.Type) == 0 {
			bad(s.line, "stream %q: type %q: expected one of %s", s.Name, s.Type, knownTypes())
		}
		if s.Length <= 0 {
			bad(s.line, "stream %q: length %d: expected a positive number of tokens", s.Name, s.Length)
		}
	}
	for _, p := range m.Params {
		if p.Local > 0 {
			continue
		}
		if _, ok := scalarKinds[p.Type]; !ok {
			bad(p.line, "param %q: type %q: expected local: BYTES or one of i32, u32, i64, u64, f32, f64", p.Name, p.Type)
		}
	}
	for _, sp := range m.Swap {
		o, in1, ok1 := m.Stream(sp.Out)
		i, in2, ok2 := m.Stream(sp.In)
		switch {
		case !ok1 || in1:
			bad(0, "swap: out %q: expected an output stream (streams: %s)", sp.Out, m.streamNames())
		case !ok2 || !in2:
			bad(0, "swap: in %q: expected an input stream (streams: %s)", sp.In, m.streamNames())
		case o.Bytes() != i.Bytes():
			bad(0, "swap %s/%s: sizes differ (%d and %d bytes)", sp.Out, sp.In, o.Bytes(), i.Bytes())
		}
	}
	if err := m.Requires.validate(); err != nil {
		bad(0, "requires: %v", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// scalarKinds are the parameter types.
var scalarKinds = map[string]bool{"i32": true, "u32": true, "i64": true, "u64": true, "f32": true, "f64": true}

// arg converts a parameter to the kernel argument value device.Kernel
// SetArg takes.
func (p Param) arg() any {
	switch p.Type {
	case "i32":
		return int32(p.Value)
	case "u32":
		return uint32(p.Value)
	case "i64":
		return int64(p.Value)
	case "u64":
		return uint64(p.Value)
	case "f32":
		return float32(p.Value)
	}
	return p.Value
}
