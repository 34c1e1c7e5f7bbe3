package runtime

import (
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

type fakeLaner struct{ device.LaneBatcher }

func (fakeLaner) Lanes() int { return 8 }

// Kernel actors joined by device rings share a lane; independent groups
// get lanes of their own, round-robin; one group uses no lanes.
func TestLaneUnits(t *testing.T) {
	t.Parallel()
	mk := func(name string) *unit { return &unit{name: name, mode: &devUnit{}} }
	ring := func(from, to *unit) {
		to.kernel().ins = append(to.kernel().ins, devPort{ring: &devRing{prod: from}})
	}
	a, b, c, d, e, f, g, h := mk("a"), mk("b"), mk("c"), mk("d"), mk("e"), mk("f"), mk("g"), mk("h")
	ring(a, b)
	ring(d, e)
	ring(e, f)
	// h reads a ring whose producer is on another device: no join
	h.kernel().ins = append(h.kernel().ins, devPort{ring: &devRing{prod: mk("elsewhere")}})
	dr := &devRunner{units: []*unit{a, b, c, d, e, f, g, h}, lb: fakeLaner{}}
	dr.laneUnits()
	if !dr.lanes {
		t.Fatal("five groups: lanes off")
	}
	lane := func(u *unit) int { return u.kernel().lane }
	if lane(a) != lane(b) || lane(d) != lane(e) || lane(e) != lane(f) {
		t.Fatalf("joined actors on different lanes: a %d b %d, d %d e %d f %d", lane(a), lane(b), lane(d), lane(e), lane(f))
	}
	// groups in order of their first actor: {a,b} 0, {c} 1, {d,e,f} 2, {g} 3, {h} 0
	for u, want := range map[*unit]int{a: 0, c: 1, d: 2, g: 3, h: 0} {
		if lane(u) != want {
			t.Errorf("%s on lane %d, want %d", u.name, lane(u), want)
		}
	}
	one := &devRunner{units: []*unit{mk("x"), mk("y")}, lb: fakeLaner{}}
	ring(one.units[0], one.units[1])
	one.laneUnits()
	if one.lanes {
		t.Fatal("one group: lanes on")
	}
	none := &devRunner{units: []*unit{mk("p"), mk("q")}}
	none.laneUnits()
	if none.lanes {
		t.Fatal("a queue without lanes: lanes on")
	}
}

type plainQueue struct{ device.Queue }

type graphQueue struct{ device.Queue }

func (graphQueue) Graphs() int { return 0 }

// Under graph replay an actor takes up to half the depth per round; without
// it an actor fed by a host FIFO takes one, the others still half the depth.
func TestPerRound(t *testing.T) {
	t.Parallel()
	hostFed := &unit{mode: &devUnit{ins: []devPort{{rate: 4}}}}
	ringFed := &unit{mode: &devUnit{ins: []devPort{{rate: 4, ring: &devRing{}}}}}
	source := &unit{mode: &devUnit{}}
	for _, c := range []struct {
		q      device.Queue
		replay bool
		u      *unit
		want   int
	}{
		{graphQueue{}, true, hostFed, 8},
		{graphQueue{}, false, hostFed, 1},
		{plainQueue{}, true, hostFed, 1},
		{plainQueue{}, true, ringFed, 8},
		{plainQueue{}, true, source, 8},
	} {
		d := &devRunner{q: c.q, replay: c.replay, depth: 16}
		if got := d.perRound(c.u); got != c.want {
			t.Errorf("%T replay %v, inputs %+v: %d per round, want %d", c.q, c.replay, c.u.kernel().ins, got, c.want)
		}
	}
	if got := (&devRunner{q: graphQueue{}, replay: true, depth: 1}).perRound(source); got != 1 {
		t.Errorf("depth 1: %d per round, want 1", got)
	}
}

// recLaner records the After calls of a spread round.
type recLaner struct {
	fakeLaner
	after []int
}

func (r *recLaner) After(i int) { r.after = append(r.after, i) }

// A spread round orders a launch after the launches of other lanes whose
// ring windows it reads (RAW) or overwrites (WAR), and a stateful unit
// after its own previous invocation; a new round starts with none.
func TestSpreadDeps(t *testing.T) {
	t.Parallel()
	rec := &recLaner{}
	d := &devRunner{lb: rec, spread: true, nLanes: 2, roundNo: 1}
	g := &devRing{cap: 10}
	u := &unit{a: &graph.Actor{Name: "k"}, mode: &devUnit{iters: 1}}
	op := &enqOp{u: u, du: u.kernel()}
	step := func(lane, launch int, rin, rout []ringWin) []int {
		rec.after = nil
		op.rin, op.rout = rin, rout
		d.spreadDeps(op, lane)
		d.logSpread(op, launch, lane)
		return rec.after
	}
	eq := func(what string, got []int, want ...int) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: After %v, want %v", what, got, want)
		}
	}
	eq("first write", step(0, 0, nil, []ringWin{{g, 0, 4}}))
	eq("read of lane 0's write from lane 1", step(1, 1, []ringWin{{g, 2, 6}}, nil), 0)
	eq("read on the writer's lane", step(0, 2, []ringWin{{g, 0, 2}}, nil))
	eq("disjoint read", step(1, 3, []ringWin{{g, 6, 8}}, nil))
	// positions 10–12 reuse slots 0–2, read by launch 2 (lane 0) and 1 (lane 1)
	eq("overwrite from lane 1", step(1, 4, nil, []ringWin{{g, 10, 13}}), 2)
	eq("overwrite from lane 0", step(0, 5, nil, []ringWin{{g, 12, 14}}), 1)
	u.a.Stateful = true
	u.kernel().lastRound, u.kernel().inRound = 1, 1
	eq("stateful unit on another lane", step(1, 6, nil, nil), 5)
	eq("stateful unit on its lane", step(1, 7, nil, nil))
	d.roundNo, u.kernel().inRound = 2, 0
	u.kernel().lastRound = 2
	eq("new round", step(1, 0, []ringWin{{g, 2, 6}}, []ringWin{{g, 10, 13}}))
}

