package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

func id(v int64) int64 { return v }

func TestSDFFiringsEqualRepetitionVector(t *testing.T) {
	t.Parallel()
	// src (2) -> (3) a (1) -> (1) sink ; rv: src 3, a 2, sink 2
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			g := graph.New("sdf")
			src := addSource(g, "src", 2, -1)
			a := g.AddActor("a", graph.WithFunc(func(f *Firing) error {
				in := Input[int64](f, 0)
				Output[int64](f, 0)[0] = in[0] + in[1] + in[2]
				return nil
			}))
			ai := graph.AddInput[int64](a, "in", graph.SDF(3))
			ao := graph.AddOutput[int64](a, "out", graph.SDF(1))
			si, col := addSink(g, "sink", graph.SDF(1))
			graph.Connect(g, src, ai)
			graph.Connect(g, ao, si)
			const iters = 1000
			st, err := Run(context.Background(), g, Options{Iterations: iters, Workers: workers, CheckEmpty: true})
			if err != nil {
				t.Fatal(err)
			}
			for name, q := range map[string]int64{"src": 3, "a": 2, "sink": 2} {
				if got := firings(t, st, name); got != q*iters {
					t.Errorf("%s fired %d times, want %d", name, got, q*iters)
				}
			}
			checkSeq(t, col.values(), 2*iters, func(i int64) int64 { return 9*i + 3 })
		})
	}
}

