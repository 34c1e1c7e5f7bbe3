package cluster

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	_ "github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/testtmp"
	"github.com/sluicehq/sluice/runtime"
)

// TestMain checks that no test leaves a goroutine behind, but one of
// nats.go's (v1.55.0): an object store Put publishes asynchronously through
// a JetStream context of its own and cleans it up when done, and when the
// cleanup runs before the context's status goroutine
// (resetPendingAcksOnReconnect) has read its channel, that goroutine reads
// nil and waits on a nil channel for ever (jetstream/publish.go, 566–570;
// jetstream.go, cleanupReplySub). The library's, once per unlucky Put, and
// seen once in the suite.
func TestMain(m *testing.M) {
	os.Exit(testtmp.Run(func() int {
		code := 0
		goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
			goleak.Cleanup(func(c int) { code = c }))
		return code
	}))
}

// testCPU is the device a test worker lends.
var testCPU = device.Info{ID: "cpu", Backend: "cpu", Name: "test cpu", Kind: device.CPU, ComputeUnits: 2, GlobalMem: 1 << 30, HostUnified: true}

// tree is an in-process broker tree: root and child, w1 on root, w2 on child.
type tree struct {
	root, child *Broker
	w1, w2      *Worker
}

func startTree(t *testing.T, auth *Auth, creds Credentials, lim Limits) *tree {
	t.Helper()
	return startTreeAs(t, auth, treeCreds{worker: creds, client: creds, parent: creds}, lim)
}

// treeCreds are what a tree's workers, its test client and its child
// broker (to the root) present.
// rootLog, when set, receives the root broker's log.
type treeCreds struct {
	worker, client, parent Credentials
	rootLog                func(format string, args ...any)
	hbTimeout              time.Duration // the workers'; 0: 10 s
}

func startTreeAs(t *testing.T, auth *Auth, tc treeCreds, lim Limits) *tree {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	root, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0", Auth: auth, Logf: tc.rootLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(root.Shutdown)
	child, err := StartBroker(ctx, BrokerOptions{Name: "child", Listen: "127.0.0.1:0", Parent: root.LeafURL(), ParentCreds: tc.parent, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(child.Shutdown)
	for !child.ParentConnected() {
		if ctx.Err() != nil {
			t.Fatal("child broker did not join its parent within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The workers beat often, and give a silent client 10 s: no test here
	// is about a client that vanishes, and a loaded machine running -race
	// can hold a client's heartbeat past a second.
	hb := WorkerOptions{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second}
	if tc.hbTimeout > 0 {
		hb.HeartbeatTimeout = tc.hbTimeout
	}
	// w1 offers direct TCP data streams, w2 does not (tokens over NATS).
	w1, err := StartWorker(ctx, WorkerOptions{Broker: root.ClientURL(), Creds: tc.worker, Name: "w1", Devices: []device.Info{testCPU}, Limits: lim, DataListen: "127.0.0.1:0",
		HeartbeatInterval: hb.HeartbeatInterval, HeartbeatTimeout: hb.HeartbeatTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w1.Close)
	w2, err := StartWorker(ctx, WorkerOptions{Broker: child.ClientURL(), Creds: tc.worker, Name: "w2", Devices: []device.Info{testCPU}, Limits: lim,
		HeartbeatInterval: hb.HeartbeatInterval, HeartbeatTimeout: hb.HeartbeatTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w2.Close)
	// Wait until the root sees both workers (interest crosses the leaf link).
	cl, err := Connect(ctx, root.ClientURL(), tc.client)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		_, e1 := cl.Worker(ctx, "w1")
		_, e2 := cl.Worker(ctx, "w2")
		if e1 == nil && e2 == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("workers not reachable from the root within 10 s: %v, %v", e1, e2)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &tree{root: root, child: child, w1: w1, w2: w2}
}

// collector is a Go sink keeping every token.
type collector struct {
	mu  sync.Mutex
	got []float32
}

// len returns how many tokens the sink has received so far.
func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got)
}

func (c *collector) fire(f *runtime.Firing) error {
	c.mu.Lock()
	c.got = append(c.got, runtime.Input[float32](f, 0)...)
	c.mu.Unlock()
	return nil
}

// pipeline builds ramp → scale (saxpy) → fir → sink, with count firings
// of rate tokens.
func pipeline(count, rate int, sink *collector) *graph.Graph {
	g := graph.New("pipe")
	f32 := graph.MustTokenType("f32")
	r := graph.SDF(rate)
	src := g.AddActor("src", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "gen.ramp", Params: map[string]any{"count": count, "step": 0.5}}))
	so := src.AddPort("y", graph.Out, f32, r, "")
	sc := g.AddActor("scale", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "saxpy", Params: map[string]any{"a": 2, "y": 1}}))
	si := sc.AddPort("x", graph.In, f32, r, "")
	sco := sc.AddPort("z", graph.Out, f32, r, "")
	fi := g.AddActor("fir", graph.Stateful(), graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "fir", Params: map[string]any{"taps": []any{0.25, 0.5, 0.25}}}))
	fii := fi.AddPort("x", graph.In, f32, r, "")
	fio := fi.AddPort("y", graph.Out, f32, r, "")
	sk := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(sink.fire)))
	ski := sk.AddPort("x", graph.In, f32, r, "")
	g.Join(so, si)
	g.Join(sco, fii)
	g.Join(fio, ski)
	return g
}
