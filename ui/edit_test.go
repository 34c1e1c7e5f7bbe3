package ui

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/spec"
)

// edit posts ops on yaml to POST /api/edit and decodes the answer.
func edit(t *testing.T, s *Server, yaml string, ops ...OpJSON) (int, CheckResult, []string) {
	t.Helper()
	body, _ := json.Marshal(EditJSON{YAML: yaml, Ops: ops})
	rec := doRaw(t, s.Handler(), "POST", "/api/edit", string(body))
	var res struct {
		CheckResult
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("edit: answer is not JSON: %v: %s", err, rec.Body)
	}
	return rec.Code, res.CheckResult, res.Errors
}

func exampleText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// A rate edited on the drawing: the YAML regenerated keeps the file's
// comments, parses as it is (what `sluice check` reads), and check's
// report follows the edit.
func TestEditRateKeepsComments(t *testing.T) {
	s := &Server{File: example}
	code, res, errs := edit(t, s, exampleText(t, example), OpJSON{Op: "set_port", Actor: "C", Port: "i", Rate: "4"})
	if code != 200 {
		t.Fatalf("set_port: expected 200, found %d: %v", code, errs)
	}
	if res.Report.Repetitions["A"] != 98 || res.Report.Repetitions["F"] != 80 {
		t.Fatalf("C consuming 4: expected A=98 F=80, found %v", res.Report.Repetitions)
	}
	for _, want := range []string{"# CD-to-DAT sample-rate converter", "# resample 2/3: polyphase FIR", "i: {type: f32, rate: 4}"} {
		if !strings.Contains(res.YAML, want) {
			t.Fatalf("expected %q in the regenerated YAML, found\n%s", want, res.YAML)
		}
	}
	g, err := spec.ParseGraph("cd2dat.yaml", []byte(res.YAML))
	if err != nil {
		t.Fatalf("the regenerated YAML does not parse: %v", err)
	}
	if rep := analysis.Check(g, analysis.CheckOptions{}); !rep.Consistent || rep.Repetitions["C"] != 49 {
		t.Fatalf("check of the regenerated YAML: %+v", rep.Repetitions)
	}
}

// An actor added and connected on the drawing: while its input is not
// connected the answer is 200 with the finding (report.valid false, its
// error naming G.i) and the sketch of the graph (the new actor drawn);
// once connected, check counts its firings.
func TestEditAddActorAndConnect(t *testing.T) {
	s := &Server{File: example}
	add := OpJSON{Op: "add_actor", Name: "G", In: []PortJSON{{Name: "i", Type: "f32", Rate: "2"}}, Cost: ptr("1us")}
	code, bad, errs := edit(t, s, exampleText(t, example), add)
	if code != 200 || bad.Report == nil || bad.Report.Valid || !strings.Contains(strings.Join(bad.Report.Errors, "\n"), "G.i") {
		t.Fatalf("G's input not connected: expected 200 with an invalid report naming G.i, found %d %v %+v", code, errs, bad.Report)
	}
	if bad.Graph == nil || bad.Graph.ID != "" || len(bad.Graph.Actors) != 7 || bad.Graph.Actors[6].Name != "G" || !strings.Contains(bad.YAML, "G: {in: {i: {type: f32, rate: 2}}, cost: 1us}") {
		t.Fatalf("expected the sketch with G (no graph identity) and the YAML, found %+v\n%s", bad.Graph, bad.YAML)
	}
	code, res, errs := edit(t, s, bad.YAML,
		OpJSON{Op: "add_port", Actor: "F", Dir: "out", Name: "o", Type: "f32", Rate: "1"},
		OpJSON{Op: "add_channel", From: "F.o", To: "G.i", Capacity: ptr(8)})
	if code != 200 {
		t.Fatalf("connect F.o -> G.i: expected 200, found %d: %v", code, errs)
	}
	if res.Report.Repetitions["G"] != 80 || len(res.Graph.Channels) != 6 || res.Graph.Channels[5].Capacity != 8 {
		t.Fatalf("expected G=80 and a 6th channel of capacity 8, found %v %+v", res.Report.Repetitions, res.Graph.Channels)
	}
	code, res, errs = edit(t, s, res.YAML, OpJSON{Op: "remove_actor", Actor: "G"}, OpJSON{Op: "remove_port", Actor: "F", Port: "o"})
	if code != 200 || len(res.Graph.Actors) != 6 || len(res.Graph.Channels) != 5 || strings.Contains(res.YAML, "G:") {
		t.Fatalf("remove G and F.o: expected cd2dat back, found %d %v\n%s", code, errs, res.YAML)
	}
}

