package analysis

import (
	"fmt"

	"github.com/sluicehq/sluice/graph"
)

// StageMatrix is the result of Caravela's parallelism extraction algorithm
// with spanning tree (PEA-ST): a startup part run once, then a repeat
// batch run over and over; each stage is a set of actors that may run
// concurrently.
type StageMatrix struct {
	// Root is the actor the depth-first spanning tree starts from.
	Root string
	// Depth is each actor's number of tree edges from the root.
	Depth map[string]int
	// Stages is the depth of the tree plus one (the number of levels).
	Stages int
	// Shift is the consistency shift: the largest number of tree-path
	// actors spanned by a retreating edge (depth(x)−depth(y)+1 for x→y), or
	// 2 when there is none.
	Shift int
	// Retreating lists the channels found to close loops (feedback).
	Retreating []string
	// Startup holds the first Stages−Shift rows of the execute matrix.
	Startup [][]string
	// Repeat holds its last Shift rows.
	Repeat [][]string
	// Firings gives the firings per iteration of each actor (one entry of
	// a stage runs that many firings of the actor).
	Firings map[string]int64
	// MaxParallelism is the largest stage.
	MaxParallelism int
}

// PEAST builds the startup and repeat stage matrix of seed §4.3.4 (PEA-ST)
// for the given root: a depth-first spanning tree from root (channels in
// declaration order) gives each actor its depth; retreating edges give the
// consistency shift; the execute matrix places every actor at its depth,
// then again shifted by the shift, and so on while inside the matrix; its
// last Shift rows are the repeat batch and the rest the startup. With root
// "", every actor that reaches all others is tried and the one with the
// shortest repeat batch (then the largest stage) is kept. The root must
// reach every static actor along channels.
func PEAST(g *graph.Graph, rv *Repetitions, root string) (*StageMatrix, error) {
	m, err := build(g)
	if err != nil {
		return nil, err
	}
	if _, err := m.targets(rv); err != nil {
		return nil, err
	}
	if root != "" {
		r, ok := m.idx[root]
		if !ok {
			return nil, fmt.Errorf("analysis: PEA-ST root %q: not a static actor of %q", root, m.g.Name)
		}
		sm := m.peast(r, rv)
		if sm == nil {
			return nil, fmt.Errorf("analysis: PEA-ST root %q does not reach every actor along channels: expected a root from which all actors are reachable", root)
		}
		return sm, nil
	}
	var best *StageMatrix
	for r := range m.actors {
		sm := m.peast(r, rv)
		if sm == nil {
			continue
		}
		if best == nil || len(sm.Repeat) < len(best.Repeat) || (len(sm.Repeat) == len(best.Repeat) && sm.MaxParallelism > best.MaxParallelism) {
			best = sm
		}
	}
	if best == nil {
		return nil, fmt.Errorf("analysis: PEA-ST: no actor of %q reaches all others along channels", m.g.Name)
	}
	return best, nil
}

func (m *model) peast(root int, rv *Repetitions) *StageMatrix {
	n := len(m.actors)
	pre := make([]int, n)   // preorder number, 0 = unvisited
	done := make([]bool, n) // post-visited
	depth := make([]int, n)
	type frame struct{ a, i int }
	stack := []frame{{root, 0}}
	pre[root] = 1
	num := 1
	shift := 0
	var retreat []string
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.i < len(m.outs[f.a]) {
			ci := m.outs[f.a][f.i]
			f.i++
			x, y := f.a, m.chans[ci].dst
			switch {
			case pre[y] == 0: // tree edge
				num++
				pre[y] = num
				depth[y] = depth[x] + 1
				stack = append(stack, frame{y, 0})
			case pre[x] < pre[y]: // advancing
			case !done[y]: // retreating: y is an ancestor of x (or x itself)
				shift = max(shift, depth[x]-depth[y]+1)
				retreat = append(retreat, m.chans[ci].name)
			default: // cross
			}
			continue
		}
		done[f.a] = true
		stack = stack[:len(stack)-1]
	}
	for a := range n {
		if pre[a] == 0 {
			return nil
		}
	}
	if shift == 0 {
		shift = 2
	}
	stages := 0
	for a := range n {
		stages = max(stages, depth[a]+1)
	}
	shift = min(shift, stages)
	exec := make([][]string, stages)
	for i := 0; i*shift < stages; i++ {
		for a := range n {
			if s := depth[a] + i*shift; s < stages {
				exec[s] = append(exec[s], m.actors[a].Name)
			}
		}
	}
	sm := &StageMatrix{Root: m.actors[root].Name, Depth: map[string]int{}, Stages: stages, Shift: shift,
		Retreating: retreat, Startup: exec[:stages-shift], Repeat: exec[stages-shift:], Firings: map[string]int64{}}
	for a := range n {
		sm.Depth[m.actors[a].Name] = depth[a]
		sm.Firings[m.actors[a].Name] = rv.Firings[m.actors[a].Name]
	}
	for _, row := range exec {
		sm.MaxParallelism = max(sm.MaxParallelism, len(row))
	}
	return sm
}
