package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// TestPoolYield checks where a unit that gives up its turn while still
// ready is queued. A round's commit readies a producer (room) and a
// consumer (tokens): the consumer takes the worker's next slot, the
// producer its queue. While every other worker is busy, the yielding unit
// goes to the back of that queue, and a thief that comes later takes the
// oldest queued unit. While another worker is idle or spinning, it goes on
// the injection queue, where that worker looks first: it takes over the
// long-running unit instead of the producer queued before it.
func TestPoolYield(t *testing.T) {
	t.Parallel()
	p := newPool(2)
	w0, w1 := p.ws[0], p.ws[1]
	producer, consumer, yielded := &unit{}, &unit{}, &unit{}

	p.push(w0, task{u: producer})
	p.push(w0, task{u: consumer})
	p.yield(w0, task{u: yielded})
	if p.ninj.Load() != 0 || w0.n.Load() != 3 {
		t.Fatalf("no idle worker: %d injected, %d on worker 0; expected 0 and 3", p.ninj.Load(), w0.n.Load())
	}
	for i, want := range []*unit{producer, yielded} {
		if got, _ := w1.find(); got.u != want {
			t.Errorf("no idle worker: steal %d took the wrong unit; expected the oldest queued one", i)
		}
	}
	if got, _ := w0.find(); got.u != consumer {
		t.Errorf("no idle worker: worker 0 did not take its next slot")
	}

	p.spinning.Add(1) // worker 1 polls for work
	p.push(w0, task{u: producer})
	p.push(w0, task{u: consumer})
	p.yield(w0, task{u: yielded})
	p.spinning.Add(-1)
	if p.ninj.Load() != 1 || w0.n.Load() != 2 {
		t.Fatalf("worker 1 spinning: %d injected, %d on worker 0; expected 1 and 2", p.ninj.Load(), w0.n.Load())
	}
	if got, _ := w1.find(); got.u != yielded {
		t.Errorf("worker 1 spinning: it did not take the yielded unit first")
	}
	for _, want := range []*unit{consumer, producer} {
		if got, _ := w0.find(); got.u != want {
			t.Errorf("worker 1 spinning: worker 0 did not keep the units it readied, next slot first")
		}
	}
}

// TestRoundsLastAboutTheTarget: a rate-1 source whose firings take 10 µs
// may fire rounds of 4 096 firings (half its channel), 41 ms; its
// consumer would see nothing for that long. Its first round is bounded
// to firstRoundFirings and the later ones to about roundTargetNs, so the
// consumer's first firing comes within a few milliseconds.
func TestRoundsLastAboutTheTarget(t *testing.T) {
	t.Parallel()
	const n = 6000
	g := graph.New("rounds")
	var first, got atomic.Int64
	var start atomic.Int64
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		if f.Index() >= n {
			return ErrEndOfStream
		}
		if f.Index() == 0 {
			start.Store(time.Now().UnixNano())
		}
		for end := time.Now().Add(10 * time.Microsecond); time.Now().Before(end); {
		}
		Output[int64](f, 0)[0] = f.Index()
		return nil
	})))
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		if got.Add(1) == 1 {
			first.Store(time.Now().UnixNano())
		}
		return nil
	})))
	graph.Connect(g, graph.AddOutput[int64](src, "out", graph.SDF(1)), graph.AddInput[int64](sink, "in", graph.SDF(1)))
	if _, err := Run(context.Background(), g, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if got.Load() != n {
		t.Fatalf("sink fired %d times, want %d", got.Load(), n)
	}
	if wait := time.Duration(first.Load() - start.Load()); wait > 20*time.Millisecond {
		t.Errorf("the sink's first firing came %v after the source's: want well under the 41 ms of a 4 096-firing round", wait)
	}
}
