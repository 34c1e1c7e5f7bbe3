package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/ui"
)

// TestRunTraceLimit: --trace-limit bounds the events --trace records; the
// run says how many it left out and the file says so too; a negative
// limit is refused with a sentence.
func TestRunTraceLimit(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.json")
	_, errs, code := sluice(t, "", "run", "examples/cd2dat.yaml", "-n", "20", "--progress", "off", "--trace", trace, "--trace-limit", "1000")
	if code != 0 {
		t.Fatalf("run with --trace-limit 1000: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		OtherData struct {
			Limit   int64 `json:"trace_limit"`
			Dropped int64 `json:"dropped_events"`
		} `json:"otherData"`
	}
	if err := json.Unmarshal(b, &tr); err != nil || tr.OtherData.Limit != 1000 || tr.OtherData.Dropped < 20*612-1000 {
		t.Fatalf("trace of 20 iterations of cd2dat (12,240 firings) limited to 1000 events: otherData %+v (%v): expected the limit and 11,240 or more left out", tr.OtherData, err)
	}
	want := fmt.Sprintf("trace: %s holds the run's first events, at most 1000; %d later ones were not recorded (--trace-limit N keeps more, 0 every one)", trace, tr.OtherData.Dropped)
	if !strings.Contains(errs, want) {
		t.Fatalf("expected the run to say %q, found:\n%s", want, errs)
	}
	if _, errs, code = sluice(t, "", "run", "examples/cd2dat.yaml", "-n", "2", "--progress", "off", "--trace", trace, "--trace-limit", "0"); code != 0 || strings.Contains(errs, "not recorded") {
		t.Fatalf("--trace-limit 0 (every event): exit %d: %s", code, errs)
	}
	if _, errs, code = sluice(t, "", "run", "examples/cd2dat.yaml", "-n", "2", "--progress", "off", "--trace", trace, "--trace-limit", "-5"); code == 0 || !strings.Contains(errs, "--trace-limit -5: expected a count of events ≥ 0 (0: no limit)") {
		t.Fatalf("--trace-limit -5: exit %d: %s: expected a refusal naming the flag", code, errs)
	}
}

// TestSimulateTraceLimit: sluice simulate --trace-limit keeps the
// simulation's first spans and says how many it left out.
func TestSimulateTraceLimit(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "s.json")
	out, errs, code := sluice(t, "", "simulate", "examples/cd2dat.yaml", "--machine", "examples/machines/two-cpus.yaml", "--trace", trace, "--trace-limit", "1000")
	if code != 0 || !strings.Contains(out, "note: trace: the simulation's first 1000 spans kept, ") {
		t.Fatalf("simulate --trace-limit 1000: exit %d: expected a note that the trace kept the first 1000 spans, found:\n%s%s", code, out, errs)
	}
	if _, errs, code = sluice(t, "", "simulate", "examples/cd2dat.yaml", "--machine", "examples/machines/two-cpus.yaml", "--trace", trace, "--trace-limit", "-1"); code == 0 || !strings.Contains(errs, "--trace-limit -1: expected a count of spans ≥ 0 (0: no limit)") {
		t.Fatalf("simulate --trace-limit -1: exit %d: %s: expected a refusal naming the flag", code, errs)
	}
}

// TestUITraceLimit: sluice ui --trace-limit bounds the trace of a run
// from the page, and its run state says how many events it did not keep;
// a negative limit is refused before the server starts.
func TestUITraceLimit(t *testing.T) {
	if _, errs, code := sluice(t, "", "ui", "examples/cd2dat.yaml", "--listen", "127.0.0.1:0", "--trace-limit", "-2"); code == 0 || !strings.Contains(errs, "--trace-limit -2: expected a count of events ≥ 0 (0: no limit)") {
		t.Fatalf("ui --trace-limit -2: exit %d: %s: expected a refusal naming the flag", code, errs)
	}
	addr := startUI(t, "../examples/cd2dat.yaml", "--trace-limit", "100")
	base, token, _ := strings.Cut(addr, "/?token=")
	call := func(method, path string) ui.RunStateJSON {
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st ui.RunStateJSON
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatalf("%s %s: status %d: %v", method, path, resp.StatusCode, err)
		}
		return st
	}
	call("POST", "/api/run/start?iterations=5")
	st := call("GET", "/api/run/state")
	for end := time.Now().Add(45 * time.Second); st.Running && time.Now().Before(end); st = call("GET", "/api/run/state") {
		time.Sleep(20 * time.Millisecond)
	}
	if st.Running || st.Error != "" || st.TraceLimit != 100 || st.TraceDropped < 5*612-100 {
		t.Fatalf("a run of 5 iterations of cd2dat (3060 firings) from the page, --trace-limit 100: state %+v: expected the limit and 2960 events or more not kept", st)
	}
}
