package ui

import (
	"os"
	"strings"
	"testing"
)

// TestEditKeepsBytes: each edit on the drawing changes only the nodes it
// concerns; every other byte of the file (comments, the spaces in
// `A:   #` and `in:  {`, blank lines) stays as written.
func TestEditKeepsBytes(t *testing.T) {
	orig, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{File: example}
	cases := []struct {
		name    string
		ops     []OpJSON
		removed []string // original lines the edit may drop or rewrite
		added   []string // lines the edit must add
	}{
		{"add a channel", []OpJSON{{Op: "add_actor", Name: "G", In: []PortJSON{{Name: "i", Type: "f32", Rate: "1"}}}, {Op: "add_channel", From: "E.o", To: "G.i"}},
			nil, []string{"  G: {in: {i: {type: f32, rate: 1}}}", "  - {from: E.o, to: G.i}"}},
		{"set a rate", []OpJSON{{Op: "set_port", Actor: "C", Port: "i", Rate: "4"}},
			[]string{"  C:   # resample 2/3: polyphase FIR, 3 in, 2 out", "    in:  {i: {type: f32, rate: 3}}", "    out: {o: {type: f32, rate: 2}}", "    cost: 900ns"},
			[]string{"    in: {i: {type: f32, rate: 4}}"}},
		{"set a capacity", []OpJSON{{Op: "set_channel", From: "B.o", To: "C.i", Capacity: ptr(8)}},
			[]string{"  - {from: B.o, to: C.i}"}, []string{"  - {from: B.o, to: C.i, capacity: 8}"}},
		{"remove a channel", []OpJSON{{Op: "remove_channel", From: "D.o", To: "E.i"}},
			[]string{"  - {from: D.o, to: E.i}"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := s.applyEdits(orig, c.ops)
			if err != nil {
				t.Fatal(err)
			}
			kept := keptLines(string(orig), string(out))
			for _, l := range strings.Split(strings.TrimSuffix(string(orig), "\n"), "\n") {
				if !kept[l] && !contains(c.removed, l) {
					t.Errorf("expected the line %q kept byte for byte, found it changed or gone", l)
				}
			}
			for _, l := range c.added {
				if !strings.Contains(string(out), l+"\n") {
					t.Errorf("expected the line %q added", l)
				}
			}
			if t.Failed() {
				t.Logf("after the edit:\n%s", out)
			}
		})
	}
}

// keptLines are the lines of a found in b, as a set (counting repeats).
func keptLines(a, b string) map[string]bool {
	have := map[string]int{}
	for _, l := range strings.Split(b, "\n") {
		have[l]++
	}
	out := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		if have[l] > 0 {
			have[l]--
			out[l] = true
		}
	}
	return out
}

func contains(ls []string, s string) bool {
	for _, l := range ls {
		if l == s {
			return true
		}
	}
	return false
}
