package ui

import (
	"bytes"
	"fmt"
	"testing"
)

// bigTrace is a Chrome trace of n firings of 6 actors on 2 workers, 1 µs
// each with 0.5 µs gaps.
func bigTrace(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"%c","ph":"X","ts":%g,"dur":1,"pid":1,"tid":%d}`, 'A'+i%6, float64(i/2)*1.5, i%2)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// bigRuntimeTrace is bigTrace laid out as sluice's runtime writes a
// trace (runtime/trace.go), which parseTrace reads line by line.
func bigRuntimeTrace(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"displayTimeUnit":"ns","otherData":{"graph":"big"},"traceEvents":[{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"sluice big"}}`)
	for i := range n {
		fmt.Fprintf(&b, ",\n{\"name\":\"%c\",\"cat\":\"firing\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":1.000,\"args\":{\"firing\":%d}}", 'A'+i%6, i%2, float64(i/2)*1.5, i/6)
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}

// A million firings: parsed once per run, then each window the page asks
// for is aggregated into a few kilobytes.
func BenchmarkTraceBuckets(b *testing.B) {
	data := bigTrace(1_000_000)
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseTrace(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	lines := bigRuntimeTrace(1_000_000)
	if !scanTraceLines(lines, func(*traceEvent) {}) {
		b.Fatal("the line scanner declined the runtime's layout")
	}
	b.Run("parse-runtime-layout", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseTrace(lines); err != nil {
				b.Fatal(err)
			}
		}
	})
	ts, _ := parseTrace(data)
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			ts.buckets(ts.T0, ts.T1, 1200)
		}
	})
	b.Run("zoomed", func(b *testing.B) {
		for b.Loop() {
			ts.buckets(ts.T0+1000, ts.T0+2000, 1200)
		}
	})
}

func TestBigTraceBuckets(t *testing.T) {
	ts, err := parseTrace(bigTrace(10_000))
	if err != nil {
		t.Fatal(err)
	}
	b := ts.buckets(ts.T0, ts.T1, 100)
	if b.Firings != 10_000 || len(b.Rows) != 2 {
		t.Fatalf("expected 10000 firings on 2 rows, found %d on %d", b.Firings, len(b.Rows))
	}
	// Each worker fires 1 µs out of every 1.5: busy 2/3 in every bucket.
	for _, r := range b.Rows {
		for k, v := range r.Busy[1 : len(r.Busy)-1] {
			if v < 0.6 || v > 0.73 {
				t.Fatalf("row %s bucket %d: expected busy about 0.67, found %g", r.Name, k+1, v)
			}
		}
	}
}

// TestTraceCounts: ?counts=N counts each actor's firings by the bucket
// they end in, over the whole trace.
func TestTraceCounts(t *testing.T) {
	tr := []byte(`{"traceEvents": [
		{"name": "a", "ph": "X", "ts": 0, "dur": 10, "tid": 1},
		{"name": "a", "ph": "X", "ts": 10, "dur": 10, "tid": 1},
		{"name": "b", "ph": "X", "ts": 20, "dur": 20, "tid": 2},
		{"name": "a", "ph": "X", "ts": 30, "dur": 10, "tid": 1}]}`)
	p, err := parseTrace(tr)
	if err != nil {
		t.Fatal(err)
	}
	c := p.counts(4) // buckets of 10 µs over [0, 40]
	if fmt.Sprint(c.Counts["a"]) != "[0 1 1 1]" || fmt.Sprint(c.Counts["b"]) != "[0 0 0 1]" || c.T0 != 0 || c.T1 != 40 {
		t.Fatalf("expected a's firings ending at 10, 20, 40 and b's at 40 in 4 buckets, found %+v", c)
	}
}

// A device link's lane (copies, category "copy") is marked as such and its
// copies are not counted as firings; the device's lanes come before the
// pool's workers, its kernels before its link whatever their order in the
// trace.
func TestTraceBucketsLinkLane(t *testing.T) {
	t.Parallel()
	data := []byte(`{"traceEvents":[
{"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"cpu-0"}},
{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"device cuda:0"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"link to cuda:0"}},
{"name":"src","cat":"firing","ph":"X","pid":1,"tid":0,"ts":0,"dur":2,"args":{"firing":0}},
{"name":"blur","cat":"firing","ph":"X","pid":1,"tid":2,"ts":10,"dur":5,"args":{"firing":0}},
{"name":"blur","cat":"copy","ph":"X","pid":1,"tid":1,"ts":2,"dur":8,"args":{"bytes":76800}},
{"name":"blur","cat":"copy","ph":"X","pid":1,"tid":1,"ts":12,"dur":3,"args":{"bytes":76800}}]}`)
	ts, err := parseTrace(data)
	if err != nil {
		t.Fatal(err)
	}
	b := ts.buckets(ts.T0, ts.T1, 15)
	if b.Firings != 2 || len(b.Rows) != 3 {
		t.Fatalf("expected 2 firings on 3 rows, found %d on %d", b.Firings, len(b.Rows))
	}
	if r := b.Rows[0]; r.Copies || r.Name != "device cuda:0" {
		t.Errorf("row 0: %+v, want the device's firings", r)
	}
	if r := b.Rows[1]; !r.Copies || r.Name != "link to cuda:0" || r.Busy[2] != 1 {
		t.Errorf("row 1: %+v, want the link's copies, busy from 2 µs", r)
	}
	if r := b.Rows[2]; r.Copies || r.Name != "cpu-0" {
		t.Errorf("row 2: %+v, want the pool's worker last", r)
	}
}
