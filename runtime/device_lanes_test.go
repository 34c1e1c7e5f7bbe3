package runtime

import (
	"testing"

	"github.com/sluicehq/sluice/device"
)

type fakeLaner struct{}

func (fakeLaner) Lane(int) {}

// Kernel actors joined by device rings share a lane; independent groups
// get lanes of their own, round-robin; one group uses no lanes.
func TestLaneUnits(t *testing.T) {
	mk := func(name string) *unit { return &unit{name: name, du: &devUnit{}} }
	ring := func(from, to *unit) {
		to.du.ins = append(to.du.ins, devPort{ring: &devRing{prod: from}})
	}
	a, b, c, d, e, f, g, h := mk("a"), mk("b"), mk("c"), mk("d"), mk("e"), mk("f"), mk("g"), mk("h")
	ring(a, b)
	ring(d, e)
	ring(e, f)
	// h reads a ring whose producer is on another device: no join
	h.du.ins = append(h.du.ins, devPort{ring: &devRing{prod: mk("elsewhere")}})
	dr := &devRunner{units: []*unit{a, b, c, d, e, f, g, h}, laner: fakeLaner{}}
	dr.laneUnits()
	if !dr.lanes {
		t.Fatal("five groups: lanes off")
	}
	lane := func(u *unit) int { return u.du.lane }
	if lane(a) != lane(b) || lane(d) != lane(e) || lane(e) != lane(f) {
		t.Fatalf("joined actors on different lanes: a %d b %d, d %d e %d f %d", lane(a), lane(b), lane(d), lane(e), lane(f))
	}
	// groups in order of their first actor: {a,b} 0, {c} 1, {d,e,f} 2, {g} 3, {h} 0
	for u, want := range map[*unit]int{a: 0, c: 1, d: 2, g: 3, h: 0} {
		if lane(u) != want {
			t.Errorf("%s on lane %d, want %d", u.name, lane(u), want)
		}
	}
	one := &devRunner{units: []*unit{mk("x"), mk("y")}, laner: fakeLaner{}}
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
	hostFed := &unit{du: &devUnit{ins: []devPort{{rate: 4}}}}
	ringFed := &unit{du: &devUnit{ins: []devPort{{rate: 4, ring: &devRing{}}}}}
	source := &unit{du: &devUnit{}}
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
			t.Errorf("%T replay %v, inputs %+v: %d per round, want %d", c.q, c.replay, c.u.du.ins, got, c.want)
		}
	}
	if got := (&devRunner{q: graphQueue{}, replay: true, depth: 1}).perRound(source); got != 1 {
		t.Errorf("depth 1: %d per round, want 1", got)
	}
}