func TestCSDFFiringsEqualRepetitionVector(t *testing.T) {
	t.Parallel()
	// src (1) -> [1,2] c [2,0,1] -> sink(3)
	// c has 6 phases per cycle (lcm 2,3): consumes 1,2,1,2,1,2 = 9, produces 2,0,1,2,0,1 = 6.
	g := graph.New("csdf")
	src := addSource(g, "src", 1, -1)
	var phases []int
	c := g.AddActor("c", graph.Stateful(), graph.WithFunc(func(f *Firing) error {
		in, out := Input[int64](f, 0), Output[int64](f, 0)
		phases = append(phases, f.Phase())
		want := []int{1, 2}[f.Phase()%2]
		if len(in) != want {
			return fmt.Errorf("phase %d: got %d input tokens, want %d", f.Phase(), len(in), want)
		}
		if wo := []int{2, 0, 1}[f.Phase()%3]; len(out) != wo {
			return fmt.Errorf("phase %d: got %d output slots, want %d", f.Phase(), len(out), wo)
		}
		for i := range out {
			out[i] = in[0]
		}
		return nil
	}))
	ci := graph.AddInput[int64](c, "in", graph.CSDF(1, 2))
	co := graph.AddOutput[int64](c, "out", graph.CSDF(2, 0, 1))
	si, _ := addSink(g, "sink", graph.SDF(3))
	graph.Connect(g, src, ci)
	graph.Connect(g, co, si)
	const iters = 500
	st, err := Run(context.Background(), g, Options{Iterations: iters, CheckEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	// one iteration: src 9, c 6, sink 2
	for name, q := range map[string]int64{"src": 9, "c": 6, "sink": 2} {
		if got := firings(t, st, name); got != q*iters {
			t.Errorf("%s fired %d times, want %d", name, got, q*iters)
		}
	}
	for i, p := range phases {
		if p != i%6 {
			t.Fatalf("firing %d had phase %d, want %d", i, p, i%6)
		}
	}
	if st.Actor("c").Kind != "csdf" {
		t.Errorf("kind = %q, want csdf", st.Actor("c").Kind)
	}
}

func TestEndOfStreamDrains(t *testing.T) {
	t.Parallel()
	g := graph.New("eos")
	src := addSource(g, "src", 4, 10000)
	mi, mo := addMap(g, "double", 2, func(v int64) int64 { return 2 * v })
	si, col := addSink(g, "sink", graph.SDF(8))
	graph.Connect(g, src, mi, graph.Capacity(16))
	graph.Connect(g, mo, si)
	st, err := Run(context.Background(), g, Options{CheckEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, col.values(), 10000, func(i int64) int64 { return 2 * i })
	if got := firings(t, st, "src"); got != 2500 {
		t.Errorf("src fired %d, want 2500", got)
	}
	if a := st.Actor("double"); a.TokensIn != 10000 || a.TokensOut != 10000 || a.BytesIn != 80000 {
		t.Errorf("double stats = %+v", *a)
	}
}

func TestEndOfStreamPartialLeftover(t *testing.T) {
	t.Parallel()
	// 10 tokens into a rate-4 consumer: 2 firings, 2 tokens left over.
	g := graph.New("leftover")
	src := addSource(g, "src", 1, 10)
	si, col := addSink(g, "sink", graph.SDF(4))
	graph.Connect(g, src, si)
	st, err := Run(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(col.values()) != 8 || st.Channels[0].Left != 2 {
		t.Fatalf("got %d tokens, %d left; want 8 and 2", len(col.values()), st.Channels[0].Left)
	}
	_, err = Run(context.Background(), rebuildLeftover(), Options{CheckEmpty: true})
	if err == nil || !strings.Contains(err.Error(), "src.out->sink.in holds 2 tokens") {
		t.Fatalf("CheckEmpty: got %v", err)
	}
}

func rebuildLeftover() *graph.Graph {
	g := graph.New("leftover")
	src := addSource(g, "src", 1, 10)
	si, _ := addSink(g, "sink", graph.SDF(4))
	graph.Connect(g, src, si)
	return g
}

func TestBroadcast(t *testing.T) {
	t.Parallel()
	g := graph.New("bcast")
	src := addSource(g, "src", 3, 3000)
	s1, c1 := addSink(g, "s1", graph.SDF(1))
	s2, c2 := addSink(g, "s2", graph.SDF(5))
	graph.Connect(g, src, s1)
	graph.Connect(g, src, s2)
	if _, err := Run(context.Background(), g, Options{CheckEmpty: true}); err != nil {
		t.Fatal(err)
	}
	checkSeq(t, c1.values(), 3000, id)
	checkSeq(t, c2.values(), 3000, id)
}

func TestInitialTokensCycle(t *testing.T) {
	t.Parallel()
	// a -> b -> a with 1 initial token on b->a: an accumulator loop.
	g := graph.New("loop")
	src := addSource(g, "src", 1, -1)
	a := g.AddActor("acc", graph.WithFunc(func(f *Firing) error {
		x, prev := Input[int64](f, 0), Input[int64](f, 1)
		Output[int64](f, 0)[0] = x[0] + prev[0]
		Output[int64](f, 1)[0] = x[0] + prev[0]
		return nil
	}))
	ax := graph.AddInput[int64](a, "x", graph.SDF(1))
	ap := graph.AddInput[int64](a, "prev", graph.SDF(1))
	ao := graph.AddOutput[int64](a, "out", graph.SDF(1))
	af := graph.AddOutput[int64](a, "fb", graph.SDF(1))
	si, col := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, ax)
	graph.Connect(g, af, ap, graph.Initial(1), graph.InitialData(make([]byte, 8)))
	graph.Connect(g, ao, si)
	if _, err := Run(context.Background(), g, Options{Iterations: 100, CheckEmpty: true}); err != nil {
		t.Fatal(err)
	}
	checkSeq(t, col.values(), 100, func(i int64) int64 { return i * (i + 1) / 2 })
}

func TestKPNAndSDFTogether(t *testing.T) {
	t.Parallel()
	// src (SDF, rate 4) -> filter (KPN: keeps even values, reads 3 at a time)
	//   -> scale (SDF rate 2) -> sink (SDF rate 1)
	g := graph.New("mixed")
	src := addSource(g, "src", 4, 4000)
	p := g.AddActor("evens", graph.WithFunc(ProcessFunc(func(p *Process) error {
		buf := make([]byte, 3*8)
		for {
			n, err := p.In(0).Read(p.Context(), buf)
			for _, v := range fifo.Tokens[int64](buf[:n]) {
				if v%2 == 0 {
					if werr := p.Out(0).Write(p.Context(), fifo.Bytes([]int64{v})); werr != nil {
						return werr
					}
				}
			}
			if err != nil {
				return err // ErrClosed at the end: a normal end
			}
		}
	})))
	pi := graph.AddInput[int64](p, "in", graph.Dynamic())
	po := graph.AddOutput[int64](p, "out", graph.Dynamic())
	mi, mo := addMap(g, "scale", 2, func(v int64) int64 { return v * 10 })
	si, col := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, pi)
	graph.Connect(g, po, mi)
	graph.Connect(g, mo, si)
	st, err := Run(context.Background(), g, Options{CheckEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, col.values(), 2000, func(i int64) int64 { return 20 * i })
	if st.Actor("evens").Kind != "process" {
		t.Errorf("evens kind = %q", st.Actor("evens").Kind)
	}
	if got := firings(t, st, "scale"); got != 1000 {
		t.Errorf("scale fired %d, want 1000", got)
	}
}

func TestReplicasPreserveOrder(t *testing.T) {
	t.Parallel()
	for _, reps := range []int{2, 3, 4} {
		t.Run(fmt.Sprint("replicas=", reps), func(t *testing.T) {
			g := graph.New("team")
			src := addSource(g, "src", 2, 6000)
			var concurrent, peak atomic.Int32
			var replicasSeen [8]atomic.Int64
			fire := func(f *Firing) error {
				n := concurrent.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				replicasSeen[f.Replica()].Add(1)
				if f.Replicas() != reps {
					return fmt.Errorf("Replicas() = %d, want %d", f.Replicas(), reps)
				}
				if f.Replica() != int(f.Index()%int64(reps)) {
					return fmt.Errorf("firing %d on replica %d", f.Index(), f.Replica())
				}
				in, out := Input[int64](f, 0), Output[int64](f, 0)
				spin(time.Duration(f.Index()%7) * time.Microsecond)
				for i := range out {
					out[i] = in[i/3] * 3
				}
				concurrent.Add(-1)
				return nil
			}
			a := g.AddActor("work", graph.WithFunc(FireFunc(fire)))
			ai := graph.AddInput[int64](a, "in", graph.SDF(1))
			ao := graph.AddOutput[int64](a, "out", graph.SDF(3))
			si, col := addSink(g, "sink", graph.SDF(2))
			graph.Connect(g, src, ai)
			graph.Connect(g, ao, si)
			m := &graph.Mapping{Actors: map[string]*graph.Placement{"work": {Device: "cpu", Replicas: reps}}}
			st, err := Run(context.Background(), g, Options{Mapping: m, Workers: 4, CheckEmpty: true})
			if err != nil {
				t.Fatal(err)
			}
			checkSeq(t, col.values(), 18000, func(i int64) int64 { return i / 3 * 3 })
			if st.Actor("work").Replicas != reps || st.Actor("work").Firings != 6000 {
				t.Errorf("work stats: %+v", *st.Actor("work"))
			}
			for r := 0; r < reps; r++ {
				if replicasSeen[r].Load() != int64(6000/reps) && 6000%reps == 0 {
					t.Errorf("replica %d fired %d times, want %d", r, replicasSeen[r].Load(), 6000/reps)
				}
			}
			t.Logf("peak concurrent firings: %d", peak.Load())
		})
	}
}

func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

func TestActorErrorNamesActorAndFiring(t *testing.T) {
	t.Parallel()
	g := graph.New("err")
	src := addSource(g, "src", 1, -1)
	boom := errors.New("boom")
	a := g.AddActor("bad", graph.WithFunc(func(f *Firing) error {
		if f.Index() == 41 {
			return boom
		}
		return nil
	}))
	ai := graph.AddInput[int64](a, "in", graph.SDF(1))
	graph.Connect(g, src, ai)
	_, err := Run(context.Background(), g, Options{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "actor bad firing 41: boom") {
		t.Fatalf("got %v", err)
	}
}

func TestPanicNamesActorAndFiring(t *testing.T) {
	t.Parallel()
	for _, replicas := range []int{1, 2} {
		g := graph.New("panic")
		src := addSource(g, "src", 1, -1)
		mi, mo := addMap(g, "m", 1, func(v int64) int64 {
			if v == 100 {
				panic("kaboom")
			}
			return v
		})
		si, _ := addSink(g, "sink", graph.SDF(1))
		graph.Connect(g, src, mi)
		graph.Connect(g, mo, si)
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"m": {Replicas: replicas}}}
		_, err := Run(context.Background(), g, Options{Mapping: m})
		var pe *PanicError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "actor m firing 100: panic: kaboom") {
			t.Fatalf("replicas %d: got %v", replicas, err)
		}
	}
}

func TestProcessPanicAndError(t *testing.T) {
	t.Parallel()
	g := graph.New("procpanic")
	src := addSource(g, "src", 1, -1)
	p := g.AddActor("p", graph.WithFunc(func(p *Process) error {
		if _, err := p.In(0).Acquire(p.Context(), 5); err != nil {
			return err
		}
		panic("process blew up")
	}))
	pi := graph.AddInput[int64](p, "in", graph.Dynamic())
	graph.Connect(g, src, pi)
	_, err := Run(context.Background(), g, Options{})
	if err == nil || !strings.Contains(err.Error(), "actor p (process): panic: process blew up") {
		t.Fatalf("got %v", err)
	}
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	g := graph.New("forever")
	src := addSource(g, "src", 1, -1)
	mi, mo := addMap(g, "m", 1, id)
	p := g.AddActor("p", graph.WithFunc(func(p *Process) error {
		buf := make([]byte, 64)
		for {
			if _, err := p.In(0).Read(p.Context(), buf); err != nil {
				return err
			}
		}
	}))
	pi := graph.AddInput[int64](p, "in", graph.Dynamic())
	graph.Connect(g, src, mi)
	graph.Connect(g, mo, pi)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	st, err := Run(ctx, g, Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("cancellation took %v", time.Since(start))
	}
	if st == nil || st.Actor("src").Firings == 0 {
		t.Fatalf("expected partial stats, got %+v", st)
	}
}

func TestWatchdogSDFCycle(t *testing.T) {
	t.Parallel()
	// a and b feed each other without initial tokens.
	g := graph.New("dead")
	a := g.AddActor("a", graph.WithFunc(func(f *Firing) error { return nil }))
	b := g.AddActor("b", graph.WithFunc(func(f *Firing) error { return nil }))
	ai := graph.AddInput[int32](a, "in", graph.SDF(1))
	ao := graph.AddOutput[int32](a, "out", graph.SDF(1))
	bi := graph.AddInput[int32](b, "in", graph.SDF(1))
	bo := graph.AddOutput[int32](b, "out", graph.SDF(1))
	graph.Connect(g, ao, bi)
	graph.Connect(g, bo, ai)
	start := time.Now()
	_, err := Run(context.Background(), g, Options{Watchdog: 200 * time.Millisecond})
	el := time.Since(start)
	if !errors.Is(err, ErrDeadlock) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"a waits on channel b.out->a.in (empty, 0/", "b waits on channel a.out->b.in (empty, 0/"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if el > time.Second {
		t.Errorf("deadlock reported after %v, want < 1s", el)
	}
}

func TestWatchdogFullAndKPN(t *testing.T) {
	t.Parallel()
	// src feeds a and b; the process p reads only a, so b fills up and src
	// blocks on it while p waits for a.
	g := graph.New("dead2")
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(func(f *Firing) error { return nil }))
	o1 := graph.AddOutput[int32](s, "o1", graph.SDF(1))
	o2 := graph.AddOutput[int32](s, "o2", graph.SDF(1))
	p := g.AddActor("p", graph.WithFunc(func(p *Process) error {
		for {
			if _, err := p.In(0).Acquire(p.Context(), 1); err != nil {
				return err
			}
			p.In(0).Release(1)
		}
	}))
	pa := graph.AddInput[int32](p, "a", graph.Dynamic())
	pb := graph.AddInput[int32](p, "b", graph.Dynamic())
	graph.Connect(g, o1, pa, graph.Capacity(4))
	graph.Connect(g, o2, pb, graph.Capacity(4))
	start := time.Now()
	_, err := Run(context.Background(), g, Options{})
	if !errors.Is(err, ErrDeadlock) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"src waits on channel src.o2->p.b (full, 4/4 tokens)", "p waits on channel src.o1->p.a (empty, 0/4 tokens)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("deadlock reported after %v, want < 1s", el)
	}
}

