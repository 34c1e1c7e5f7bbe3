package kernelgen_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/device/kernelgen/kernelgentest"
	"github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/graph"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The golden files hold what device/opencl's and device/cuda's
// GenerateActor made before the generator moved into this package; the
// CUDA side cannot be built here without a GPU, so its text must stay the
// same to the byte.

const worker = `// worker: a Listing-2 style actor for the golden files
void INIT() { FOREACH(blk IN PORT_out1) { TOKEN_OUT1_t *w = RESERVE(PORT_out1, blk); w[0] = 0; } }

void FIRE() {
	const TOKEN_IN1_t *r = CAPTURE(PORT_in1);
	FOREACH(blk IN PORT_out1) {
		TOKEN_OUT1_t* w = RESERVE(PORT_out1, blk); __global TOKEN_OWNER_t *who = RESERVE(PORT_owner, blk);
		w[0] = r[0] * blk; w[1] = r[2]; who[0] = BLOCK_COUNT(PORT_out1);
	}
}
`

const typesSrc = `  void FIRE(void) {
	TOKEN_A_t *a = CAPTURE(PORT_a);
	FOREACH(b IN PORT_b) { TOKEN_B_t *w = RESERVE(PORT_b, b); w[0] = a[0]; }
}
void FIRE2() {}
`

const sourceSrc = `void FIRE ( ) {
	FOREACH(blk IN PORT_y) { TOKEN_Y_t *y = RESERVE(PORT_y, blk); y[0] = blk; }
}
`

func typed(in, out string) *graph.Actor {
	a := graph.New("golden").AddActor("types")
	a.AddPort("a", graph.In, graph.MustTokenType(in), graph.SDF(2), "")
	a.AddPort("b", graph.Out, graph.MustTokenType(out), graph.SDF(4), "")
	return a
}

type goldenCase struct {
	name string
	a    func() *graph.Actor
	pl   *graph.Placement
	src  string
}

func goldenCases() []goldenCase {
	dist := func(g, i int, d ...graph.Distribution) *graph.Placement {
		pl := &graph.Placement{WorkGroups: g, WorkItems: i, Distribution: map[string]graph.Distribution{}}
		for k, name := range []string{"out1", "owner", "b", "y"} {
			if k < len(d) {
				pl.Distribution[name] = d[k]
			}
		}
		return pl
	}
	cs := []goldenCase{
		{"worker nil", kernelgentest.Worker, nil, worker},
		{"worker G4 I3", kernelgentest.Worker, &graph.Placement{WorkGroups: 4, WorkItems: 3}, worker},
		{"worker G2 I6 consecutive", kernelgentest.Worker, dist(2, 6, graph.Consecutive, graph.Consecutive), worker},
		{"worker G5 I4 mixed", kernelgentest.Worker, dist(5, 4, graph.Strided, graph.Consecutive), worker},
		{"worker G0 I2", kernelgentest.Worker, &graph.Placement{WorkItems: 2}, worker},
		{"worker bad distribution", kernelgentest.Worker, dist(1, 1, "diagonal"), worker},
		{"worker no FIRE", kernelgentest.Worker, nil, "void INIT() {}\n"},
		{"worker no INIT", kernelgentest.Worker, nil, "void FIRE() {}\n"},
		{"source", func() *graph.Actor {
			a := graph.New("golden").AddActor("src")
			a.AddPort("y", graph.Out, graph.MustTokenType("u16"), graph.SDF(8), "").Block = 4
			return a
		}, dist(3, 2, "", "", "", graph.Consecutive), sourceSrc},
		{"block does not divide", func() *graph.Actor { a := kernelgentest.Worker(); a.Port("out1").Block = 5; return a }, nil, worker},
		{"dynamic rate", func() *graph.Actor { a := kernelgentest.Worker(); a.Port("in1").Rate = graph.Dynamic(); return a }, nil, worker},
		{"csdf rate", func() *graph.Actor { a := kernelgentest.Worker(); a.Port("out1").Rate = graph.CSDF(2, 4); return a }, nil, worker},
		{"bad port name", func() *graph.Actor {
			a := graph.New("golden").AddActor("bad")
			a.AddPort("in-1", graph.In, graph.MustTokenType("f32"), graph.SDF(1), "")
			return a
		}, nil, "void FIRE() {}\n"},
	}
	for _, ts := range [][2]string{
		{"u8", "i8"}, {"u16", "i16"}, {"u32", "i32"}, {"u64", "i64"}, {"f32", "f64"}, {"c64", "c128"},
		{"bytes16", "[4]f32"}, {"[2]f64", "[3]i32"}, {"[4]u8", "[8]i16"}, {"[16]u8", "[2]c64"}, {"[4]u64", "[2]i64"},
	} {
		cs = append(cs, goldenCase{"types " + ts[0] + " " + ts[1], func() *graph.Actor { return typed(ts[0], ts[1]) }, dist(2, 2, "", "", graph.Consecutive), typesSrc})
	}
	return cs
}

func describe(ga interface {
	Source() device.Source
}, groups, items int, hasInit bool, ins, outs []device.PortLayout, err error) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
		return b.String()
	}
	s := ga.Source()
	fmt.Fprintf(&b, "name %s, G %d, I %d, init %v\n", s.Name, groups, items, hasInit)
	for _, ls := range [][]device.PortLayout{ins, outs} {
		for _, l := range ls {
			fmt.Fprintf(&b, "port %s %s rate %d block %d blocks %d dist %q\n", l.Port.Name, l.CType, l.Rate, l.Block, l.Blocks, l.Distribution)
		}
	}
	fmt.Fprintf(&b, "--- prelude\n%s--- text\n%s", s.Prelude, s.Text)
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, backend := range []struct {
		name string
		gen  func(a *graph.Actor, pl *graph.Placement, name, src string) string
	}{
		{"opencl", func(a *graph.Actor, pl *graph.Placement, name, src string) string {
			ga, err := opencl.GenerateActor(a, pl, name, src)
			if err != nil {
				return describe(nil, 0, 0, false, nil, nil, err)
			}
			return describe(ga, ga.Groups, ga.Items, ga.HasInit, ga.Inputs, ga.Outputs, nil)
		}},
		{"cuda", func(a *graph.Actor, pl *graph.Placement, name, src string) string {
			ga, err := cuda.GenerateActor(a, pl, name, src)
			if err != nil {
				return describe(nil, 0, 0, false, nil, nil, err)
			}
			return describe(ga, ga.Groups, ga.Items, ga.HasInit, ga.Inputs, ga.Outputs, nil)
		}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			var b strings.Builder
			for _, c := range goldenCases() {
				fmt.Fprintf(&b, "=== %s\n%s", c.name, backend.gen(c.a(), c.pl, c.name+".src", c.src))
			}
			path := filepath.Join("testdata", backend.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != string(want) {
				gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("%s line %d:\n got %q\nwant %q", path, i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%s: %d lines, want %d", path, len(gl), len(wl))
			}
		})
	}
}
