package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// prefixSum is a stateful actor: out[i] = sum of every input token so far.
// Replicate gives each replica its own sum; leaders count the firings they
// lead and the concurrency the team reached.
type prefixSum struct {
	sum     int64
	replica int
	team    *teamLog
}

type teamLog struct {
	mu      sync.Mutex
	led     map[int64]int // firing → replica that led it
	running atomic.Int32
	peak    atomic.Int32
}

func (p *prefixSum) Fire(f *Firing) error {
	if p.team != nil {
		n := p.team.running.Add(1)
		for {
			m := p.team.peak.Load()
			if n <= m || p.team.peak.CompareAndSwap(m, n) {
				break
			}
		}
		defer p.team.running.Add(-1)
		time.Sleep(50 * time.Microsecond) // long enough for replicas to overlap
	}
	in, out := Input[int64](f, 0), Output[int64](f, 0)
	for i, x := range in {
		p.sum += x
		out[i] = p.sum
	}
	if f.Leader() && p.team != nil {
		p.team.mu.Lock()
		if prev, dup := p.team.led[f.Index()]; dup {
			p.team.mu.Unlock()
			return fmt.Errorf("firing %d led twice: by replicas %d and %d", f.Index(), prev, f.Replica())
		}
		p.team.led[f.Index()] = f.Replica()
		p.team.mu.Unlock()
	}
	return nil
}

func (p *prefixSum) Replicate(n int) ([]Actor, error) {
	as := make([]Actor, n)
	for i := range as {
		as[i] = &prefixSum{replica: i, team: p.team}
	}
	return as, nil
}

func runPrefixSum(t *testing.T, replicas int, log *teamLog) []int64 {
	t.Helper()
	const rate, total = 8, 8 * 300
	g := graph.New("team")
	src := addSource(g, "src", rate, total)
	a := g.AddActor("sum", graph.Stateful(), graph.WithFunc(Actor(&prefixSum{team: log})))
	graph.Connect(g, src, graph.AddInput[int64](a, "in", graph.SDF(rate)))
	in, sink := addSink(g, "sink", graph.SDF(rate))
	graph.Connect(g, graph.AddOutput[int64](a, "out", graph.SDF(rate)), in)
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"sum": {Replicas: replicas, Team: graph.TeamReplicate}}}
	if err := m.Check(g); err != nil {
		t.Fatal(err)
	}
	st, err := Run(context.Background(), g, Options{Mapping: m})
	if err != nil {
		t.Fatal(err)
	}
	if got := firings(t, st, "sum"); got != total/rate {
		t.Errorf("sum fired %d times, want %d (each firing counted once, by its leader)", got, total/rate)
	}
	return sink.values()
}

func TestTeamReplicateKeepsStatePerReplica(t *testing.T) {
	t.Parallel()
	want := runPrefixSum(t, 1, nil)
	for _, r := range []int{2, 3} {
		log := &teamLog{led: map[int64]int{}}
		got := runPrefixSum(t, r, log)
		if len(got) != len(want) {
			t.Fatalf("replicas=%d: %d tokens, want %d", r, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("replicas=%d: token %d = %d, want %d (a replica missed inputs, or outputs were merged out of order)", r, i, got[i], want[i])
			}
		}
		for idx, rep := range log.led {
			if int64(rep) != idx%int64(r) {
				t.Fatalf("replicas=%d: firing %d led by replica %d, want %d", r, idx, rep, idx%int64(r))
			}
		}
		if len(log.led) != len(want)/8 {
			t.Errorf("replicas=%d: %d firings led, want %d", r, len(log.led), len(want)/8)
		}
		t.Logf("replicas=%d: at most %d replicas ran at once", r, log.peak.Load())
	}
}

func init() {
	RegisterBuiltin("test.runningcount", "test: running count of firings", func(a *graph.Actor, p Params) (any, error) {
		n := int64(0)
		return FireFunc(func(f *Firing) error {
			n++
			out := Output[int64](f, 0)
			for i := range out {
				out[i] = n
			}
			return nil
		}), nil
	})
}

