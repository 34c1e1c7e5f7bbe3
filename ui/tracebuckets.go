package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// MaxBuckets is the most buckets per row GET /api/run/trace?px= answers.
const MaxBuckets = 8192

// traceSlices is a run's trace parsed once: per worker row, its firings
// sorted by start, times in µs.
type traceSlices struct {
	Actors []string // names, indexed by slice.actor
	Rows   []traceRow
	T0, T1 float64 // the whole trace's extent
}

type traceRow struct {
	Tid    int
	Name   string
	Copies bool // a device link's copies (category "copy"), not firings
	Slices []slice
	maxDur float64 // longest slice, to find those starting before a window
}

type slice struct {
	ts, dur float64
	actor   int
}

// traceEvent is what parseTrace reads of one trace event.
type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`
	Dur  float64 `json:"dur"`
	Tid  int     `json:"tid"`
	Cat  string  `json:"cat"`
	Args struct {
		Name string `json:"name"`
	} `json:"args"`
}

// parseTrace reads Chrome Trace Event JSON (complete events "X" and
// thread_name metadata) into rows: a trace as sluice's runtime writes it
// line by line (scanTraceLines), any other with encoding/json.
func parseTrace(data []byte) (*traceSlices, error) {
	b := newRowBuilder()
	if !scanTraceLines(data, b.add) {
		events, err := decodeTraceJSON(data)
		if err != nil {
			return nil, err
		}
		b = newRowBuilder()
		for i := range events {
			b.add(&events[i])
		}
	}
	return b.done(), nil
}

// decodeTraceJSON reads a trace's events with encoding/json, whatever its
// layout.
func decodeTraceJSON(data []byte) ([]traceEvent, error) {
	var tr struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	return tr.TraceEvents, nil
}

// rowBuilder sorts events into rows, one per thread, as they are read.
type rowBuilder struct {
	out   *traceSlices
	actor map[string]int // name → index in out.Actors
	row   map[int]int    // tid → index in out.Rows
	names map[int]string // tid → thread name
}

func newRowBuilder() *rowBuilder {
	return &rowBuilder{out: &traceSlices{T0: math.Inf(1), T1: math.Inf(-1)},
		actor: map[string]int{}, row: map[int]int{}, names: map[int]string{}}
}

// add takes one event: a thread's name, or a complete event for its row.
func (rb *rowBuilder) add(e *traceEvent) {
	out := rb.out
	if e.Ph == "M" && e.Name == "thread_name" {
		rb.names[e.Tid] = e.Args.Name
	}
	if e.Ph != "X" {
		return
	}
	a, ok := rb.actor[e.Name]
	if !ok {
		a = len(out.Actors)
		rb.actor[e.Name] = a
		out.Actors = append(out.Actors, e.Name)
	}
	r, ok := rb.row[e.Tid]
	if !ok {
		r = len(out.Rows)
		rb.row[e.Tid] = r
		out.Rows = append(out.Rows, traceRow{Tid: e.Tid, Copies: e.Cat == "copy"})
	}
	out.Rows[r].Slices = append(out.Rows[r].Slices, slice{e.Ts, e.Dur, a})
	out.Rows[r].maxDur = max(out.Rows[r].maxDur, e.Dur)
	out.T0, out.T1 = min(out.T0, e.Ts), max(out.T1, e.Ts+e.Dur)
}

// done names and sorts the rows read.
func (rb *rowBuilder) done() *traceSlices {
	out, names := rb.out, rb.names
	if len(out.Rows) == 0 {
		out.T0, out.T1 = 0, 0
	}
	for i := range out.Rows {
		r := &out.Rows[i]
		r.Name = names[r.Tid]
		if r.Name == "" {
			r.Name = "worker " + strconv.Itoa(r.Tid)
		}
		slices.SortFunc(r.Slices, func(a, b slice) int { return cmpFloat(a.ts, b.ts) })
	}
	// Devices first (a GPU's lanes stay in view above sixteen workers),
	// each as its kernels, its link to it and its link from it; then the
	// others, in the run's order.
	slices.SortFunc(out.Rows, func(a, b traceRow) int {
		da, ka := a.deviceSide()
		db, kb := b.deviceSide()
		switch {
		case da != "" && db != "":
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			return ka - kb
		case da != "":
			return -1
		case db != "":
			return 1
		}
		return a.Tid - b.Tid
	})
	return out
}

// deviceSide returns the device whose kernels (k 0) or link (k 1: to it,
// 2: from it) the row shows, or "" for a worker's row.
func (r *traceRow) deviceSide() (dev string, k int) {
	for k, p := range [3]string{"device ", "link to ", "link from "} {
		if d, ok := strings.CutPrefix(r.Name, p); ok && (k == 0 || r.Copies) {
			return d, k
		}
	}
	return "", 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BucketsJSON is the answer of GET /api/run/trace?from=&to=&px=: the
// window [From, To] µs cut into Px buckets per worker row; each bucket
// holds the fraction of its time the worker was firing (Busy) and the
// actor that fired longest in it (Actor, an index into Actors; -1: idle).
type BucketsJSON struct {
	T0     float64          `json:"t0"`
	T1     float64          `json:"t1"`
	From   float64          `json:"from"`
	To     float64          `json:"to"`
	Px     int              `json:"px"`
	Actors []string         `json:"actors"`
	Rows   []BucketsRowJSON `json:"rows"`
	// Firings counts the firings overlapping the window, over all rows
	// but the links'.
	Firings int `json:"firings"`
}

// BucketsRowJSON is one worker's buckets, or a device link's (Copies:
// its busy time is copies, each named after the kernel actor whose
// tokens it moves).
type BucketsRowJSON struct {
	Name   string    `json:"name"`
	Copies bool      `json:"copies,omitempty"`
	Busy   []float64 `json:"busy"`
	Actor  []int     `json:"actor"`
}

// buckets aggregates the slices overlapping [from, to] into px buckets per row.
func (t *traceSlices) buckets(from, to float64, px int) BucketsJSON {
	out := BucketsJSON{T0: t.T0, T1: t.T1, From: from, To: to, Px: px, Actors: t.Actors, Rows: make([]BucketsRowJSON, len(t.Rows))}
	w := (to - from) / float64(px)
	for i := range t.Rows {
		r := &t.Rows[i]
		busy := make([]float64, px)
		best := make([]float64, px)
		who := make([]int, px)
		for k := range who {
			who[k] = -1
		}
		// The first slice that may overlap: one starting at most maxDur before from.
		start, _ := slices.BinarySearchFunc(r.Slices, from-r.maxDur, func(s slice, v float64) int { return cmpFloat(s.ts, v) })
		perActor := map[[2]int]float64{} // (bucket, actor) → time, for the dominant actor
		for _, s := range r.Slices[start:] {
			if s.ts > to {
				break
			}
			end := s.ts + s.dur
			if end < from {
				continue
			}
			if !r.Copies {
				out.Firings++
			}
			k0 := max(0, int((s.ts-from)/w))
			k1 := min(px-1, int((end-from)/w))
			for k := k0; k <= k1; k++ {
				lo, hi := from+float64(k)*w, from+float64(k+1)*w
				d := min(hi, end) - max(lo, s.ts)
				if d <= 0 {
					continue
				}
				busy[k] += d
				key := [2]int{k, s.actor}
				perActor[key] += d
				if perActor[key] > best[k] {
					best[k], who[k] = perActor[key], s.actor
				}
			}
		}
		for k := range busy {
			busy[k] = math.Round(math.Min(1, busy[k]/w)*1000) / 1000 // 3 digits: the answer stays small
		}
		out.Rows[i] = BucketsRowJSON{Name: r.Name, Copies: r.Copies, Busy: busy, Actor: who}
	}
	return out
}

// bucketQuery reads from, to (µs; default the whole trace) and px.
func bucketQuery(r *http.Request, t *traceSlices) (from, to float64, px int, err error) {
	q := r.URL.Query()
	from, to = t.T0, t.T1
	px, err = strconv.Atoi(q.Get("px"))
	if err != nil || px < 1 || px > MaxBuckets {
		return 0, 0, 0, fmt.Errorf("px: expected an integer from 1 to %d, found %q", MaxBuckets, q.Get("px"))
	}
	for _, f := range []struct {
		key string
		v   *float64
	}{{"from", &from}, {"to", &to}} {
		if s := q.Get(f.key); s != "" {
			if *f.v, err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(*f.v) || math.IsInf(*f.v, 0) {
				return 0, 0, 0, fmt.Errorf("%s: expected a time in µs, found %q", f.key, s)
			}
		}
	}
	if !(to > from) {
		return 0, 0, 0, fmt.Errorf("from, to: expected from < to, found %g and %g", from, to)
	}
	return from, to, px, nil
}