// Initial tokens set on the drawing end the deadlock check found.
func TestEditChannelEndsDeadlock(t *testing.T) {
	s := &Server{File: "../examples/feedback-deadlock.yaml"}
	text := exampleText(t, s.File)
	code, res, _ := edit(t, s, text)
	if code != 200 || !res.Report.Deadlock {
		t.Fatalf("feedback-deadlock: expected a deadlock, found %d %+v", code, res.Report)
	}
	code, res, errs := edit(t, s, text, OpJSON{Op: "set_channel", From: "accumulate.coeff", To: "predict.coeff", Initial: ptr(1), Capacity: ptr(4)})
	if code != 200 || res.Report.Deadlock || !strings.Contains(res.YAML, "name: loop, capacity: 4, initial: 1}") {
		t.Fatalf("one initial token on loop: expected no deadlock, found %d %v %+v\n%s", code, errs, res.Report, res.YAML)
	}
	code, res, _ = edit(t, s, res.YAML, OpJSON{Op: "remove_channel", From: "accumulate.trace", To: "sink.c"}, OpJSON{Op: "remove_actor", Actor: "sink"})
	if code != 200 || res.Report.Valid || !strings.Contains(strings.Join(res.Report.Errors, ""), "accumulate.trace") {
		t.Fatalf("accumulate.trace left unconnected: expected 200 with the finding, found %d %+v", code, res.Report)
	}
}

// A composite added by file takes its ports from the subgraph's inputs
// and outputs, at one iteration's rates.
func TestEditAddComposite(t *testing.T) {
	s := &Server{File: "../examples/fft-filter.yaml"}
	code, bad, _ := edit(t, s, "name: g\n", OpJSON{Op: "add_actor", Name: "pass", Graph: "fft-pass.yaml"})
	if code != 200 || bad.Report.Valid {
		t.Fatalf("a composite whose ports are not connected: expected 200 with an invalid report, found %d %+v", code, bad.Report)
	}
	want := "pass: {in: {in: {type: c64, rate: 262144}}, out: {out: {type: c64, rate: 262144}}, graph: fft-pass.yaml}"
	if !strings.Contains(bad.YAML, want) {
		t.Fatalf("expected %q, found\n%s (%v)", want, bad.YAML, bad.Report.Errors)
	}
}

func TestEditBadInput(t *testing.T) {
	s := &Server{File: example}
	text := exampleText(t, example)
	cases := []struct {
		name string
		op   OpJSON
		want string
	}{
		{"unknown op", OpJSON{Op: "explode"}, `unknown operation "explode"`},
		{"unknown actor", OpJSON{Op: "remove_actor", Actor: "Nope"}, `actor "Nope": expected an actor of the graph`},
		{"unknown port", OpJSON{Op: "add_channel", From: "A.o", To: "B.nope"}, "port B.nope: expected a port of B"},
		{"duplicate actor", OpJSON{Op: "add_actor", Name: "A"}, `actor "A": expected a new name`},
		{"bad rate", OpJSON{Op: "set_port", Actor: "C", Port: "i", Rate: "three"}, `rate "three": expected an integer`},
		{"bad type", OpJSON{Op: "add_port", Actor: "F", Dir: "out", Name: "o", Type: "f33", Rate: "1"}, `token type "f33"`},
		{"bad kernel", OpJSON{Op: "add_actor", Name: "K", Kernel: "k.c"}, "expected an OpenCL .cl or a CUDA .cu file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := edit(t, s, text, c.op)
			if code != 422 || !strings.Contains(strings.Join(errs, "\n"), c.want) {
				t.Fatalf("expected 422 with %q, found %d %v", c.want, code, errs)
			}
		})
	}
	rec := doRaw(t, s.Handler(), "POST", "/api/edit", "{not json")
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "expected JSON") {
		t.Fatalf("malformed JSON: expected 400, found %d %s", rec.Code, rec.Body)
	}
	rec = doRaw(t, s.Handler(), "POST", "/api/edit", strings.Repeat(" ", MaxBody+1))
	if rec.Code != 413 {
		t.Fatalf("oversized body: expected 413, found %d", rec.Code)
	}
	alias := "name: g\nactors:\n  a: &x {out: {o: {type: f32, rate: 1}}}\n  b: *x\n"
	if code, _, errs := edit(t, s, alias, OpJSON{Op: "set_port", Actor: "b", Port: "o", Rate: "2"}); code != 422 || !strings.Contains(strings.Join(errs, ""), "YAML alias") {
		t.Fatalf("edit of an alias: expected 422 naming the alias, found %d %v", code, errs)
	}
}

