package spec

import (
	"github.com/sluicehq/sluice/internal/fsroot"
)

// Options tune a load. The zero value reads a graph with no flow-model
// resolver and no file root.
type Options struct {
	// Root confines every path a graph names — composite graph files,
	// kernel sources, flow-model files, Go package directories — to one
	// directory tree: a path outside it is refused at the field that names
	// it with fsroot's rule. nil confines nothing (sluice run on one's own
	// machine). The file given to the load itself is not checked.
	Root *fsroot.Root
	// FlowModels resolves actors' flowmodel: references. nil: a graph
	// that names one is refused at the reference.
	FlowModels FlowModelResolver
}
