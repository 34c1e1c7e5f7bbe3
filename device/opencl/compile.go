package opencl

import (
	"context"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

var _ device.ActorCompiler = (*Device)(nil)

// CompileActor generates the ETH-style prelude of actor a for placement pl
// (GenerateActor), builds it with the user's OpenCL C source and returns
// the FIRE (and INIT) kernels as a device.ActorKernel. A compile error is a
// *device.BuildError pointing at the user's file and line.
func (d *Device) CompileActor(ctx context.Context, a *graph.Actor, pl *graph.Placement, impl graph.Impl) (device.ActorKernel, error) {
	ca, err := dialect.Compile(ctx, d, d.info, int(d.cl.MaxWorkGroupSize), a, pl, impl)
	if err != nil {
		return nil, err
	}
	return ca, nil
}
