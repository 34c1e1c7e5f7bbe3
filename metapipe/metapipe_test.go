package metapipe

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	_ "github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

func init() {
	runtime.RegisterFunc("metapipe_test.add", runtime.FireFunc(func(f *runtime.Firing) error {
		x, fb, y := runtime.Input[float32](f, 0), runtime.Input[float32](f, 1), runtime.Output[float32](f, 0)
		for i := range y {
			y[i] = x[i] + fb[i]
		}
		return nil
	}))
	runtime.RegisterFunc("metapipe_test.double", runtime.FireFunc(func(f *runtime.Firing) error {
		x, y := runtime.Input[float32](f, 0), runtime.Output[float32](f, 0)
		for i := range y {
			y[i] = 2 * x[i]
		}
		return nil
	}))
	runtime.RegisterFunc("metapipe_test.fail", runtime.FireFunc(func(f *runtime.Firing) error {
		if runtime.Input[float32](f, 0)[0] < 0 {
			return errors.New("negative input")
		}
		copy(f.Out(0), f.In(0))
		return nil
	}))
}

const rate = 2

// chain is entrance a.x → a (adds a.fb) → b (doubles) → exit b.y; with
// loop set, b's second output feeds a.fb (an initonce port, limit every),
// else a.fb is a second entrance.
func chain(loop bool, every int, bImpl string) *graph.Pipeline {
	g := graph.New("chain")
	f32 := graph.MustTokenType("f32")
	r := graph.SDF(rate)
	a := g.AddActor("a", graph.WithImpl(graph.Impl{Kind: graph.ImplGo, Source: "metapipe_test.add"}))
	a.AddPort("x", graph.In, f32, r, "")
	a.AddPort("fb", graph.In, f32, r, "")
	a.AddPort("y", graph.Out, f32, r, "")
	b := g.AddActor("b", graph.WithImpl(graph.Impl{Kind: graph.ImplGo, Source: bImpl}))
	b.AddPort("x", graph.In, f32, r, "")
	b.AddPort("y", graph.Out, f32, r, "")
	g.JoinNames("a.y", "b.x")
	g.Expose(graph.In, "x", "a", "x", "")
	g.Expose(graph.Out, "y", "b", "y", "")
	pl := graph.NewPipeline(g)
	if loop {
		b.AddPort("fb", graph.Out, f32, r, "")
		g.JoinNames("b.fb", "a.fb", graph.Initial(rate))
		pl.SetRole("a.fb", graph.InitOnce, every, "")
		b.Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(func(f *runtime.Firing) error {
			x, y, fb := runtime.Input[float32](f, 0), runtime.Output[float32](f, 0), runtime.Output[float32](f, 1)
			for i := range y {
				y[i], fb[i] = 2*x[i], 2*x[i]
			}
			return nil
		})}}
	} else {
		g.Expose(graph.In, "fb", "a", "fb", "")
	}
	return pl
}

