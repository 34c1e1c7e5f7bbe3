package driver

import (
	"context"

	"github.com/sluicehq/sluice/runtime"
)

// Run runs a placed graph with the runtime: opts.Mapping is set to the
// placed mapping.
func Run(ctx context.Context, pl *Placed, opts runtime.Options) (*runtime.Stats, error) {
	opts.Mapping = pl.Mapping
	return runtime.Run(ctx, pl.Graph, opts)
}
