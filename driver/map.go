package driver

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/mapping"
	"github.com/sluicehq/sluice/sim"
)

// MapInput is what Map maps onto.
type MapInput struct {
	// Machine is the model mapped onto (required).
	Machine *Machine
	// Costs are the firing costs beside the graph's cost: keys (nil:
	// declared only); the synthetic actors' busy loops are added as
	// Predict adds them.
	Costs *sim.Costs
	// Fixed pins the placements it names (sluice map --mapping).
	Fixed *graph.Mapping
}

// Mapped is what Map found: each strategy's mapping with its prediction,
// the best, and the best made runnable (naming the machine it was made
// for: Place refuses it on another one).
type Mapped struct {
	*mapping.Mapped
	Machine *Machine
}

// Map runs sluice map's strategies (mapping.Map) on a prepared graph and
// makes the best mapping runnable on the machine it was made for.
func Map(ctx context.Context, p *Prepared, in MapInput, o mapping.MapOptions) (*Mapped, error) {
	if in.Machine == nil || in.Machine.Machine == nil {
		return nil, fmt.Errorf("map %s: no machine model", p.Path)
	}
	if in.Fixed != nil {
		if err := in.Fixed.Check(p.Graph); err != nil {
			return nil, err
		}
	}
	costs := withBurn(in.Costs, in.Machine, p.Synthetic)
	res, err := mapping.Map(ctx, mapping.Input{Graph: p.Graph, Machine: in.Machine.Machine, Costs: costs, Fixed: in.Fixed}, o)
	if err != nil {
		return nil, err
	}
	res.Runnable.Machine = in.Machine.Name
	if in.Machine.Host {
		res.Runnable.Machine = calibrate.ModelName()
	}
	return &Mapped{Mapped: res, Machine: in.Machine}, nil
}
