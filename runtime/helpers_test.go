package runtime

import (
	"encoding/json"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/graph"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter is a source of consecutive int64 values, rate per firing, ending
// after total tokens (total < 0: never; it then needs Iterations).
type counter struct {
	next  int64
	total int64
}

func (c *counter) fire(f *Firing) error {
	out := Output[int64](f, 0)
	if c.total >= 0 && c.next+int64(len(out)) > c.total {
		return ErrEndOfStream
	}
	for i := range out {
		out[i] = c.next
		c.next++
	}
	return nil
}

func addSource(g *graph.Graph, name string, rate int, total int64) graph.OutPort[int64] {
	c := &counter{total: total}
	a := g.AddActor(name, graph.Stateful(), graph.WithFunc(FireFunc(c.fire)))
	return graph.AddOutput[int64](a, "out", graph.SDF(rate))
}

// collector is a sink that keeps every token.
type collector struct {
	mu  sync.Mutex
	got []int64
}

func (c *collector) fire(f *Firing) error {
	c.mu.Lock()
	c.got = append(c.got, Input[int64](f, 0)...)
	c.mu.Unlock()
	return nil
}

func (c *collector) values() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.got...)
}

func addSink(g *graph.Graph, name string, rate graph.Rate) (graph.InPort[int64], *collector) {
	c := &collector{}
	a := g.AddActor(name, graph.Stateful(), graph.WithFunc(FireFunc(c.fire)))
	return graph.AddInput[int64](a, "in", rate), c
}

// addMap adds a stateless actor out[i] = fn(in[i]) with equal rates.
func addMap(g *graph.Graph, name string, rate int, fn func(int64) int64, opts ...graph.ActorOption) (graph.InPort[int64], graph.OutPort[int64]) {
	fire := func(f *Firing) error {
		in, out := Input[int64](f, 0), Output[int64](f, 0)
		for i := range in {
			out[i] = fn(in[i])
		}
		return nil
	}
	a := g.AddActor(name, append(opts, graph.WithFunc(FireFunc(fire)))...)
	return graph.AddInput[int64](a, "in", graph.SDF(rate)), graph.AddOutput[int64](a, "out", graph.SDF(rate))
}

func checkSeq(t *testing.T, got []int64, n int64, fn func(int64) int64) {
	t.Helper()
	if int64(len(got)) != n {
		t.Fatalf("got %d tokens, want %d", len(got), n)
	}
	for i, v := range got {
		if want := fn(int64(i)); v != want {
			t.Fatalf("token %d = %d, want %d", i, v, want)
		}
	}
}

func firings(t *testing.T, st *Stats, name string) int64 {
	t.Helper()
	a := st.Actor(name)
	if a == nil {
		t.Fatalf("no stats for actor %s", name)
	}
	return a.Firings
}

// tracedEvent is one event of a written trace (Options.Trace), as a test
// reads it back.
type tracedEvent struct {
	Name, Cat, Ph string
	Tid           int
	Ts, Dur       float64
	Args          struct {
		Name   string // thread_name metadata
		Bytes  int64  // a copy's
		Firing int64
	}
}

// readTrace parses a written trace: its events, and each thread's name by
// tid (the lanes).
func readTrace(t *testing.T, data []byte) ([]tracedEvent, map[int]string) {
	t.Helper()
	var tr struct {
		TraceEvents []tracedEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("trace is not JSON: %v\n%s", err, data[:min(len(data), 500)])
	}
	lanes := map[int]string{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			lanes[e.Tid] = e.Args.Name
		}
	}
	return tr.TraceEvents, lanes
}
