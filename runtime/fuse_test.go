package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/sluicehq/sluice/graph"
)

// indexMap adds a stateless actor whose output depends on its input, the
// firing's index and the token's place in the window, so that a firing run
// with another index or on another window shows in the output.
func indexMap(g *graph.Graph, name string, in, out int, salt int64) (graph.InPort[int64], graph.OutPort[int64]) {
	fire := func(f *Firing) error {
		x, y := Input[int64](f, 0), Output[int64](f, 0)
		for i := range y {
			y[i] = x[i%len(x)]*3 + f.Index()*salt + int64(i) + x[(i+1)%len(x)]%5
		}
		return nil
	}
	a := g.AddActor(name, graph.WithFunc(FireFunc(fire)))
	return graph.AddInput[int64](a, "in", graph.SDF(in)), graph.AddOutput[int64](a, "out", graph.SDF(out))
}

// chainGraph is source -> n stages of indexMap (rate r) -> sink.
func fuseChain(n, r int, total int64) (*graph.Graph, *collector) {
	g := graph.New("fchain")
	prev := addSource(g, "src", r, total)
	for s := range n {
		in, out := indexMap(g, fmt.Sprintf("s%02d", s), r, r, int64(s+1))
		graph.Connect(g, prev, in)
		prev = out
	}
	in, col := addSink(g, "sink", graph.SDF(r))
	graph.Connect(g, prev, in)
	return g, col
}

// runBoth runs the graph made by mk fused and unfused and returns both
// runs' outputs (by mk's collectors) and statistics.
func runBoth(t *testing.T, mk func() (*graph.Graph, []*collector), opts Options) (fused, plain [][]int64, fst, pst *Stats) {
	t.Helper()
	for _, no := range []bool{false, true} {
		g, cols := mk()
		o := opts
		o.NoFuseCPU = no
		st, err := Run(context.Background(), g, o)
		if err != nil {
			t.Fatalf("NoFuseCPU %v: %v", no, err)
		}
		var outs [][]int64
		for _, c := range cols {
			outs = append(outs, c.values())
		}
		if no {
			plain, pst = outs, st
		} else {
			fused, fst = outs, st
		}
	}
	return
}

func TestFusedChainSameOutput(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{1, 2, 4} {
		for _, r := range []int{1, 7, 1024} {
			t.Run(fmt.Sprintf("workers%d/rate%d", workers, r), func(t *testing.T) {
				total := int64(20011 * r / max(1, r/8)) // not a multiple of the rate: the last window is dropped
				mk := func() (*graph.Graph, []*collector) {
					g, c := fuseChain(6, r, total)
					return g, []*collector{c}
				}
				f, p, fst, pst := runBoth(t, mk, Options{Workers: workers, CheckEmpty: false})
				if !slices.Equal(f[0], p[0]) || len(f[0]) == 0 {
					t.Fatalf("fused output (%d tokens) differs from unfused (%d tokens)", len(f[0]), len(p[0]))
				}
				for _, a := range fst.Actors {
					pa := pst.Actor(a.Name)
					want := ""
					if strings.HasPrefix(a.Name, "s0") {
						want = "fused(s00..s05)"
					}
					if a.Fused != want || pa.Fused != "" {
						t.Errorf("%s: Fused %q (unfused %q), want %q", a.Name, a.Fused, pa.Fused, want)
					}
					if a.Firings != pa.Firings || a.TokensIn != pa.TokensIn || a.TokensOut != pa.TokensOut || a.BytesOut != pa.BytesOut {
						t.Errorf("%s: fused firings/tokens in/out %d/%d/%d, unfused %d/%d/%d", a.Name, a.Firings, a.TokensIn, a.TokensOut, pa.Firings, pa.TokensIn, pa.TokensOut)
					}
					if a.Firings > 0 && (a.Busy <= 0 || a.Mean <= 0) {
						t.Errorf("%s: busy %v, mean %v after %d firings", a.Name, a.Busy, a.Mean, a.Firings)
					}
				}
			})
		}
	}
}

func TestFusedChainIterationsCheckEmpty(t *testing.T) {
	t.Parallel()
	mk := func() (*graph.Graph, []*collector) {
		g, c := fuseChain(4, 64, -1)
		return g, []*collector{c}
	}
	f, p, fst, _ := runBoth(t, mk, Options{Workers: 3, Iterations: 5001, CheckEmpty: true})
	if len(f[0]) != 5001*64 || !slices.Equal(f[0], p[0]) {
		t.Fatalf("fused %d tokens, unfused %d: outputs differ or short", len(f[0]), len(p[0]))
	}
	if got := fst.Actor("s03").Replicas; got != 3 {
		t.Errorf("a fused stage's replicas = %d, want the 3 workers", got)
	}
}