func TestTeamReplicateBuiltinPerReplicaState(t *testing.T) {
	t.Parallel()
	// A built-in's factory is called once per replica: test.runningcount
	// (registered in init) keeps a running count per instance.
	g := graph.New("team-builtin")
	src := addSource(g, "src", 4, 4*50)
	a := g.AddActor("count", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "test.runningcount"}))
	graph.Connect(g, src, graph.AddInput[int64](a, "in", graph.SDF(4)))
	in, sink := addSink(g, "sink", graph.SDF(4))
	graph.Connect(g, graph.AddOutput[int64](a, "out", graph.SDF(4)), in)
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"count": {Replicas: 3, Team: graph.TeamReplicate}}}
	if _, err := Run(context.Background(), g, Options{Mapping: m}); err != nil {
		t.Fatal(err)
	}
	checkSeq(t, sink.values(), 200, func(i int64) int64 { return i/4 + 1 })
}

func TestTeamReplicateErrors(t *testing.T) {
	t.Parallel()
	g := graph.New("team-bad")
	src := addSource(g, "src", 1, 10)
	in, out := addMap(g, "plain", 1, func(x int64) int64 { return x }, graph.Stateful())
	graph.Connect(g, src, in)
	sin, _ := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, out, sin)
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"plain": {Replicas: 2, Team: graph.TeamReplicate}}}
	_, err := Run(context.Background(), g, Options{Mapping: m})
	if err == nil || !strings.Contains(err.Error(), "runtime.Replicable") {
		t.Fatalf("a Go function without Replicable in a replicate team: err = %v", err)
	}
	m.Actors["plain"].Team = graph.TeamSplit
	if _, err := Run(context.Background(), g, Options{Mapping: m}); err == nil || !strings.Contains(err.Error(), "team: replicate") {
		t.Fatalf("a stateful actor with split replicas: err = %v", err)
	}
	if err := m.Check(g); err == nil || !strings.Contains(err.Error(), "team: replicate") {
		t.Fatalf("Mapping.Check on a stateful split team: %v", err)
	}
	m.Actors["plain"].Team = "diagonal"
	if err := m.Check(g); err == nil || !strings.Contains(err.Error(), "expected split or replicate") {
		t.Fatalf("Mapping.Check on an unknown team mode: %v", err)
	}
}

// Team rounds on a pool with more workers than processors (GOMAXPROCS 1,
// 4 workers) end and give every output in order: the worker running a
// round's last firing or batch shares its processor with the others,
// which wait for the next round yielding at every check (awaitRound), a
// split team of 4 replicas and a fused chain (whose rounds end in shrunk
// claims) alike, within a minute.
func TestTeamRoundsOnCrowdedPool(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 40_000
	g := graph.New("crowded")
	src := addSource(g, "src", 1, n)
	in, out := addMap(g, "work", 1, func(v int64) int64 { return v * 3 })
	graph.Connect(g, src, in)
	aIn, aOut := addMap(g, "a", 1, func(v int64) int64 { return v + 1 })
	bIn, bOut := indexMap(g, "b", 1, 1, 5)
	graph.Connect(g, out, aIn)
	graph.Connect(g, aOut, bIn)
	k, col := addSink(g, "sink", graph.SDF(1))
	graph.Connect(g, bOut, k)
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"work": {Device: "cpu", Replicas: 4}}}
	st, err := Run(ctx, g, Options{Mapping: m, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if st.Actor("a").Fused == "" || st.Actor("work").Fused != "" {
		t.Fatalf("a fused %q, work fused %q: want a and b fused, work a team", st.Actor("a").Fused, st.Actor("work").Fused)
	}
	// b: y[i] = x[i]*3 + index*5 + i + x[i+1]%5 on one-token windows.
	checkSeq(t, col.values(), n, func(i int64) int64 {
		x := i*3 + 1
		return x*3 + i*5 + x%5
	})
}
