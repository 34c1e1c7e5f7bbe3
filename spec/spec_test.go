package spec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

func errorLines(t *testing.T, err error) []string {
	t.Helper()
	var el spec.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("error %T is not an ErrorList: %v", err, err)
	}
	var out []string
	for _, e := range el {
		out = append(out, e.Error())
	}
	return out
}

func TestAllErrorsAtOnce(t *testing.T) {
	src := `name: many
actors:
  A: {out: {o: {type: f33, rate: 1}}, colour: red}
  B:
    in: {i: {type: f32, rate: -1}}
    out: {o: {type: f32, rate: 3, block: 2}}
  C: {in: {i: {type: i32, rate: 1}, j: {type: f32, rate: 1}}, kernel: {opencl: nothere.cl}}
channels:
  - {from: Aa.o, to: B.i}
  - {from: B.o, to: C.i}
  - {from: A.o, to: C.j}
`
	_, err := spec.ParseGraph("many.yaml", []byte(src))
	got := errorLines(t, err)
	want := []string{
		`many.yaml:3:23: port A.o: type: token type "f33"`,
		`many.yaml:3:39: actor A: unknown key "colour"`,
		`many.yaml:5:31: port B.i: rate: -1 out of range`,
		`many.yaml:7:80: actor C: kernel: opencl: kernel file "nothere.cl" not found`,
		`many.yaml:9:12: channels[0]: from: unknown actor "Aa" in "Aa.o" (did you mean "A"?)`,
		`many.yaml:6:11: port B.o: block size 2 does not divide rate 3`,
		`many.yaml:10:5: token type mismatch on B.o->C.i: B.o gives f32, C.i expects i32`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s…", i, got[i], want[i])
		}
	}
	var el spec.ErrorList
	errors.As(err, &el)
	if e := el[0]; e.File != "many.yaml" || e.Line != 3 || e.Col != 23 {
		t.Errorf("first error fields = %+v", e)
	}
}

