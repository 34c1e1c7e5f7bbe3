package cli

import (
	"context"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/machine"
)

// expectKind checks that a file is of kind want before a reader reads it,
// so that a mapping given where a graph is expected (or a flow-model given
// to run) gets one sentence naming the command that takes it (the
// driver's, which every command prints alike). A file that cannot be read
// or is not YAML is left to the reader, whose errors say why.
func expectKind(path string, want filekind.Kind) error {
	got, _ := driver.Kind(path)
	if got == want || got == filekind.Unknown {
		return nil
	}
	_, err := driver.ReadInput(path, want)
	return err
}

// loadGraph reads a graph file (YAML, SDF3 or ETH XML) through the driver.
func loadGraph(path string, o driver.Options) (*graph.Graph, error) {
	l, err := driver.Load(context.Background(), path, o)
	if err != nil {
		return nil, err
	}
	return l.Graph, nil
}

// loadMapping reads a mapping file (YAML or ETH XML).
func loadMapping(path string) (*graph.Mapping, error) { return driver.LoadMapping(path) }

// loadMachine reads a machine model.
func loadMachine(path string) (*machine.Machine, error) {
	m, err := driver.LoadMachine(path)
	if err != nil {
		return nil, err
	}
	return m.Machine, nil
}
