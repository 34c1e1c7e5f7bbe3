package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/shell"
	"github.com/sluicehq/sluice/sim"
)

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
		m, err := loadMapping(path)
		if err != nil {
			return "", err
		}
		made := ""
		if m.Machine != "" {
			made = ", made for machine " + m.Machine
		}
		return fmt.Sprintf("mapping %s: %d actor(s) placed%s; read on its own, not checked against a graph: check that it runs with sluice check %s --graph GRAPH", m.Name, len(m.Actors), made, path), nil
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
