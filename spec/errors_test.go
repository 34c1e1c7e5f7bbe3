package spec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/spec"
)

// base is a valid graph the cases below break in one place each.
const base = `name: t
actors:
  A: {out: {o: {type: f32, rate: 2}}}
  B: {in: {i: {type: f32, rate: 1}}}
channels:
  - {from: A.o, to: B.i}
`

func TestGraphErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // every error, in order
	}{
		{"valid", base, nil},
		{"unknown key", `actors:
  A: {out: {o: {type: f32, rate: 1}}, colour: red}
outputs: {y: A.o}
`, []string{`t.yaml:2:39: actor A: unknown key "colour"; allowed keys: doc, in, out, cost, stateful, io, process, use, with, kernel, graph, attrs, iterations, swap, flowmodel, pattern, control, branches, state`}},
		{"unknown key did you mean", `actors:
  A: {out: {o: {type: f32, rate: 1}}, kernal: {go: a}}
outputs: {y: A.o}
`, []string{`t.yaml:2:39: actor A: unknown key "kernal" (did you mean "kernel"?); allowed keys: doc, in, out, cost, stateful, io, process, use, with, kernel, graph, attrs, iterations, swap, flowmodel, pattern, control, branches, state`}},
		{"unknown top-level key", "nme: x\n" + base[8:], []string{
			`t.yaml:1:1: graph: unknown key "nme" (did you mean "name"?); allowed keys: kind, go, name, doc, actors, inputs, outputs, channels, pipeline, shared`}},
		{"bad type name", strings.Replace(base, "type: f32, rate: 2", "type: f33, rate: 2", 1), []string{
			`t.yaml:3:23: port A.o: type: token type "f33": expected one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, c64, c128, [N]scalar or bytesN`}},
		{"bad vector type", strings.Replace(base, "type: f32, rate: 2", `type: "[0]f32", rate: 2`, 1), []string{
			`t.yaml:3:23: port A.o: type: token type "[0]f32": expected [N]scalar with N > 0 and scalar one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, c64, c128`}},
		{"huge vector type", strings.Replace(base, "type: f32, rate: 2", `type: "[4611686018427387905]f32", rate: 2`, 1), []string{
			`t.yaml:3:23: port A.o: type: token type "[4611686018427387905]f32": expected [N]scalar with 0 < N ≤ 1073741824`}},
		{"bad rate word", strings.Replace(base, "rate: 2", "rate: fast", 1), []string{
			`t.yaml:3:34: port A.o: rate: expected a positive integer, a list of phases such as [1, 2, 1], or dynamic, found "fast"`}},
		{"zero rate", strings.Replace(base, "rate: 2", "rate: 0", 1), []string{
			`t.yaml:3:34: port A.o: rate: 0 out of range: expected 1 to 2147483647`}},
		{"huge rate", strings.Replace(base, "rate: 2", "rate: 4294967296", 1), []string{
			`t.yaml:3:34: port A.o: rate: 4294967296 out of range: expected 1 to 2147483647`}},
		{"rate overflowing int64", strings.Replace(base, "rate: 2", "rate: 99999999999999999999999", 1), []string{
			`t.yaml:3:34: port A.o: rate: expected a positive integer, a list of phases such as [1, 2, 1], or dynamic, found number 99999999999999999999999`}},
		{"empty phases", strings.Replace(base, "rate: 2", "rate: [0, 0]", 1), []string{
			`t.yaml:3:34: port A.o: rate: phases sum to 0: expected 1 to 2147483647 tokens per cycle`}},
		{"negative phase", strings.Replace(base, "rate: 2", "rate: [1, -1]", 1), []string{
			`t.yaml:3:38: port A.o: rate phase: -1 out of range: expected 0 to 2147483647`}},
		{"unknown actor in channel", strings.Replace(base, "from: A.o", "from: Aa.o", 1), []string{
			`t.yaml:6:12: channels[0]: from: unknown actor "Aa" in "Aa.o" (did you mean "A"?)`}},
		{"unknown port in channel", strings.Replace(base, "to: B.i", "to: B.in", 1), []string{
			`t.yaml:6:21: channels[0]: to: unknown input port "in" on actor "B" (did you mean "i"?)`}},
		{"channel from an input", strings.Replace(base, "from: A.o", "from: B.i", 1), []string{
			`t.yaml:6:12: channels[0]: from: B.i is an input port: expected an output port (a channel goes from an output to an input)`,
			`t.yaml:3:13: output port A.o is not connected: expected a channel from it or a graph output bound to it`}},
		{"input connected twice", base + "  - {from: A.o, to: B.i, name: again}\n", []string{
			`t.yaml:7:5: input B.i is connected twice: by A.o->B.i and by again (an input takes one channel; use a broadcast output instead)`}},
		{"type mismatch", strings.Replace(base, "type: f32, rate: 1", "type: i32, rate: 1", 1), []string{
			`t.yaml:6:5: token type mismatch on A.o->B.i: A.o gives f32, B.i expects i32`}},
		{"size mismatch", strings.Replace(base, "type: f32, rate: 1", "type: f64, rate: 1", 1), []string{
			`t.yaml:6:5: token size mismatch on A.o->B.i: A.o gives f32 (4 bytes), B.i expects f64 (8 bytes)`}},
		{"block not dividing rate", strings.Replace(base, "rate: 2}", "rate: 2, block: 3}", 1), []string{
			`t.yaml:3:13: port A.o: block size 3 does not divide rate 2`}},
		{"block on input", strings.Replace(base, "type: f32, rate: 1", "type: f32, rate: 1, block: 1", 1), []string{
			`t.yaml:4:36: port B.i: block: blocks are defined on output ports only`}},
		{"missing kernel file", strings.Replace(base, "rate: 2}}}", "rate: 2}}, kernel: {opencl: nothere.cl}}", 1), []string{
			`t.yaml:3:56: actor A: kernel: opencl: kernel file "nothere.cl" not found (looked for nothere.cl, relative to the spec file's directory)`}},
		{"empty kernel", strings.Replace(base, "rate: 2}}}", "rate: 2}}, kernel: {}}", 1), []string{
			`t.yaml:3:47: actor A: kernel: expected at least one of opencl, cuda, go or elementwise`}},
		{"unbound composite port", `actors:
  A: {out: {o: {type: f32, rate: 1}}}
  comp:
    graph:
      actors: {X: {in: {a: {type: f32, rate: 1}}}}
      inputs: {a: X.a}
    in: {a: {type: f32, rate: 1}, b: {type: f32, rate: 1}}
channels:
  - {from: A.o, to: comp.a}
`, []string{
			`t.yaml:3:3: composite port comp.b is not bound: expected a graph input "b" in its subgraph "comp"`,
			`t.yaml:7:35: input port comp.b is not connected: expected a channel into it or a graph input bound to it`}},
		{"composite with kernel", `actors:
  c: {graph: {actors: {}}, kernel: {go: x}}
`, []string{`t.yaml:2:28: actor c: a composite actor (graph:) has no kernel: its body is its subgraph`}},
		{"malformed YAML", "actors:\n  A: {out: [\n  b: 1\n", []string{
			`t.yaml:2: malformed YAML: did not find expected ',' or ']' (in the block or flow collection that starts on this line)`}},
		{"malformed YAML tab", "actors:\n\tA: {}\n", []string{
			`t.yaml:2: malformed YAML: found character that cannot start any token`}},
		{"empty file", "", []string{`t.yaml: empty file: expected a graph (name, actors, channels, ...)`}},
		{"duplicate key", strings.Replace(base, "rate: 2}", "rate: 2, rate: 4}", 1), []string{
			`t.yaml:3:37: port A.o: duplicate key "rate" (first at line 3, column 28)`}},
		{"duplicate actor", base + "  - {from: A.o, to: B.i}\n", []string{
			`t.yaml:7:5: duplicate channel name "A.o->B.i" at t.yaml:6:5`,
			`t.yaml:7:5: input B.i is connected twice: by A.o->B.i and by A.o->B.i (an input takes one channel; use a broadcast output instead)`}},
		{"actors as a list", "actors: [A, B]\n", []string{
			`t.yaml:1:9: actors: expected a mapping, found a list`}},
		{"channels as a mapping", strings.Replace(base, "  - {from: A.o, to: B.i}", "  x: 1", 1), []string{
			`t.yaml:6:3: channels: expected a list of {from: actor.port, to: actor.port, ...}, found a mapping`,
			`t.yaml:3:13: output port A.o is not connected: expected a channel from it or a graph output bound to it`,
			`t.yaml:4:12: input port B.i is not connected: expected a channel into it or a graph input bound to it`}},
		{"port not a mapping", strings.Replace(base, "{o: {type: f32, rate: 2}}", "{o: f32}", 1), []string{
			`t.yaml:3:16: port A.o: expected a mapping such as {type: f32, rate: 1}, found "f32"`}},
		{"missing type", strings.Replace(base, "type: f32, rate: 2", "rate: 2", 1), []string{
			`t.yaml:3:13: port A.o has no token type: expected one such as f32 or [4]u8`}},
		{"stateful not a bool", strings.Replace(base, "rate: 2}}}", "rate: 2}}, stateful: yes please}", 1), []string{
			`t.yaml:3:49: actor A: stateful: expected true or false, found "yes please"`}},
		{"bad cost", strings.Replace(base, "rate: 2}}}", "rate: 2}}, cost: 10 parsecs}", 1), []string{
			`t.yaml:3:45: actor A: cost: expected a duration such as 10us or 1.5ms, or an integer number of nanoseconds, found "10 parsecs"`}},
		{"with without use", strings.Replace(base, "rate: 2}}}", "rate: 2}}, with: {n: 1}}", 1), []string{
			`t.yaml:3:39: actor A: with: gives parameters to a built-in actor: expected a use: key naming it`}},
		{"process with static rate", `actors:
  P: {process: true, in: {x: {type: u8, rate: 4}}}
inputs: {x: P.x}
`, []string{`t.yaml:2:47: port P.x: rate 4 on a process: a process (process: true) has dynamic rates; leave rate out or remove process`}},
		{"values count", strings.Replace(base, "to: B.i}", "to: B.i, initial: 2, values: [1.5]}", 1), []string{
			`t.yaml:6:46: channels[0]: 1 values for 2 initial tokens: expected as many values as initial tokens (or leave initial out)`}},
		{"value out of range", strings.Replace(strings.ReplaceAll(base, "f32", "u8"), "to: B.i}", "to: B.i, values: [1, 256]}", 1), []string{
			`t.yaml:6:38: channels[0]: values[1]: 256 out of range for u8: expected 0 to 255`}},
		{"value not a number", strings.Replace(base, "to: B.i}", "to: B.i, values: [x]}", 1), []string{
			`t.yaml:6:35: channels[0]: values[0]: expected a number, found "x"`}},
		{"initial above capacity", strings.Replace(base, "to: B.i}", "to: B.i, capacity: 2, initial: 3}", 1), []string{
			`t.yaml:6:5: channel A.o->B.i holds 3 initial tokens but has capacity 2: expected capacity ≥ initial tokens`}},
		{"negative capacity", strings.Replace(base, "to: B.i}", "to: B.i, capacity: -1}", 1), []string{
			`t.yaml:6:36: channels[0]: capacity: -1 out of range: expected 1 to 2147483647`}},
		{"missing to", strings.Replace(base, ", to: B.i", "", 1), []string{
			`t.yaml:6:5: channels[0]: missing to: (expected actor.port)`,
			`t.yaml:4:12: input port B.i is not connected: expected a channel into it or a graph input bound to it`}},
		{"bad port reference", strings.Replace(base, "from: A.o", "from: A", 1), []string{
			`t.yaml:6:12: channels[0]: from: expected actor.port, found "A"`}},
		{"output bound to unknown actor", base + "outputs: {y: Z.o}\n", []string{
			`t.yaml:7:14: graph output "y" is bound to unknown actor "Z" (did you mean "A"?)`}},
		{"input bound to an output port", strings.Replace(base, "  - {from: A.o, to: B.i}", "  []", 1) + "inputs: {x: A.o}\n", []string{
			`t.yaml:3:13: output port A.o is not connected: expected a channel from it or a graph output bound to it`,
			`t.yaml:4:12: input port B.i is not connected: expected a channel into it or a graph input bound to it`,
			`t.yaml:7:13: graph input "x" is bound to A.o, an out port: expected an in port`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := spec.ParseGraph("t.yaml", []byte(tt.src))
			var got []string
			if err != nil {
				var el spec.ErrorList
				if !errors.As(err, &el) {
					t.Fatalf("error %T is not an ErrorList: %v", err, err)
				}
				for _, e := range el {
					got = append(got, e.Error())
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestHistorySpec(t *testing.T) {
	src := `name: h
actors:
  a: {out: {o: {type: f32, rate: 4}}, use: gen.ramp}
  b: {in: {i: {type: f32, rate: 4, history: 3}}, stateful: true, use: discard}
channels:
  - {from: a.o, to: b.i}
`
	g, err := spec.ParseGraph("h.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if h := g.Actor("b").Port("i").History; h != 3 {
		t.Fatalf("history = %d, want 3", h)
	}
	bad := strings.Replace(src, "stateful: true, ", "", 1)
	if _, err := spec.ParseGraph("h.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "h.yaml:4:12: port b.i: history 3 needs firings in order: expected a stateful actor") {
		t.Fatalf("expected the stateful requirement at the port's position, found %v", err)
	}
	out := strings.Replace(src, "o: {type: f32, rate: 4}", "o: {type: f32, rate: 4, history: 1}", 1)
	if _, err := spec.ParseGraph("h.yaml", []byte(out)); err == nil || !strings.Contains(err.Error(), "history: is kept on input ports only") {
		t.Fatalf("expected history on an output to be refused, found %v", err)
	}
}
