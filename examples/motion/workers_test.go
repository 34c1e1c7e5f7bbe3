package motion

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/spec"
)

// workers.yaml, on an in-process broker with two workers (w1 lending a
// CPU, w2 an OpenCL device), gives the flow fields and statistics of the
// Go run on one machine.
func TestGraphTwoWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var cl device.Info
	for _, r := range device.Discover(ctx) {
		if r.Backend == "opencl" && len(r.Devices) > 0 {
			cl = r.Devices[0]
		}
	}
	if cl.ID != "opencl:0:0" {
		t.Skipf("no OpenCL device opencl:0:0 for worker w2 (found %q)", cl.ID)
	}
	const n = 8
	want := runGraph(t, "", n, true)
	br, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Shutdown()
	cpu := device.Info{ID: "cpu", Backend: "cpu", Name: "cpu", Kind: device.CPU, ComputeUnits: 2, GlobalMem: 1 << 30, HostUnified: true}
	for _, w := range []struct {
		name string
		dev  device.Info
	}{{"w1", cpu}, {"w2", cl}} {
		wk, err := cluster.StartWorker(ctx, cluster.WorkerOptions{Broker: br.ClientURL(), Name: w.name, Devices: []device.Info{cpu, w.dev}, DataListen: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		defer wk.Close()
	}
	c, err := cluster.Connect(ctx, br.ClientURL(), cluster.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := spec.LoadMapping("workers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := runGraphWith(t, n, m, cluster.NewExecutor(c, cluster.ExecutorOptions{}), false, true)
	compareFlows(t, "workers.yaml", got.flows, want.flows)
	for _, a := range []string{"decode", "blur", "sobel", "flow"} {
		if got.kinds[a] != "remote" {
			t.Errorf("%s ran as %q, expected on a worker (remote)", a, got.kinds[a])
		}
	}
	if got.sum != want.sum {
		t.Errorf("two workers: summary %+v, expected %+v", got.sum, want.sum)
	}
}
