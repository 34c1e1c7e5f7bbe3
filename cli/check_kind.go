package cli

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/shell"
	"github.com/sluicehq/sluice/sim"
	"github.com/sluicehq/sluice/spec"
)

// kindOf returns the kind of a file sluice reads: Graph for ETH XML, the
// detected kind for YAML (filekind.Detect), Unknown when it cannot tell.
func kindOf(path string) (filekind.Kind, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".xml":
		return xmlKind(path), nil
	case ".yaml", ".yml":
	default:
		return filekind.Unknown, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return filekind.Unknown, nil // the loader reports it
	}
	return filekind.Detect(path, data)
}

// checkOther validates a file that is not a graph with the reader of its
// kind and says what it is and which command takes it. It returns an
// exitError{1} when the file is wrong.
func checkOther(ctx context.Context, w io.Writer, path string, k filekind.Kind) error {
	what, err := describe(ctx, path, k)
	if err != nil {
		fmt.Fprintf(w, "%s %s\n✗ invalid\n", k, path)
		for _, l := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
		return exitError{1}
	}
	fmt.Fprintf(w, "%s %s: ✓ valid (%s)\n", k, path, what)
	fmt.Fprintf(w, "  %s: use it with %s\n", strings.TrimPrefix(k.What(), "a "), k.Use())
	return nil
}

// describe loads path as a file of kind k and summarises it.
func describe(ctx context.Context, path string, k filekind.Kind) (string, error) {
	switch k {
	case filekind.Mapping:
		m, err := spec.LoadMapping(path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("mapping %s: %d actor(s) placed; check it against its graph with sluice check GRAPH --mapping %s", m.Name, len(m.Actors), path), nil
	case filekind.FlowModel:
		m, err := flowmodel.Load(ctx, path, flowmodel.LoadOptions{})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("flow-model %s: %d input(s), %d output(s)", m.Name, len(m.In), len(m.Out)), nil
	case filekind.Machine:
		m, err := loadMachine(path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("machine %s: %d processor(s), %d memory unit(s), %d interconnect(s)", m.Name, len(m.Processors), len(m.Memories), len(m.Interconnects)), nil
	case filekind.Executable:
		return shell.CheckExecutable(ctx, path)
	case filekind.Batch:
		return shell.CheckBatch(path)
	case filekind.Costs:
		c, err := sim.LoadCosts(path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("costs for %d actor(s)", len(c.Actors)), nil
	case filekind.Profile:
		p, err := sim.LoadProfile(path)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("measured firing times of %d actor(s)", len(p)), nil
	}
	return "", fmt.Errorf("%s: no reader for kind %q", path, k)
}

// xmlKind tells the ETH XML files apart by their root element: <graph> is
// a graph, <binding> or <mapping> a mapping.
func xmlKind(path string) filekind.Kind {
	f, err := os.Open(path)
	if err != nil {
		return filekind.Graph // the loader reports it
	}
	defer f.Close()
	d := xml.NewDecoder(io.LimitReader(f, 1<<20))
	for {
		t, err := d.Token()
		if err != nil {
			return filekind.Graph
		}
		if se, ok := t.(xml.StartElement); ok {
			switch se.Name.Local {
			case "binding", "mapping":
				return filekind.Mapping
			}
			return filekind.Graph
		}
	}
}
