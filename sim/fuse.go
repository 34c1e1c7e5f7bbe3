package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/namelist"
	"github.com/sluicehq/sluice/machine"
)

// The CPU runtime runs maximal chains of stateless, single-rate,
// unreplicated pooled CPU actors as one scheduling unit replicated across
// the pool's workers (runtime/fuse.go: planFusion, fusable, fuseNext;
// docs/runtime.md, "Fused chains"). Build simulates each such chain as one
// task: its firing is every stage's firing back to back (the sum of their
// costs), it has one replica per unit of the pool, and the channels inside
// the chain are not streams. The rule is the runtime's, restated on the
// graph and the mapping (bench/predict's TestFusedChainsMatchRuntime holds
// the two against each other on the example graphs).

// fuseBatchBytes and fuseRoundBatches are the runtime's (runtime/fuse.go):
// the bytes of one port's window a claimed batch moves, and the batches
// per replica a round of a fused unit holds.
const (
	fuseBatchBytes   = 8 << 10
	fuseRoundBatches = 8
)

// fuseMaxCost is the runtime's (runtime/fuse.go): an actor whose declared
// firing cost is this or more is not fused.
const fuseMaxCost = 200 * time.Microsecond

// FusedChains returns the chains of actors (by name, in chain order, each
// of at least two) that the CPU runtime would fuse when it runs g with
// mapping m, whose placements resolve on mach: every stage on the same
// pool processor (machine.Processor.Pool) placed on the host ("", cpu,
// cpu:0 or host, as the runtime's host placements) without a kernel
// implementation, replicas, affinity or a control node (the cost file's or
// the graph's if/while); stateless, no I/O, no state declaration,
// conditional pattern, iteration or history; one phase; no dynamic port
// next to it; each stage after the first the only consumer of the
// previous stage's only output, over one channel without initial tokens,
// consuming per firing what it produces, with that one input. Nothing is
// fused when noFuse is set (runtime.Options.NoFuseCPU), when the graph has
// shared variables, or when an actor asks for stream tags.
func FusedChains(g *graph.Graph, m *graph.Mapping, mach *machine.Machine, costs *Costs, noFuse bool) [][]string {
	if noFuse || g == nil || mach == nil || len(g.Shared) > 0 {
		return nil
	}
	for _, a := range g.Actors {
		if _, tagged := a.Attrs["tags"]; tagged {
			return nil
		}
	}
	proc := map[*graph.Actor]*machine.Processor{}
	for _, a := range g.Actors {
		if p := fusableOn(g, a, m, mach, costs); p != nil {
			proc[a] = p
		}
	}
	next, hasPrev := map[*graph.Actor]*graph.Actor{}, map[*graph.Actor]bool{}
	for _, a := range g.Actors {
		if proc[a] == nil {
			continue
		}
		if n := fuseNext(g, a, proc); n != nil {
			next[a], hasPrev[n] = n, true
		}
	}
	var chains [][]string
	for _, head := range g.Actors {
		if proc[head] == nil || hasPrev[head] || next[head] == nil {
			continue
		}
		chain := []string{head.Name}
		for n := next[head]; n != nil; n = next[n] {
			chain = append(chain, n.Name)
		}
		chains = append(chains, chain)
	}
	return chains
}

// fusableOn returns the pool processor a may be a fused stage on, nil
// when it may not be one.
func fusableOn(g *graph.Graph, a *graph.Actor, m *graph.Mapping, mach *machine.Machine, costs *Costs) *machine.Processor {
	if a.Stateful || a.IO || a.StateDecl != nil || a.Pattern != nil || a.Iterations > 1 || a.Dynamic() || a.Phases() != 1 {
		return nil
	}
	if a.Cost >= fuseMaxCost {
		return nil // the runtime's fuseMaxCost: long firings are not fused
	}
	for _, p := range a.Inputs {
		if p.History > 0 {
			return nil
		}
	}
	if len(a.Inputs) == 0 && len(a.Outputs) == 0 {
		return nil
	}
	if ct, err := costs.ControlOf(a); err != nil || !ct.IsZero() {
		return nil
	}
	p := mach.Processors[0]
	if m != nil {
		if pl := m.Actors[a.Name]; pl != nil {
			if pl.Replicas > 1 || len(pl.Affinity) > 0 || pl.Any != "" || pl.Impl == graph.ImplOpenCL || pl.Impl == graph.ImplCUDA {
				return nil
			}
			switch d := strings.ToLower(pl.Device); d {
			case "":
			case "cpu", "cpu:0", "host":
				p = mach.Resolve(pl.Device)
			default:
				return nil // a device, or a worker: not the host's pool
			}
		}
	}
	if p == nil || !p.Pool {
		return nil
	}
	for _, ps := range [][]*graph.Port{a.Inputs, a.Outputs} {
		for _, port := range ps {
			for _, c := range g.ChannelsOf(port) {
				if c.From == nil || c.To == nil || c.From.Actor.Dynamic() || c.To.Actor.Dynamic() {
					return nil
				}
			}
		}
	}
	return p
}

