package runtime

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// Replicable is implemented by stateful Go actors that may form a team with
// replicated state (graph.TeamReplicate): Replicate returns n independent
// instances, one per replica, each with its own state. Every instance runs
// every firing of the team in order; Firing.Leader says whether its outputs
// count. Built-in actors need not implement it: their factory is simply
// called once per replica.
type Replicable interface {
	Actor
	Replicate(n int) ([]Actor, error)
}

// resolveTeam returns n independent implementations of actor a, one per
// replica of a team with replicated state.
func resolveTeam(a *graph.Actor, n int, files FileAccess) ([]any, error) {
	impls := make([]any, 0, n)
	for _, im := range a.Impls {
		switch im.Kind {
		case graph.ImplBuiltin:
			for range n {
				impl, err := resolve(a, files)
				if err != nil {
					return nil, err
				}
				impls = append(impls, impl)
			}
			return impls, nil
		case graph.ImplGo:
			impl, err := resolve(a, files)
			if err != nil {
				return nil, err
			}
			rep, ok := impl.(Replicable)
			if !ok && a.StateDecl != nil {
				// The runtime keeps the state, one per replica
				// (Firing.State): the implementation itself is shared.
				for range n {
					impls = append(impls, impl)
				}
				return impls, nil
			}
			if !ok {
				return nil, fmt.Errorf("actor %s: team replicate needs one state per replica: expected a built-in actor, a declared state (graph.WithState) or a Go implementation of runtime.Replicable, found %T", a.Name, impl)
			}
			as, err := rep.Replicate(n)
			if err != nil {
				return nil, fmt.Errorf("actor %s: Replicate(%d): %w", a.Name, n, err)
			}
			if len(as) != n {
				return nil, fmt.Errorf("actor %s: Replicate(%d) returned %d instances: expected %d", a.Name, n, len(as), n)
			}
			for _, x := range as {
				impls = append(impls, x)
			}
			return impls, nil
		}
	}
	var kinds []string
	for _, im := range a.Impls {
		kinds = append(kinds, string(im.Kind))
	}
	return nil, fmt.Errorf("actor %s has no Go or built-in implementation to replicate (has: %s)", a.Name, strings.Join(kinds, ", "))
}

// replicaTeam is the mode of a team with replicated state
// (graph.TeamReplicate): every replica runs every firing of a round in
// order on the shared input windows, with an implementation (and state)
// of its own, and writes outputs only for the firings it leads; the
// others go to its scratch windows and are dropped.
type replicaTeam struct {
	onPool
	teamRound
	// impls and fires are the replicas' implementations and firing
	// functions; scratch their output windows for the firings they do
	// not lead.
	impls   []any
	fires   []FireFunc
	scratch [][][]byte
}

// setupTeam makes u a team with replicated state: one implementation and
// one scratch output window per replica (non-leaders write their outputs
// there, and they are dropped).
func (u *unit) setupTeam() error {
	impls, err := resolveTeam(u.a, u.replicas, u.r.opts.Files)
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	t := &replicaTeam{impls: impls, fires: make([]FireFunc, len(impls))}
	for i, impl := range impls {
		switch f := impl.(type) {
		case FireFunc:
			t.fires[i] = f
		case Actor:
			t.fires[i] = f.Fire
		default:
			return fmt.Errorf("runtime: actor %s: team replicate needs firing functions, found %T", u.name, impl)
		}
		if u.a.Iterations > 1 {
			t.fires[i] = iterated(u.a, t.fires[i])
		}
	}
	u.impl, u.fire = impls[0], t.fires[0]
	t.scratch = make([][][]byte, u.replicas)
	for r := range t.scratch {
		t.scratch[r] = make([][]byte, len(u.a.Outputs))
		for i, p := range u.a.Outputs {
			t.scratch[r][i] = make([]byte, p.Rate.Max()*p.Type.Size)
		}
	}
	u.mode = t
	return nil
}

// lifecycle returns the implementations whose Start and Stop the run calls:
// every replica's for a team with replicated state.
func (u *unit) lifecycle() []any {
	if t, ok := u.mode.(*replicaTeam); ok {
		return t.impls
	}
	return []any{u.impl}
}

// round starts a round of k firings: each replica runs all k firings in
// order on the shared input windows, writing outputs only for the firings
// it leads.
func (t *replicaTeam) round(u *unit, c *execCtx, k, _ int64) (int64, int64, bool) {
	id := t.startRound(u, k, int64(u.replicas)-1)
	return -1, k, t.join(u, c, id)
}

// join claims replicas of round id and runs them; the goroutine that
// finishes the last one commits the round and reports true.
func (t *replicaTeam) join(u *unit, c *execCtx, id uint64) bool {
	const mask = 1<<claimBits - 1
	for {
		v := t.claim.Load()
		if v>>claimBits != id {
			return false
		}
		rep := int64(v & mask)
		if rep >= int64(u.replicas) {
			return false
		}
		if !t.claim.CompareAndSwap(v, v+1) {
			continue
		}
		t.runReplica(u, c, t.roundBase.Load(), t.roundK.Load(), int(rep))
		if t.doneN.Add(1) == int64(u.replicas) {
			t.endRound(u)
			return u.state.Load() != stateDone
		}
	}
}

// runReplica runs firings [base, base+k) on replica rep.
func (t *replicaTeam) runReplica(u *unit, c *execCtx, base, k int64, rep int) {
	f := c.firingFor(u)
	f.replica = rep
	f.team = true
	fire := t.fires[rep]
	scratch := t.scratch[rep]
	for j := int64(0); j < k && j < t.stopAt.Load(); j++ {
		idx := base + j
		f.leader = idx%int64(u.replicas) == int64(rep)
		for i := range u.ins {
			p := &u.ins[i]
			o := p.tokens(base, j) * p.tsize
			n := p.phases[idx%int64(len(p.phases))] * p.tsize
			f.ins[i] = u.inWin[i][o : o+n : o+n]
		}
		for i := range u.outs {
			p := &u.outs[i]
			n := p.phases[idx%int64(len(p.phases))] * p.tsize
			switch {
			case !f.leader:
				f.outs[i] = scratch[i][:n:n]
			case u.outWin[i] == nil:
				f.outs[i] = nil
			default:
				o := p.tokens(base, j) * p.tsize
				f.outs[i] = u.outWin[i][o : o+n : o+n]
			}
		}
		f.index = idx
		f.phase = int(idx % u.phases)
		t0 := c.now()
		err := callFire(fire, f)
		if err != nil {
			t.failRound(j, err)
			break
		}
		if f.leader {
			c.record(u, idx, t0, c.now())
		}
	}
	f.leader = true
}
