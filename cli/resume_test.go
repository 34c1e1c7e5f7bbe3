package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeFinished: --resume of a run that finished says so and exits 0
// writing nothing (its output untouched, no trace); a run that was not marked
// finished resumes as before.
func TestResumeFinished(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.f32")
	graph := filepath.Join(dir, "g.yaml")
	src := fmt.Sprintf(`kind: graph
name: finished
actors:
  src:  {use: gen.ramp, with: {count: 20000}, out: {y: {type: f32, rate: 64}}}
  sink: {use: file.write, with: {path: %q}, in: {x: {type: f32, rate: 64}}, stateful: true}
channels:
  - {from: src.y, to: sink.x}
`, out)
	if err := os.WriteFile(graph, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	if o, e, code := sluice(t, "", "run", graph, "--progress", "off", "--checkpoint-dir", ck, "--checkpoint-interval", "1ms"); code != 0 {
		t.Fatalf("run: exit %d: %s%s", code, o, e)
	}
	before, err := os.Stat(out)
	if err != nil || before.Size() != 20000*64*4 {
		t.Fatalf("the run's output: %v", err)
	}
	trace := filepath.Join(dir, "trace.json")
	o, e, code := sluice(t, "", "run", graph, "--progress", "off", "--resume", ck, "--trace", trace)
	if code != 0 || !strings.Contains(e, "that run finished") || !strings.Contains(e, "nothing to resume, nothing written") {
		t.Fatalf("--resume of a finished run: exit %d: %s%s: expected exit 0 saying it finished", code, o, e)
	}
	if _, err := os.Stat(trace); err == nil {
		t.Fatalf("--resume of a finished run wrote its trace")
	}
	if after, err := os.Stat(out); err != nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Fatalf("--resume of a finished run touched its output: %v", err)
	}
	// Without the mark (a run killed before its end), --resume runs the
	// rest from the last checkpoint.
	if err := os.Remove(filepath.Join(ck, "finished.json")); err != nil {
		t.Fatal(err)
	}
	if o, e, code := sluice(t, "", "run", graph, "--progress", "off", "--resume", ck); code != 0 || strings.Contains(e, "finished") {
		t.Fatalf("--resume of an unmarked run: exit %d: %s%s", code, o, e)
	}
	if _, err := os.Stat(filepath.Join(ck, "finished.json")); err != nil {
		t.Fatalf("the resumed run, once finished, is not marked: %v", err)
	}
}
