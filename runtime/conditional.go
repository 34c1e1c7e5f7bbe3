package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
)

// conditional runs a GSLD conditional pattern actor in fused mode: the
// pattern fires as one SDF actor; each firing reads its control token and
// runs one precomputed iteration of the selected branch over the firing's
// windows (boundary ports read and write the outer windows in place, inner
// channels are private linear buffers whose populations return to their
// initial values). Branches not selected do not fire.
type conditional struct {
	a        *graph.Actor
	ctl      int // index of the control port in a.Inputs
	ctlType  graph.TokenType
	branches []*condBranch
	counts   []atomic.Int64
}

// condBranch is one branch ready to run: its actors, its channels and a
// static sequential schedule of one iteration.
type condBranch struct {
	actors []*condActor
	chans  []*condChan
	sched  []int
}

// condActor is an inner actor with its port bindings.
type condActor struct {
	a     *graph.Actor
	impl  any
	fire  FireFunc
	ins   []condEnd
	outs  []condEnd
	index int64
	f     Firing
}

// condEnd binds an inner port: to an inner channel (ch ≥ 0, more channels
// in extra for a fan-out) or to the pattern's window outer (ch = -1), with a
// byte cursor into that window during one pattern firing.
type condEnd struct {
	ch     int
	extra  []int
	outer  int
	cursor int
	size   int
	rate   graph.Rate
}

// condChan is an inner channel: a linear buffer read at r and written at w.
type condChan struct {
	buf  []byte
	r, w int
}

// newConditional prepares the fused executor of pattern actor a.
func newConditional(a *graph.Actor, files FileAccess) (*conditional, error) {
	firings, err := analysis.BranchFirings(a)
	if err != nil {
		return nil, err
	}
	c := &conditional{a: a, ctl: -1, counts: make([]atomic.Int64, len(firings))}
	for i, p := range a.Inputs {
		if p.Name == graph.ControlPort {
			c.ctl, c.ctlType = i, p.Type
		}
	}
	for k, b := range a.Pattern.Branches {
		br, err := newCondBranch(a, b, firings[k], files)
		if err != nil {
			return nil, fmt.Errorf("%s/branch[%d]: %w", a.Name, k, err)
		}
		c.branches = append(c.branches, br)
	}
	return c, nil
}

func newCondBranch(a *graph.Actor, b *graph.Graph, firings map[string]int64, files FileAccess) (*condBranch, error) {
	br := &condBranch{}
	outerIdx := func(name string, dir graph.Direction) int {
		ps := a.Inputs
		if dir == graph.Out {
			ps = a.Outputs
		}
		for i, p := range ps {
			if p.Name == name {
				return i
			}
		}
		return -1
	}
	bound := map[*graph.Port]int{}
	for _, x := range b.Inputs {
		bound[b.Actor(x.Actor).Port(x.Port)] = outerIdx(x.Name, graph.In)
	}
	for _, x := range b.Outputs {
		bound[b.Actor(x.Actor).Port(x.Port)] = outerIdx(x.Name, graph.Out)
	}
	chIdx := map[*graph.Channel]int{}
	for i, ch := range b.Channels {
		chIdx[ch] = i
		br.chans = append(br.chans, &condChan{})
	}
	for _, ia := range b.Actors {
		ca, err := newCondActor(ia, b, bound, chIdx, files)
		if err != nil {
			return nil, err
		}
		br.actors = append(br.actors, ca)
	}
	return br, br.plan(b, firings)
}

func newCondActor(ia *graph.Actor, b *graph.Graph, bound map[*graph.Port]int, chIdx map[*graph.Channel]int, files FileAccess) (*condActor, error) {
	impl, err := resolve(ia, files)
	if err != nil {
		return nil, err
	}
	ca := &condActor{a: ia, impl: impl}
	switch f := impl.(type) {
	case FireFunc:
		ca.fire = f
	case Actor:
		ca.fire = f.Fire
	default:
		return nil, fmt.Errorf("inner actor %s has a process (KPN) implementation: expected a FireFunc or runtime.Actor inside a conditional branch", ia.Name)
	}
	if ia.Iterations > 1 {
		ca.fire = iterated(ia, ca.fire)
	}
	end := func(p *graph.Port) (condEnd, error) {
		e := condEnd{ch: -1, outer: -1, size: p.Type.Size, rate: p.Rate}
		if i, ok := bound[p]; ok {
			e.outer = i
			return e, nil
		}
		chs := b.ChannelsOf(p)
		if len(chs) == 0 {
			return e, fmt.Errorf("port %s is neither connected nor bound to the pattern's interface", p.FullName())
		}
		e.ch = chIdx[chs[0]]
		for _, ch := range chs[1:] {
			e.extra = append(e.extra, chIdx[ch])
		}
		return e, nil
	}
	for _, p := range ia.Inputs {
		e, err := end(p)
		if err != nil {
			return nil, err
		}
		ca.ins = append(ca.ins, e)
	}
	for _, p := range ia.Outputs {
		e, err := end(p)
		if err != nil {
			return nil, err
		}
		ca.outs = append(ca.outs, e)
	}
	ca.f = Firing{actor: ia, replicas: 1, leader: true,
		ins: make([][]byte, len(ca.ins)), outs: make([][]byte, len(ca.outs))}
	return ca, nil
}

