package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
