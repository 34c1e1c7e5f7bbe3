package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/flowmodel"
)

// maxDepth bounds batch nesting (and catches a batch that runs itself).
const maxDepth = 16

// Executable binds a flow-model's streams to data files or virtual
// buffers and says where and how often to fire it.
type Executable struct {
	// Kind is "executable" when the file says what it is (optional).
	Kind string `yaml:"kind,omitempty"`
	// FlowModel is the flow-model file, relative to the executable.
	FlowModel string `yaml:"flowmodel"`
	// Device is a device ID or backend ("" = the shell's device when it
	// can run the model, else the first able device).
	Device string `yaml:"device,omitempty"`
	// Iterations fires the model that many times (default 1).
	Iterations int `yaml:"iterations,omitempty"`
	// Swap replaces the flow-model's swap pairs when set.
	Swap []flowmodel.SwapPair `yaml:"swap,omitempty"`
	// Bind maps stream names to a file or a virtual buffer.
	Bind map[string]Binding `yaml:"bind"`
}

// Binding is where a stream's data comes from or goes to: a CSV or raw
// binary file, or a virtual buffer.
type Binding struct {
	File    string `yaml:"file,omitempty"`
	VirtBuf string `yaml:"virtbuf,omitempty"`
}

// batchFile is a batch: command lines run in order.
type batchFile struct {
	Kind  string    `yaml:"kind"`
	Batch yaml.Node `yaml:"batch"`
}

// runFile runs an executable or a batch file.
func (s *Shell) runFile(ctx context.Context, name string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: batches nested deeper than %d (does a batch run itself?)", name, maxDepth)
	}
	path := s.path(name)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	switch {
	case top["batch"].Kind != 0:
		return s.runBatch(ctx, path, data, depth)
	case top["flowmodel"].Kind != 0:
		var e Executable
		d := yaml.NewDecoder(bytes.NewReader(data))
		d.KnownFields(true)
		if err := d.Decode(&e); err != nil {
			return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if err := s.runExecutable(ctx, path, &e); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	return fmt.Errorf("%s: expected an executable (flowmodel: …) or a batch (batch: […])", path)
}

// runBatch runs a batch's commands, each in the batch's directory; errors
// name the batch file and line.
func (s *Shell) runBatch(ctx context.Context, path string, data []byte, depth int) error {
	var b batchFile
	if err := yaml.Unmarshal(data, &b); err != nil {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if b.Batch.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s:%d: batch: expected a list of commands", path, b.Batch.Line)
	}
	dir := filepath.Dir(path)
	for _, n := range b.Batch.Content {
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s:%d: expected a command line (a string)", path, n.Line)
		}
		if err := s.execIn(ctx, dir, n.Value, depth+1); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n.Line, err)
		}
	}
	return nil
}

// execIn runs a batch line with file names relative to dir.
func (s *Shell) execIn(ctx context.Context, dir, line string, depth int) error {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	bg := false
	if last := f[len(f)-1]; strings.HasSuffix(last, "&") {
		bg = true
		f[len(f)-1] = strings.TrimSuffix(last, "&")
		if f[len(f)-1] == "" {
			f = f[:len(f)-1]
		}
	}
	if f[0] == "run" && len(f) == 2 {
		f = f[1:]
	}
	if len(f) == 1 && (strings.HasSuffix(f[0], ".yaml") || strings.HasSuffix(f[0], ".yml")) {
		name := f[0]
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if !bg {
			return s.runFile(ctx, name, depth)
		}
		s.background(ctx, []string{name})
		return nil
	}
	if bg {
		s.background(ctx, f)
		return nil
	}
	return s.exec(ctx, f)
}

// bound is a stream bound to a virtual buffer on the instance's device.
type bound struct {
	stream string
	vb     *VirtBuf
}