// plan simulates one iteration from the initial tokens to fix the firing
// order and the size of each inner channel's buffer, and fills the initial
// tokens.
func (br *condBranch) plan(b *graph.Graph, firings map[string]int64) error {
	tokens := make([]int, len(b.Channels))
	peak := make([]int, len(b.Channels))
	for i, ch := range b.Channels {
		tokens[i], peak[i] = ch.Initial, ch.Initial
	}
	left := make([]int64, len(br.actors))
	fired := make([]int64, len(br.actors))
	total := int64(0)
	for i, ca := range br.actors {
		left[i] = firings[ca.a.Name]
		total += left[i]
	}
	for total > 0 {
		progress := false
		for i, ca := range br.actors {
			for left[i] > 0 && ca.ready(tokens, fired[i]) {
				ph := int(fired[i] % int64(ca.a.Phases()))
				for _, e := range ca.ins {
					if e.ch >= 0 {
						tokens[e.ch] -= e.rate.At(ph)
					}
				}
				for _, e := range ca.outs {
					for _, ch := range e.chans() {
						tokens[ch] += e.rate.At(ph)
						peak[ch] = max(peak[ch], tokens[ch])
					}
				}
				br.sched = append(br.sched, i)
				left[i]--
				fired[i]++
				total--
				progress = true
			}
		}
		if !progress {
			return errors.New("one branch iteration deadlocks: add initial tokens on the branch's cycles")
		}
	}
	// Linear buffers: the writer only advances within an iteration, so a
	// channel needs its initial tokens plus everything produced.
	produced := make([]int, len(b.Channels))
	for i, ca := range br.actors {
		for _, e := range ca.outs {
			for _, ch := range e.chans() {
				produced[ch] += int(fired[i]/int64(ca.a.Phases())) * e.rate.Sum()
			}
		}
	}
	for i, ch := range b.Channels {
		size := ch.From.Type.Size
		cc := br.chans[i]
		cc.buf = make([]byte, (ch.Initial+produced[i])*size)
		copy(cc.buf[:ch.Initial*size], ch.InitialData)
		cc.w = ch.Initial * size
	}
	return nil
}

func (e condEnd) chans() []int {
	if e.ch < 0 {
		return nil
	}
	return append([]int{e.ch}, e.extra...)
}

// ready reports whether the inner actor's inner inputs hold enough tokens
// for its next firing (boundary inputs always do within one iteration).
func (ca *condActor) ready(tokens []int, fired int64) bool {
	ph := int(fired % int64(ca.a.Phases()))
	for _, e := range ca.ins {
		if e.ch >= 0 && tokens[e.ch] < e.rate.At(ph) {
			return false
		}
	}
	return true
}

// Fire runs the branch selected by the control token.
func (c *conditional) Fire(f *Firing) error {
	v, err := controlValue(f.ins[c.ctl], c.ctlType)
	if err != nil {
		return fmt.Errorf("%s: %w", c.a.Name, err)
	}
	if v < 0 || v >= int64(len(c.branches)) {
		return fmt.Errorf("%s: control value %d at firing %d selects no branch: expected 0..%d", c.a.Name, v, f.index, len(c.branches)-1)
	}
	c.counts[v].Add(1)
	return c.branches[v].run(f)
}

