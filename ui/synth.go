package ui

import (
	"context"
	"strings"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

// The workbench reads, prepares, predicts and runs graphs through package
// driver, with the command line's steps: a graph still being designed
// (actors with only a cost) runs with the synthetic actors sluice run
// gives it, and a prediction for the graph and a machine model is the
// number sluice simulate prints for them.

// loadOptions are the driver's options for the graphs the page sends and
// names: the server's file root (Root, or the default Handler opened).
func (s *Server) loadOptions() driver.Options { return driver.Options{Root: s.root} }

// parse reads YAML sent by the page as the graph file name.
func (s *Server) parse(name string, data []byte) (*graph.Graph, error) {
	l, err := driver.Parse(context.Background(), name, data, s.loadOptions())
	if err != nil {
		return nil, err
	}
	return l.Graph, nil
}

// loadNamed reads the graph file name, as written in a graph in dir,
// through the server's root: a name outside it is refused with fsroot's
// rule.
func (s *Server) loadNamed(dir, name string) (*graph.Graph, error) {
	path, err := s.root.HostPath(dir, name)
	if err != nil {
		return nil, spec.ErrorList{{File: name, Msg: strings.TrimPrefix(err.Error(), name+": ")}}
	}
	l, err := driver.Load(context.Background(), path, s.loadOptions())
	if err != nil {
		return nil, err
	}
	return l.Graph, nil
}

// loadServed loads and prepares the served file to run: the driver's
// Load and Prepare (open graphs, Go actors this program lacks and graphs
// the analysis refuses are errors).
func (s *Server) loadServed(ctx context.Context) (*driver.Prepared, error) {
	l, err := driver.Load(ctx, s.File, s.loadOptions())
	if err != nil {
		return nil, err
	}
	return driver.Prepare(ctx, l, driver.PrepareOptions{Run: true})
}
