package runtime

import (
	"sync"

	"github.com/sluicehq/sluice/graph"
)

// iterated wraps the Go implementation of an iterated actor
// (graph.Actor.Iterations > 1): one firing calls fire Iterations times;
// the first call reads the firing's input windows, the last writes its
// output windows, and in between each swap pair's output of one call is
// the next call's input (two scratch buffers, exchanged).
func iterated(a *graph.Actor, fire FireFunc) FireFunc {
	type pair struct{ o, i, n int }
	var pairs []pair
	for o, in := range a.Swap {
		pr := pair{o: -1, i: -1}
		for k, p := range a.Outputs {
			if p.Name == o {
				pr.o, pr.n = k, p.Rate.Sum()*p.Type.Size
			}
		}
		for k, p := range a.Inputs {
			if p.Name == in {
				pr.i = k
			}
		}
		if pr.o >= 0 && pr.i >= 0 {
			pairs = append(pairs, pr)
		}
	}
	n := a.Iterations
	type scratch struct {
		bufs      [][2][]byte
		ins, outs [][]byte
		f         Firing
	}
	pool := sync.Pool{New: func() any {
		s := &scratch{bufs: make([][2][]byte, len(pairs))}
		for k, pr := range pairs {
			s.bufs[k] = [2][]byte{make([]byte, pr.n), make([]byte, pr.n)}
		}
		return s
	}}
	return func(f *Firing) error {
		s := pool.Get().(*scratch)
		defer pool.Put(s)
		s.ins = append(s.ins[:0], f.ins...)
		s.outs = append(s.outs[:0], f.outs...)
		s.f = *f
		s.f.ins, s.f.outs = s.ins, s.outs
		for it := 0; it < n; it++ {
			for k, pr := range pairs {
				if it > 0 {
					s.ins[pr.i] = s.bufs[k][(it-1)%2]
				}
				if it < n-1 {
					s.outs[pr.o] = s.bufs[k][it%2]
				} else {
					s.outs[pr.o] = f.outs[pr.o]
				}
			}
			if err := fire(&s.f); err != nil {
				return err
			}
		}
		return nil
	}
}
