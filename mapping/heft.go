// Package mapping chooses where actors run: HEFT from per-processor costs
// (seed 003 §6.1.4: Heterogeneous Earliest-Finish-Time on one iteration of
// the graph, keeping the processor assignment and discarding the order),
// and a seeded simulated-annealing search over actor → processor
// allocation, replica counts and channel capacities that uses the
// simulator (package sim) as its cost model — the iterative mapping loop of
// seed 004 §3.5.
package mapping

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Edge is a precedence between two tasks of a Problem, carrying data.
type Edge struct {
	// From and To are task indices.
	From, To int
	// Bytes is the data moved along the edge (used by Comm).
	Bytes int64
}

// Problem is a task DAG for HEFT: tasks with a cost on each processor and
// edges whose communication cost depends on the two processors.
type Problem struct {
	// Tasks names the tasks.
	Tasks []string
	// Procs names the processors.
	Procs []string
	// Cost[t][p] is the execution time of task t on processor p; +Inf
	// forbids the placement.
	Cost [][]float64
	// Edges are the precedences; they must form a DAG.
	Edges []Edge
	// Comm returns the time to move edge e's data from processor p to q;
	// it is not called with p == q (which costs 0). +Inf means no route.
	Comm func(e Edge, p, q int) float64
	// Load breaks ties between processors with the same earliest finish
	// time: the one with less work already assigned wins (then the lower
	// index). Off, HEFT picks the lower index, as the original does.
	Load bool
}

// Schedule is HEFT's answer.
type Schedule struct {
	// Proc[t] is the processor chosen for task t.
	Proc []int
	// Start and Finish times of each task.
	Start, Finish []float64
	// Rank is each task's upward rank; Order the tasks by decreasing rank.
	Rank  []float64
	Order []int
	// Makespan is the largest finish time.
	Makespan float64
}

