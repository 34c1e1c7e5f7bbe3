package shell

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/flowmodel"
)

// CheckExecutable reads an executable file without running it: its keys,
// its flow-model (loaded and validated) and its bindings, each of which must
// name one of the model's streams and give a file or a virtual buffer. It
// returns a one-line summary of what the executable runs.
func CheckExecutable(ctx context.Context, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var e Executable
	d := yaml.NewDecoder(bytes.NewReader(data))
	d.KnownFields(true)
	if err := d.Decode(&e); err != nil {
		return "", fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if e.Kind != "" && e.Kind != "executable" {
		return "", fmt.Errorf("%s: kind: this file is read as an executable, but it says kind: %s", path, e.Kind)
	}
	if e.FlowModel == "" {
		return "", fmt.Errorf("%s: flowmodel: expected the flow-model file, found none", path)
	}
	mp := e.FlowModel
	if !filepath.IsAbs(mp) && !strings.Contains(mp, "://") {
		mp = filepath.Join(filepath.Dir(path), mp)
	}
	m, err := flowmodel.Load(ctx, mp, flowmodel.LoadOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: flowmodel %s: %w", path, e.FlowModel, err)
	}
	for _, name := range slices.Sorted(maps.Keys(e.Bind)) {
		b := e.Bind[name]
		if _, _, ok := m.Stream(name); !ok {
			return "", fmt.Errorf("%s: bind: %s: expected one of the flow-model's streams (%s), found none of that name", path, name, streamList(m))
		}
		if (b.File == "") == (b.VirtBuf == "") {
			return "", fmt.Errorf("%s: bind: %s: expected exactly one of file or virtbuf", path, name)
		}
	}
	return fmt.Sprintf("fires flow-model %s (%s), %d stream(s) bound", m.Name, e.FlowModel, len(e.Bind)), nil
}

// CheckBatch reads a batch file without running it: a list of command
// lines, each a shell command or an executable/batch file that exists. It
// returns a one-line summary.
func CheckBatch(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var b batchFile
	if err := yaml.Unmarshal(data, &b); err != nil {
		return "", fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if b.Kind != "" && b.Kind != "batch" {
		return "", fmt.Errorf("%s: kind: this file is read as a batch, but it says kind: %s", path, b.Kind)
	}
	if b.Batch.Kind != yaml.SequenceNode {
		return "", fmt.Errorf("%s:%d: batch: expected a list of commands", path, b.Batch.Line)
	}
	for _, n := range b.Batch.Content {
		if n.Kind != yaml.ScalarNode {
			return "", fmt.Errorf("%s:%d: expected a command line (a string)", path, n.Line)
		}
		if err := checkLine(filepath.Dir(path), n.Value); err != nil {
			return "", fmt.Errorf("%s:%d: %w", path, n.Line, err)
		}
	}
	return fmt.Sprintf("%d command(s)", len(b.Batch.Content)), nil
}

// commands are the shell's own commands (see Shell.exec).
var commands = []string{"run", "sync", "repeat", "virtbuf", "jobs", "devices", "help"}

// checkLine checks that a batch line names a known command or an existing
// YAML file.
func checkLine(dir, line string) error {
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), "&"))
	if len(f) == 0 {
		return nil
	}
	if f[0] == "run" && len(f) == 2 {
		f = f[1:]
	}
	if strings.HasSuffix(f[0], ".yaml") || strings.HasSuffix(f[0], ".yml") {
		p := f[0]
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s: expected an executable or batch file, found none", f[0])
		}
		return nil
	}
	if !slices.Contains(commands, f[0]) {
		return fmt.Errorf("unknown command %q: expected FILE.yaml, %s", f[0], strings.Join(commands, ", "))
	}
	return nil
}

// streamList names a flow-model's streams for messages.
func streamList(m *flowmodel.Model) string {
	var n []string
	for _, s := range append(append([]flowmodel.Stream(nil), m.In...), m.Out...) {
		n = append(n, s.Name)
	}
	return strings.Join(n, ", ")
}