// runExecutable maps the flow-model, fills its inputs, fires it and
// stores its outputs.
func (s *Shell) runExecutable(ctx context.Context, path string, e *Executable) error {
	if e.FlowModel == "" {
		return errors.New("flowmodel: expected the flow-model file")
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	m, err := flowmodel.Load(ctx, rel(e.FlowModel), flowmodel.LoadOptions{})
	if err != nil {
		return err
	}
	if e.Swap != nil {
		m.Swap = e.Swap
		if err := m.Validate(); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(e.Bind)) {
		if _, _, ok := m.Stream(name); !ok {
			return fmt.Errorf("bind: flow-model %s has no stream %q", m.Name, name)
		}
	}
	for _, st := range m.In {
		if _, ok := e.Bind[st.Name]; !ok {
			return fmt.Errorf("bind: input stream %q of %s is not bound: expected {file: …} or {virtbuf: …}", st.Name, m.Name)
		}
	}
	for _, p := range m.Swap {
		if (e.Bind[p.Out].VirtBuf == "") != (e.Bind[p.In].VirtBuf == "") {
			return fmt.Errorf("swap %s/%s: bind both streams to virtual buffers or neither", p.Out, p.In)
		}
	}
	s.mu.Lock()
	err = s.ensureDevice(ctx)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	devID := e.Device
	if devID == "" && s.dev != nil && m.Check(s.dev.Info()) == nil {
		devID = s.dev.Info().ID
	}
	if devID != "" && !strings.Contains(devID, ":") && devID != "cpu" {
		devID = s.backendDevice(ctx, m, devID)
	}
	in, err := s.host.MapLocal(ctx, m, devID)
	if err != nil {
		return err
	}
	defer in.Release(ctx)
	resident, err := s.bindInputs(ctx, in, e, rel)
	if err != nil {
		return err
	}
	if err := in.Fire(ctx, e.Iterations); err != nil {
		return err
	}
	return s.storeOutputs(ctx, in, e, rel, resident)
}

// backendDevice returns the first device of a backend able to run m (or
// the backend name, for MapLocal's error).
func (s *Shell) backendDevice(ctx context.Context, m *flowmodel.Model, backend string) string {
	able, err := flowmodel.Query(ctx, s.host, m)
	if err == nil {
		for _, d := range able {
			if d.Backend == backend {
				return d.ID
			}
		}
	}
	return backend
}

// bindInputs binds resident virtual buffers to their streams (no copy)
// and writes the other inputs; it returns the resident bindings.
func (s *Shell) bindInputs(ctx context.Context, in *flowmodel.LocalInstance, e *Executable, rel func(string) string) ([]bound, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var resident []bound
	for _, name := range slices.Sorted(maps.Keys(e.Bind)) { // in a fixed order: the first error is always the same
		b := e.Bind[name]
		st, isIn, _ := in.Model().Stream(name)
		switch {
		case b.VirtBuf != "" && b.File != "":
			return nil, fmt.Errorf("bind %s: expected file or virtbuf, found both", name)
		case b.VirtBuf != "":
			v, err := s.buf(b.VirtBuf)
			if err != nil {
				return nil, fmt.Errorf("bind %s: %w", name, err)
			}
			if v.Bytes() != st.Bytes() {
				return nil, fmt.Errorf("bind %s: virtual buffer %s holds %d %s (%d bytes): stream needs %d %s (%d bytes)", name, v.Name, v.Len, v.Type, v.Bytes(), st.Length, st.Type, st.Bytes())
			}
			if v.dev != nil && in.DeviceHandle() == s.dev {
				if err := in.Bind(name, v.dev); err != nil {
					return nil, err
				}
				resident = append(resident, bound{name, v})
				continue
			}
			if isIn {
				data, err := s.get(ctx, v)
				if err != nil {
					return nil, err
				}
				if err := in.Write(ctx, name, data); err != nil {
					return nil, err
				}
			}
		case b.File != "" && isIn:
			data, err := readData(rel(b.File), st.Type, st.Bytes())
			if err != nil {
				return nil, fmt.Errorf("bind %s: %w", name, err)
			}
			if err := in.Write(ctx, name, data); err != nil {
				return nil, err
			}
		case b.File == "":
			return nil, fmt.Errorf("bind %s: expected {file: PATH} or {virtbuf: NAME}", name)
		}
	}
	return resident, nil
}

// storeOutputs writes output streams to their files and non-resident
// virtual buffers, and lets resident virtual buffers follow the swaps
// done on the device.
func (s *Shell) storeOutputs(ctx context.Context, in *flowmodel.LocalInstance, e *Executable, rel func(string) string, resident []bound) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := map[*VirtBuf]device.Buffer{}
	for _, r := range resident {
		now[r.vb] = in.Buffer(r.stream)
	}
	for v, b := range now {
		v.dev = b
	}
	isResident := map[string]bool{}
	for _, r := range resident {
		isResident[r.stream] = true
	}
	// Inputs of swap pairs hold the previous iteration's result: they go
	// back to their virtual buffers too, as resident ones do.
	swapped := map[string]bool{}
	for _, p := range in.Model().Swap {
		swapped[p.In] = e.Iterations > 1
	}
	for _, name := range slices.Sorted(maps.Keys(e.Bind)) { // in a fixed order: the first error is always the same
		b := e.Bind[name]
		st, isIn, _ := in.Model().Stream(name)
		if isResident[name] || (isIn && !(swapped[name] && b.VirtBuf != "")) {
			continue
		}
		data, err := in.Read(ctx, name)
		if err != nil {
			return err
		}
		if b.File != "" {
			if err := writeData(rel(b.File), st.Type, data); err != nil {
				return err
			}
			continue
		}
		v, err := s.buf(b.VirtBuf)
		if err != nil {
			return err
		}
		if err := s.put(ctx, v, data); err != nil {
			return err
		}
	}
	return nil
}