func TestWatchdogPooledFull(t *testing.T) {
	t.Parallel()
	// j needs 5 tokens on b but src gives one per firing, and a (capacity
	// 4) fills first: src waits on a full channel, j on a short one.
	g := graph.New("dead3")
	s := g.AddActor("src", graph.Stateful(), graph.WithFunc(func(f *Firing) error { return nil }))
	o1 := graph.AddOutput[int32](s, "o1", graph.SDF(1))
	o2 := graph.AddOutput[int32](s, "o2", graph.SDF(1))
	j := g.AddActor("j", graph.WithFunc(func(f *Firing) error { return nil }))
	ja := graph.AddInput[int32](j, "a", graph.SDF(1))
	jb := graph.AddInput[int32](j, "b", graph.SDF(5))
	graph.Connect(g, o1, ja, graph.Capacity(4))
	graph.Connect(g, o2, jb, graph.Capacity(8))
	start := time.Now()
	_, err := Run(context.Background(), g, Options{Watchdog: 300 * time.Millisecond})
	if !errors.Is(err, ErrDeadlock) {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("deadlock reported after %v, want < 1s", el)
	}
	t.Log(err)
}

// tracedGraph is the traced tests' graph: a source of 1000 firings, a
// map of 2000 in two replicas, a sink of 500; and its mapping.
func tracedGraph(name string) (*graph.Graph, *graph.Mapping) {
	g := graph.New(name)
	src := addSource(g, "src", 2, 2000)
	mi, mo := addMap(g, "m", 1, id)
	si, _ := addSink(g, "sink", graph.SDF(4))
	graph.Connect(g, src, mi)
	graph.Connect(g, mo, si)
	return g, &graph.Mapping{Actors: map[string]*graph.Placement{"m": {Replicas: 2}}}
}

