package cli

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runtime"
)

func TestServeMetricsChainsProgress(t *testing.T) {
	var opts runtime.Options
	var shown int
	opts.Progress = func(runtime.Snapshot) { shown++ }
	var out strings.Builder
	stop, err := serveMetrics("127.0.0.1:0", &opts, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	opts.Progress(runtime.Snapshot{Elapsed: time.Second, Actors: []runtime.ActorProgress{{Name: "src", Firings: 42}}})
	if shown != 1 {
		t.Fatalf("expected the display's Progress called once, found %d", shown)
	}
	url := regexp.MustCompile(`http://\S+/metrics`).FindString(out.String())
	if url == "" {
		t.Fatalf("expected the metrics address printed, found %q", out.String())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `sluice_actor_firings_total{actor="src"} 42`; !strings.Contains(string(body), want) {
		t.Fatalf("expected %q in the scrape, found:\n%s", want, body)
	}
}

func TestServeMetricsBadAddress(t *testing.T) {
	var opts runtime.Options
	if _, err := serveMetrics("not an address", &opts, io.Discard); err == nil || !strings.Contains(err.Error(), "--metrics not an address") {
		t.Fatalf("expected an error naming --metrics and the address, found %v", err)
	}
}

func TestServeRunUI(t *testing.T) {
	var opts runtime.Options
	var out strings.Builder
	stop, err := serveRunUI("127.0.0.1:0", "../examples/cd2dat.yaml", &opts, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	opts.Progress(runtime.Snapshot{Elapsed: time.Second, Actors: []runtime.ActorProgress{{Name: "B", Firings: 9, Target: -1}}})
	base := regexp.MustCompile(`http://[^/\s]+`).FindString(out.String())
	if base == "" {
		t.Fatalf("expected the ui address printed, found %q", out.String())
	}
	for path, want := range map[string]string{
		"/api/run":   `{"name":"B","firings":9,"target":-1,"done":false,"busy_ns":0}`,
		"/metrics":   `sluice_actor_firings_total{actor="B"} 9`,
		"/api/graph": `"repetitions":{"A":147`,
	} {
		resp, err := http.Get(base + path + "?token=" + regexp.MustCompile(`token=(\w+)`).FindStringSubmatch(out.String())[1])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: expected 200 with %q, found %d:\n%s", path, want, resp.StatusCode, body)
		}
	}
}
