package ui

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// jsonTrace is decodeTraceJSON, failing t on an error.
func jsonTrace(t *testing.T, data []byte) []traceEvent {
	t.Helper()
	events, err := decodeTraceJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return events
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

// FuzzScanTraceLines feeds any bytes to the line scanner: it never
// panics, and whenever it accepts them it has read the same events as
// encoding/json.
func FuzzScanTraceLines(f *testing.F) {
	// Small seeds: the fuzzer minimizes every input that finds new code,
	// and a recorded trace of 200 KB kept it minimizing for seconds.
	f.Add([]byte(`{"displayTimeUnit":"ns","otherData":{"graph":"g"},"traceEvents":[{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"sluice g"}},
{"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"cpu-0"}},
{"name":"thread_sort_index","ph":"M","pid":1,"tid":0,"args":{"sort_index":0}},
{"name":"src","cat":"firing","ph":"X","pid":1,"tid":0,"ts":1.250,"dur":0.500,"args":{"firing":0,"fused":"src..dst"}},
{"name":"k","cat":"copy","ph":"X","pid":1,"tid":2,"ts":2.000,"dur":1.000,"args":{"bytes":4096}},
{"name":"dst","cat":"process","ph":"X","pid":1,"tid":1,"ts":3.000,"dur":0.125}
]}
`))
	f.Add(bigRuntimeTrace(3))
	f.Add(bigTrace(3))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []traceEvent
		if !scanTraceLines(data, func(e *traceEvent) { got = append(got, *e) }) {
			return
		}
		want, err := decodeTraceJSON(data)
		if err != nil {
			t.Fatalf("the line scanner read %d events from bytes encoding/json refuses: %v", len(got), err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the line scanner read %d events, encoding/json %d, not the same", len(got), len(want))
		}
	})
}

// TestJSONNumber: the numbers the line scanner takes are JSON's.
func TestJSONNumber(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "-0", "12", "1.5", "0.001", "-3.250", "1e5", "2E-3", "7.5e+10"} {
		if !jsonNumber(s) {
			t.Errorf("%q: expected a JSON number", s)
		}
	}
	for _, s := range []string{"", "-", "01", "+1", ".5", "1.", "1e", "1e+-5", "0x10", "1_000", "Inf", "NaN", "1.5.2", "--1"} {
		if jsonNumber(s) {
			t.Errorf("%q: expected it refused (not a JSON number)", s)
		}
	}
}
