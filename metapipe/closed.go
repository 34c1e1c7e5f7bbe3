package metapipe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// close returns a copy of pl's graph closed by host adapters: a source on
// every entrance port, a sink on every exit port, and on every initonce
// port's channel a mux that forwards the fed-back block except at the
// (re-)initialisation firings, where it forwards the application's block.
func (p *Pipeline) close(pl *graph.Pipeline, depth int) (*graph.Graph, error) {
	src := pl.Graph
	g := graph.New(src.Name)
	for _, a := range src.Actors {
		copyActor(g, a)
	}
	for _, c := range src.Channels {
		from := g.Actor(c.From.Actor.Name).Port(c.From.Name)
		to := g.Actor(c.To.Actor.Name).Port(c.To.Name)
		opts := []graph.ChannelOption{graph.Capacity(c.Capacity), graph.Initial(c.Initial), graph.InitialData(c.InitialData), graph.Named(c.Name), graph.ChannelAt(c.Origin)}
		if pr := pl.RoleOf(c.To); pr.Role == graph.InitOnce {
			q, err := p.addPort(c.To, pr, depth)
			if err != nil {
				return nil, err
			}
			mux := adapter(g, "initonce", q, p.muxFunc(q))
			g.Join(from, mux.AddPort("fb", graph.In, to.Type, graph.Dynamic(), ""), opts...)
			g.Join(mux.AddPort("out", graph.Out, to.Type, graph.Dynamic(), ""), to, graph.Capacity(c.Capacity))
			continue
		}
		g.Join(from, to, opts...)
	}
	for _, a := range src.Actors {
		for _, sp := range a.Ports() {
			pr := pl.RoleOf(sp)
			if pr.Role != graph.Entrance && pr.Role != graph.Exit {
				continue
			}
			q, err := p.addPort(sp, pr, depth)
			if err != nil {
				return nil, err
			}
			gp := g.Actor(a.Name).Port(sp.Name)
			if pr.Role == graph.Entrance {
				s := adapter(g, "entrance", q, p.sourceFunc(q))
				g.Join(s.AddPort("out", graph.Out, gp.Type, graph.Dynamic(), ""), gp)
			} else {
				s := adapter(g, "exit", q, p.sinkFunc(q))
				g.Join(gp, s.AddPort("in", graph.In, gp.Type, graph.Dynamic(), ""))
			}
		}
	}
	for _, b := range append(append([]graph.Boundary(nil), src.Inputs...), src.Outputs...) {
		if q, ok := p.ports[b.Actor+"."+b.Port]; ok {
			p.ports[b.Name] = q
		}
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("metapipe: closing pipeline %q: %w", src.Name, err)
	}
	return g, nil
}

// copyActor adds a copy of a (implementations, attributes, ports) to g.
func copyActor(g *graph.Graph, a *graph.Actor) {
	na := g.AddActor(a.Name)
	ins, outs := a.Inputs, a.Outputs
	*na = *a
	na.Graph, na.Inputs, na.Outputs = g, nil, nil
	for _, sp := range append(append([]*graph.Port(nil), ins...), outs...) {
		np := na.AddPort(sp.Name, sp.Dir, sp.Type, sp.Rate, sp.Origin)
		np.Block = sp.Block
	}
}

func (p *Pipeline) addPort(sp *graph.Port, pr graph.PortRole, depth int) (*port, error) {
	if sp.Rate.IsDynamic() || sp.Rate.IsCSDF() {
		return nil, fmt.Errorf("metapipe: %s port %s has rate %s: expected a fixed (SDF) rate", pr.Role, sp.FullName(), sp.Rate)
	}
	q := &port{name: sp.FullName(), role: pr.Role, every: pr.Every, size: sp.Rate.At(0) * sp.Type.Size, ch: make(chan []byte, depth)}
	p.ports[q.name] = q
	p.names = append(p.names, q.name)
	return q, nil
}

// adapter adds a host KPN process for q: it blocks on the application
// without holding back the blocks it has already passed on.
func adapter(g *graph.Graph, kind string, q *port, fn runtime.ProcessFunc) *graph.Actor {
	name := "_" + kind + "_" + strings.ReplaceAll(q.name, ".", "_")
	return g.AddActor(name, graph.WithFunc(fn))
}

// take waits for the application's next block for q; ok is false when
// sending has been closed and nothing is left.
func (p *Pipeline) take(ctx context.Context, q *port) (b []byte, ok bool, err error) {
	select {
	case b := <-q.ch:
		return b, true, nil
	default:
	}
	select {
	case b := <-q.ch:
		return b, true, nil
	case <-p.closed:
		return nil, false, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// ended reports whether err is a stream's end (rather than a failure).
func ended(err error) bool {
	return errors.Is(err, fifo.ErrClosed) || errors.Is(err, fifo.ErrWriterClosed) || errors.Is(err, fifo.ErrDetached)
}

// quiet turns a stream's end into a normal return.
func quiet(err error) error {
	if err == nil || ended(err) {
		return nil
	}
	return err
}

// sourceFunc feeds an entrance port: a new block every `every` firings of
// its stage, the last one held in between.
func (p *Pipeline) sourceFunc(q *port) runtime.ProcessFunc {
	return func(pr *runtime.Process) error {
		ctx := pr.Context()
		var last []byte
		for k := 0; ; k++ {
			if k%q.every == 0 {
				b, ok, err := p.take(ctx, q)
				if !ok {
					return err
				}
				last = b
			}
			if err := pr.Out(0).Write(ctx, last); err != nil {
				return quiet(err)
			}
		}
	}
}

// sinkFunc drains an exit port, handing the application the block of the
// last firing of every group of `every`.
func (p *Pipeline) sinkFunc(q *port) runtime.ProcessFunc {
	return func(pr *runtime.Process) error {
		ctx := pr.Context()
		for k := 0; ; k++ {
			b := make([]byte, q.size)
			if _, err := pr.In(0).Read(ctx, b); err != nil {
				return quiet(err)
			}
			if (k+1)%q.every != 0 {
				continue
			}
			select {
			case q.ch <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// muxFunc feeds an initonce port: at firing 0 and (with a limit) every
// `every` firings the application's block, dropping the fed-back one; the
// fed-back block otherwise.
func (p *Pipeline) muxFunc(q *port) runtime.ProcessFunc {
	return func(pr *runtime.Process) error {
		ctx := pr.Context()
		b := make([]byte, q.size)
		for k := 0; ; k++ {
			if _, err := pr.In(0).Read(ctx, b); err != nil {
				return quiet(err)
			}
			out := b
			if k == 0 || (q.every > 0 && k%q.every == 0) {
				init, ok, err := p.take(ctx, q)
				if !ok {
					return err
				}
				out = init
			}
			if err := pr.Out(0).Write(ctx, out); err != nil {
				return quiet(err)
			}
		}
	}
}
