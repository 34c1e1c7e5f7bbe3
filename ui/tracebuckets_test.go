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
