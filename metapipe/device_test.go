package metapipe

import (
	"context"
	"os"
	"testing"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/all"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

const doubleCL = `void FIRE() {
	TOKEN_X_t *xs = CAPTURE(PORT_x);
	FOREACH(blk IN PORT_y) {
		TOKEN_Y_t *y = RESERVE(PORT_y, blk);
		for (int j = 0; j < BLOCK_Y_SIZE; j++) y[j] = 2.0f * xs[blk * BLOCK_Y_SIZE + j];
	}
}
`

// TestDeviceStage runs stage b as an OpenCL kernel actor on a local
// device (PoCL in CI): the application side is unchanged.
func TestDeviceStage(t *testing.T) {
	var id string
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "opencl" && r.Available() {
			id = r.Devices[0].ID
			break
		}
	}
	if id == "" {
		if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
			t.Fatal("SLUICE_REQUIRE_OPENCL=1 but no OpenCL device")
		}
		t.Skip("no OpenCL device")
	}
	ctx := ctxT(t)
	pl := chain(false, 0, "metapipe_test.double")
	pl.Graph.Actor("b").Impls = []graph.Impl{{Kind: graph.ImplOpenCL, Source: "double.cl", Func: doubleCL}}
	ro := runtime.Options{Mapping: &graph.Mapping{Actors: map[string]*graph.Placement{
		"b": {Device: id, Impl: graph.ImplOpenCL, WorkGroups: 1, WorkItems: 1},
	}}}
	p, err := Start(ctx, pl, Options{Run: ro})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	for k := 0; k < 4; k++ {
		if err := p.Send(ctx, "fb", block(1)); err != nil {
			t.Fatal(err)
		}
		if err := p.Send(ctx, "x", block(float32(k))); err != nil {
			t.Fatal(err)
		}
		b, err := p.Recv(ctx, "y")
		if err != nil {
			t.Fatal(err)
		}
		if v := value(t, b); v != 2*(float32(k)+1) {
			t.Fatalf("block %d: %v, want %v", k, v, 2*(float32(k)+1))
		}
	}
	p.CloseSend()
	st, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range st.Actors {
		if a.Name == "b" && a.Kind != "kernel" {
			t.Errorf("stage b ran as a %s actor, want a kernel actor", a.Kind)
		}
	}
}
