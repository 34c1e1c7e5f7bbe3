package machine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/internal/yamlpos"
)

// Hop is one interconnect crossed by a stream's static route.
type Hop struct {
	// Interconnect is the bus crossed.
	Interconnect *Interconnect
	// From transmits and To receives on it.
	From, To string
	// Forward is how From forwards the message onto this hop: empty on the
	// first hop (From is the producer), StoreAndForward or CutThrough after.
	Forward Routing
}

// Route returns the static route of a stream from processor (or memory)
// from to to: the shortest path in hops through interconnects, where each
// intermediate element must route messages arriving from its incoming
// interconnect (interfaceRouting not none). Ties go to the interconnect and
// element declared first, so routes are deterministic. A stream between
// elements on the same element has the empty route.
func (m *Machine) Route(from, to string) ([]Hop, error) {
	if from == to {
		return nil, nil
	}
	isMem := map[string]bool{}
	known := map[string]bool{}
	for _, p := range m.Processors {
		known[p.Name] = true
	}
	for _, x := range m.Memories {
		known[x.Name], isMem[x.Name] = true, true
	}
	for _, e := range []string{from, to} {
		if !known[e] {
			return nil, fmt.Errorf("machine %s: route %s → %s: unknown element %q%s", m.Name, from, to, e, yamlpos.Suggest(e, m.elementNames()))
		}
	}
	// BFS over (element, incoming interconnect) states.
	type state struct {
		elem string
		in   int // interconnect index it arrived on; -1 at the start
	}
	type prev struct {
		st  state
		hop Hop
	}
	start := state{from, -1}
	seen := map[state]bool{start: true}
	back := map[state]prev{}
	queue := []state{start}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		var fwd Routing
		if cur.in >= 0 {
			fwd = m.Interconnects[cur.in].RoutingOf(cur.elem, isMem[cur.elem])
			if fwd == NoRouting {
				continue
			}
		}
		for i, ic := range m.Interconnects {
			if i == cur.in || !ic.Has(cur.elem) {
				continue
			}
			for _, e := range ic.Elements {
				if e == cur.elem {
					continue
				}
				nx := state{e, i}
				if seen[nx] {
					continue
				}
				seen[nx] = true
				back[nx] = prev{cur, Hop{Interconnect: ic, From: cur.elem, To: e, Forward: fwd}}
				if e == to {
					var hops []Hop
					for s := nx; s != start; s = back[s].st {
						hops = append(hops, back[s].hop)
					}
					for l, r := 0, len(hops)-1; l < r; l, r = l+1, r-1 {
						hops[l], hops[r] = hops[r], hops[l]
					}
					return hops, nil
				}
				queue = append(queue, nx)
			}
		}
	}
	return nil, fmt.Errorf("machine %s: no route from %s to %s: expected a path of interconnects whose intermediate elements route (interfaceRouting store-and-forward or cut-through)", m.Name, from, to)
}

// RouteLatency returns the time an n-byte message sent alone takes from the
// start of pushSend until it is available at the end of the route: L of the
// first hop, then each hop's S + ⌈n/B⌉, store-and-forward hops in sequence
// and cut-through hops overlapped (Figure 13).
func RouteLatency(hops []Hop, n int64) float64 {
	if len(hops) == 0 {
		return 0
	}
	first := hops[0].Interconnect
	t := first.Seconds(first.StartLatency)
	var u, v float64 // start of start phase and of finish phase on the previous hop
	for j, h := range hops {
		ic := h.Interconnect
		if j > 0 && h.Forward == CutThrough {
			t = u
		} else if j > 0 {
			t = v
		}
		u = t
		end := u + ic.Seconds(ic.StartCost+ic.TransferCycles(n))
		if j > 0 && h.Forward == CutThrough {
			end = max(end, v+ic.Seconds(1))
		}
		v = end
	}
	return v
}

// Use is the route of one stream, for CheckRoutes.
type Use struct {
	// Stream names the stream.
	Stream string
	// Hops is its route.
	Hops []Hop
}

// CheckRoutes reports each non-multiplexable interconnect (a hardware FIFO)
// that the routes ask to carry more than one stream, naming the streams.
func (m *Machine) CheckRoutes(uses []Use) error {
	carried := map[*Interconnect][]string{}
	for _, u := range uses {
		for _, h := range u.Hops {
			s := carried[h.Interconnect]
			if len(s) == 0 || s[len(s)-1] != u.Stream {
				carried[h.Interconnect] = append(s, u.Stream)
			}
		}
	}
	var ps []Problem
	for _, ic := range m.Interconnects {
		if s := carried[ic]; !ic.Multiplexable && len(s) > 1 {
			s = append([]string(nil), s...)
			sort.Strings(s)
			ps = append(ps, Problem{Where: orName(ic.Origin, ic.Name), Msg: fmt.Sprintf(
				"interconnect %s is not multiplexable (a hardware FIFO carries one stream) but the mapping routes %d streams over it: %s",
				ic.Name, len(s), strings.Join(s, ", "))})
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Machine: m.Name, Problems: ps}
}

func orName(origin, name string) string {
	if origin != "" {
		return origin
	}
	return name
}
