package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// TestRemoteKernel ships an OpenCL kernel actor's source to a worker that
// lends an OpenCL device (PoCL on a CPU will do) and compares the run with
// the Go built-ins run locally.
func TestRemoteKernel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := openCLDevice(ctx, t)
	load := func() (*graph.Graph, *collector) {
		g, err := spec.Load("../examples/opencl/saxpy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		c := &collector{}
		g.Actor("print").Impls = []graph.Impl{{Kind: graph.ImplGo, Func: runtime.FireFunc(c.fire)}}
		return g, c
	}
	g, want := load()
	if _, err := runtime.Run(ctx, g, runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	br, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Shutdown()
	w, err := StartWorker(ctx, WorkerOptions{Broker: br.ClientURL(), Name: "gpu", Devices: []device.Info{testCPU, cl}, DataListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := connect(t, br.ClientURL(), Credentials{})
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{
		"axpy": {Device: "worker:gpu/" + cl.ID, Impl: graph.ImplOpenCL, WorkGroups: 2, WorkItems: 4, Distribution: map[string]graph.Distribution{"z": graph.Strided}},
		"half": {Device: "worker:gpu/" + cl.ID, Impl: graph.ImplOpenCL, WorkGroups: 4, WorkItems: 4},
	}}
	g, got := load()
	if _, err := runtime.Run(ctx, g, runtime.Options{Mapping: mp, Remote: NewExecutor(c, ExecutorOptions{})}); err != nil {
		t.Fatal(err)
	}
	if len(want.got) != 128 || !slices.Equal(got.got, want.got) {
		t.Fatalf("kernels on the worker gave %v, the local Go run %v", got.got, want.got)
	}
}

// openCLDevice returns the first OpenCL device, for a worker to lend, or
// skips the test without one.
func openCLDevice(ctx context.Context, t *testing.T) device.Info {
	t.Helper()
	for _, r := range device.Discover(ctx) {
		if r.Backend == "opencl" && len(r.Devices) > 0 {
			return r.Devices[0]
		}
	}
	t.Skip("no OpenCL device (scripts/install-pocl.sh installs PoCL): the test needs one on a worker")
	return device.Info{}
}
