package sim

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/wire"
	"github.com/sluicehq/sluice/machine"
)

// cluster is a client cpu and two workers on credit links of start
// latency lat µs and unlimited bandwidth.
func clusterMachine(lat int64, credits bool) *machine.Machine {
	p := func(n string) *machine.Processor {
		return &machine.Processor{Name: n, Kind: "cpu", ClockHz: 1e9, Units: 1, HasIO: true}
	}
	link := func(w string) *machine.Interconnect {
		return &machine.Interconnect{Name: "net-" + w, ClockHz: 1e6, Elements: []string{"cpu", w}, StartLatency: lat,
			Channels: 2, Multiplexable: true, Credits: credits, Routing: map[string]machine.Routing{"cpu": machine.StoreAndForward}}
	}
	return &machine.Machine{Name: "cluster", Processors: []*machine.Processor{p("cpu"), p("w1"), p("w2")},
		Interconnects: []*machine.Interconnect{link("w1"), link("w2")}}
}

// chain3 is a → b → c, rate 1, capacity 2, costs 1 µs each.
func chain3() *graph.Graph {
	g := graph.New("chain3")
	f32 := graph.MustTokenType("f32")
	var prev *graph.Port
	for _, n := range []string{"a", "b", "c"} {
		a := g.AddActor(n)
		a.Cost = 1000
		if prev != nil {
			g.Join(prev, a.AddPort("x", graph.In, f32, graph.SDF(1), ""), graph.Capacity(2))
		}
		if n != "c" {
			prev = a.AddPort("y", graph.Out, f32, graph.SDF(1), "")
		}
	}
	return g
}

func TestWorkerPlacementResolves(t *testing.T) {
	m := clusterMachine(10, true)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	for dev, want := range map[string]string{"worker:w1/cpu": "w1", "worker:w2": "w2", "cpu": "cpu"} {
		if p := m.Resolve(dev); p == nil || p.Name != want {
			t.Errorf("Resolve(%q) = %v, want %s", dev, p, want)
		}
	}
	if p := m.Resolve("worker:w3/cpu"); p != nil {
		t.Errorf("Resolve(worker:w3/cpu) = %s, want nil (no such worker)", p.Name)
	}
}

// TestCreditRelay checks the remote channel model: a stream between two
// workers goes through the client (two hops) and pays each link's start
// latency; credit windows give it 2 × hops × capacity of room.
func TestCreditRelay(t *testing.T) {
	g := chain3()
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"a": {Device: "worker:w1/cpu"}, "b": {Device: "worker:w2/cpu"}, "c": {Device: "cpu"}}}
	p, err := Build(g, mp, clusterMachine(10, true), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ab, bc := p.Streams[0], p.Streams[1]
	if len(ab.Route) != 2 || len(bc.Route) != 1 {
		t.Fatalf("routes of %d and %d hops: expected w1 → cpu → w2 and w2 → cpu", len(ab.Route), len(bc.Route))
	}
	if ab.ConsumerQueue != RemoteRoom(2, 2) || ab.ConsumerQueue != 8 || bc.ConsumerQueue != 4 {
		t.Errorf("consumer room %d and %d: expected 8 (2 hops) and 4 (1 hop)", ab.ConsumerQueue, bc.ConsumerQueue)
	}
	res, err := Run(p, Config{Iterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	// a (1 µs), 2 hops of 10 µs, b (1 µs), 1 hop, c (1 µs).
	if want := 33e-6; res.Latency < want-1e-9 || res.Latency > want+1e-9 {
		t.Errorf("latency %g s: expected %g s (three firings and three hops of 10 µs)", res.Latency, want)
	}
	// Without credits (the ASM's DMA), the relay pays no second start
	// latency and the room stays one capacity.
	p2, err := Build(g, mp, clusterMachine(10, false), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p2.Streams[0].ConsumerQueue != 2 {
		t.Errorf("room without credits %d: expected the capacity, 2", p2.Streams[0].ConsumerQueue)
	}
	res2, err := Run(p2, Config{Iterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := 23e-6; res2.Latency < want-1e-9 || res2.Latency > want+1e-9 {
		t.Errorf("latency without credits %g s: expected %g s", res2.Latency, want)
	}
}

// TestCreditWindowThroughput: with a long link latency, the window of
// capacity tokens per hop bounds the throughput of a remote stream: a
// capacity of 2 over one hop of 100 µs lets 2 × 2 tokens be in flight per
// round trip of credits.
func TestCreditWindowThroughput(t *testing.T) {
	g := chain3()
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"a": {Device: "cpu"}, "b": {Device: "worker:w1/cpu"}, "c": {Device: "worker:w1/cpu"}}}
	slow := func(credits bool) float64 {
		p, err := Build(g, mp, clusterMachine(100, credits), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(p, Config{Iterations: 400})
		if err != nil {
			t.Fatal(err)
		}
		return res.Throughput
	}
	with, without := slow(true), slow(false)
	if !(with > 1.5*without) {
		t.Errorf("throughput with credit windows %.0f it/s, without %.0f: expected the windows to keep more in flight", with, without)
	}
}

// pair is a → b, rate 1 f32, capacity 64, 1 µs a firing each.
func pair() *graph.Graph {
	g := graph.New("pair")
	f32 := graph.MustTokenType("f32")
	a, b := g.AddActor("a"), g.AddActor("b")
	a.Cost, b.Cost = 1000, 1000
	g.Join(a.AddPort("y", graph.Out, f32, graph.SDF(1), ""), b.AddPort("x", graph.In, f32, graph.SDF(1), ""), graph.Capacity(64))
	return g
}

// TestCreditBatching checks the cross-machine channel's batching: a lone
// firing waits for the flush timeout before it crosses (and goes at once
// without one), and a stream of firings crosses in batches of half the
// channel's capacity, one message each, plus the last partial batch.
func TestCreditBatching(t *testing.T) {
	t.Parallel()
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"a": {Device: "cpu"}, "b": {Device: "worker:w1/cpu"}}}
	p, err := Build(pair(), mp, clusterMachine(10, true), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flush time.Duration
		want  float64 // one iteration's latency, s
	}{
		{100 * time.Microsecond, 112e-6}, // a, the flush timeout, the hop, b
		{-1, 12e-6},                      // a, the hop, b
		{0, 12e-6 + wire.DefaultFlush.Seconds()},
	} {
		res, err := Run(p, Config{Iterations: 1, Flush: tc.flush})
		if err != nil {
			t.Fatal(err)
		}
		if res.Latency < tc.want-1e-9 || res.Latency > tc.want+1e-9 {
			t.Errorf("flush %v: latency %g s, expected %g s", tc.flush, res.Latency, tc.want)
		}
	}
	msgs := func(flush time.Duration) (n int, makespan float64) {
		res, err := Run(p, Config{Iterations: 400, Flush: flush, Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Spans {
			if s.Bus {
				n++
			}
		}
		return n, res.Makespan
	}
	batched, mb := msgs(time.Millisecond)
	single, ms := msgs(-1)
	// 400 firings in batches of 32: 12 full ones and a last one of 16.
	if batched != 13 || single != 400 {
		t.Errorf("messages on the link: %d batched, %d without batching; expected 13 and 400", batched, single)
	}
	// The last partial batch waits for the flush timeout.
	if mb < ms || mb > ms+time.Millisecond.Seconds()+50e-6 {
		t.Errorf("makespan %g s batched, %g s without: expected at most the flush timeout (1 ms) more", mb, ms)
	}
}
