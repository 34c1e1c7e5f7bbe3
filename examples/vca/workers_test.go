package vca_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/examples/vca"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// TestWorkers runs vca.yaml with workers.yaml: stats on worker w1, project
// and unmix on worker w2, both started in this process on an in-process
// broker on loopback, and compares every cube with the sequential version.
func TestWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	br, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Shutdown()
	cpu := device.Info{ID: "cpu", Backend: "cpu", Name: "test cpu", Kind: device.CPU, ComputeUnits: 2, GlobalMem: 1 << 30, HostUnified: true}
	for _, name := range []string{"w1", "w2"} {
		w, err := cluster.StartWorker(ctx, cluster.WorkerOptions{Broker: br.ClientURL(), Name: name, Devices: []device.Info{cpu}, DataListen: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
	}
	cl, err := cluster.Connect(ctx, br.ClientURL(), cluster.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, name := range []string{"w1", "w2"} {
		for {
			if _, err := cl.Worker(ctx, name); err == nil {
				break
			} else if ctx.Err() != nil {
				t.Fatalf("worker %s not reachable: %v", name, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	g, err := spec.LoadGraph("vca.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := spec.LoadMapping("workers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vca.DefaultSink.SetOutput(nil)
	defer vca.DefaultSink.SetOutput(os.Stdout)
	vca.DefaultSink.Take()
	st, err := runtime.Run(ctx, g, runtime.Options{Mapping: m, Remote: cluster.NewExecutor(cl, cluster.ExecutorOptions{}), Watchdog: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"stats", "project", "unmix"} {
		if k := st.Actor(a).Kind; k != "remote" {
			t.Errorf("%s ran as %s, want remote", a, k)
		}
	}
	res := vca.DefaultSink.Take()
	checkAccuracy(t, vca.Small, res, vca.Small.Cubes)
	seq, err := vca.Sequential(vca.Small, vca.Small.Cubes)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, res, seq, 1e-3, 1e-4)
}
