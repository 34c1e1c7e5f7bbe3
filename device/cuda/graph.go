package cuda

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/cu"
)

// capture is the state of a queue while Capture runs.
type capture struct {
	n     int            // commands captured
	keep  [][]byte       // host memory the captured copies read or write
	nodes []cu.GraphNode // when not nil: the node of each kernel launch of a batch (batch.go)
}

// Graph is a sequence of commands captured once from a queue (a CUDA
// Graph, instantiated) that Launch replays with one driver call: the
// foundation of GPU-resident chains of actors, where per-launch host
// overhead would otherwise dominate small firings.
type Graph struct {
	dev      *Device
	g        cu.Graph
	exec     cu.GraphExec
	n        int
	keep     [][]byte
	released atomic.Bool
}

// Capture records the commands f enqueues on q (launches, copies, fills)
// into a CUDA Graph instead of running them (stream capture in relaxed
// mode), and instantiates it. Inside f the queue's commands return events
// that cannot be waited on (they ran nowhere yet); wait lists may name
// only them. Kernel arguments are taken as they are when each launch is
// captured. Host memory given to a captured Write or Read must be pinned
// (AllocHost) and stay valid while the Graph is used. If f fails, the
// capture is discarded and f's error returned.
func (q *Queue) Capture(f func() error) (*Graph, error) {
	if q.released {
		return nil, fmt.Errorf("capture on %s: queue %w", q.dev.info, device.ErrReleased)
	}
	if q.capturing != nil {
		return nil, fmt.Errorf("capture on %s: already capturing", q.dev.info)
	}
	if err := q.dev.run(func() error { return q.s.BeginCapture(cu.CaptureModeRelaxed) }); err != nil {
		return nil, fmt.Errorf("capture on %s: %w", q.dev.info, err)
	}
	c := &capture{}
	q.capturing = c
	ferr := f()
	q.capturing = nil
	var g cu.Graph
	err := q.dev.run(func() error {
		var err error
		g, err = q.s.EndCapture()
		return err
	})
	if ferr != nil || err != nil {
		if g != 0 {
			_ = q.dev.ctx.GraphDestroy(g)
		}
		if ferr != nil {
			return nil, ferr
		}
		return nil, fmt.Errorf("capture on %s: %w", q.dev.info, err)
	}
	exec, err := q.dev.ctx.Instantiate(g)
	if err != nil {
		_ = q.dev.ctx.GraphDestroy(g)
		return nil, fmt.Errorf("instantiating a graph of %d commands on %s: %w", c.n, q.dev.info, err)
	}
	return &Graph{dev: q.dev, g: g, exec: exec, n: c.n, keep: c.keep}, nil
}

// Commands returns the number of commands captured.
func (g *Graph) Commands() int { return g.n }

// Nodes returns the number of nodes of the CUDA graph (0 when the driver
// cannot say).
func (g *Graph) Nodes() int { return g.g.Nodes() }

// Launch replays the graph on q (of the graph's device) after wait, and
// returns the event of its completion.
func (g *Graph) Launch(q *Queue, wait ...device.Event) (device.Event, error) {
	if g.released.Load() {
		return nil, fmt.Errorf("graph launch on %s: %w", q.dev.info, device.ErrReleased)
	}
	if q.dev.ctx != g.dev.ctx {
		return nil, fmt.Errorf("graph of %s launched on a queue of %s: expected a queue of its device", g.dev.info, q.dev.info)
	}
	return q.enqueue("graph launch", wait, nil, func() error { return g.exec.Launch(q.s) })
}

// Release destroys the graph; launches in flight complete. Later calls do
// nothing.
func (g *Graph) Release() error {
	if !g.released.CompareAndSwap(false, true) {
		return nil
	}
	g.keep = nil
	return errors.Join(g.dev.ctx.GraphExecDestroy(g.exec), g.dev.ctx.GraphDestroy(g.g))
}
