package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// CaseNode runs its body when its control variable equals Value: the
// branches of a conditional pattern actor (graph.Conditional).
const CaseNode NodeKind = 3

// patternTask fills t's subtasks and tree for conditional pattern actor a:
// one subtask per branch ("actor[k]"), whose time is the branch's inner
// firings per pattern firing times their costs on proc, under a CaseNode
// on the control variable named after the actor. Every branch pops and
// pushes the pattern's interface rates. Inner actors' costs are looked up
// as "actor/inner".
func patternTask(t *Task, a *graph.Actor, costs *Costs, proc *machine.Processor) error {
	per, err := analysis.BranchFirings(a)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	for k, b := range a.Pattern.Branches {
		own, _ := costs.Lookup(a, proc)
		sec := own.On(proc)
		for _, ia := range b.Actors {
			named := *ia
			named.Name = a.Name + "/" + ia.Name
			c, _ := costs.Lookup(&named, proc)
			if c.Never {
				return fmt.Errorf("sim: actor %s cannot run on %s (cost never)", named.Name, proc.Name)
			}
			sec += float64(per[k][ia.Name]) * c.On(proc)
		}
		t.Subtasks = append(t.Subtasks, Subtask{Name: fmt.Sprintf("%s[%d]", a.Name, k), Time: sec})
		t.Tree = append(t.Tree, Node{Kind: CaseNode, Cond: a.Name, Value: int64(k),
			Body: []Node{{Kind: SubtaskNode, Subtask: k}}})
	}
	return nil
}

// registerCase sets up the statistical model of a case variable with n
// values: Probabilities["name=k"] gives value k's probability (for two
// values, Probabilities["name"] is that of 1); values without one share
// what is left equally.
func (cs *ctlSeq) registerCase(name string, n int, probs map[string]float64, seed uint64) error {
	w := make([]float64, n)
	left, unset := 1.0, 0
	for k := range w {
		v, ok := probs[name+"="+strconv.Itoa(k)]
		if !ok && n == 2 && k == 1 {
			v, ok = probs[name]
		}
		if ok {
			w[k] = v
			left -= v
		} else {
			w[k] = -1
			unset++
		}
	}
	if left < -1e-9 {
		return fmt.Errorf("sim: probabilities of the values of %s sum to %g: expected at most 1", name, 1-left)
	}
	for k := range w {
		if w[k] < 0 {
			w[k] = max(0, left) / float64(unset)
		}
	}
	cs.weights = w
	h := fnv.New64a()
	h.Write([]byte(name))
	cs.rng = rand.New(rand.NewPCG(seed, h.Sum64()))
	return nil
}

// drawCase draws one value of a case variable from its weights.
func (cs *ctlSeq) drawCase() int64 {
	x := cs.rng.Float64()
	for k, w := range cs.weights {
		if x < w {
			return int64(k)
		}
		x -= w
	}
	return int64(len(cs.weights) - 1)
}

// caseWidth is the number of CaseNodes on variable name among ns (the
// number of branches of its pattern).
func caseWidth(ns []Node, name string) int {
	n := 0
	for _, x := range ns {
		if x.Kind == CaseNode && x.Cond == name {
			n++
		}
	}
	return n
}
