package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// scaleCL is z = 2x + 1 in OpenCL C (the saxpy built-in's a = 2, y = 1).
const scaleCL = `void FIRE() {
	TOKEN_X_t *xs = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_z) {
		TOKEN_Z_t *z = RESERVE(PORT_z, blk);
		for (int j = 0; j < BLOCK_Z_SIZE; j++)
			z[j] = 2.0f * xs[blk * BLOCK_Z_SIZE + j] + 1.0f;
	}
}
`

// TestRecoverLostKernelWorker: scale runs as an OpenCL kernel on worker
// k1, which drops off the network after the run's second checkpoint; the
// run re-places it on k2, which lends the same device, resumes from the
// last checkpoint and ends with the output of a local run.
func TestRecoverLostKernelWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := openCLDevice(ctx, t)
	const count, rate = 40_000, 64
	src := filepath.Join(t.TempDir(), "scale.cl")
	if err := os.WriteFile(src, []byte(scaleCL), 0o644); err != nil {
		t.Fatal(err)
	}
	pipeline := func(sink *fileSink) *graph.Graph {
		g := recoverPipeline(count, rate, sink)
		sc := g.Actor("scale")
		sc.Impls = append(sc.Impls, graph.Impl{Kind: graph.ImplOpenCL, Source: src})
		sc.Port("z").Block = 8
		return g
	}
	ref := &fileSink{}
	if _, err := runtime.Run(ctx, pipeline(ref), runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	tr := startTree(t, nil, Credentials{}, Limits{})
	hb := WorkerOptions{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: time.Second}
	workers := map[string]*Worker{}
	for _, name := range []string{"k1", "k2"} {
		w, err := StartWorker(ctx, WorkerOptions{Broker: tr.root.ClientURL(), Name: name, Devices: []device.Info{testCPU, cl}, DataListen: "127.0.0.1:0",
			HeartbeatInterval: hb.HeartbeatInterval, HeartbeatTimeout: hb.HeartbeatTimeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		workers[name] = w
	}
	c := connect(t, tr.root.ClientURL(), Credentials{})
	for _, name := range []string{"k1", "k2"} {
		for {
			if _, err := c.Worker(ctx, name); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{
		"scale": {Device: "worker:k1/" + cl.ID, Impl: graph.ImplOpenCL, WorkGroups: 4, WorkItems: 8},
		"fir":   {Device: "worker:w1/cpu"},
	}}
	sink := &fileSink{}
	var once sync.Once
	killed := make(chan time.Time, 1)
	var recs []Recovery
	st, err := RunRecovering(ctx, pipeline(sink), runtime.Options{Mapping: mp, Remote: fastExecutor(c),
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: &runtime.DirStore{Dir: t.TempDir()}, Completed: func(cp *runtime.Checkpoint) {
			if cp.ID == 2 {
				once.Do(func() {
					killed <- time.Now()
					workers["k1"].nc.Close() // k1 vanishes without a word
				})
			}
		}}}, RecoveryOptions{Recovered: func(r Recovery) { recs = append(recs, r) }})
	if err != nil {
		t.Fatalf("run: %v (recoveries: %d)", err, len(recs))
	}
	select {
	case <-killed:
	default:
		t.Fatal("the run ended before k1 was killed (a vacuous test): make it longer")
	}
	if len(recs) != 1 || recs[0].Worker != "k1" || recs[0].From == nil || !errors.Is(recs[0].Err, ErrWorkerLost) {
		t.Fatalf("recoveries %+v: expected one, from k1's loss, from a checkpoint", recs)
	}
	if st.Checkpoints.Recoveries != 1 {
		t.Fatalf("stats %+v: expected 1 recovery", st.Checkpoints)
	}
	if !slices.Equal(sink.got, ref.got) {
		t.Fatalf("output after recovery: %d tokens, expected %d equal to the local run's", sink.len(), ref.len())
	}
}
