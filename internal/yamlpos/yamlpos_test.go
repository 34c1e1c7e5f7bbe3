package yamlpos

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "f.yaml", Line: 3, Col: 7, Msg: "bad"}, "f.yaml:3:7: bad"},
		{Error{File: "f.yaml", Line: 3, Col: 0, Msg: "bad"}, "f.yaml:3: bad"},
		{Error{File: "f.yaml", Line: 0, Col: 0, Msg: "bad"}, "f.yaml: bad"},
		{Error{File: "", Line: 0, Col: 0, Msg: "bad"}, "bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestErrSortsDeduplicatesAndCaps(t *testing.T) {
	s := NewSessionLimits(Limits{Nodes: 100, Nesting: 4, Errors: 3})
	s.Add(&Error{File: "b", Line: 1, Col: 1, Msg: "x"})
	s.Add(&Error{File: "a", Line: 2, Col: 1, Msg: "y"})
	s.Add(&Error{File: "a", Line: 2, Col: 1, Msg: "y"})
	s.Add(&Error{File: "a", Line: 1, Col: 1, Msg: "z"})
	s.Add(&Error{File: "a", Line: 9, Col: 9, Msg: "dropped"})
	err := s.Err()
	want := "a: too many errors: only the first 3 are reported\na:2:1: y\nb:1:1: x"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want\n%s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Error("errors.As(*Error) failed")
	}
	if NewSession().Err() != nil {
		t.Error("empty session: want nil")
	}
}

func TestFields(t *testing.T) {
	r := NewReader("f.yaml")
	r.Rename = map[string]string{"colour": "color"}
	root := r.Parse([]byte("base: &b {size: 1}\nx:\n  <<: *b\n  color: red\n  colour: blue\n  sise: 2\n  1: 3\n"))
	x := Index(r.Fields(root, "top", nil))["x"]
	fs := Index(r.Fields(x.V, "x", []string{"color", "size"}))
	if len(fs) != 2 || fs["size"].V.Value != "1" || fs["color"].V.Value != "red" {
		t.Errorf("fields %v", fs)
	}
	msg := r.Err().Error()
	for _, want := range []string{
		`f.yaml:5:3: x: duplicate key "colour" (first at line 4, column 3)`,
		`f.yaml:6:3: x: unknown key "sise" (did you mean "size"?); allowed keys: color, size`,
		`f.yaml:7:3: x: unknown key "1"; allowed keys: color, size`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in\n%s", want, msg)
		}
	}
}

func TestScalars(t *testing.T) {
	r := NewReader("s.yaml")
	fs := Index(r.Fields(r.Parse([]byte("i: 7\nbig: 99\nsz: 16KiB\nd: 1.5ms\nn: 40\nb: yes\nt: true\nf: 2.5\nv: {a: [1, x, 2.5, null]}\n")), "s", nil))
	if v, ok := r.Int(fs["i"].V, "i", 0, 10); !ok || v != 7 {
		t.Errorf("Int = %d %v", v, ok)
	}
	if _, ok := r.Int(fs["big"].V, "big", 0, 10); ok {
		t.Error("Int out of range accepted")
	}
	if v, ok := r.Size(fs["sz"].V, "sz"); !ok || v != 16<<10 {
		t.Errorf("Size = %d %v", v, ok)
	}
	if v, ok := r.Duration(fs["d"].V, "d"); !ok || v != 1500*time.Microsecond {
		t.Errorf("Duration = %v %v", v, ok)
	}
	if v, ok := r.Duration(fs["n"].V, "n"); !ok || v != 40 {
		t.Errorf("Duration(ns) = %v %v", v, ok)
	}
	if _, ok := r.Bool(fs["b"].V, "b"); ok {
		t.Error(`Bool("yes") accepted`)
	}
	if v, ok := r.Bool(fs["t"].V, "t"); !ok || !v {
		t.Error("Bool(true)")
	}
	if v, ok := r.Number(fs["f"].V, "f"); !ok || v != 2.5 {
		t.Errorf("Number = %v", v)
	}
	if s, ok := r.Str(fs["i"].V, "i"); !ok || s != "7" {
		t.Errorf("Str = %q", s)
	}
	if v := r.Value(fs["v"].V, "v"); len(v.(map[string]any)["a"].([]any)) != 4 {
		t.Errorf("Value = %v", v)
	}
	msg := r.Err().Error()
	for _, want := range []string{"s.yaml:2:6: big: 99 out of range: expected 0 to 10", `s.yaml:6:4: b: expected true or false, found "yes"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in\n%s", want, msg)
		}
	}
}

func TestSyntaxAndAliasBomb(t *testing.T) {
	r := NewReader("bad.yaml")
	if r.Parse([]byte("a: [1, 2\nb: 3\n")) != nil || !strings.HasPrefix(r.Err().Error(), "bad.yaml:") {
		t.Errorf("syntax: %v", r.Err())
	}
	var b strings.Builder
	b.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	for c := 'b'; c <= 'i'; c++ {
		b.WriteString(string(c) + ": &" + string(c) + " [")
		for i := 0; i < 10; i++ {
			b.WriteString("*" + string(c-1) + ", ")
		}
		b.WriteString("]\n")
	}
	r = NewReader("bomb.yaml")
	r.Value(r.Parse([]byte(b.String())), "bomb")
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Errorf("alias bomb: %v", err)
	}
}

func TestSuggest(t *testing.T) {
	if got := Suggest("colr", []string{"color", "size"}); got != ` (did you mean "color"?)` {
		t.Errorf("Suggest = %q", got)
	}
	if got := Suggest("zzzz", []string{"b", "a"}); got != " (known: a, b)" {
		t.Errorf("Suggest = %q", got)
	}
	if f, l, c, ok := ParseOrigin("C:/g.yaml:4:7"); !ok || f != "C:/g.yaml" || l != 4 || c != 7 {
		t.Errorf("ParseOrigin = %q %d %d %v", f, l, c, ok)
	}
}
