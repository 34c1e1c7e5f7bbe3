package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
	"github.com/sluicehq/sluice/spec"
)

// expectKind checks that a YAML file is of kind want before a parser reads
// it, so that a mapping given where a graph is expected (or a flow-model
// given to run) gets one sentence naming the command that takes it, not a
// list of unknown keys. Files that cannot be read or are not YAML are left
// to the parser, whose errors say why.
func expectKind(path string, want filekind.Kind) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".xml" {
		if got := xmlKind(path); got != want {
			return &filekind.WrongKind{File: path, Want: want, Got: got}
		}
		return nil
	}
	if ext != ".yaml" && ext != ".yml" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if err := filekind.Expect(path, data, want); err != nil {
		if _, wrong := err.(*filekind.WrongKind); wrong {
			return err
		}
	}
	return nil
}

// loadGraph reads a graph file (YAML or ETH XML).
func loadGraph(path string) (*graph.Graph, error) {
	if err := expectKind(path, filekind.Graph); err != nil {
		return nil, err
	}
	return spec.Load(path)
}

// loadMapping reads a mapping file (YAML or ETH XML).
func loadMapping(path string) (*graph.Mapping, error) {
	if err := expectKind(path, filekind.Mapping); err != nil {
		return nil, err
	}
	return spec.LoadMapping(path)
}

// loadMachine reads a machine model.
func loadMachine(path string) (*machine.Machine, error) {
	if err := expectKind(path, filekind.Machine); err != nil {
		return nil, err
	}
	return machine.Load(path)
}

// loadCosts reads a cost file.
func loadCosts(path string) (*sim.Costs, error) {
	if err := expectKind(path, filekind.Costs); err != nil {
		return nil, err
	}
	return sim.LoadCosts(path)
}
