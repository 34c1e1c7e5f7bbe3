package main

import (
	"context"

	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
)

// loadGraph reads a graph file through the driver, as sluice run does.
func loadGraph(path string) (*graph.Graph, error) {
	l, err := driver.Load(context.Background(), path, driver.Options{})
	if err != nil {
		return nil, err
	}
	return l.Graph, nil
}
