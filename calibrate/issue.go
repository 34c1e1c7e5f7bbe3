package calibrate

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// issueRate is the tokens (f32) per firing of the issue probes' actors.
const issueRate = 64

// copyKernel is y = x as a kernel actor (the actor API both backends
// share): rate issueRate, blocks of 8.
const copyKernel = `// calibrate copy kernel
void FIRE() {
	TOKEN_X_t *x = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++)
			y[j] = x[blk * BLOCK_Y_SIZE + j];
	}
}
`

// issueChain is src → k1 → … → kN → snk: Go actors src and snk that do
// nothing on the CPU, N copy kernels on device id (one work-group of 8
// work-items per invocation, one firing each), so that an iteration is N
// invocations and two copies (src's tokens in, kN's out).
func issueChain(kernels int, id string, backend graph.ImplKind) (*graph.Graph, *graph.Mapping) {
	f32 := graph.MustTokenType("f32")
	nop := runtime.FireFunc(func(*runtime.Firing) error { return nil })
	g := graph.New(fmt.Sprintf("issue-probe-%d", kernels))
	m := &graph.Mapping{Name: "issue-probe", Actors: map[string]*graph.Placement{}}
	src := g.AddActor("src", graph.WithFunc(nop))
	src.AddPort("y", graph.Out, f32, graph.SDF(issueRate), "")
	prev := "src.y"
	for i := 1; i <= kernels; i++ {
		name := fmt.Sprintf("k%d", i)
		k := g.AddActor(name, graph.WithImpl(graph.Impl{Kind: backend, Source: name + ".kernel", Func: copyKernel}))
		k.AddPort("x", graph.In, f32, graph.SDF(issueRate), "")
		k.AddPort("y", graph.Out, f32, graph.SDF(issueRate), "").Block = 8
		g.JoinNames(prev, name+".x")
		prev = name + ".y"
		m.Actors[name] = &graph.Placement{Device: id, Impl: backend, WorkGroups: 1, WorkItems: 8}
	}
	snk := g.AddActor("snk", graph.Stateful(), graph.WithFunc(nop))
	snk.AddPort("x", graph.In, f32, graph.SDF(issueRate), "")
	g.JoinNames(prev, "snk.x")
	return g, m
}

// issueTime is the runtime's time per iteration of issueChain(kernels):
// the difference between runs of 2n and n iterations over n (setup and
// kernel builds cancel out), the median of three such pairs.
func issueTime(ctx context.Context, kernels int, info device.Info, workers int) (float64, error) {
	backend := graph.ImplKind(info.Backend)
	run := func(n int64) (time.Duration, error) {
		g, m := issueChain(kernels, info.ID, backend)
		st, err := runtime.Run(ctx, g, runtime.Options{Iterations: n, Workers: workers, Mapping: m})
		if err != nil {
			return 0, fmt.Errorf("calibrate: %s: issue probe with %d kernel actors: %w", info.ID, kernels, err)
		}
		return st.Elapsed, nil
	}
	const n = 2000
	var v []float64
	for range 3 {
		t1, err := run(n)
		if err != nil {
			return 0, err
		}
		t2, err := run(2 * n)
		if err != nil {
			return 0, err
		}
		v = append(v, max(0, float64((t2-t1).Nanoseconds())/n))
	}
	return median(v), nil
}

// measureIssue sets g.IssueNs and g.CopyIssueNs: what one kernel
// invocation and one host copy cost the runtime's device manager, which
// issues the device's work from one thread. A chain of one copy kernel
// (an invocation and two copies an iteration) against a chain of four (four
// invocations and two copies), each firing too small for the device's
// own time to matter: (t4 − t1) / 3 an invocation, the rest of t1 over its
// two copies.
func measureIssue(ctx context.Context, g *GPU, info device.Info, workers int) error {
	t1, err := issueTime(ctx, 1, info, workers)
	if err != nil {
		return err
	}
	t4, err := issueTime(ctx, 4, info, workers)
	if err != nil {
		return err
	}
	g.IssueNs = max(0, (t4-t1)/3)
	g.CopyIssueNs = max(0, (t1-g.IssueNs)/2)
	return nil
}
