package runtime

import (
	"slices"

	"github.com/sluicehq/sluice/graph"
)

// hasHistory reports whether an input port of a keeps a history.
func hasHistory(a *graph.Actor) bool {
	return slices.ContainsFunc(a.Inputs, func(p *graph.Port) bool { return p.History > 0 })
}

// withHistory wraps fire so that input i's window starts with the History
// tokens that preceded it in the stream (zeros before the stream's start):
// the firing sees History + rate tokens and consumes rate. The actor must
// fire in order (validation makes it stateful).
func withHistory(a *graph.Actor, fire FireFunc) FireFunc {
	type hist struct {
		keep int    // history bytes
		buf  []byte // history followed by the current window
	}
	hs := make([]*hist, len(a.Inputs))
	for i, p := range a.Inputs {
		if p.History > 0 {
			keep := p.History * p.Type.Size
			hs[i] = &hist{keep: keep, buf: make([]byte, keep, keep+p.Rate.Max()*p.Type.Size)}
		}
	}
	ins := make([][]byte, len(a.Inputs))
	attached := false
	return func(f *Firing) error {
		if !attached {
			attached = true
			wins := make([][]byte, len(hs))
			for i, h := range hs {
				if h != nil {
					wins[i] = h.buf[:h.keep]
				}
			}
			attachHistory(f.run, a, wins) // checkpoints snapshot and restore them
		}
		orig := f.ins
		for i, h := range hs {
			if h == nil {
				ins[i] = orig[i]
				continue
			}
			h.buf = append(h.buf[:h.keep], orig[i]...)
			ins[i] = h.buf
		}
		f.ins = ins
		err := fire(f)
		f.ins = orig
		for _, h := range hs {
			if h != nil {
				// Keep the last History tokens for the next firing.
				copy(h.buf, h.buf[len(h.buf)-h.keep:])
			}
		}
		return err
	}
}