func TestGraphFields(t *testing.T) {
	src := `name: fields
doc: every key once
actors:
  src:
    use: gen.ramp
    with: {start: 1, step: 0.5, names: [a, b], on: true, nested: {k: v}}
    out: {o: {type: "[2]f32", rate: [1, 2, 1], block: 1}}
    cost: 1.5us
    io: true
    attrs: {priority: "3"}
  k:
    kernel: {opencl: ../examples/kernels/fft.cl, cuda: ../examples/eth/prod.c, go: k.fire, entry: fft_row}
    stateful: true
    in: {i: {type: "[2]f32", rate: 4}}
    out: {o: {type: u8, rate: dynamic}}
    cost: 250
  p: {process: true, in: {x: {type: u8}}}
channels:
  - {from: src.o, to: k.i, capacity: 8, name: sk}
  - {from: k.o, to: p.x}
`
	g, err := spec.ParseGraph("fields.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	src0 := g.Actor("src")
	if im, ok := src0.Impl(graph.ImplBuiltin); !ok || im.Source != "gen.ramp" ||
		!reflect.DeepEqual(im.Params, map[string]any{"start": 1, "step": 0.5, "names": []any{"a", "b"}, "on": true, "nested": map[string]any{"k": "v"}}) {
		t.Errorf("builtin impl = %+v", src0.Impls)
	}
	o := src0.Port("o")
	if !o.Rate.Equal(graph.CSDF(1, 2, 1)) || o.Type.Name != "[2]f32" || o.Block != 1 || o.Origin != "fields.yaml:7:11" {
		t.Errorf("port src.o = %+v", o)
	}
	if src0.Cost != 1500*time.Nanosecond || !src0.IO || src0.Attrs["priority"] != "3" || src0.Origin != "fields.yaml:4:3" {
		t.Errorf("actor src = %+v", src0)
	}
	k := g.Actor("k")
	wantImpls := []graph.Impl{
		{Kind: graph.ImplOpenCL, Source: filepath.Join("..", "examples", "kernels", "fft.cl"), Entry: "fft_row"},
		{Kind: graph.ImplCUDA, Source: filepath.Join("..", "examples", "eth", "prod.c"), Entry: "fft_row"},
		{Kind: graph.ImplGo, Source: "k.fire"},
	}
	if !reflect.DeepEqual(k.Impls, wantImpls) || !k.Stateful || k.Cost != 250 {
		t.Errorf("actor k = %+v", k)
	}
	if !k.Port("o").Rate.IsDynamic() {
		t.Errorf("k.o rate = %v", k.Port("o").Rate)
	}
	p := g.Actor("p")
	if !p.Stateful || !p.Dynamic() {
		t.Errorf("process p: stateful %v dynamic %v", p.Stateful, p.Dynamic())
	}
	c := g.Channel("sk")
	if c == nil || c.Capacity != 8 || c.Origin != "fields.yaml:19:5" {
		t.Errorf("channel sk = %+v", c)
	}
	if g.Origin != "fields.yaml" || g.Name != "fields" {
		t.Errorf("graph origin %q name %q", g.Origin, g.Name)
	}
}

func TestBoundaries(t *testing.T) {
	src := `actors:
  f: {in: {x: {type: f32, rate: 1}}, out: {y: {type: f32, rate: 1}}}
inputs:  {in: f.x}
outputs: {out: f.y}
`
	g, err := spec.ParseGraph("dir/b.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "b" {
		t.Errorf("default name %q, want b", g.Name)
	}
	wantIn := []graph.Boundary{{Name: "in", Actor: "f", Port: "x", Origin: "dir/b.yaml:3:15"}}
	wantOut := []graph.Boundary{{Name: "out", Actor: "f", Port: "y", Origin: "dir/b.yaml:4:16"}}
	if !reflect.DeepEqual(g.Inputs, wantIn) || !reflect.DeepEqual(g.Outputs, wantOut) {
		t.Errorf("inputs %+v outputs %+v", g.Inputs, g.Outputs)
	}
}

func TestComposites(t *testing.T) {
	g, err := spec.LoadGraph(filepath.Join("testdata", "composite.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file, inline := g.Actor("file"), g.Actor("inline")
	if file.Sub == nil || file.Sub.Name != "stage" || file.Sub.Origin != filepath.Join("testdata", "stage.yaml") {
		t.Fatalf("composite from file: %+v", file.Sub)
	}
	if got := file.Sub.Actor("scale").Origin; got != filepath.Join("testdata", "stage.yaml")+":4:3" {
		t.Errorf("inner actor origin %q", got)
	}
	if inline.Sub == nil || inline.Sub.Name != "inline" || len(inline.Sub.Actors) != 1 {
		t.Fatalf("inline composite: %+v", inline.Sub)
	}
	if got := inline.Sub.Origin; got != filepath.Join("testdata", "composite.yaml")+":7:7" {
		t.Errorf("inline graph origin %q", got)
	}
	f, err := g.Flatten()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range f.Actors {
		names = append(names, a.Name)
	}
	if want := "src file/scale file/offset inline/id sink"; strings.Join(names, " ") != want {
		t.Errorf("flattened actors %q, want %q", strings.Join(names, " "), want)
	}
}

func TestCompositeErrors(t *testing.T) {
	_, err := spec.LoadGraph(filepath.Join("testdata", "loop-a.yaml"))
	got := strings.Join(errorLines(t, err), "\n")
	if !strings.Contains(got, "loop-b.yaml:2:14: actor a: graph file \"loop-a.yaml\" includes itself") {
		t.Errorf("include cycle not reported:\n%s", got)
	}
	_, err = spec.LoadGraph(filepath.Join("testdata", "uses-bad-stage.yaml"))
	got = strings.Join(errorLines(t, err), "\n")
	want := filepath.Join("testdata", "bad-stage.yaml") + `:2:54: port x.o: type: token type "f33"`
	if !strings.HasPrefix(got, want) {
		t.Errorf("error in included file:\n got %s\nwant %s…", got, want)
	}
	_, err = spec.ParseGraph("t.yaml", []byte("actors:\n  c: {graph: missing.yaml}\n"))
	if got := strings.Join(errorLines(t, err), "\n"); !strings.HasPrefix(got, `t.yaml:2:14: actor c: graph file "missing.yaml": cannot read the file`) {
		t.Errorf("missing composite file: %s", got)
	}
}

func TestInitialValues(t *testing.T) {
	le := binary.LittleEndian
	f32 := func(vs ...float32) []byte {
		var b []byte
		for _, v := range vs {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
		return b
	}
	tests := []struct {
		typ, values string
		want        []byte
		tokens      int
	}{
		{"f32", "[0.5, -2]", f32(0.5, -2), 2},
		{"f64", "[1]", le.AppendUint64(nil, math.Float64bits(1)), 1},
		{"u8", "[0, 255, 0x10]", []byte{0, 255, 16}, 3},
		{"i8", "[-128, 127]", []byte{0x80, 0x7f}, 2},
		{"i16", "[-2]", []byte{0xfe, 0xff}, 1},
		{"u32", "[305419896]", []byte{0x78, 0x56, 0x34, 0x12}, 1},
		{"i64", "[-1]", bytes.Repeat([]byte{0xff}, 8), 1},
		{"u64", "[18446744073709551615]", bytes.Repeat([]byte{0xff}, 8), 1},
		{"c64", `[[1, 2], 3, "4-5i"]`, f32(1, 2, 3, 0, 4, -5), 3},
		{`"[2]f32"`, "[[1, 2], [3, 4]]", f32(1, 2, 3, 4), 2},
		{"bytes3", `[[1, 2, 3], "0x0a0b0c", "ffeedd"]`, []byte{1, 2, 3, 10, 11, 12, 0xff, 0xee, 0xdd}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			src := "actors:\n  A: {in: {x: {type: T, rate: 1}}, out: {o: {type: T, rate: 1}}}\ninputs: {x: A.x}\nchannels:\n  - {from: A.o, to: A.x, values: V}\n"
			src = strings.ReplaceAll(src, "T", tt.typ)
			src = strings.Replace(src, "V", tt.values, 1)
			g, err := spec.ParseGraph("v.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			c := g.Channels[0]
			if !bytes.Equal(c.InitialData, tt.want) || c.Initial != tt.tokens {
				t.Errorf("initial %d data % x, want %d % x", c.Initial, c.InitialData, tt.tokens, tt.want)
			}
		})
	}
}

func TestAliases(t *testing.T) {
	src := `x: &port {type: f32, rate: 1}
actors:
  A: {out: {o: *port}}
  B: {in: {i: {<<: *port, rate: 1}}}
channels:
  - {from: A.o, to: B.i}
`
	// the top-level key x is unknown: aliases are fine, the error stays precise
	_, err := spec.ParseGraph("a.yaml", []byte(src))
	if got := strings.Join(errorLines(t, err), "\n"); !strings.HasPrefix(got, `a.yaml:1:1: graph: unknown key "x"`) {
		t.Errorf("got %s", got)
	}
	src = strings.Replace(src, "x: &port", "doc: &port", 1)
	g, err := spec.ParseGraph("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if p := g.Actor("B").Port("i"); p.Type.Name != "f32" || !p.Rate.Equal(graph.SDF(1)) {
		t.Errorf("merged port %+v", p)
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	src := "actors:\n  A: {use: x, with: {bomb: *a9}}\n"
	_, err := spec.ParseGraph("bomb.yaml", []byte("doc: {"+strings.ReplaceAll(strings.TrimSpace(b.String()), "\n", ", ")+"}\n"+src))
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Fatalf("alias bomb: %v", err)
	}
}

func TestLoadFormats(t *testing.T) {
	if _, err := spec.Load("graph.json"); err == nil || !strings.Contains(err.Error(), "unknown graph file format") {
		t.Errorf("json: %v", err)
	}
	if _, err := spec.Load(filepath.Join("testdata", "nothere.yaml")); err == nil || !strings.Contains(err.Error(), "cannot read the file") {
		t.Errorf("missing: %v", err)
	}
	if _, err := spec.LoadGraph(os.DevNull); err == nil || !strings.Contains(err.Error(), "regular file") {
		t.Errorf("device file: %v", err)
	}
}

func TestParseMapping(t *testing.T) {
	src := `name: m
mapping:
  worker: {device: "opencl:0:0", impl: opencl, replicas: 2, work-groups: 4, work-items: 2, distribution: {out1: strided}, priority: -1, affinity: [0, 3]}
  cons: {device: cpu, affinity: 1}
  fir: {replicas: 3, team: replicate}
`
	m, err := spec.ParseMapping("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &graph.Placement{Device: "opencl:0:0", Impl: graph.ImplOpenCL, Replicas: 2, WorkGroups: 4, WorkItems: 2,
		Distribution: map[string]graph.Distribution{"out1": graph.Strided}, Priority: -1, Affinity: []int{0, 3}, Origin: "m.yaml:3:3"}
	if !reflect.DeepEqual(m.Actors["worker"], want) {
		t.Errorf("worker = %+v", m.Actors["worker"])
	}
	if c := m.Actors["cons"]; c.Device != "cpu" || !reflect.DeepEqual(c.Affinity, []int{1}) {
		t.Errorf("cons = %+v", c)
	}
	if f := m.Actors["fir"]; f.Replicas != 3 || f.Team != graph.TeamReplicate {
		t.Errorf("fir = %+v", f)
	}
	if m.Name != "m" || m.Origin != "m.yaml" {
		t.Errorf("mapping %q %q", m.Name, m.Origin)
	}

	bad := `mapping:
  worker: {device: gpu, impl: opencll, work-groups: -4, distribution: {out1: striped}, workitems: 2}
  fir: {team: replicated}
`
	_, err = spec.ParseMapping("m.yaml", []byte(bad))
	want2 := []string{
		`m.yaml:2:31: mapping of worker: impl "opencll": expected go, opencl, cuda or builtin (did you mean "opencl"?)`,
		`m.yaml:2:53: mapping of worker: work-groups: -4 out of range: expected 0 to 2147483647`,
		`m.yaml:2:78: mapping of worker: distribution "striped": expected consecutive or strided (did you mean "strided"?)`,
		`m.yaml:2:88: mapping of worker: unknown key "workitems" (did you mean "work-items"?); allowed keys: doc, device, impl, replicas, work-groups, work-items, distribution, priority, affinity, team, any, strict`,
		`m.yaml:3:15: mapping of fir: team "replicated": expected split or replicate (did you mean "replicate"?)`,
	}
	if got := errorLines(t, err); strings.Join(got, "\n") != strings.Join(want2, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want2, "\n"))
	}
	if _, err := spec.ParseMapping("m.yaml", []byte("name: x\n")); err == nil || !strings.Contains(err.Error(), "missing mapping:") {
		t.Errorf("no mapping: %v", err)
	}
}

func TestSelfReferencingAliases(t *testing.T) {
	for _, src := range []string{
		"a: &a [x]\nb: &b [*b, *a]\nactors: {A: {use: u, with: {x: *b}}}\n",
		"actors:\n  c: &c {graph: {actors: {d: *c}}, in: {x: {type: f32, rate: 1}}}\n",
		"actors:\n  c: &c {<<: *c, in: {}}\n",
	} {
		_, err := spec.ParseGraph("rec.yaml", []byte(src))
		if err == nil {
			t.Errorf("no error for %q", src)
			continue
		}
		if len(err.Error()) > 1<<20 {
			t.Errorf("error of %d bytes for %q", len(err.Error()), src)
		}
	}
}

func TestParseMappingRemote(t *testing.T) {
	mp, err := spec.ParseMapping("m.yaml", []byte("mapping:\n  a: {device: worker:w1/cuda:0}\n  b: {any: {backend: cuda, memory: \">=8GiB\", units: 4}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := mp.Actors["a"].Device; d != "worker:w1/cuda:0" {
		t.Errorf("a: device %q, want worker:w1/cuda:0", d)
	}
	if a := mp.Actors["b"].Any; a != "backend=cuda,memory>=8GiB,units=4" {
		t.Errorf("b: any %q, want backend=cuda,memory>=8GiB,units=4", a)
	}
	if _, err := spec.ParseMapping("m.yaml", []byte("mapping:\n  a: {device: cpu, any: {backend: cuda}}\n")); err == nil || !strings.Contains(err.Error(), "either device or any") {
		t.Errorf("device and any: %v, want an error", err)
	}
}

// TestTooLargeAlone checks that a graph over the node limit is reported by
// that one error, not followed by false findings about the part not read.
func TestTooLargeAlone(t *testing.T) {
	// About 19 nodes an actor: 20 000 actors are 1.5 times the limit of
	// 2^18 nodes before the channels.
	const n = 20000
	var b strings.Builder
	b.WriteString("actors:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  a%d: {in: {i: {type: f32, rate: 1}}, out: {o: {type: f32, rate: 1}}}\n", i)
	}
	b.WriteString("channels:\n")
	for i := 0; i+1 < n; i++ {
		fmt.Fprintf(&b, "  - {from: a%d.o, to: a%d.i}\n", i, i+1)
	}
	_, err := spec.ParseGraph("big.yaml", []byte(b.String()))
	if err == nil {
		t.Fatalf("a graph of %d actors: expected the node limit to be reported", n)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "document too large") {
		t.Fatalf("expected one error, the node limit; got %d:\n%s", len(lines), strings.Join(lines[:min(5, len(lines))], "\n"))
	}
}
