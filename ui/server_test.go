package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

const example = "../examples/cd2dat.yaml"

// newReq is a request to h as the page on 127.0.0.1 makes it: with h's
// token when Handler made it (a server given its own token is asked
// without one: the test says what it sends).
func newReq(h http.Handler, method, path, body string) *http.Request {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1"
	if g, ok := h.(*guard); ok && g.generated {
		req.Header.Set("Authorization", "Bearer "+string(g.token))
	}
	return req
}

func do(t *testing.T, h http.Handler, method, path, body string, hdr ...string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := newReq(h, method, path, body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v: %q", method, path, err, rec.Body.String())
	}
	return rec, m
}

func TestGraphOfFile(t *testing.T) {
	h := (&Server{File: example}).Handler()
	rec, m := do(t, h, "GET", "/api/graph", "")
	if rec.Code != 200 {
		t.Fatalf("status %d: %v", rec.Code, m)
	}
	var res CheckResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Graph.Actors) != 6 || len(res.Graph.Channels) != 5 {
		t.Fatalf("cd2dat: expected 6 actors and 5 channels, found %d and %d", len(res.Graph.Actors), len(res.Graph.Channels))
	}
	if !res.Report.Valid || !res.Report.Consistent || res.Report.Repetitions["F"] != 160 {
		t.Fatalf("cd2dat report: %+v", res.Report)
	}
	if c := res.Graph.Channels[1]; c.From != "B.o" || c.To != "C.i" {
		t.Fatalf("channel 1: expected B.o -> C.i, found %s -> %s", c.From, c.To)
	}
}

// Editing a rate changes check's report: C consuming 4 instead of 3 gives
// the repetition vector A=98 … F=80 instead of A=147 … F=160.
func TestCheckVerdictFollowsEdit(t *testing.T) {
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	h := (&Server{}).Handler()
	var res CheckResult
	rec, _ := do(t, h, "POST", "/api/check", string(data))
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != 200 || !res.Report.Consistent {
		t.Fatalf("original: status %d, %v, %s", rec.Code, err, rec.Body)
	}
	edited := strings.Replace(string(data), "in:  {i: {type: f32, rate: 3}}", "in:  {i: {type: f32, rate: 4}}", 1)
	if edited == string(data) {
		t.Fatal("the example no longer has C's input rate 3")
	}
	res = CheckResult{}
	rec, _ = do(t, h, "POST", "/api/check", edited)
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != 200 {
		t.Fatalf("edited: status %d, %v", rec.Code, err)
	}
	if !res.Report.Consistent || res.Report.Repetitions["A"] != 98 || res.Report.Repetitions["F"] != 80 {
		t.Fatalf("edited: expected repetitions A=98 F=80, found %v", res.Report.Repetitions)
	}
}

func TestBadInput(t *testing.T) {
	h := (&Server{}).Handler()
	cases := []struct {
		name, body string
		code       int
		want       string
	}{
		{"malformed YAML", "name: g\nactors:\n  A: [unclosed\n", 422, "editor.yaml:"},
		{"unknown actor", "name: g\nactors:\n  A:\n    out: {o: {type: f32, rate: 1}}\nchannels:\n  - {from: A.o, to: Nope.i}\n", 422, "Nope"},
		{"empty body", "  \n", 400, "empty body"},
		{"oversized body", strings.Repeat("#", MaxBody+1), 413, "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, m := do(t, h, "POST", "/api/check", c.body)
			if rec.Code != c.code {
				t.Fatalf("expected status %d, found %d: %v", c.code, rec.Code, m)
			}
			errs, _ := m["errors"].([]any)
			if len(errs) == 0 || !strings.Contains(strings.Join(toStrings(errs), "\n"), c.want) {
				t.Fatalf("expected an error containing %q, found %v", c.want, m)
			}
		})
	}
	rec, _ := do(t, h, "GET", "/api/graph", "")
	if rec.Code != 404 {
		t.Fatalf("GET /api/graph without a file: expected 404, found %d", rec.Code)
	}
}

func toStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}

func TestToken(t *testing.T) {
	h := (&Server{File: example, Token: "s3cret"}).Handler()
	if rec, _ := do(t, h, "GET", "/api/graph", ""); rec.Code != 401 {
		t.Fatalf("no token: expected 401, found %d", rec.Code)
	}
	if rec, _ := do(t, h, "GET", "/api/graph", "", "Authorization", "Bearer wrong"); rec.Code != 401 {
		t.Fatalf("wrong token: expected 401, found %d", rec.Code)
	}
	if rec, _ := do(t, h, "GET", "/api/graph", "", "Authorization", "Bearer s3cret"); rec.Code != 200 {
		t.Fatalf("header token: expected 200, found %d", rec.Code)
	}
	if rec, _ := do(t, h, "GET", "/api/graph?token=s3cret", ""); rec.Code != 200 {
		t.Fatalf("query token: expected 200, found %d", rec.Code)
	}
}