func TestTraceOneEventPerFiring(t *testing.T) {
	t.Parallel()
	g, m := tracedGraph("trace")
	var buf bytes.Buffer
	st, err := Run(context.Background(), g, Options{Trace: &buf, Mapping: m})
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Name string          `json:"name"`
			Cat  string          `json:"cat"`
			Ph   string          `json:"ph"`
			Tid  int             `json:"tid"`
			Ts   float64         `json:"ts"`
			Dur  float64         `json:"dur"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatalf("trace is not JSON: %v\n%s", err, buf.String()[:min(buf.Len(), 500)])
	}
	count := map[string]int64{}
	threads := 0
	for _, e := range tr.TraceEvents {
		switch e.Ph {
		case "X":
			count[e.Name]++
			if e.Dur < 0 || e.Ts < 0 {
				t.Fatalf("bad event %+v", e)
			}
		case "M":
			if e.Name == "thread_name" {
				threads++
			}
		}
	}
	for _, a := range st.Actors {
		if count[a.Name] != a.Firings {
			t.Errorf("%s: %d trace events, %d firings", a.Name, count[a.Name], a.Firings)
		}
	}
	if count["src"] != 1000 || threads == 0 {
		t.Errorf("src events %d, threads %d", count["src"], threads)
	}
}

func TestStatsTableAndProfile(t *testing.T) {
	t.Parallel()
	g := graph.New("prof")
	src := addSource(g, "src", 1, 500)
	mi, mo := addMap(g, "slow", 1, func(v int64) int64 { spin(20 * time.Microsecond); return v })
	si, _ := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, mi)
	graph.Connect(g, mo, si)
	st, err := Run(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := st.Actor("slow")
	if a.Firings != 500 || a.Mean < 20*time.Microsecond || a.Min < 20*time.Microsecond || a.P50 < 15*time.Microsecond || a.Max < a.Mean || a.Busy < 10*time.Millisecond {
		t.Errorf("slow stats: %+v", *a)
	}
	var tb, pf bytes.Buffer
	if err := st.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "slow") || !strings.Contains(tb.String(), "src.out->slow.in") {
		t.Errorf("table:\n%s", tb.String())
	}
	if err := st.WriteProfile(&pf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"actors:\n", "  \"slow\":\n", "    firings: 500\n", "    mean_ns: ", "    p50_ns: "} {
		if !strings.Contains(pf.String(), want) {
			t.Errorf("profile lacks %q:\n%s", want, pf.String())
		}
	}
	if _, err := json.Marshal(st); err != nil {
		t.Fatal(err)
	}
}

func TestMappingErrors(t *testing.T) {
	t.Parallel()
	build := func() *graph.Graph {
		g := graph.New("m")
		src := addSource(g, "src", 1, 10)
		si, _ := addSink(g, "sink", graph.SDF(1))
		graph.Connect(g, src, si)
		return g
	}
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"sink": {Device: "cuda:0"}}}
	_, err := Run(context.Background(), build(), Options{Mapping: m})
	if err == nil || !strings.Contains(err.Error(), "has no kernel implementation (has: go)") {
		t.Fatalf("got %v", err)
	}
	m = &graph.Mapping{Actors: map[string]*graph.Placement{"src": {Replicas: 2}}}
	if _, err := Run(context.Background(), build(), Options{Mapping: m}); err == nil {
		t.Fatal("replicating a stateful actor: expected an error")
	}
}

func TestIOAffinityPriority(t *testing.T) {
	t.Parallel()
	g := graph.New("misc")
	src := addSource(g, "src", 1, 3000)
	mi, mo := addMap(g, "io", 1, id, graph.IO())
	pi, po := addMap(g, "pinned", 1, id)
	si, col := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, mi)
	graph.Connect(g, mo, pi)
	graph.Connect(g, po, si)
	var asked atomic.Int32
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"pinned": {Affinity: []int{0}}}}
	_, err := Run(context.Background(), g, Options{Mapping: m, Priority: func(a *graph.Actor) int {
		asked.Add(1)
		if a.Name == "sink" {
			return 10
		}
		return 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, col.values(), 3000, id)
	if asked.Load() != 4 {
		t.Errorf("priority function asked %d times, want 4", asked.Load())
	}
}

func TestProgressAndComposite(t *testing.T) {
	t.Parallel()
	sub := graph.New("inner")
	ii, io := addMap(sub, "x2", 1, func(v int64) int64 { spin(5 * time.Microsecond); return 2 * v })
	_, _ = ii, io
	sub.Expose(graph.In, "in", "x2", "in", "")
	sub.Expose(graph.Out, "out", "x2", "out", "")
	g := graph.New("outer")
	src := addSource(g, "src", 1, 20000)
	c := g.AddActor("comp", graph.Composite(sub))
	ci := graph.AddInput[int64](c, "in", graph.SDF(1))
	co := graph.AddOutput[int64](c, "out", graph.SDF(1))
	si, col := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, ci)
	graph.Connect(g, co, si)
	var snaps atomic.Int32
	st, err := Run(context.Background(), g, Options{ProgressInterval: 10 * time.Millisecond, Progress: func(s Snapshot) {
		snaps.Add(1)
		if len(s.Actors) != 3 {
			t.Errorf("snapshot has %d actors", len(s.Actors))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, col.values(), 20000, func(i int64) int64 { return 2 * i })
	if st.Actor("comp/x2") == nil {
		t.Errorf("no flattened actor comp/x2 in %+v", st.Actors)
	}
	t.Logf("%d snapshots", snaps.Load())
}

func TestReplicasRunConcurrently(t *testing.T) {
	t.Parallel()
	// Firing 0 waits for firing 1 to start: only a team whose two members
	// fire at once gets past it.
	g := graph.New("rendezvous")
	src := addSource(g, "src", 1, 64)
	started1 := make(chan struct{})
	fire := func(f *Firing) error {
		switch f.Index() {
		case 0:
			select {
			case <-started1:
			case <-time.After(10 * time.Second):
				return errors.New("firing 1 never ran while firing 0 was running")
			}
		case 1:
			close(started1)
		}
		copy(Output[int64](f, 0), Input[int64](f, 0))
		return nil
	}
	a := g.AddActor("work", graph.WithFunc(FireFunc(fire)))
	ai := graph.AddInput[int64](a, "in", graph.SDF(1))
	ao := graph.AddOutput[int64](a, "out", graph.SDF(1))
	si, col := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, src, ai)
	graph.Connect(g, ao, si)
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"work": {Replicas: 2}}}
	if _, err := Run(context.Background(), g, Options{Mapping: m, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	checkSeq(t, col.values(), 64, id)
}

// TestEndedInputDoesNotHoldWorker: an actor whose first input has ended
// with tokens to spare, waiting on a second input, must give its worker
// back. With one worker, holding it would starve the second input's
// producer forever.
func TestEndedInputDoesNotHoldWorker(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"sum", "mid"} {
		t.Run(first+" first", func(t *testing.T) {
			g := graph.New("ended")
			src := addSource(g, "src", 1, -1)
			mi, mo := addMap(g, "mid", 1, id)
			sum := g.AddActor("sum", graph.WithFunc(FireFunc(func(f *Firing) error {
				Output[int64](f, 0)[0] = Input[int64](f, 0)[0] + Input[int64](f, 1)[0]
				return nil
			})))
			i0 := graph.AddInput[int64](sum, "a", graph.SDF(1))
			i1 := graph.AddInput[int64](sum, "b", graph.SDF(1))
			so := graph.AddOutput[int64](sum, "out", graph.SDF(1))
			si, col := addSink(g, "sink", graph.SDF(1))
			graph.Connect(g, src, i0, graph.Capacity(64))
			graph.Connect(g, src, mi, graph.Capacity(64))
			graph.Connect(g, mo, i1, graph.Capacity(64))
			graph.Connect(g, so, si, graph.Capacity(64))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			prio := func(a *graph.Actor) int {
				switch a.Name {
				case "src":
					return 10
				case first:
					return 5
				}
				return 0
			}
			if _, err := Run(ctx, g, Options{Iterations: 32, Workers: 1, Priority: prio}); err != nil {
				t.Fatalf("expected the run to finish, found %v", err)
			}
			checkSeq(t, col.values(), 32, func(i int64) int64 { return 2 * i })
		})
	}
}

// Live snapshots carry busy and blocked time, channel fills within their
// capacities, and are race-free while the run goes.
func TestProgressLiveStatistics(t *testing.T) {
	t.Parallel()
	g := graph.New("live")
	src := addSource(g, "src", 64, -1)
	mi, mo := addMap(g, "slow", 64, func(v int64) int64 { return v * 3 })
	si, _ := addSink(g, "sink", graph.SDF(64))
	graph.Connect(g, src, mi, graph.Capacity(256))
	graph.Connect(g, mo, si, graph.Capacity(256))
	var last Snapshot
	n := 0
	_, err := Run(context.Background(), g, Options{Iterations: 20000, ProgressInterval: time.Millisecond,
		Progress: func(s Snapshot) {
			n++
			last = s
			for _, c := range s.Channels {
				if c.Fill < 0 || c.Fill > int64(c.Capacity) || c.Capacity != 256 {
					t.Errorf("channel %s: fill %d of capacity %d, expected 0..256 of 256", c.Name, c.Fill, c.Capacity)
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no snapshot during the run")
	}
	if len(last.Channels) != 2 || last.Channels[0].Name != "src.out->slow.in" {
		t.Fatalf("channels = %+v, expected the two channels in graph order", last.Channels)
	}
	var slow ActorProgress
	for _, a := range last.Actors {
		if a.Name == "slow" {
			slow = a
		}
	}
	if slow.Busy <= 0 {
		t.Fatalf("slow: busy %v in the last snapshot (%d firings), expected > 0", slow.Busy, slow.Firings)
	}
}

// Rounds of a team of empty firings follow each other as fast as the
// workers claim them, with sizes that vary (a capacity that is no multiple
// of the team): no worker may claim a firing past its round's end, whose
// windows stop there.
func TestReplicasRoundsBackToBack(t *testing.T) {
	t.Parallel()
	const n = 200_000
	for _, reps := range []int{3, 8} {
		g := graph.New("team")
		src := addSource(g, "src", 5, n)
		a := g.AddActor("work", graph.WithFunc(FireFunc(func(f *Firing) error {
			copy(Output[int64](f, 0), Input[int64](f, 0))
			return nil
		})))
		ai := graph.AddInput[int64](a, "in", graph.SDF(1))
		ao := graph.AddOutput[int64](a, "out", graph.SDF(1))
		si, col := addSink(g, "sink", graph.SDF(7))
		graph.Connect(g, src, ai, graph.Capacity(1000))
		graph.Connect(g, ao, si, graph.Capacity(997))
		m := &graph.Mapping{Actors: map[string]*graph.Placement{"work": {Device: "cpu", Replicas: reps}}}
		if _, err := Run(context.Background(), g, Options{Mapping: m, Workers: 8}); err != nil {
			t.Fatal(err)
		}
		checkSeq(t, col.values(), n-n%7, func(i int64) int64 { return i })
	}
}

// A round of long firings commits each one as it ends: the consumer of a
// source whose firings each wait for the consumer's progress starts on
// the first token while the source's round is still going (the run would
// otherwise deadlock until the source's whole round ended), and the
// progress callback sees the firings that have started before they end.
func TestLongFiringsPipelineAndShowStarted(t *testing.T) {
	t.Parallel()
	const n = 4
	var consumed atomic.Int64
	seenRunning := make(chan struct{})
	var once sync.Once
	g := graph.New("long")
	src := g.AddActor("src", graph.WithFunc(FireFunc(func(f *Firing) error {
		// Firing i waits until the consumer has taken firing i-1's
		// token: only a round that commits each firing lets it.
		deadline := time.Now().Add(10 * time.Second)
		for consumed.Load() < f.Index() {
			if time.Now().After(deadline) {
				return fmt.Errorf("firing %d: the consumer has %d tokens after 10 s: the round held them back", f.Index(), consumed.Load())
			}
			time.Sleep(time.Millisecond) // a long firing: polls its condition
		}
		spin(300 * time.Microsecond)
		return nil
	})))
	so := graph.AddOutput[int64](src, "out", graph.SDF(1))
	snk := g.AddActor("snk", graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
		if f.Index() == 0 {
			select { // the first firing lasts until progress saw it run
			case <-seenRunning:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("progress never showed snk's first firing running")
			}
		}
		consumed.Add(1)
		return nil
	})))
	si := graph.AddInput[int64](snk, "in", graph.SDF(1))
	graph.Connect(g, so, si)
	st, err := Run(context.Background(), g, Options{Iterations: n, Workers: 2, ProgressInterval: time.Millisecond,
		Progress: func(s Snapshot) {
			for _, a := range s.Actors {
				if a.Started < a.Firings {
					t.Errorf("%s: %d started, %d done: expected started ≥ done", a.Name, a.Started, a.Firings)
				}
				if a.Name == "snk" && a.Started > a.Firings {
					once.Do(func() { close(seenRunning) })
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Actor("snk"); a.Firings != n {
		t.Fatalf("snk fired %d times, want %d", a.Firings, n)
	}
}

// TestTraceLimit: a trace limited to 1000 events holds at most that many,
// counts the rest in Stats.TraceDropped and says so in its otherData; the
// events held and dropped add up to every firing.
func TestTraceLimit(t *testing.T) {
	t.Parallel()
	g, m := tracedGraph("limited")
	var buf bytes.Buffer
	st, err := Run(context.Background(), g, Options{Trace: &buf, TraceLimit: 1000, Mapping: m})
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		OtherData struct {
			TraceLimit    int64 `json:"trace_limit"`
			DroppedEvents int64 `json:"dropped_events"`
		} `json:"otherData"`
		TraceEvents []struct {
			Ph string `json:"ph"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatalf("trace is not JSON: %v\n%s", err, buf.String()[:min(buf.Len(), 500)])
	}
	held := int64(0)
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" {
			held++
		}
	}
	firings := int64(0)
	for _, a := range st.Actors {
		firings += a.Firings
	}
	if held > 1000 || held == 0 || st.TraceDropped == 0 || held+st.TraceDropped != firings {
		t.Fatalf("trace limited to 1000 events: %d held, %d dropped, %d firings: expected at most 1000 held and the rest dropped", held, st.TraceDropped, firings)
	}
	if tr.OtherData.TraceLimit != 1000 || tr.OtherData.DroppedEvents != st.TraceDropped {
		t.Fatalf("otherData: limit %d, dropped %d: expected 1000 and %d", tr.OtherData.TraceLimit, tr.OtherData.DroppedEvents, st.TraceDropped)
	}
	buf.Reset()
	g, m = tracedGraph("unlimited")
	if st, err = Run(context.Background(), g, Options{Trace: &buf, TraceLimit: -1, Mapping: m}); err != nil || st.TraceDropped != 0 {
		t.Fatalf("no trace limit: %v, %d events dropped: expected none", err, st.TraceDropped)
	}
}