// Built-ins and kernels added by the palette: the YAML they give loads
// (the kernel file is found next to FILE) and names them.
func TestEditAddBuiltinAndKernel(t *testing.T) {
	s := &Server{File: "../examples/opencl/saxpy.yaml"}
	yaml := "name: g\n"
	code, res, errs := edit(t, s, yaml,
		OpJSON{Op: "add_actor", Name: "src", Use: "gen.ramp", With: map[string]any{"count": 4}, Out: []PortJSON{{Name: "y", Type: "f32", Rate: "16"}}},
		OpJSON{Op: "add_actor", Name: "k", Kernel: "half.cl", Entry: "half", In: []PortJSON{{Name: "z", Type: "f32", Rate: "16"}}, Out: []PortJSON{{Name: "w", Type: "f32", Rate: "16"}}},
		OpJSON{Op: "add_actor", Name: "out", Use: "stdout", In: []PortJSON{{Name: "w", Type: "f32", Rate: "[8,8]"}}},
		OpJSON{Op: "add_channel", From: "src.y", To: "k.z"},
		OpJSON{Op: "add_channel", From: "k.w", To: "out.w"},
		OpJSON{Op: "set_actor", Actor: "out", Stateful: ptr(true)})
	if code != 200 {
		t.Fatalf("expected 200, found %d: %v", code, errs)
	}
	for _, want := range []string{"use: gen.ramp, with: {count: 4}", "kernel: {opencl: half.cl, entry: half}", "rate: [8, 8]", "stateful: true"} {
		if !strings.Contains(res.YAML, want) {
			t.Fatalf("expected %q in\n%s", want, res.YAML)
		}
	}
	if res.Report.Repetitions["out"] != 2 {
		t.Fatalf("out consumes [8,8]: expected 2 firings per iteration, found %v", res.Report.Repetitions)
	}
	if _, err := spec.ParseGraph("../examples/opencl/g.yaml", []byte(res.YAML)); err != nil {
		t.Fatalf("the YAML does not load: %v", err)
	}
}

// Without a file the editor starts from nothing: the first edit makes the
// graph, named after editor.yaml.
func TestEditFromScratch(t *testing.T) {
	code, res, errs := edit(t, &Server{}, "",
		OpJSON{Op: "add_actor", Name: "A", Out: []PortJSON{{Name: "o", Type: "i32", Rate: "2"}}, Cost: ptr("1us")},
		OpJSON{Op: "add_actor", Name: "B", In: []PortJSON{{Name: "i", Type: "i32", Rate: "3"}}},
		OpJSON{Op: "add_channel", From: "A.o", To: "B.i", Initial: ptr(1)})
	if code != 200 || res.Graph.Name != "editor" || res.Report.Repetitions["A"] != 3 || res.Report.Repetitions["B"] != 2 {
		t.Fatalf("a graph from scratch: expected A=3 B=2 in graph editor, found %d %v %+v", code, errs, res.Report)
	}
	if !strings.HasPrefix(res.YAML, "name: editor\nactors:\n  A: {out: {o: {type: i32, rate: 2}}, cost: 1us}\n") {
		t.Fatalf("unexpected YAML:\n%s", res.YAML)
	}
}