// HEFT schedules the DAG with the Heterogeneous Earliest-Finish-Time
// heuristic (Topcuoglu, Hariri and Wu, 2002): upward ranks from mean
// computation and mean communication costs, tasks taken by decreasing rank
// (ties: lower index), each placed on the processor giving the earliest
// finish time with insertion into idle slots.
func HEFT(p *Problem) (*Schedule, error) {
	nt, np := len(p.Tasks), len(p.Procs)
	if np == 0 {
		return nil, errors.New("mapping: HEFT: no processor")
	}
	if len(p.Cost) != nt {
		return nil, fmt.Errorf("mapping: HEFT: %d cost rows for %d tasks", len(p.Cost), nt)
	}
	succ := make([][]int, nt)
	pred := make([][]int, nt)
	for i, e := range p.Edges {
		if e.From < 0 || e.From >= nt || e.To < 0 || e.To >= nt {
			return nil, fmt.Errorf("mapping: HEFT: edge %d→%d out of range", e.From, e.To)
		}
		succ[e.From] = append(succ[e.From], i)
		pred[e.To] = append(pred[e.To], i)
	}
	mean := make([]float64, nt)
	for t := range nt {
		if len(p.Cost[t]) != np {
			return nil, fmt.Errorf("mapping: HEFT: task %s has %d costs for %d processors", p.Tasks[t], len(p.Cost[t]), np)
		}
		n := 0
		for _, c := range p.Cost[t] {
			if !math.IsInf(c, 1) {
				mean[t] += c
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("mapping: HEFT: task %s can run on no processor", p.Tasks[t])
		}
		mean[t] /= float64(n)
	}
	comm := func(e Edge, a, b int) float64 {
		if a == b || p.Comm == nil {
			return 0
		}
		return p.Comm(e, a, b)
	}
	meanComm := make([]float64, len(p.Edges))
	for i, e := range p.Edges {
		s, n := 0.0, 0
		for a := range np {
			for b := range np {
				if a != b {
					if c := comm(e, a, b); !math.IsInf(c, 1) {
						s += c
						n++
					}
				}
			}
		}
		if n > 0 {
			meanComm[i] = s / float64(n)
		}
	}
	// Topological order (Kahn), to detect cycles and compute ranks.
	indeg := make([]int, nt)
	for _, e := range p.Edges {
		indeg[e.To]++
	}
	var topo []int
	for t := range nt {
		if indeg[t] == 0 {
			topo = append(topo, t)
		}
	}
	for i := 0; i < len(topo); i++ {
		for _, ei := range succ[topo[i]] {
			to := p.Edges[ei].To
			if indeg[to]--; indeg[to] == 0 {
				topo = append(topo, to)
			}
		}
	}
	if len(topo) != nt {
		return nil, errors.New("mapping: HEFT: the task graph has a cycle: expected a DAG (channels with initial tokens are left out)")
	}
	s := &Schedule{Proc: make([]int, nt), Start: make([]float64, nt), Finish: make([]float64, nt), Rank: make([]float64, nt)}
	for i := nt - 1; i >= 0; i-- {
		t := topo[i]
		best := 0.0
		for _, ei := range succ[t] {
			best = max(best, meanComm[ei]+s.Rank[p.Edges[ei].To])
		}
		s.Rank[t] = mean[t] + best
	}
	s.Order = make([]int, nt)
	for i := range s.Order {
		s.Order[i] = i
	}
	sort.SliceStable(s.Order, func(i, j int) bool {
		a, b := s.Order[i], s.Order[j]
		if !approx(s.Rank[a], s.Rank[b]) {
			return s.Rank[a] > s.Rank[b]
		}
		return a < b
	})
	// Ranks order every task after its predecessors except when a
	// zero-cost task ties with its successor: repair by a stable
	// topological pass over the rank order.
	s.Order = topoByRank(s.Order, pred, p.Edges, nt)
	type slot struct{ start, end float64 }
	busy := make([][]slot, np)
	load := make([]float64, np)
	done := make([]bool, nt)
	for _, t := range s.Order {
		bestP, bestS, bestF := -1, 0.0, math.Inf(1)
		for q := range np {
			c := p.Cost[t][q]
			if math.IsInf(c, 1) {
				continue
			}
			ready := 0.0
			for _, ei := range pred[t] {
				e := p.Edges[ei]
				if !done[e.From] {
					return nil, fmt.Errorf("mapping: HEFT: internal order error at %s", p.Tasks[t])
				}
				ready = max(ready, s.Finish[e.From]+comm(e, s.Proc[e.From], q))
			}
			if math.IsInf(ready, 1) {
				continue
			}
			// Insertion: the earliest idle slot at or after ready that fits c.
			st := ready
			for _, b := range busy[q] {
				if st+c <= b.start+1e-12*math.Max(1, b.start) {
					break
				}
				st = max(st, b.end)
			}
			f := st + c
			better := f < bestF && !approx(f, bestF)
			if !better && bestP >= 0 && approx(f, bestF) && p.Load && load[q] < load[bestP] && !approx(load[q], load[bestP]) {
				better = true
			}
			if bestP < 0 || better {
				bestP, bestS, bestF = q, st, f
			}
		}
		if bestP < 0 {
			return nil, fmt.Errorf("mapping: HEFT: task %s has no processor it can run on that its inputs can reach", p.Tasks[t])
		}
		s.Proc[t], s.Start[t], s.Finish[t] = bestP, bestS, bestF
		load[bestP] += p.Cost[t][bestP]
		b := append(busy[bestP], slot{bestS, bestF})
		sort.Slice(b, func(i, j int) bool { return b[i].start < b[j].start })
		busy[bestP] = b
		done[t] = true
		s.Makespan = max(s.Makespan, bestF)
	}
	return s, nil
}

func approx(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// topoByRank returns the tasks in rank order, each moved after its
// predecessors when needed.
func topoByRank(order []int, pred [][]int, edges []Edge, nt int) []int {
	placed := make([]bool, nt)
	out := make([]int, 0, nt)
	left := append([]int(nil), order...)
	for len(left) > 0 {
		for i, t := range left {
			ok := true
			for _, ei := range pred[t] {
				if !placed[edges[ei].From] {
					ok = false
					break
				}
			}
			if ok {
				placed[t] = true
				out = append(out, t)
				left = append(left[:i], left[i+1:]...)
				break
			}
		}
	}
	return out
}
