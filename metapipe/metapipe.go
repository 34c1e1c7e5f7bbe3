// Package metapipe is the application side of a pipeline-model (Caravela's
// meta-pipeline): it implements a graph.Pipeline on the runtime (stages on
// the CPU, on local devices or on remote workers, as Options.Run's mapping
// and remote executor say) and lets the application send data to its
// entrance and initonce ports and receive data from its exit ports:
//
//	p, err := metapipe.Start(ctx, pl, metapipe.Options{})
//	p.Init(ctx, "fm0.fb", first)      // initonce: the loop's first block
//	for _, block := range blocks {
//		p.Send(ctx, "x", block)        // entrance (graph input x)
//		out, err := p.Recv(ctx, "y")   // exit (graph output y)
//	}
//	p.CloseSend()
//	err = p.Wait()
//
// Entrance, initonce and exit ports become small host actors joined to the
// stages by ordinary channels, so the stages themselves run unchanged.
package metapipe

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Options configure Start.
type Options struct {
	// Run configures the runtime that runs the stages (mapping onto
	// devices and remote workers, pools, tracing). Its Watchdog is turned
	// off unless set (the application paces the pipeline), and its I/O
	// pool is enlarged to hold every port adapter, since they block while
	// they wait for the application.
	Run runtime.Options
	// Depth is how many blocks each port buffers between the application
	// and the pipeline; 0 means 1.
	Depth int
}

// ErrClosed is returned by Send and Init after CloseSend.
var ErrClosed = errors.New("metapipe: sending closed")

// Pipeline is a running pipeline-model.
type Pipeline struct {
	ports map[string]*port // by "actor.port" and by boundary name
	names []string         // "actor.port" of every role port, for errors

	closeOnce sync.Once
	closed    chan struct{}
	cancel    context.CancelFunc
	done      chan struct{}
	stats     *runtime.Stats
	err       error
}

// port is the application's end of one entrance, initonce or exit port.
type port struct {
	name  string // "actor.port"
	role  graph.Role
	every int
	size  int // bytes per block
	ch    chan []byte
}

// Start checks pl and runs it until the application calls CloseSend (or
// ctx ends or a stage fails); see Wait.
func Start(ctx context.Context, pl *graph.Pipeline, opts Options) (*Pipeline, error) {
	if err := pl.Validate(); err != nil {
		return nil, err
	}
	depth := max(opts.Depth, 1)
	p := &Pipeline{ports: map[string]*port{}, closed: make(chan struct{}), done: make(chan struct{})}
	g, err := p.close(pl, depth)
	if err != nil {
		return nil, err
	}
	ro := opts.Run
	if ro.Watchdog == 0 {
		ro.Watchdog = -1
	}
	ro.IOWorkers = max(ro.IOWorkers, 4) + len(p.names)
	rctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	go func() {
		defer close(p.done)
		p.stats, p.err = runtime.Run(rctx, g, ro)
	}()
	return p, nil
}

// Send gives one block (one firing's tokens, little-endian) to the
// entrance port named by its graph input name or "actor.port". With an
// iteration limit IT the stage reads it for IT firings.
func (p *Pipeline) Send(ctx context.Context, name string, data []byte) error {
	return p.send(ctx, name, data, graph.Entrance)
}

// Init gives the block an initonce port reads at firing 0 and, with an
// iteration limit IT, again at every firing k with k%IT == 0 (the blocks
// fed back for those firings are dropped): call Init once per
// (re-)initialisation, in order.
func (p *Pipeline) Init(ctx context.Context, name string, data []byte) error {
	return p.send(ctx, name, data, graph.InitOnce)
}

func (p *Pipeline) send(ctx context.Context, name string, data []byte, role graph.Role) error {
	q, err := p.port(name, role)
	if err != nil {
		return err
	}
	if len(data) != q.size {
		return fmt.Errorf("metapipe: %s port %s: block of %d bytes: expected %d (one firing's tokens)", role, q.name, len(data), q.size)
	}
	select {
	case <-p.closed:
		return ErrClosed
	default:
	}
	select {
	case q.ch <- append([]byte(nil), data...):
		return nil
	case <-p.closed:
		return ErrClosed
	case <-p.done:
		return p.finished()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Recv returns the next block of the exit port named by its graph output
// name or "actor.port": the output of every IT-th firing of its stage. It
// returns runtime.ErrEndOfStream once the pipeline has finished and every
// block has been received.
func (p *Pipeline) Recv(ctx context.Context, name string) ([]byte, error) {
	q, err := p.port(name, graph.Exit)
	if err != nil {
		return nil, err
	}
	select {
	case b := <-q.ch:
		return b, nil
	case <-p.done:
		select {
		case b := <-q.ch:
			return b, nil
		default:
		}
		if p.err != nil {
			return nil, p.finished()
		}
		return nil, runtime.ErrEndOfStream
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CloseSend ends the entrance and initonce streams: the stages finish the
// blocks they have, the exits deliver the last outputs, and Wait returns.
func (p *Pipeline) CloseSend() { p.closeOnce.Do(func() { close(p.closed) }) }

// Stop cancels the pipeline and waits for it to end.
func (p *Pipeline) Stop() error {
	p.CloseSend()
	p.cancel()
	<-p.done
	if errors.Is(p.err, context.Canceled) {
		return nil
	}
	return p.err
}

// Wait waits for the pipeline to finish (after CloseSend and the last
// Recv of each exit) and returns the runtime's statistics and error.
func (p *Pipeline) Wait() (*runtime.Stats, error) {
	<-p.done
	p.cancel()
	return p.stats, p.err
}

func (p *Pipeline) finished() error {
	if p.err != nil {
		return fmt.Errorf("metapipe: pipeline ended: %w", p.err)
	}
	return errors.New("metapipe: pipeline ended")
}

func (p *Pipeline) port(name string, role graph.Role) (*port, error) {
	q, ok := p.ports[name]
	if !ok {
		return nil, fmt.Errorf("metapipe: no port %q: expected one of %v", name, p.names)
	}
	if q.role != role {
		return nil, fmt.Errorf("metapipe: port %s is an %s port: expected an %s port here", q.name, q.role, role)
	}
	return q, nil
}