// run executes one iteration of the branch over the outer firing's windows.
func (br *condBranch) run(f *Firing) error {
	for _, ca := range br.actors {
		for i := range ca.ins {
			ca.ins[i].cursor = 0
		}
		for i := range ca.outs {
			ca.outs[i].cursor = 0
		}
	}
	for _, i := range br.sched {
		if err := br.actors[i].fireOnce(f, br.chans); err != nil {
			return err
		}
	}
	for _, ch := range br.chans {
		n := copy(ch.buf, ch.buf[ch.r:ch.w])
		ch.r, ch.w = 0, n
	}
	return nil
}

// fireOnce binds the inner actor's windows and fires it once.
func (ca *condActor) fireOnce(outer *Firing, chans []*condChan) error {
	ph := int(ca.index % int64(ca.a.Phases()))
	for i := range ca.ins {
		e := &ca.ins[i]
		n := e.rate.At(ph) * e.size
		if e.ch < 0 {
			ca.f.ins[i] = outer.ins[e.outer][e.cursor : e.cursor+n]
			e.cursor += n
		} else {
			ch := chans[e.ch]
			ca.f.ins[i] = ch.buf[ch.r : ch.r+n]
			ch.r += n
		}
	}
	for i := range ca.outs {
		e := &ca.outs[i]
		n := e.rate.At(ph) * e.size
		if e.ch < 0 {
			ca.f.outs[i] = outer.outs[e.outer][e.cursor : e.cursor+n]
			e.cursor += n
		} else {
			ch := chans[e.ch]
			ca.f.outs[i] = ch.buf[ch.w : ch.w+n]
		}
	}
	ca.f.ctx, ca.f.run, ca.f.index, ca.f.phase = outer.ctx, outer.run, ca.index, ph
	err := ca.fire(&ca.f)
	if ca.f.run != nil && ca.f.run.shared != nil {
		endFiringShared(&ca.f, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", ca.a.Name, err)
	}
	ca.index++
	for i := range ca.outs {
		e := &ca.outs[i]
		if e.ch < 0 {
			continue
		}
		w := ca.f.outs[i]
		chans[e.ch].w += len(w)
		for _, x := range e.extra {
			ch := chans[x]
			ch.w += copy(ch.buf[ch.w:], w)
		}
	}
	return nil
}

// Start starts the inner actors that need it.
func (c *conditional) Start(ctx context.Context) error {
	for _, br := range c.branches {
		for _, ca := range br.actors {
			if s, ok := ca.impl.(Starter); ok {
				if err := s.Start(ctx); err != nil {
					return fmt.Errorf("%s/%s: %w", c.a.Name, ca.a.Name, err)
				}
			}
		}
	}
	return nil
}

// Stop stops the inner actors that need it, joining their errors.
func (c *conditional) Stop() error {
	var errs []error
	for _, br := range c.branches {
		for _, ca := range br.actors {
			if s, ok := ca.impl.(Stopper); ok {
				if err := s.Stop(); err != nil {
					errs = append(errs, fmt.Errorf("%s/%s: %w", c.a.Name, ca.a.Name, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// BranchCounts returns how many times each branch ran.
func (c *conditional) BranchCounts() []int64 {
	out := make([]int64, len(c.counts))
	for i := range c.counts {
		out[i] = c.counts[i].Load()
	}
	return out
}

// controlValue decodes one little-endian integer control token.
func controlValue(b []byte, t graph.TokenType) (int64, error) {
	if len(b) < t.Size {
		return 0, fmt.Errorf("control window has %d bytes: expected one %s token", len(b), t)
	}
	switch t.Name {
	case "u8":
		return int64(b[0]), nil
	case "i8":
		return int64(int8(b[0])), nil
	case "u16":
		return int64(binary.LittleEndian.Uint16(b)), nil
	case "i16":
		return int64(int16(binary.LittleEndian.Uint16(b))), nil
	case "u32":
		return int64(binary.LittleEndian.Uint32(b)), nil
	case "i32":
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	case "u64", "i64":
		return int64(binary.LittleEndian.Uint64(b)), nil
	}
	return 0, fmt.Errorf("control token type %s: expected an integer type", t)
}

// branchCounts sums the branch counts of a unit's conditional executors
// (one per replica), or returns nil when the unit is not a pattern.
func branchCounts(impls []any) []int64 {
	var out []int64
	for _, impl := range impls {
		c, ok := impl.(*conditional)
		if !ok {
			continue
		}
		n := c.BranchCounts()
		if out == nil {
			out = make([]int64, len(n))
		}
		for i, v := range n {
			out[i] += v
		}
	}
	return out
}
