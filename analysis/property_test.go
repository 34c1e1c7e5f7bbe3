package analysis

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// randGraph builds a random consistent graph of the given shape:
// "chain", "tree", "dag" (reconvergent paths), "cycle" (back edges with
// enough initial tokens). With csdf, some actors are cyclo-static.
func randGraph(r *rand.Rand, shape string, n int, csdf bool) *graph.Graph {
	g := graph.New(shape)
	cyc := make([]int, n)    // intended cycles per iteration
	phases := make([]int, n) // phase count
	actors := make([]*graph.Actor, n)
	for i := range n {
		actors[i] = g.AddActor(fmt.Sprintf("a%d", i))
		cyc[i] = []int{1, 2, 3, 4, 6}[r.IntN(5)]
		phases[i] = 1
		if csdf && r.IntN(3) == 0 {
			phases[i] = 2 + r.IntN(2)
		}
	}
	rate := func(a, total int) graph.Rate {
		if phases[a] == 1 {
			return graph.SDF(total)
		}
		ps := make([]int, phases[a])
		for k := 0; k < total; k++ {
			ps[r.IntN(len(ps))]++
		}
		return graph.CSDF(ps...)
	}
	k := 0
	join := func(a, b int, back bool) {
		k++
		gg := gcdInt(cyc[a], cyc[b])
		m := 1 + r.IntN(3)
		x, y := m*cyc[b]/gg, m*cyc[a]/gg // per-cycle production and consumption
		op := actors[a].AddPort(fmt.Sprintf("o%d", k), graph.Out, f32, rate(a, x), "")
		ip := actors[b].AddPort(fmt.Sprintf("i%d", k), graph.In, f32, rate(b, y), "")
		opts := []graph.ChannelOption{graph.Named(fmt.Sprintf("c%d_%s_%s", k, actors[a].Name, actors[b].Name))}
		if back {
			opts = append(opts, graph.Initial(y*cyc[b]+r.IntN(3)))
		} else if r.IntN(4) == 0 {
			opts = append(opts, graph.Initial(r.IntN(4)))
		}
		g.Join(op, ip, opts...)
	}
	for i := 1; i < n; i++ {
		switch shape {
		case "chain":
			join(i-1, i, false)
		case "tree":
			join(r.IntN(i), i, false)
		case "wdag": // reconvergent paths within a window of 8 actors
			w := min(i, 8)
			join(i-1-r.IntN(w), i, false)
			if i >= 2 && r.IntN(2) == 0 {
				join(i-1-r.IntN(w), i, false)
			}
		default:
			join(r.IntN(i), i, false)
			if i >= 2 && r.IntN(2) == 0 {
				join(r.IntN(i), i, false)
			}
		}
	}
	if shape == "cycle" {
		for range 1 + r.IntN(3) {
			a := 1 + r.IntN(n-1)
			join(a, r.IntN(a+1), true)
		}
	}
	return g
}

func gcdInt(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func TestPropertyRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := []string{"chain", "tree", "dag", "cycle"}
	count := 0
	for iter := range 400 {
		shape := shapes[iter%4]
		csdf := iter%8 >= 4
		n := 2 + r.IntN(10)
		g := randGraph(r, shape, n, csdf)
		if err := g.Validate(); err != nil {
			t.Fatalf("graph %d invalid: %v", iter, err)
		}
		name := fmt.Sprintf("%d-%s-csdf=%v", iter, shape, csdf)
		rv, err := RepetitionVector(g)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, _ := build(g)
		q, err := m.targets(rv) // checks every balance equation
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Smallest: the cycle counts have gcd 1 (one component here).
		gg := int64(0)
		for a := range m.actors {
			gg = gcd64(gg, q[a]/int64(m.phases[a]))
			if q[a] <= 0 {
				t.Fatalf("%s: %s fires %d times", name, m.actors[a].Name, q[a])
			}
		}
		if gg != 1 {
			t.Fatalf("%s: repetition vector %v not smallest (gcd of cycles %d)", name, rv.Firings, gg)
		}
		d, err := Deadlock(g, rv)
		if err != nil || d.Deadlock {
			t.Fatalf("%s: unexpected deadlock %+v %v", name, d, err)
		}
		buf, err := MinimalBuffers(g, rv)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		caps := make([]int64, len(m.chans))
		for i, c := range m.chans {
			caps[i] = int64(buf[c.name])
		}
		init := m.initOf(nil)
		if !completes(m, q, init, caps) {
			t.Fatalf("%s: minimal buffers %v deadlock", name, buf)
		}
		for i := range caps {
			caps[i]--
			if caps[i] >= 1 && completes(m, q, init, caps) {
				t.Fatalf("%s: channel %s still completes with %d < %d", name, m.chans[i].name, caps[i], caps[i]+1)
			}
			caps[i]++
		}
		count++
	}
	t.Logf("%d random graphs checked", count)
}

func TestPropertyInitialize(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dead := 0
	for iter := range 200 {
		g := randGraph(r, "cycle", 2+r.IntN(10), iter%2 == 1)
		for _, c := range g.Channels {
			c.Initial = 0
		}
		name := fmt.Sprintf("%d", iter)
		rv, err := RepetitionVector(g)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d, err := Deadlock(g, rv)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Deadlock {
			continue
		}
		dead++
		if len(d.Initialize) == 0 || len(d.Cycles) == 0 {
			t.Fatalf("%s: deadlock without remedy: %+v", name, d)
		}
		for ch, n := range d.Initialize {
			g.Channel(ch).Initial += n
		}
		if d2, _ := Deadlock(g, rv); d2.Deadlock {
			t.Fatalf("%s: still deadlocks after initialising %v: %+v", name, d.Initialize, d2)
		}
		for ch := range d.Initialize {
			g.Channel(ch).Initial--
			if d2, _ := Deadlock(g, rv); !d2.Deadlock {
				t.Fatalf("%s: %s needs fewer than %d tokens", name, ch, g.Channel(ch).Initial+1)
			}
			g.Channel(ch).Initial++
		}
	}
	if dead < 50 {
		t.Fatalf("only %d deadlocking graphs generated", dead)
	}
}
