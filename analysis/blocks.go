package analysis

// blocks returns, per channel, the biconnected component (block) of the
// undirected multigraph of actors and channels it belongs to, and, per
// block, its actors. One iteration completes iff it completes in every
// block alone (blocks share single actors only, so their schedules merge
// at those actors' firings); deadlock probes therefore simulate one block.
func (m *model) blocks() (chBlock []int, members [][]int) {
	n := len(m.actors)
	chBlock = make([]int, len(m.chans))
	for i := range chBlock {
		chBlock[i] = -1
	}
	type nb struct{ to, ch int }
	adj := make([][]nb, n)
	for i, c := range m.chans {
		if c.self {
			chBlock[i] = len(members)
			members = append(members, []int{c.src})
			continue
		}
		adj[c.src] = append(adj[c.src], nb{c.dst, i})
		adj[c.dst] = append(adj[c.dst], nb{c.src, i})
	}
	disc := make([]int, n)
	low := make([]int, n)
	for i := range disc {
		disc[i] = -1
	}
	type frame struct{ v, pch, i int }
	var stack []int // channel stack
	var call []frame
	t := 0
	pop := func(until int) {
		seen := map[int]bool{}
		var as []int
		b := len(members)
		for {
			ci := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			chBlock[ci] = b
			for _, a := range []int{m.chans[ci].src, m.chans[ci].dst} {
				if !seen[a] {
					seen[a] = true
					as = append(as, a)
				}
			}
			if ci == until {
				break
			}
		}
		members = append(members, as)
	}
	for r := 0; r < n; r++ {
		if disc[r] >= 0 {
			continue
		}
		disc[r], low[r] = t, t
		t++
		call = append(call[:0], frame{r, -1, 0})
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.i < len(adj[v]) {
				e := adj[v][f.i]
				f.i++
				if e.ch == f.pch {
					continue
				}
				if disc[e.to] < 0 {
					stack = append(stack, e.ch)
					disc[e.to], low[e.to] = t, t
					t++
					call = append(call, frame{e.to, e.ch, 0})
				} else if disc[e.to] < disc[v] {
					stack = append(stack, e.ch)
					low[v] = min(low[v], disc[e.to])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
				if low[v] >= disc[p] {
					pop(f.pch)
				}
			}
		}
	}
	return chBlock, members
}
