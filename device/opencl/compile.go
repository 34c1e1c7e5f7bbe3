package opencl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

var _ device.ActorCompiler = (*Device)(nil)

// CompileActor generates the ETH-style prelude of actor a for placement pl
// (GenerateActor), builds it with the user's OpenCL C source and returns
// the FIRE (and INIT) kernels as a device.ActorKernel. A compile error is a
// *device.BuildError pointing at the user's file and line.
func (d *Device) CompileActor(ctx context.Context, a *graph.Actor, pl *graph.Placement, impl graph.Impl) (device.ActorKernel, error) {
	if impl.Kind != graph.ImplOpenCL {
		return nil, fmt.Errorf("actor %s: %s implementation: %w (expected an OpenCL kernel on %s)", a.Name, impl.Kind, device.ErrUnsupported, d.info)
	}
	name, text, err := device.KernelSource(a, impl)
	if err != nil {
		return nil, err
	}
	ga, err := GenerateActor(a, pl, name, text)
	if err != nil {
		return nil, err
	}
	if mw := int(d.cl.MaxWorkGroupSize); mw > 0 && ga.Items > mw {
		return nil, fmt.Errorf("actor %s: %d work-items per work-group: expected at most %d on %s", a.Name, ga.Items, mw, d.info)
	}
	p, err := d.Build(ctx, ga.Source(), "")
	if err != nil {
		return nil, fmt.Errorf("actor %s: %w", a.Name, err)
	}
	ca := &compiledActor{ga: ga, prog: p.(*Program)}
	fire, err := p.Kernel("FIRE")
	if err != nil {
		_ = p.Release()
		return nil, fmt.Errorf("actor %s: %w", a.Name, err)
	}
	ca.fire = fire.(*Kernel)
	if ga.HasInit {
		k, err := p.Kernel("INIT")
		if err != nil {
			_ = ca.Release()
			return nil, fmt.Errorf("actor %s: %w", a.Name, err)
		}
		ca.init = k.(*Kernel)
	}
	return ca, nil
}

// compiledActor is the device.ActorKernel of an OpenCL kernel actor.
type compiledActor struct {
	ga         *GeneratedActor
	prog       *Program
	fire, init *Kernel
	once       sync.Once
	err        error
}

func (c *compiledActor) Groups() int                  { return c.ga.Groups }
func (c *compiledActor) Items() int                   { return c.ga.Items }
func (c *compiledActor) Range(g int) device.Range     { return device.Groups(g, c.ga.Items) }
func (c *compiledActor) Fire() device.Kernel          { return c.fire }
func (c *compiledActor) Inputs() []device.PortLayout  { return c.ga.Inputs }
func (c *compiledActor) Outputs() []device.PortLayout { return c.ga.Outputs }
func (c *compiledActor) Log() string                  { return c.prog.Log() }
func (c *compiledActor) Generated() *GeneratedActor   { return c.ga }
func (c *compiledActor) Init() device.Kernel {
	if c.init == nil {
		return nil // a nil *Kernel in an interface would not be nil
	}
	return c.init
}

func (c *compiledActor) Bind(k device.Kernel, ws []device.Window) error {
	return c.ga.Bind(k, k.Name() == "INIT", ws)
}

func (c *compiledActor) Release() error {
	c.once.Do(func() {
		var errs []error
		if c.fire != nil {
			errs = append(errs, c.fire.Release())
		}
		if c.init != nil {
			errs = append(errs, c.init.Release())
		}
		errs = append(errs, c.prog.Release())
		c.err = errors.Join(errs...)
	})
	return c.err
}

// Bind sets the port arguments of the actor's FIRE kernel (init false:
// inputs then outputs) or INIT kernel (init true: outputs): for each port
// its window's buffer and token offset.
func (g *GeneratedActor) Bind(k device.Kernel, init bool, ws []device.Window) error {
	n := len(g.Inputs) + len(g.Outputs)
	if init {
		n = len(g.Outputs)
	}
	if len(ws) != n {
		return fmt.Errorf("binding %s of %s: %d windows: expected %d", k.Name(), g.Name, len(ws), n)
	}
	for i, w := range ws {
		if w.Off < 0 {
			return fmt.Errorf("binding %s of %s: window %d at token offset %d: expected ≥ 0", k.Name(), g.Name, i, w.Off)
		}
		if err := k.SetArg(2*i, w.Buf); err != nil {
			return err
		}
		if err := k.SetArg(2*i+1, uint64(w.Off)); err != nil {
			return err
		}
	}
	return nil
}
