package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// jsonTrace reads data's events with encoding/json, as parseTrace does
// when scanTraceLines declines.
func jsonTrace(t *testing.T, data []byte) []traceEvent {
	t.Helper()
	var tr struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	return tr.TraceEvents
}

// TestTraceLinesMatchJSON: on traces the runtime wrote (a recorded GPU
// run with its link lanes, and a run of examples/predict/pipeline.yaml here, fused chains named
// in the firings' args) the line scanner reads every event as
// encoding/json does; on a trace laid out otherwise, or with a name that
// needs an escape, it declines and parseTrace still reads it.
func TestTraceLinesMatchJSON(t *testing.T) {
	t.Parallel()
	recorded, err := os.ReadFile("testdata/imagepipe-opencl/trace.json")
	if err != nil {
		t.Fatal(err)
	}
	g, err := spec.Load("../examples/predict/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ran bytes.Buffer
	if _, err := runtime.Run(context.Background(), g, runtime.Options{Iterations: 50, Trace: &ran}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"recorded": recorded, "pipeline": ran.Bytes()} {
		var got []traceEvent
		if !scanTraceLines(data, func(e *traceEvent) { got = append(got, *e) }) {
			t.Fatalf("%s: the line scanner declined a trace the runtime wrote", name)
		}
		want := jsonTrace(t, data)
		if len(got) < 10 || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the line scanner read %d events, encoding/json %d, not the same", name, len(got), len(want))
		}
	}
	if !strings.Contains(ran.String(), `"fused":`) {
		t.Log("the pipeline's trace names no fused chain here")
	}
	for name, data := range map[string]string{
		"compact":      string(bigTrace(10)),
		"escaped name": strings.Replace(ran.String(), `{"name":"fft"`, `{"name":"f\u0066t"`, 1),
		"reordered":    strings.Replace(ran.String(), `"ph":"X","pid":1`, `"pid":1,"ph":"X"`, 1),
		"cut short":    ran.String()[:ran.Len()/2],
	} {
		if scanTraceLines([]byte(data), func(*traceEvent) {}) {
			t.Errorf("%s: the line scanner read a trace it should leave to encoding/json", name)
		}
		if name == "cut short" {
			continue
		}
		fast, err := parseTrace([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(fast.Rows) == 0 {
			t.Errorf("%s: no rows read", name)
		}
	}
}
