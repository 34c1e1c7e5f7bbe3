package opencl_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

// CompileActor builds a kernel actor; windows at token offsets in one
// buffer (a ring) address the right tokens.
func TestCompileActorWindows(t *testing.T) {
	d, q := openCL(t)
	g := graph.New("t")
	a := g.AddActor("dbl")
	f32 := graph.MustTokenType("f32")
	a.AddPort("x", graph.In, f32, graph.SDF(4), "")
	a.AddPort("y", graph.Out, f32, graph.SDF(4), "").Block = 1
	src := "void FIRE() {\n\tTOKEN_X_t *r = CAPTURE(PORT_x);\n\tFOREACH(b IN PORT_y) {\n\t\tTOKEN_Y_t *w = RESERVE(PORT_y, b);\n\t\tw[0] = 2 * r[b];\n\t}\n}\n"
	var c device.ActorCompiler = d
	ak, err := c.CompileActor(context.Background(), a, &graph.Placement{WorkGroups: 2, WorkItems: 4}, graph.Impl{Kind: graph.ImplOpenCL, Source: "dbl.cl", Func: src})
	if err != nil {
		t.Fatal(err)
	}
	defer ak.Release()
	if ak.Groups() != 2 || ak.Items() != 4 || ak.Init() != nil || len(ak.Inputs()) != 1 || len(ak.Outputs()) != 1 || ak.Outputs()[0].Blocks != 4 {
		t.Fatalf("compiled %d×%d init %v", ak.Groups(), ak.Items(), ak.Init())
	}
	ring := must(d.Alloc(64*4, device.ReadWrite))
	defer ring.Release()
	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(i)
	}
	wait(t, must(q.Write(ring, 0, f32bytes(in))))
	// firings read tokens [8, 16) and write tokens [40, 48).
	if err := ak.Bind(ak.Fire(), []device.Window{{Buf: ring, Off: 8}, {Buf: ring, Off: 40}}); err != nil {
		t.Fatal(err)
	}
	wait(t, must(q.Launch(ak.Fire(), ak.Range(2))))
	out := make([]byte, 64*4)
	wait(t, must(q.Read(out, ring, 0)))
	got := bytesf32(out)
	for i := range 8 {
		if got[40+i] != 2*float32(8+i) {
			t.Fatalf("token %d = %v, want %v", 40+i, got[40+i], 2*float32(8+i))
		}
	}
	if err := ak.Bind(ak.Fire(), []device.Window{{Buf: ring}}); err == nil {
		t.Fatal("binding one window of two: no error")
	}
	// A compile error names the user's file and line.
	_, err = c.CompileActor(context.Background(), a, nil, graph.Impl{Kind: graph.ImplOpenCL, Source: "dbl.cl", Func: strings.Replace(src, "2 * r[b]", "2 * nosuch", 1)})
	var be *device.BuildError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "dbl.cl:5:") {
		t.Fatalf("want a build error at dbl.cl:5, got %v", err)
	}
	if _, err := c.CompileActor(context.Background(), a, nil, graph.Impl{Kind: graph.ImplCUDA, Source: "x.cu", Func: src}); !errors.Is(err, device.ErrUnsupported) {
		t.Fatalf("CUDA source on OpenCL: %v", err)
	}
}
