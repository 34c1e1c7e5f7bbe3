package runtime

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// leakyCL is y = s/2 + x with s the previous y (a leaky integrator per
// token lane): its state is the feedback channel loop → s.
const leakyCL = `void FIRE() {
	TOKEN_X_t *xs = CAPTURE(PORT_x);
	TOKEN_S_t *ss = CAPTURE(PORT_s);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		TOKEN_LOOP_t *l = RESERVE(PORT_loop, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) {
			float v = ss[blk * BLOCK_Y_SIZE + j] * 0.5f + xs[blk * BLOCK_Y_SIZE + j];
			y[j] = v;
			l[j] = v;
		}
	}
}
`

// deviceCheckpointGraph is src → a1 → leaky (feedback loop with initial
// tokens) → a2 → snk, the three middle actors with kernels; with relay
// the loop goes through a Go actor, its initial tokens on the host.
func deviceCheckpointGraph(file *ckFile[float32], relay bool) *graph.Graph {
	g := graph.New("devckpt")
	f32 := graph.MustTokenType("f32")
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(Actor(&ckSource[float32]{})))
	src.AddPort("out", graph.Out, f32, graph.SDF(rate), "")
	addAffine(g, "a1", 3, 1)
	leaky := g.AddActor("leaky",
		graph.WithFunc(FireFunc(func(f *Firing) error {
			x, s := Input[float32](f, 0), Input[float32](f, 1)
			y, l := Output[float32](f, 0), Output[float32](f, 1)
			for i := range x {
				y[i] = s[i]*0.5 + x[i]
				l[i] = y[i]
			}
			return nil
		})),
		graph.WithImpl(graph.Impl{Kind: graph.ImplOpenCL, Source: "leaky.cl", Func: leakyCL}),
		graph.WithImpl(graph.Impl{Kind: graph.ImplCUDA, Source: "leaky.cu", Func: leakyCL}))
	leaky.AddPort("x", graph.In, f32, graph.SDF(rate), "")
	leaky.AddPort("s", graph.In, f32, graph.SDF(rate), "")
	leaky.AddPort("y", graph.Out, f32, graph.SDF(rate), "").Block = 8
	leaky.AddPort("loop", graph.Out, f32, graph.SDF(rate), "").Block = 8
	addAffine(g, "a2", 2, -0.5)
	snk := g.AddActor("snk", graph.Stateful(), graph.WithFunc(Actor(&ckSink[float32]{file: file})))
	snk.AddPort("in", graph.In, f32, graph.SDF(rate), "")
	g.JoinNames("src.out", "a1.x")
	g.JoinNames("a1.y", "leaky.x")
	init := make([]byte, 4*rate)
	for i := 0; i < rate; i++ {
		binary.LittleEndian.PutUint32(init[4*i:], math.Float32bits(float32(i)/rate))
	}
	if relay {
		r := g.AddActor("relay", graph.WithFunc(FireFunc(func(f *Firing) error {
			copy(Output[float32](f, 0), Input[float32](f, 0))
			return nil
		})))
		r.AddPort("x", graph.In, f32, graph.SDF(rate), "")
		r.AddPort("y", graph.Out, f32, graph.SDF(rate), "")
		g.JoinNames("leaky.loop", "relay.x")
		g.JoinNames("relay.y", "leaky.s", graph.Initial(rate), graph.InitialData(init))
	} else {
		g.JoinNames("leaky.loop", "leaky.s", graph.Initial(rate), graph.InitialData(init))
	}
	g.JoinNames("leaky.y", "a2.x")
	g.JoinNames("a2.y", "snk.in")
	return g
}

// TestCheckpointKernelActors: a run whose kernel actors (one with its state
// in a feedback loop on a device ring, or on a host FIFO when it runs on
// the host) is stopped after some checkpoints and resumed from the last:
// the sink's file equals an uninterrupted run's.
func TestCheckpointKernelActors(t *testing.T) {
	// Not parallel: OpenCL drivers (PoCL) crash on concurrent device discovery.
	forBackends(t, func(t *testing.T, devs []string) {
		d := devs[0]
		cases := []struct {
			name  string
			m     map[string]*graph.Placement
			relay bool // the loop through a Go actor
		}{
			{"all-on-device", map[string]*graph.Placement{"a1": kernelAt(d, 4, 8), "leaky": kernelAt(d, 1, 8), "a2": kernelAt(d, 3, 8)}, false},
			{"leaky-on-host", map[string]*graph.Placement{"a1": kernelAt(d, 4, 8), "a2": kernelAt(d, 3, 8)}, false},
			{"only-leaky", map[string]*graph.Placement{"leaky": kernelAt(d, 1, 8)}, false},
			{"loop-on-host", map[string]*graph.Placement{"a1": kernelAt(d, 4, 8), "leaky": kernelAt(d, 1, 8)}, true},
		}
		for _, c := range cases {
			ring := c.m["leaky"] != nil && !c.relay
			t.Run(c.name, func(t *testing.T) { testCheckpointKernels(t, c.m, c.relay, ring) })
		}
	})
}

func testCheckpointKernels(t *testing.T, m map[string]*graph.Placement, relay, ring bool) {
	iters := int64(6_000)
	if relay {
		iters = 3_000 // a host round trip per iteration
	}
	opts := func() Options {
		return Options{Iterations: iters, Workers: 2, Mapping: &graph.Mapping{Actors: m}}
	}
	ref := &ckFile[float32]{}
	st, err := Run(context.Background(), deviceCheckpointGraph(ref, relay), opts())
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoints at a fortieth of the uninterrupted run's time (at least
	// 1 ms): the third comes before the middle of the run on a slow
	// backend (PoCL under the race detector: iteration 1 450–2 050) and
	// on a fast one (CUDA on an H200: 1 480–2 860) alike.
	interval := max(time.Millisecond, st.Elapsed/40)
	file := &ckFile[float32]{}
	st, _, store := stopAfterCheckpoints(t, deviceCheckpointGraph(file, relay), opts(), interval)
	if st.Checkpoints == nil || st.Checkpoints.Completed < 3 {
		t.Fatalf("checkpoint stats %+v: expected 3 or more completed", st.Checkpoints)
	}
	cp, err := store.Latest(context.Background())
	if err != nil || cp == nil {
		t.Fatalf("latest checkpoint: %v, %v", cp, err)
	}
	loop := "leaky.loop->leaky.s"
	if relay {
		loop = "relay.y->leaky.s"
	}
	if len(cp.Channels[loop]) != 4*rate {
		t.Fatalf("checkpoint %d channels: %d bytes of the feedback loop: expected %d", cp.ID, len(cp.Channels[loop]), 4*rate)
	}
	if cp.Iteration >= iters {
		t.Fatalf("checkpoint at iteration %d of %d: nothing left to resume", cp.Iteration, iters)
	}
	o := opts()
	o.Checkpoint = &CheckpointOptions{Interval: time.Hour, Store: store, Resume: cp}
	st, err = Run(context.Background(), deviceCheckpointGraph(file, relay), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := firings(t, st, "leaky"); got != iters-cp.Iteration {
		t.Fatalf("the resumed run fired leaky %d times: expected %d", got, iters-cp.Iteration)
	}
	for _, ch := range st.Channels {
		if ch.Name == loop && (ch.Device != "") != ring {
			t.Fatalf("the feedback loop is on device %q: expected a device ring: %v", ch.Device, ring)
		}
	}
	t.Logf("checkpoints every %v: resumed from checkpoint %d at iteration %d of %d", interval, cp.ID, cp.Iteration, iters)
	sameF32(t, file.got, ref.got)
}
