package cuda_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/device/kernelgen/kernelgentest"
	"github.com/sluicehq/sluice/graph"
)

// The "worker" actor of the ETH paper's Listing 2 (as device/opencl tests
// it), in CUDA C: per firing it reads 3 tokens and writes 12 tokens in 6
// blocks of 2; a second output records which thread computed each block.
// The helper needs no __device__ (the actor is built with -default-device).
const workerCU = `// worker.cu: Listing-2 style actor
float value(float scale, float shift, float tilt, int blk, int j) {
	return scale * (float)(blk * BLOCK_OUT1_SIZE + j) + shift - tilt * (float)j;
}

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
		TOKEN_OWNER_t *owner = RESERVE(PORT_owner, blk);
		for (int j = 0; j < BLOCK_OUT1_SIZE; j++)
			wbuf[j] = value(scale, shift, tilt, blk, j);
		owner[0] = (int)get_local_id(0);
	}
}
`

// owner is which thread computes block blk of B among I threads.
func owner(blk, b, i int, dist graph.Distribution) int {
	if dist == graph.Consecutive {
		run := (b + i - 1) / i
		return blk / run
	}
	return blk % i
}

func TestGenerateActorPrelude(t *testing.T) {
	ga, err := cuda.GenerateActor(kernelgentest.Worker(), &graph.Placement{WorkGroups: 4, WorkItems: 3}, "worker.cu", workerCU)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"typedef float TOKEN_IN1_t;", "typedef int TOKEN_OWNER_t;", "#define BLOCK_OUT1_SIZE 2", "#define BLOCK_OUT1_COUNT 6", "blockIdx.x", "threadIdx.x"} {
		if !strings.Contains(ga.Prelude, want) {
			t.Errorf("prelude lacks %q", want)
		}
	}
	if !strings.Contains(ga.Text, `extern "C" __global__ void FIRE(TOKEN_IN1_t *in1__p, sl_size_t in1__off, TOKEN_OUT1_t *out1__p, sl_size_t out1__off, TOKEN_OWNER_t *owner__p, sl_size_t owner__off)`) ||
		!strings.Contains(ga.Text, `extern "C" __global__ void INIT(TOKEN_OUT1_t *out1__p, sl_size_t out1__off, TOKEN_OWNER_t *owner__p`) {
		t.Fatalf("entries not rewritten:\n%s", ga.Text)
	}
	if strings.Count(ga.Text, "\n") != strings.Count(workerCU, "\n") {
		t.Fatal("the rewrite moved lines")
	}
	if !ga.HasInit || len(ga.Inputs) != 1 || len(ga.Outputs) != 2 || ga.Outputs[0].Blocks != 6 {
		t.Fatalf("layout %+v", ga)
	}
	if _, err := cuda.GenerateActor(kernelgentest.Worker(), nil, "x.cu", "void INIT() {}"); err == nil {
		t.Fatal("a source without FIRE: no error")
	}
}

func TestCompileActorListing2(t *testing.T) {
	d, q := open(t)
	var c device.ActorCompiler = d
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
			ak, err := c.CompileActor(context.Background(), kernelgentest.Worker(), pl, graph.Impl{Kind: graph.ImplCUDA, Source: "worker.cu", Func: workerCU})
			if err != nil {
				t.Fatal(err)
			}
			defer ak.Release()
			if ak.Groups() != tc.g || ak.Items() != tc.i || ak.Init() == nil {
				t.Fatalf("compiled %d×%d", ak.Groups(), ak.Items())
			}
			const off = 5 // windows start 5 tokens into each buffer
			in := make([]float32, 3*(tc.g+off))
			for i := range in {
				in[i] = float32(r.IntN(100)) / 4
			}
			bin := must(d.Alloc(int64(4*len(in)), device.ReadOnly))
			defer bin.Release()
			bout := must(d.Alloc(4*12*int64(tc.g+off), device.ReadWrite))
			defer bout.Release()
			bwho := must(d.Alloc(4*6*int64(tc.g+off), device.ReadWrite))
			defer bwho.Release()
			// INIT writes the initial tokens of every firing's blocks.
			if err := ak.Bind(ak.Init(), []device.Window{{Buf: bout}, {Buf: bwho}}); err != nil {
				t.Fatal(err)
			}
			wait(t, must(q.Launch(ak.Init(), ak.Range(tc.g))))
			got := make([]byte, 4*12*tc.g)
			wait(t, must(q.Read(got, bout, 0)))
			for i, v := range bytesf32(got) {
				if want := -float32(i % 12); v != want {
					t.Fatalf("INIT token %d = %v, want %v", i, v, want)
				}
			}
			wait(t, must(q.Write(bin, 0, f32bytes(in))))
			if err := ak.Bind(ak.Fire(), []device.Window{{Buf: bin, Off: 3 * off}, {Buf: bout, Off: 12 * off}, {Buf: bwho, Off: 6 * off}}); err != nil {
				t.Fatal(err)
			}
			wait(t, must(q.Launch(ak.Fire(), ak.Range(tc.g))))
			got = make([]byte, 4*12*tc.g)
			wait(t, must(q.Read(got, bout, 4*12*off)))
			want := kernelgentest.Reference(in[3*off:], tc.g)
			for i, v := range bytesf32(got) {
				if v != want[i] {
					t.Fatalf("firing %d token %d = %v, want %v", i/12, i%12, v, want[i])
				}
			}
			who := make([]byte, 4*6*tc.g)
			wait(t, must(q.Read(who, bwho, 4*6*off)))
			for i := range 6 * tc.g {
				w := int(int32(uint32(who[4*i]) | uint32(who[4*i+1])<<8 | uint32(who[4*i+2])<<16 | uint32(who[4*i+3])<<24))
				if e := owner(i%6, 6, tc.i, tc.dist); w != e {
					t.Fatalf("block %d computed by thread %d, want %d", i, w, e)
				}
			}
		})
	}
	// A compile error names the user's file and line.
	_, err := c.CompileActor(context.Background(), kernelgentest.Worker(), nil, graph.Impl{Kind: graph.ImplCUDA, Source: "worker.cu", Func: strings.Replace(workerCU, "float scale = rbuf[0]", "float scale = nosuch", 1)})
	var be *device.BuildError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "worker.cu:15:") {
		t.Fatalf("want a build error at worker.cu:15, got %v", err)
	}
	t.Log(err)
	if _, err := c.CompileActor(context.Background(), kernelgentest.Worker(), nil, graph.Impl{Kind: graph.ImplOpenCL, Source: "x.cl", Func: workerCU}); !errors.Is(err, device.ErrUnsupported) {
		t.Fatalf("OpenCL source on CUDA: %v", err)
	}
}
