package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/sluicehq/sluice/ui"
)

// TestRunUIFiringsRise runs a long graph with --ui and watches GET /api/run
// report rising firings while the run goes on, then cancels it.
func TestRunUIFiringsRise(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "g.yaml")
	os.WriteFile(g, []byte(`name: long-ramp
actors:
  src:  {use: gen.ramp, with: {start: 0, step: 1, count: 1000000000}, out: {y: {type: f32, rate: 256}}, stateful: true}
  gain: {use: scale, with: {gain: 2}, in: {x: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 256}}}
  sink: {use: file.write, with: {path: `+filepath.Join(dir, "out.f32")+`}, in: {x: {type: f32, rate: 256}}, stateful: true}
channels:
  - {from: src.y, to: gain.x}
  - {from: gain.y, to: sink.x}
`), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuf
	root := newRoot()
	root.SetArgs([]string{"run", g, "--progress", "off", "--ui", "127.0.0.1:0"})
	root.SetOut(&syncBuf{})
	root.SetErr(&stderr)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()

	addr := regexp.MustCompile(`http://[^/\s]+`)
	var seen []int64
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		base := addr.FindString(stderr.String())
		if base == "" {
			continue
		}
		resp, err := http.Get(base + "/api/run?token=" + regexp.MustCompile(`token=(\w+)`).FindStringSubmatch(stderr.String())[1])
		if err != nil {
			t.Fatal(err)
		}
		var r ui.RunJSON
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range r.Actors {
			if a.Name == "gain" && a.Firings > 0 && (len(seen) == 0 || a.Firings > seen[len(seen)-1]) {
				seen = append(seen, a.Firings)
			}
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end after its context was cancelled")
	}
	if len(seen) < 2 {
		t.Fatalf("expected gain's firings to rise twice during the run, saw %v; stderr:\n%s", seen, stderr.String())
	}
}