func block(v float32) []byte {
	b := make([]byte, 4*rate)
	for i := 0; i < rate; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func value(t *testing.T, b []byte) float32 {
	t.Helper()
	if len(b) != 4*rate {
		t.Fatalf("block of %d bytes, want %d", len(b), 4*rate)
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestEntranceLimit: with a.fb's limit 3 on an entrance, a.fb's block is
// held for 3 firings; with b.y's limit 2, every second output comes out.
func TestEntranceAndExitLimits(t *testing.T) {
	ctx := ctxT(t)
	pl := chain(false, 0, "metapipe_test.double")
	pl.SetRole("a.fb", graph.Entrance, 3, "")
	pl.SetRole("b.y", graph.Exit, 2, "")
	p, err := Start(ctx, pl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var got []float32
	for k := 0; k < 6; k++ {
		if k%3 == 0 {
			if err := p.Send(ctx, "fb", block(float32(100*(k/3+1)))); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Send(ctx, "a.x", block(float32(k))); err != nil {
			t.Fatal(err)
		}
		if k%2 == 1 {
			b, err := p.Recv(ctx, "y")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, value(t, b))
		}
	}
	want := []float32{2 * (1 + 100), 2 * (3 + 200), 2 * (5 + 200)}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("exit blocks %v, want %v", got, want)
		}
	}
	p.CloseSend()
	if _, err := p.Recv(ctx, "y"); !errors.Is(err, runtime.ErrEndOfStream) {
		t.Fatalf("Recv after the end: %v, want ErrEndOfStream", err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, "x", block(1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after CloseSend: %v, want ErrClosed", err)
	}
}

// runLoop drives the looped chain for n firings, initialising a.fb at the
// firings its limit says, and returns the exit's values.
func runLoop(t *testing.T, pl *graph.Pipeline, opts Options, every, n int) []float32 {
	t.Helper()
	ctx := ctxT(t)
	p, err := Start(ctx, pl, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var got []float32
	for k := 0; k < n; k++ {
		if k == 0 || (every > 0 && k%every == 0) {
			if err := p.Init(ctx, "a.fb", block(float32(1000*(k+1)))); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Send(ctx, "x", block(float32(k))); err != nil {
			t.Fatal(err)
		}
		b, err := p.Recv(ctx, "y")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, value(t, b))
	}
	p.CloseSend()
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return got
}

func wantLoop(every, n int) []float32 {
	var out []float32
	var fb float32
	for k := 0; k < n; k++ {
		if k == 0 || (every > 0 && k%every == 0) {
			fb = float32(1000 * (k + 1))
		}
		fb = 2 * (float32(k) + fb)
		out = append(out, fb)
	}
	return out
}

func TestInitOnceAndReinit(t *testing.T) {
	for _, every := range []int{0, 2, 3} {
		got := runLoop(t, chain(true, every, ""), Options{}, every, 7)
		want := wantLoop(every, 7)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("every %d: exit %v, want %v", every, got, want)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	ctx := ctxT(t)
	if _, err := Start(ctx, graph.NewPipeline(graph.New("empty")), Options{}); err == nil || !strings.Contains(err.Error(), "no stage") {
		t.Fatalf("empty pipeline: %v", err)
	}
	p, err := Start(ctx, chain(true, 0, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{p.Send(ctx, "nope", block(1)), `no port "nope": expected one of`},
		{p.Send(ctx, "a.fb", block(1)), "port a.fb is an initonce port: expected an entrance port"},
		{p.Init(ctx, "a.fb", []byte{1}), "block of 1 bytes: expected 8"},
		{func() error { _, err := p.Recv(ctx, "x"); return err }(), "port a.x is an entrance port: expected an exit port"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("got %v, want %q", tc.err, tc.want)
		}
	}
}

func TestStageFailure(t *testing.T) {
	ctx := ctxT(t)
	p, err := Start(ctx, chain(false, 0, "metapipe_test.fail"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	_ = p.Send(ctx, "fb", block(0))
	_ = p.Send(ctx, "x", block(-5))
	if _, err := p.Recv(ctx, "y"); err == nil || !strings.Contains(err.Error(), "negative input") {
		t.Fatalf("Recv: %v, want the stage's error", err)
	}
}

// TestRemoteStage runs stage b on a worker of an in-process broker on
// loopback: the application side is unchanged.
func TestRemoteStage(t *testing.T) {
	ctx := ctxT(t)
	br, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Shutdown()
	cpu := device.Info{ID: "cpu", Backend: "cpu", Name: "test cpu", Kind: device.CPU, ComputeUnits: 2, GlobalMem: 1 << 30, HostUnified: true}
	w, err := cluster.StartWorker(ctx, cluster.WorkerOptions{Broker: br.ClientURL(), Name: "w1", Devices: []device.Info{cpu}, DataListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cl, err := cluster.Connect(ctx, br.ClientURL(), cluster.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		if _, err := cl.Worker(ctx, "w1"); err == nil {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("worker not reachable: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pl := chain(false, 0, "metapipe_test.double")
	ro := runtime.Options{
		Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{"b": {Device: "worker:w1/cpu"}}},
		Remote:  cluster.NewExecutor(cl, cluster.ExecutorOptions{}),
	}
	p, err := Start(ctx, pl, Options{Run: ro})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	for k := 0; k < 5; k++ {
		if err := p.Send(ctx, "fb", block(10)); err != nil {
			t.Fatal(err)
		}
		if err := p.Send(ctx, "x", block(float32(k))); err != nil {
			t.Fatal(err)
		}
		b, err := p.Recv(ctx, "y")
		if err != nil {
			t.Fatal(err)
		}
		if v := value(t, b); v != 2*(float32(k)+10) {
			t.Fatalf("block %d: %v, want %v", k, v, 2*(float32(k)+10))
		}
	}
	p.CloseSend()
	st, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Actors {
		if a.Name == "b" && (a.Kind != "remote" || a.Firings != 5) {
			t.Errorf("stage b: %s actor fired %d times, want a remote actor fired 5 times", a.Kind, a.Firings)
		}
	}
}
