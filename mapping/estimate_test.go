package mapping

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/spec"
)

// TestStaticEstimate: each dynamic port takes the rate of the port it is
// joined to, the process becomes stateful, the sentence lists the rates,
// and the graph given is left as it was.
func TestStaticEstimate(t *testing.T) {
	t.Parallel()
	g, err := spec.Load("../examples/conditional/switch-select.yaml")
	if err != nil {
		t.Fatal(err)
	}
	est, notes, err := StaticEstimate(g)
	if err != nil {
		t.Fatal(err)
	}
	sw := est.Actor("sw")
	for port, want := range map[string]int{"ctl": 1, "x": 4, "o0": 4, "o1": 4} {
		if r := sw.Port(port).Rate; r.IsDynamic() || r.Sum() != want {
			t.Errorf("sw.%s: estimated rate %v, want %d", port, r, want)
		}
	}
	if !sw.Stateful || est.Actor("se").Dynamic() {
		t.Errorf("estimate: sw stateful %v, se dynamic %v: want a stateful sw and a static se", sw.Stateful, est.Actor("se").Dynamic())
	}
	if want := "actor sw has dynamic (KPN) ports: simulated as moving, on every firing, the rates of the ports they are joined to (ctl 1, x 4, o0 4, o1 4 tokens), as one process (no replicas)"; len(notes) != 2 || notes[0] != want {
		t.Errorf("notes %q: want 2, the first %q", notes, want)
	}
	if !g.Actor("sw").Dynamic() || !g.Actor("se").Port("y").Rate.IsDynamic() {
		t.Errorf("the graph given was changed")
	}
	static := chain(t, 1, 2)
	if same, notes, err := StaticEstimate(static); same != static || notes != nil || err != nil {
		t.Errorf("a static graph: %p %q %v: want the graph itself, no note and no error", same, notes, err)
	}
}

// TestStaticEstimateInconsistent: a dynamic output joined to two inputs of
// different rates balances no way; the error names the actor and asks for
// rates.
func TestStaticEstimateInconsistent(t *testing.T) {
	t.Parallel()
	g := graph.New("fork")
	f32 := graph.MustTokenType("f32")
	d := g.AddActor("d", graph.WithCost(time.Second))
	o := d.AddPort("o", graph.Out, f32, graph.Dynamic(), "")
	a := g.AddActor("a", graph.WithCost(time.Second))
	b := g.AddActor("b", graph.WithCost(time.Second))
	s := g.AddActor("s", graph.WithCost(time.Second))
	g.Join(o, a.AddPort("i", graph.In, f32, graph.SDF(1), ""))
	g.Join(o, b.AddPort("i", graph.In, f32, graph.SDF(2), ""))
	g.Join(a.AddPort("o", graph.Out, f32, graph.SDF(1), ""), s.AddPort("i1", graph.In, f32, graph.SDF(1), ""))
	g.Join(b.AddPort("o", graph.Out, f32, graph.SDF(1), ""), s.AddPort("i2", graph.In, f32, graph.SDF(1), ""))
	est, _, err := StaticEstimate(chainThrough(t, false))
	if err != nil {
		t.Fatalf("a process between two actors: %v", err)
	}
	if p := est.Actor("p"); !p.Stateful || p.Port("i").Rate.Sum() != 3 || p.Port("o").Rate.Sum() != 2 {
		t.Errorf("a process built in code: stateful %v, rates %v %v: want stateful, 3 and 2", p.Stateful, p.Port("i").Rate, p.Port("o").Rate)
	}
	_, _, err = StaticEstimate(g)
	if err == nil || !strings.Contains(err.Error(), "the dynamic (KPN) ports of d cannot be estimated") || !strings.Contains(err.Error(), "give them rates") {
		t.Errorf("inconsistent estimate: %v", err)
	}
}

// TestMapDynamicPorts: sluice map's strategies map a graph of processes
// (switch and select) under the estimate and say so; every actor is
// placed on the host's pool.
func TestMapDynamicPorts(t *testing.T) {
	t.Parallel()
	g, err := spec.Load("../examples/conditional/switch-select.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := machine.Load("../examples/machines/host2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Map(context.Background(), Input{Graph: g, Machine: m}, MapOptions{Strategy: "all", Seed: 1, Evaluations: 10, Iterations: 16})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Assumptions) != 2 || !strings.HasPrefix(res.Assumptions[1], "actor se has dynamic (KPN) ports") {
		t.Errorf("assumptions %q: want one sentence for sw and one for se", res.Assumptions)
	}
	if !(res.Best.Period > 0) {
		t.Errorf("predicted period %g: want > 0", res.Best.Period)
	}
	for _, a := range g.Actors {
		if pl := res.Runnable.Actors[a.Name]; pl == nil || pl.Device != "cpu" || pl.Replicas > 1 && a.Dynamic() {
			t.Errorf("actor %s: placement %+v: want the cpu pool (a process without replicas)", a.Name, pl)
		}
	}
}

// TestDeviceOnlyActorNamesItsNeed: a kernel actor without a Go
// implementation on a model without a gpu processor is refused with what
// it needs and what the model has; on a model with one it maps there.
func TestDeviceOnlyActorNamesItsNeed(t *testing.T) {
	t.Parallel()
	g, err := spec.Load("../examples/flowmodel-chain/chain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	host, err := machine.Load("../examples/machines/host2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = HEFTFound(Input{Graph: g, Machine: host}, 4)
	want := "mapping: actor scale is a kernel actor with cuda and opencl kernels only and no Go implementation: it needs a gpu processor, and machine host2 has none (processors: cpu (cpu))"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("chain on host2: %v: want an error starting %q", err, want)
	}
	gpu, err := machine.Load("../examples/machines/cpu-gpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := HEFTFound(Input{Graph: g, Machine: gpu}, 4)
	if err != nil {
		t.Fatalf("chain on cpu-gpu: %v", err)
	}
	if p := gpu.Resolve(f.Mapping.Actors["scale"].Device); p == nil || p.Kind != "gpu" {
		t.Errorf("scale placed on %q: want a gpu processor", f.Mapping.Actors["scale"].Device)
	}
}

// chainThrough is a (rate 3) → p (dynamic, stateful or not) → b (rate 2).
func chainThrough(t *testing.T, stateful bool) *graph.Graph {
	t.Helper()
	g := graph.New("through")
	f32 := graph.MustTokenType("f32")
	a := g.AddActor("a", graph.WithCost(time.Second))
	p := g.AddActor("p", graph.WithCost(time.Second))
	p.Stateful = stateful
	b := g.AddActor("b", graph.WithCost(time.Second))
	g.Join(a.AddPort("o", graph.Out, f32, graph.SDF(3), ""), p.AddPort("i", graph.In, f32, graph.Dynamic(), ""))
	g.Join(p.AddPort("o", graph.Out, f32, graph.Dynamic(), ""), b.AddPort("i", graph.In, f32, graph.SDF(2), ""))
	return g
}