// The default depth by staging slot: 16 for small slots, 8 up to 1 MiB,
// 4 beyond without lanes; with lanes, four rounds of at least 16 MiB,
// 8 to 32 invocations.
func TestAutoDepth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		slot  int64
		lanes bool
		want  int
	}{
		{1 << 10, false, 16}, {64 << 10, true, 16}, {1 << 20, false, 8}, {1 << 20, true, 8},
		{76800 * 64, false, 4}, {76800 * 64, true, 16}, {76800 * 128, true, 8}, {2 << 20, true, 32},
		{1<<20 + 1, true, 32}, {8 << 20, true, 8}, {64 << 20, true, 8}, {5 << 20, true, 16}, {24 << 20, true, 8},
	} {
		if got := autoDepth(c.slot, c.lanes); got != c.want {
			t.Errorf("autoDepth(%d, lanes %v) = %d, want %d", c.slot, c.lanes, got, c.want)
		}
	}
}

// Host FIFOs next to kernel actors: twice the larger end's tokens in
// flight, or, for invocations over 1 MiB, half the kernel end's (into a
// kernel actor) or the kernel end's and a quarter more (out of one), plus
// twice the Go end's; device rings twice the larger end's.
func TestKernelFIFO(t *testing.T) {
	t.Parallel()
	g := graph.New("fifo")
	u8 := graph.MustTokenType("u8")
	y := g.AddActor("src").AddPort("y", graph.Out, u8, graph.SDF(76800), "")
	x := g.AddActor("k").AddPort("x", graph.In, u8, graph.SDF(76800), "")
	c := g.Join(y, x)
	goEnd := &unit{replicas: 14}
	kEnd := &unit{mode: &devUnit{G: 64, drv: &devRunner{depth: 16}}}
	if got, want := kernelFIFO(c, goEnd, kEnd, 76800, 76800), 76800*(64*8+2*14); got != want {
		t.Errorf("4.9 MB invocations into a kernel actor: %d tokens, want %d", got, want)
	}
	if got, want := kernelFIFO(c, kEnd, goEnd, 76800, 76800), 76800*(64*16+64*4+2*14); got != want {
		t.Errorf("4.9 MB invocations out of a kernel actor: %d tokens, want %d", got, want)
	}
	kEnd.kernel().G = 8 // 614 kB invocations: twice the larger end
	if got, want := kernelFIFO(c, goEnd, kEnd, 76800, 76800), 2*76800*8*16; got != want {
		t.Errorf("614 kB invocations: %d tokens, want %d", got, want)
	}
	goEnd.replicas = 200 // the Go end holds more than the kernel end
	if got, want := kernelFIFO(c, goEnd, kEnd, 76800, 76800), 2*76800*200; got != want {
		t.Errorf("200 replicas: %d tokens, want %d", got, want)
	}
	kEnd.kernel().G = 64 // a device ring of 4.9 MB invocations: twice the larger end
	k2 := &unit{mode: &devUnit{G: 64, drv: &devRunner{depth: 24}}}
	if got, want := kernelFIFO(c, kEnd, k2, 76800, 76800), 2*76800*64*24; got != want {
		t.Errorf("device ring: %d tokens, want %d", got, want)
	}
}
