package opencl_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/kernelgen/kernelgentest"
	"github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/graph"
)

// The "worker" actor of the ETH paper's Listing 2, made concrete: per
// firing it reads 3 tokens and writes 12 tokens in 6 blocks of 2; a second
// output records which work-item computed each block.
const workerCL = `// worker.cl: Listing-2 style actor
void INIT() {
	FOREACH(blk IN PORT_out1) {
		TOKEN_OUT1_t *wbuf = RESERVE(PORT_out1, blk);
		for (int j = 0; j < BLOCK_OUT1_SIZE; j++) wbuf[j] = -(float)(blk * BLOCK_OUT1_SIZE + j);
	}
}

void FIRE() {
	TOKEN_IN1_t *rbuf = CAPTURE(PORT_in1);
	float scale = rbuf[0], shift = rbuf[1], tilt = rbuf[2];
	FOREACH(blk IN PORT_out1) {
		TOKEN_OUT1_t *wbuf = RESERVE(PORT_out1, blk);
		__global TOKEN_OWNER_t *who = RESERVE(PORT_owner, blk);
		for (int j = 0; j < BLOCK_OUT1_SIZE; j++)
			wbuf[j] = scale * (float)(blk * BLOCK_OUT1_SIZE + j) + shift - tilt * (float)j;
		who[0] = (int)get_local_id(0);
	}
}
`

func TestActorKernelListing2(t *testing.T) {
	d, q := openCL(t)
	r := rand.New(rand.NewPCG(3, 5))
	for _, tc := range []struct {
		g, i int
		dist graph.Distribution
	}{
		{1, 1, graph.Strided}, {4, 2, graph.Strided}, {4, 4, graph.Strided}, {3, 8, graph.Strided},
		{4, 2, graph.Consecutive}, {5, 4, graph.Consecutive}, {2, 6, graph.Consecutive},
	} {
		t.Run(fmt.Sprintf("G%d_I%d_%s", tc.g, tc.i, tc.dist), func(t *testing.T) {
			pl := &graph.Placement{WorkGroups: tc.g, WorkItems: tc.i, Distribution: map[string]graph.Distribution{"out1": tc.dist, "owner": tc.dist}}
			ak, err := opencl.GenerateActor(kernelgentest.Worker(), pl, "worker.cl", workerCL)
			if err != nil {
				t.Fatal(err)
			}
			if !ak.HasInit || len(ak.Inputs) != 1 || len(ak.Outputs) != 2 {
				t.Fatalf("generated %+v", ak)
			}
			p, err := d.Build(context.Background(), ak.Source(), "")
			if err != nil {
				t.Fatalf("%v\nprelude:\n%s\ntext:\n%s", err, ak.Prelude, ak.Text)
			}
			defer p.Release()
			in := make([]float32, 3*tc.g)
			for i := range in {
				in[i] = r.Float32()*10 - 5
			}
			bin := must(d.Alloc(ak.Inputs[0].Bytes(tc.g), device.ReadOnly))
			bout := must(d.Alloc(ak.Outputs[0].Bytes(tc.g), device.ReadWrite))
			bwho := must(d.Alloc(ak.Outputs[1].Bytes(tc.g), device.ReadWrite))
			defer func() { errors.Join(bin.Release(), bout.Release(), bwho.Release()) }()

			// INIT writes the initial tokens of every firing's blocks.
			initK := must(p.Kernel("INIT"))
			defer initK.Release()
			if err := ak.Bind(initK, true, []device.Window{{Buf: bout}, {Buf: bwho}}); err != nil {
				t.Fatal(err)
			}
			wait(t, must(q.Launch(initK, ak.Range())))
			outB := make([]byte, ak.Outputs[0].Bytes(tc.g))
			wait(t, must(q.Read(outB, bout, 0)))
			for i, v := range bytesf32(outB) {
				if want := -float32(i % 12); v != want {
					t.Fatalf("INIT token %d = %v, want %v", i, v, want)
				}
			}

			fire := must(p.Kernel("FIRE"))
			defer fire.Release()
			if err := ak.Bind(fire, false, []device.Window{{Buf: bin}, {Buf: bout}, {Buf: bwho}}); err != nil {
				t.Fatal(err)
			}
			w := must(q.Write(bin, 0, f32bytes(in)))
			run := must(q.Launch(fire, ak.Range(), w))
			whoB := make([]byte, ak.Outputs[1].Bytes(tc.g))
			wait(t, must(q.Read(outB, bout, 0, run)))
			wait(t, must(q.Read(whoB, bwho, 0, run)))
			w.Release()
			run.Release()
			want := kernelgentest.Reference(in, tc.g)
			for i, v := range bytesf32(outB) {
				if math.Abs(float64(v-want[i])) > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
					t.Fatalf("token %d = %v, want %v", i, v, want[i])
				}
			}
			per := (6 + tc.i - 1) / tc.i
			for i := range 6 * tc.g {
				blk := i % 6
				owner := int32(binary.LittleEndian.Uint32(whoB[4*i:]))
				wantOwner := int32(blk % tc.i)
				if tc.dist == graph.Consecutive {
					wantOwner = int32(blk / per)
				}
				if owner != wantOwner {
					t.Fatalf("block %d of firing %d computed by work-item %d, want %d (%s)", blk, i/6, owner, wantOwner, tc.dist)
				}
			}
		})
	}
}

func TestActorKernelErrors(t *testing.T) {
	d, _ := openCL(t)
	// A user error maps to the user's line despite the prelude and rewrite.
	src := strings.Replace(workerCL, "float scale = rbuf[0]", "float scale = rbuf[0] + nosuch", 1)
	ak, err := opencl.GenerateActor(kernelgentest.Worker(), nil, "worker.cl", src)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Build(context.Background(), ak.Source(), "")
	var be *device.BuildError
	if !errors.As(err, &be) || be.Diagnostics[0].File != "worker.cl" || be.Diagnostics[0].Line != 11 {
		t.Fatalf("want an error at worker.cl:11, got %v", err)
	}
	t.Log(err)
	// Generation errors.
	a := kernelgentest.Worker()
	if _, err := opencl.GenerateActor(a, nil, "x.cl", "void INIT() {}"); err == nil || !strings.Contains(err.Error(), "FIRE") {
		t.Fatalf("missing FIRE: %v", err)
	}
	a.Port("out1").Block = 5
	if _, err := opencl.GenerateActor(a, nil, "x.cl", workerCL); err == nil || !strings.Contains(err.Error(), "does not divide") {
		t.Fatalf("bad block: %v", err)
	}
	a = kernelgentest.Worker()
	a.Port("in1").Rate = graph.Dynamic()
	if _, err := opencl.GenerateActor(a, nil, "x.cl", workerCL); err == nil || !strings.Contains(err.Error(), "SDF") {
		t.Fatalf("dynamic rate: %v", err)
	}
}
