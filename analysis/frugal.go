package analysis

import "container/heap"

// frugal executes one iteration with capacities caps, one firing at a time,
// always firing the ready actor furthest downstream (latest in the
// topological-ish order), so that channels are drained before they are
// filled. It returns, per channel, the largest occupancy a firing needed
// (tokens before it plus the tokens it produced), and whether the
// iteration completed. Since every firing of the run fits the returned
// capacities, they are themselves deadlock-free when it completed.
func (m *model) frugal(q, init, caps []int64) ([]int64, bool) {
	n := len(m.actors)
	rank := make([]int, n)
	for i, name := range m.order() {
		rank[m.idx[name]] = i
	}
	need := make([]int64, len(m.chans))
	for i := range need {
		need[i] = max(init[i], 1)
	}
	s := &sim{m: m, q: q, tok: append([]int64(nil), init...), cap: caps, fired: make([]int64, n)}
	h := &rankHeap{rank: rank}
	in := make([]bool, n)
	try := func(a int) {
		if !in[a] && s.fired[a] < q[a] && s.canFire(a, s.fired[a]) {
			in[a] = true
			heap.Push(h, a)
		}
	}
	for a := range n {
		try(a)
	}
	for h.Len() > 0 {
		a := heap.Pop(h).(int)
		in[a] = false
		if s.fired[a] >= q[a] || !s.canFire(a, s.fired[a]) {
			continue
		}
		k := int(s.fired[a])
		for _, ci := range m.outs[a] {
			need[ci] = max(need[ci], s.tok[ci]+int64(m.chans[ci].prod.At(k)))
		}
		s.fireOne(a, s.fired[a])
		try(a)
		for _, ci := range m.outs[a] {
			try(m.chans[ci].dst)
		}
		for _, ci := range m.ins[a] {
			try(m.chans[ci].src)
		}
	}
	return need, s.done()
}

type rankHeap struct {
	rank []int
	xs   []int
}

func (h *rankHeap) Len() int           { return len(h.xs) }
func (h *rankHeap) Less(i, j int) bool { return h.rank[h.xs[i]] > h.rank[h.xs[j]] }
func (h *rankHeap) Swap(i, j int)      { h.xs[i], h.xs[j] = h.xs[j], h.xs[i] }
func (h *rankHeap) Push(x any)         { h.xs = append(h.xs, x.(int)) }
func (h *rankHeap) Pop() any {
	x := h.xs[len(h.xs)-1]
	h.xs = h.xs[:len(h.xs)-1]
	return x
}