// fuseNext returns the stage after a: the consumer of a's only output
// over its one channel without initial tokens, when that consumer may be
// a stage on a's processor, has one input and consumes per firing what a
// produces; nil otherwise.
func fuseNext(g *graph.Graph, a *graph.Actor, proc map[*graph.Actor]*machine.Processor) *graph.Actor {
	if len(a.Outputs) != 1 {
		return nil
	}
	cs := g.ChannelsOf(a.Outputs[0])
	if len(cs) != 1 || cs[0].Initial != 0 {
		return nil
	}
	n := cs[0].To.Actor
	if n == a || proc[n] == nil || proc[n] != proc[a] || len(n.Inputs) != 1 {
		return nil
	}
	if r := a.Outputs[0].Rate.Sum(); r == 0 || n.Inputs[0].Rate.Sum() != r {
		return nil
	}
	return n
}

// FusedName is the runtime's name of a fused chain (ActorStats.Fused).
func FusedName(chain []string) string {
	return fmt.Sprintf("fused(%s..%s)", chain[0], chain[len(chain)-1])
}

// fusedBatch is the runtime's batch of a fused chain: the firings whose
// largest port window fills fuseBatchBytes, at least one, and no more than
// the stages' declared costs fit in a round's time.
func fusedBatch(g *graph.Graph, chain []string) int64 {
	win := 1
	var cost time.Duration
	for _, name := range chain {
		a := g.Actor(name)
		cost += a.Cost
		for _, ps := range [][]*graph.Port{a.Inputs, a.Outputs} {
			for _, p := range ps {
				win = max(win, p.Rate.Sum()*p.Type.Size)
			}
		}
	}
	batch := int64(max(1, fuseBatchBytes/win))
	if cost > 0 { // a batch of declared cost lasts about a round (200 µs)
		batch = min(batch, max(1, int64(fuseMaxCost/cost)))
	}
	return batch
}

// fusedCapacity is the runtime's least capacity of a channel into or out
// of a fused chain of batch firings per claim and replicas replicas, whose
// end there moves rate tokens per firing: two rounds of fuseRoundBatches
// batches per replica.
func fusedCapacity(c *graph.Channel, batch int64, replicas int, rate int) int64 {
	return int64(c.Initial) + 2*fuseRoundBatches*batch*int64(replicas)*int64(rate)
}

// fuse merges each chain's tasks into its head's: one subtask costing
// the stages' sum, one replica per unit of the processor, priority the
// highest of the stages, the runtime's claimed batch as ClaimBatch. It returns taskOf remapped onto the remaining
// tasks and, per fused task, its chain.
func (p *Program) fuse(g *graph.Graph, chains [][]string, taskOf map[*graph.Actor]int) (map[*graph.Actor]int, map[int]fusedInfo) {
	if len(chains) == 0 {
		return taskOf, nil
	}
	head := map[int]int{} // task → the task it joins
	info := map[int]fusedInfo{}
	for _, chain := range chains {
		h := taskOf[g.Actor(chain[0])]
		t := p.Tasks[h]
		name := FusedName(chain)
		t.Stages = chain
		t.Name = name
		t.Replicas = max(1, p.Machine.Processors[t.Processor].Units)
		t.Subtasks[0].Name = name
		for _, s := range chain[1:] {
			st := p.Tasks[taskOf[g.Actor(s)]]
			t.Subtasks[0].Time += st.Subtasks[0].Time
			t.Priority = max(t.Priority, st.Priority)
			head[taskOf[g.Actor(s)]] = h
		}
		info[h] = fusedInfo{batch: fusedBatch(g, chain), replicas: t.Replicas}
		t.ClaimBatch = info[h].batch
		p.Notes = append(p.Notes, fmt.Sprintf("actors %s run as one fused unit %s with %d replicas, as the CPU runtime fuses them (--no-fuse-cpu: each alone)",
			namelist.Short(chain), name, t.Replicas))
	}
	newIdx := make([]int, len(p.Tasks))
	kept := p.Tasks[:0:0]
	for i, t := range p.Tasks {
		if _, merged := head[i]; merged {
			continue
		}
		newIdx[i] = len(kept)
		kept = append(kept, t)
	}
	out := map[*graph.Actor]int{}
	for a, i := range taskOf {
		if h, merged := head[i]; merged {
			i = h
		}
		out[a] = newIdx[i]
	}
	infoOut := map[int]fusedInfo{}
	for h, fi := range info {
		infoOut[newIdx[h]] = fi
	}
	p.Tasks = kept
	return out, infoOut
}

// fusedInfo is what the channel capacities of a fused task depend on.
type fusedInfo struct {
	batch    int64
	replicas int
}