func TestNoFuseCPU(t *testing.T) {
	t.Parallel()
	g, _ := fuseChain(3, 8, 8000)
	st, err := Run(context.Background(), g, Options{NoFuseCPU: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Actors {
		if a.Fused != "" {
			t.Errorf("%s fused as %q with NoFuseCPU", a.Name, a.Fused)
		}
	}
}

// What does not fuse: stateful actors, broadcasts, initial tokens, rate
// changes, two inputs.
func TestFusionBoundaries(t *testing.T) {
	t.Parallel()
	g := graph.New("bounds")
	src := addSource(g, "src", 4, 40000)
	aIn, aOut := addMap(g, "a", 4, func(v int64) int64 { return v + 1 })
	bIn, bOut := addMap(g, "b", 4, func(v int64) int64 { return v * 2 })
	stIn, stOut := addMap(g, "st", 4, func(v int64) int64 { return v - 1 }, graph.Stateful())
	cIn, cOut := addMap(g, "c", 4, func(v int64) int64 { return v + 3 })
	dIn, dOut := addMap(g, "d", 4, func(v int64) int64 { return v + 4 })
	eIn, eOut := addMap(g, "e", 4, func(v int64) int64 { return v + 5 }) // after an initial token
	hIn, hOut := indexMap(g, "h", 4, 2, 1)                               // its rates differ: h and i still fire as often
	iIn, iOut := addMap(g, "i", 2, func(v int64) int64 { return v })
	jIn, jOut := indexMap(g, "j", 4, 4, 1) // fires half as often as i
	graph.Connect(g, src, aIn)
	graph.Connect(g, aOut, bIn)
	graph.Connect(g, bOut, stIn)
	graph.Connect(g, stOut, cIn)
	graph.Connect(g, cOut, dIn)
	graph.Connect(g, cOut, hIn) // c broadcasts to d and h
	graph.Connect(g, dOut, eIn, graph.Initial(4))
	k1, _ := addSink(g, "k1", graph.SDF(4))
	graph.Connect(g, eOut, k1)
	graph.Connect(g, hOut, iIn)
	graph.Connect(g, iOut, jIn)
	k2, _ := addSink(g, "k2", graph.SDF(4))
	graph.Connect(g, jOut, k2)
	st, err := Run(context.Background(), g, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "fused(a..b)", "b": "fused(a..b)", "h": "fused(h..i)", "i": "fused(h..i)"}
	for _, a := range st.Actors {
		if a.Fused != want[a.Name] {
			t.Errorf("%s: Fused %q, want %q", a.Name, a.Fused, want[a.Name])
		}
	}
}

// randomGraph builds a random graph of sources, stateless chains (with rate
// changes), stateful actors, broadcasts and joins; every open output ends
// in a collector.
func randomGraph(seed uint64) (*graph.Graph, []*collector) {
	rng := rand.New(rand.NewPCG(seed, 7))
	g := graph.New(fmt.Sprintf("rand%d", seed))
	type open struct {
		p     graph.OutPort[int64]
		rate  int
		class int // ports of one class move tokens at the same pace
	}
	rates := []int{1, 2, 3, 8, 64, 256}
	var ports []open
	classes := 0
	nsrc := 1 + rng.IntN(2)
	for i := range nsrc {
		r := rates[rng.IntN(len(rates))]
		ports = append(ports, open{addSource(g, fmt.Sprintf("src%d", i), r, int64(r*(600+rng.IntN(600)))), r, classes})
		classes++
	}
	n := 0
	name := func(k string) string { n++; return fmt.Sprintf("%s%d", k, n) }
	for range 12 + rng.IntN(12) {
		i := rng.IntN(len(ports))
		o := ports[i]
		switch op := rng.IntN(10); {
		case op < 5: // a stateless stage, rate kept
			in, out := indexMap(g, name("m"), o.rate, o.rate, int64(rng.IntN(9)))
			graph.Connect(g, o.p, in)
			ports[i] = open{out, o.rate, o.class}
		case op < 6: // a stateless stage changing the rate
			r := rates[rng.IntN(len(rates))]
			in, out := indexMap(g, name("r"), o.rate, r, int64(rng.IntN(9)))
			graph.Connect(g, o.p, in)
			ports[i] = open{out, r, classes}
			classes++
		case op < 7: // a stateful stage
			var sum int64
			a := g.AddActor(name("acc"), graph.Stateful(), graph.WithFunc(FireFunc(func(f *Firing) error {
				x, y := Input[int64](f, 0), Output[int64](f, 0)
				for j := range x {
					sum += x[j]
					y[j] = sum
				}
				return nil
			})))
			graph.Connect(g, o.p, graph.AddInput[int64](a, "in", graph.SDF(o.rate)))
			ports[i] = open{graph.AddOutput[int64](a, "out", graph.SDF(o.rate)), o.rate, o.class}
		case op < 8: // a broadcast: the port feeds two stages
			in1, out1 := indexMap(g, name("b"), o.rate, o.rate, 2)
			in2, out2 := indexMap(g, name("b"), o.rate, o.rate, 3)
			graph.Connect(g, o.p, in1)
			graph.Connect(g, o.p, in2)
			ports[i] = open{out1, o.rate, o.class}
			ports = append(ports, open{out2, o.rate, o.class})
		default: // a join of two ports of one class and rate
			for j := range ports {
				if j != i && ports[j].class == o.class && ports[j].rate == o.rate {
					a := g.AddActor(name("j"), graph.WithFunc(FireFunc(func(f *Firing) error {
						x, z, y := Input[int64](f, 0), Input[int64](f, 1), Output[int64](f, 0)
						for k := range y {
							y[k] = x[k]*7 + z[k]
						}
						return nil
					})))
					graph.Connect(g, o.p, graph.AddInput[int64](a, "x", graph.SDF(o.rate)))
					graph.Connect(g, ports[j].p, graph.AddInput[int64](a, "z", graph.SDF(o.rate)))
					ports[i] = open{graph.AddOutput[int64](a, "y", graph.SDF(o.rate)), o.rate, o.class}
					ports = slices.Delete(ports, j, j+1)
					break
				}
			}
		}
	}
	var cols []*collector
	for _, o := range ports {
		in, c := addSink(g, name("k"), graph.SDF(o.rate))
		graph.Connect(g, o.p, in)
		cols = append(cols, c)
	}
	return g, cols
}

func TestFusedRandomGraphs(t *testing.T) {
	t.Parallel()
	fusedSome := 0
	for seed := range uint64(24) {
		mk := func() (*graph.Graph, []*collector) { return randomGraph(seed) }
		f, p, fst, _ := runBoth(t, mk, Options{Workers: 1 + int(seed%4)})
		for i := range f {
			if !slices.Equal(f[i], p[i]) {
				t.Fatalf("seed %d: collector %d: fused output (%d tokens) differs from unfused (%d tokens)", seed, i, len(f[i]), len(p[i]))
			}
		}
		for _, a := range fst.Actors {
			if a.Fused != "" {
				fusedSome++
				break
			}
		}
	}
	if fusedSome < 8 {
		t.Errorf("only %d of 24 random graphs had a fused chain: the test does not exercise fusion", fusedSome)
	}
}

// failingMidChain builds src → first → mid → last → k, rate 4: first
// and last map each token, mid copies its tokens and calls fail at its
// firing 1234 (its error, or its panic, is the firing's); the three
// stateless stages fuse.
func failingMidChain(name string, first, last func(int64) int64, fail func(idx int64) error) (*graph.Graph, *collector) {
	g := graph.New(name)
	src := addSource(g, "src", 4, -1)
	aIn, aOut := addMap(g, "first", 4, first)
	m := g.AddActor("mid", graph.WithFunc(FireFunc(func(f *Firing) error {
		if f.Index() == 1234 {
			return fail(f.Index())
		}
		copy(Output[int64](f, 0), Input[int64](f, 0))
		return nil
	})))
	mIn, mOut := graph.AddInput[int64](m, "in", graph.SDF(4)), graph.AddOutput[int64](m, "out", graph.SDF(4))
	lIn, lOut := addMap(g, "last", 4, last)
	k, col := addSink(g, "k", graph.SDF(4))
	graph.Connect(g, src, aIn)
	graph.Connect(g, aOut, mIn)
	graph.Connect(g, mOut, lIn)
	graph.Connect(g, lOut, k)
	return g, col
}

// A stage's error and panic are reported under its own name and firing,
// and end of stream inside a chain commits the firings before it.
func TestFusedStageErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		fail func(idx int64) error
		want string
	}{
		{"error", func(idx int64) error { return boom }, "actor mid firing 1234: boom"},
		{"panic", func(idx int64) error { panic("bad") }, "actor mid firing 1234: panic: bad"},
		{"eos", func(idx int64) error { return ErrEndOfStream }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, col := failingMidChain("ferr", func(v int64) int64 { return v }, func(v int64) int64 { return v }, tc.fail)
			st, err := Run(context.Background(), g, Options{Workers: 2, Iterations: 100000})
			if st.Actor("mid").Fused == "" {
				t.Fatalf("mid not fused")
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkSeq(t, col.values(), 1234*4, func(i int64) int64 { return i })
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestFusedTrace(t *testing.T) {
	t.Parallel()
	g, _ := fuseChain(2, 16, 16*500)
	var buf bytes.Buffer
	if _, err := Run(context.Background(), g, Options{Trace: &buf, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range tr.TraceEvents {
		if e.Name == "s01" {
			if e.Args["fused"] != "fused(s00..s01)" {
				t.Fatalf("s01 event args %v: want fused", e.Args)
			}
			n++
		}
	}
	if n != 500 {
		t.Errorf("%d trace events of s01, want 500", n)
	}
}

func TestFusedTable(t *testing.T) {
	t.Parallel()
	g, _ := fuseChain(2, 16, 16*100)
	st, err := Run(context.Background(), g, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := st.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "fused") {
		t.Fatalf("table header %q: want a fused column", lines[0])
	}
	n := 0
	for _, l := range lines {
		if strings.Contains(l, "fused(s00..s01)") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d table rows name fused(s00..s01), want 2:\n%s", n, b.String())
	}
}

// A fused chain's batches run on several workers at once: a stage waits
// (up to 10 s) for another of its firings to run beside it.
func TestFusedChainRunsInParallel(t *testing.T) {
	t.Parallel()
	var inside, peak atomic.Int32
	g := graph.New("fpar")
	src := addSource(g, "src", 1024, 1024*64)
	aIn, aOut := addMap(g, "a", 1024, func(v int64) int64 { return v + 1 })
	b := g.AddActor("b", graph.WithFunc(FireFunc(func(f *Firing) error {
		n := inside.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		deadline := time.Now().Add(10 * time.Second)
		for peak.Load() < 2 && time.Now().Before(deadline) {
			goruntime.Gosched()
		}
		copy(Output[int64](f, 0), Input[int64](f, 0))
		inside.Add(-1)
		return nil
	})))
	bIn, bOut := graph.AddInput[int64](b, "in", graph.SDF(1024)), graph.AddOutput[int64](b, "out", graph.SDF(1024))
	k, col := addSink(g, "k", graph.SDF(1024))
	graph.Connect(g, src, aIn)
	graph.Connect(g, aOut, bIn)
	graph.Connect(g, bOut, k)
	st, err := Run(context.Background(), g, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Actor("b").Fused == "" {
		t.Fatal("a and b not fused")
	}
	if peak.Load() < 2 {
		t.Errorf("at most %d firings of the fused chain ran at once, want 2 (its replicas)", peak.Load())
	}
	checkSeq(t, col.values(), 1024*64, func(i int64) int64 { return i + 1 })
}

// A failure in the middle of a batch (here at firing 1234 of a batch of
// 256, on two workers) commits exactly the firings before it, through
// every stage, for an error and a panic alike: the batch's earlier
// firings go on through the later stages.
func TestFusedFailureMidBatchCommitsEarlierFirings(t *testing.T) {
	t.Parallel()
	for _, panics := range []bool{false, true} {
		t.Run(fmt.Sprintf("panic=%v", panics), func(t *testing.T) {
			fail := func(int64) error { return errors.New("boom") }
			if panics {
				fail = func(int64) error { panic("bad") }
			}
			g, col := failingMidChain("fmid", func(v int64) int64 { return v + 1 }, func(v int64) int64 { return v * 2 }, fail)
			st, err := Run(context.Background(), g, Options{Workers: 2, Iterations: 100000})
			if err == nil || !strings.HasPrefix(err.Error(), "actor mid firing 1234: ") {
				t.Fatalf("error %v: want actor mid firing 1234", err)
			}
			got := col.values() // what the sink took before the run stopped
			if len(got) > 1234*4 {
				t.Fatalf("the sink got %d tokens: want at most %d", len(got), 1234*4)
			}
			checkSeq(t, got, int64(len(got)), func(i int64) int64 { return (i + 1) * 2 })
			for _, name := range []string{"first", "mid", "last"} {
				a := st.Actor(name)
				if a.Fused == "" {
					t.Fatalf("%s not fused", name)
				}
				if a.Firings != 1234 || a.TokensOut != 1234*4 {
					t.Errorf("%s: %d firings, %d tokens out: want 1234 and %d", name, a.Firings, a.TokensOut, 1234*4)
				}
			}
		})
	}
}

// Each stage of a fused chain is timed on its own: a stage that spins
// 20 µs a firing gets that busy time and mean, and the cheap stages
// around it (which share its clock reads: one stage's end is the next
// one's start) get little of it.
func TestFusedStageBusyTime(t *testing.T) {
	t.Parallel()
	g := graph.New("fbusy")
	src := addSource(g, "src", 16, 16*400)
	aIn, aOut := addMap(g, "cheap1", 16, func(v int64) int64 { return v + 1 })
	var calls atomic.Int64
	m := g.AddActor("slow", graph.WithFunc(FireFunc(func(f *Firing) error {
		calls.Add(1)
		spin(20 * time.Microsecond)
		copy(Output[int64](f, 0), Input[int64](f, 0))
		return nil
	})))
	sIn, sOut := graph.AddInput[int64](m, "in", graph.SDF(16)), graph.AddOutput[int64](m, "out", graph.SDF(16))
	bIn, bOut := addMap(g, "cheap2", 16, func(v int64) int64 { return v - 1 })
	k, col := addSink(g, "k", graph.SDF(16))
	graph.Connect(g, src, aIn)
	graph.Connect(g, aOut, sIn)
	graph.Connect(g, sOut, bIn)
	graph.Connect(g, bOut, k)
	st, err := Run(context.Background(), g, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkSeq(t, col.values(), 16*400, func(i int64) int64 { return i })
	s := st.Actor("slow")
	if s.Fused == "" || s.Firings != 400 || calls.Load() != 400 {
		t.Fatalf("slow: fused %q, %d firings, %d calls: want fused, 400", s.Fused, s.Firings, calls.Load())
	}
	if s.Busy < 400*20*time.Microsecond || s.Mean < 20*time.Microsecond || s.Min < 20*time.Microsecond {
		t.Errorf("slow: busy %v, mean %v, min %v: want at least 400 × 20µs, 20µs, 20µs", s.Busy, s.Mean, s.Min)
	}
	// The cheap stages' typical firing (the median, which a thread
	// descheduled now and then on a loaded machine does not move, as it
	// moves the total) is a small part of the slow one's.
	for _, name := range []string{"cheap1", "cheap2"} {
		if a := st.Actor(name); a.Firings != 400 || a.Busy <= 0 || a.P50 <= 0 || a.P50 > s.P50/4 {
			t.Errorf("%s: %d firings, busy %v, median %v: want 400, busy > 0 and a median in (0, %v] (a quarter of slow's)", name, a.Firings, a.Busy, a.P50, s.P50/4)
		}
	}
}

// A team round's claims (claimSize) take whole batches, then, once fewer
// than fuseTailShare batches per replica are left, shrinking shares of
// what is left down to minBatch: never more than a batch or what is left,
// never fewer than minBatch but the round's last remainder, never growing,
// and they add up to the round.
func TestFusedClaimSizes(t *testing.T) {
	t.Parallel()
	for _, batch := range []int64{1, 2, 7, 1024} {
		fz := &fusion{batch: batch, minBatch: max(1, batch/fuseTailDiv)}
		for _, reps := range []int{1, 2, 3, 16} {
			for _, k := range []int64{1, batch, 8*batch*int64(reps) + 5, 8 * batch * int64(reps), 1 << 20} {
				left, prev, small := k, batch, 0
				for left > 0 {
					n := fz.claimSize(left, reps)
					if n < 1 || n > min(left, batch) || n > prev || (n < fz.minBatch && n != left) {
						t.Fatalf("batch %d, %d replicas, round %d: claim of %d with %d left (last claim %d, least %d)", batch, reps, k, n, left, prev, fz.minBatch)
					}
					if n < batch {
						small++
					}
					left, prev = left-n, n
				}
				if k >= 8*batch*int64(reps) && fz.minBatch < batch && small == 0 {
					t.Errorf("batch %d, %d replicas, round %d: no claim smaller than a batch at the round's end", batch, reps, k)
				}
			}
		}
	}
}

// A round that ends with small claims still commits every firing once, in
// order: a chain of one-token firings (batches of 1024 firings, down to
// 256 at a round's end) run by four workers gives the unfused output and
// counts every firing of every stage, and the batches that its second
// stage ran (found from where its input windows lay in the workers'
// scratch buffers: a batch's first firing reads the start of one) hold
// the firings once each, whole batches and the shrunk claims of the
// rounds' ends.
func TestFusedRoundEndsWithSmallBatches(t *testing.T) {
	t.Parallel()
	const iters = 100_000
	run := func(noFuse bool) ([]int64, []uintptr, *Stats) {
		addr := make([]uintptr, iters)
		g := graph.New("ftail")
		src := g.AddActor("src", graph.WithFunc(FireFunc(func(f *Firing) error {
			Output[int64](f, 0)[0] = f.Index()*7 + 1
			return nil
		})))
		rec := g.AddActor("rec", graph.WithFunc(FireFunc(func(f *Firing) error {
			in := Input[int64](f, 0)
			addr[f.Index()] = uintptr(unsafe.Pointer(&in[0]))
			Output[int64](f, 0)[0] = in[0] ^ f.Index()
			return nil
		})))
		graph.Connect(g, graph.AddOutput[int64](src, "out", graph.SDF(1)), graph.AddInput[int64](rec, "in", graph.SDF(1)))
		prev := graph.AddOutput[int64](rec, "out", graph.SDF(1))
		for s := range 3 {
			in, out := indexMap(g, fmt.Sprintf("s%d", s), 1, 1, int64(s+2))
			graph.Connect(g, prev, in)
			prev = out
		}
		in, col := addSink(g, "sink", graph.SDF(1))
		graph.Connect(g, prev, in)
		st, err := Run(context.Background(), g, Options{Workers: 4, Iterations: iters, NoFuseCPU: noFuse})
		if err != nil {
			t.Fatal(err)
		}
		return col.values(), addr, st
	}
	got, addr, st := run(false)
	want, _, _ := run(true)
	if len(got) != iters || !slices.Equal(got, want) {
		t.Fatalf("fused %d tokens, unfused %d: outputs differ or short", len(got), len(want))
	}
	for _, name := range []string{"src", "rec", "s0", "s1", "s2"} {
		if a := st.Actor(name); a.Fused != "fused(src..s2)" || a.Firings != iters {
			t.Errorf("%s: fused %q, %d firings: want fused(src..s2), %d", name, a.Fused, a.Firings, iters)
		}
	}
	sizes := fusedBatchSizes(addr, 8)
	whole, shrunk, least := 0, 0, 0
	for _, n := range sizes {
		switch {
		case n > 1024:
			t.Fatalf("a batch of %d firings: want at most 1024", n)
		case n == 1024:
			whole++
		case n > 256:
			shrunk++
		case n == 256:
			least++
		}
	}
	t.Logf("%d batches: %d of 1024 firings, %d of 257-1023, %d of 256, %d fewer", len(sizes), whole, shrunk, least, len(sizes)-whole-shrunk-least)
	if whole == 0 || shrunk == 0 || least == 0 {
		t.Errorf("%d batches: %d of 1024 firings, %d of 257-1023, %d of 256: want some of each", len(sizes), whole, shrunk, least)
	}
}

// fusedBatchSizes returns the sizes, in firing order, of the batches in
// which a stage that reads a scratch window of w bytes ran firings 0, 1,
// ..., given where each firing's window began: the firings of a batch
// read one worker's buffer from its start, w bytes apart, and the
// workers' buffers lie further apart.
func fusedBatchSizes(addr []uintptr, w uintptr) []int {
	seen := slices.Compact(slices.Sorted(slices.Values(addr)))
	start := map[uintptr]bool{}
	for i, a := range seen {
		if i == 0 || a-seen[i-1] > w {
			start[a] = true
		}
	}
	var sizes []int
	for i, a := range addr {
		if i == 0 || start[a] {
			sizes = append(sizes, 0)
		}
		sizes[len(sizes)-1]++
	}
	return sizes
}
