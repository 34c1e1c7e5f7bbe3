package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

// TestGraphIDIsStructure: the graph's identity ignores comments and
// declaration lines, and changes with a rate.
func TestGraphIDIsStructure(t *testing.T) {
	t.Parallel()
	text := exampleText(t, example)
	id := func(s string) string {
		t.Helper()
		g, err := spec.ParseGraph("cd2dat.yaml", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return GraphID(g)
	}
	base := id(text)
	if len(base) != 24 {
		t.Fatalf("expected a 24-digit hex identity, found %q", base)
	}
	if got := id("# a comment\n\n" + text); got != base {
		t.Fatalf("a comment and a blank line: expected the identity %s kept, found %s", base, got)
	}
	changed := strings.Replace(text, "in:  {i: {type: f32, rate: 3}}", "in:  {i: {type: f32, rate: 4}}", 1)
	if changed == text {
		t.Fatal("cd2dat.yaml: expected C's input rate 3 to edit")
	}
	if got := id(changed); got == base {
		t.Fatal("C's rate 3 → 4: expected another identity, found the same")
	}
	g, _ := spec.ParseGraph("cd2dat.yaml", []byte(text))
	actors.Synthesize(g)
	if got := GraphID(g); got != base {
		t.Fatalf("a run's synthetic implementations: expected the identity %s kept, found %s", base, got)
	}
}

// TestEditWithoutOpsChecks: POST /api/edit with no operations is check of
// the YAML sent, 200 for YAML that does not parse (no graph, errors with
// file:line:col) and for a graph that does not validate (its sketch).
func TestEditWithoutOpsChecks(t *testing.T) {
	t.Parallel()
	s := &Server{File: example}
	code, res, errs := edit(t, s, exampleText(t, example)+"\n  - {from: [\n")
	if code != 200 || res.Graph != nil || res.Report == nil || res.Report.Valid || len(errs) != 0 ||
		!strings.Contains(strings.Join(res.Report.Errors, ""), "cd2dat.yaml:") {
		t.Fatalf("YAML that does not parse: expected 200, no graph and errors at cd2dat.yaml:line:col, found %d %+v %v", code, res.Report, errs)
	}
	code, res, _ = edit(t, s, "name: g\nactors:\n  A: {out: {o: {type: f32, rate: 1}}}\nchannels:\n  - {from: A.o, to: Nope.i}\n")
	if code != 200 || res.Report.Valid || res.Graph == nil || len(res.Graph.Actors) != 1 || !strings.Contains(strings.Join(res.Report.Errors, ""), "Nope") {
		t.Fatalf("a channel to an unknown actor: expected 200 with its sketch and an error naming Nope, found %d %+v %+v", code, res.Graph, res.Report)
	}
	code, res, _ = edit(t, s, exampleText(t, example))
	if code != 200 || !res.Report.Valid || res.Graph.ID == "" || res.YAML != exampleText(t, example) {
		t.Fatalf("cd2dat as it is: expected 200, valid, with its identity and its text unchanged, found %d %+v", code, res.Report)
	}
}

// TestRunEventsEndWithRun: a run started on the server streams snapshots
// carrying the identity of the graph run, then an "end" event, and the
// server closes the stream.
func TestRunEventsEndWithRun(t *testing.T) {
	t.Parallel()
	file := tempExample(t)
	s := &Server{File: file, Token: "events-test-token"}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	want := GraphID(mustLoad(t, file))
	start, _ := http.NewRequest("POST", ts.URL+"/api/run/start?iterations=50", nil)
	start.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := http.DefaultClient.Do(start)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("run start: expected 202, found %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/run/events", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var last RunJSON
	event, ended := "", false
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if event == "end" {
			var st RunStateJSON
			if err := json.Unmarshal([]byte(data), &st); err != nil || st.Running {
				t.Fatalf("end event: expected the state of a run that ended, found %s (%v)", data, err)
			}
			ended = true
			continue
		}
		if ended {
			t.Fatalf("expected nothing after the end event, found %q", line)
		}
		if err := json.Unmarshal([]byte(data), &last); err != nil {
			t.Fatal(err)
		}
		if last.GraphID != want {
			t.Fatalf("snapshot: expected the run's graph identity %s, found %q", want, last.GraphID)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("expected the server to close the stream after the end event, found %v", err)
	}
	if !ended || !last.final() {
		t.Fatalf("expected the final snapshot then the end event, found ended=%v %+v", ended, last)
	}
}

func mustLoad(t *testing.T, file string) *graph.Graph {
	t.Helper()
	g, err := spec.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
