package ui

import (
	"fmt"
	"net/http"
	"strconv"
)

// MaxCountBuckets is the most buckets GET /api/run/trace?counts= answers.
const MaxCountBuckets = 2000

// CountsJSON is the answer of GET /api/run/trace?counts=N: the run's trace
// cut into N equal buckets over [T0, T1] µs, and for each actor the firings
// (trace slices) that ended in each bucket; the page turns a sink's counts
// into the graph's iterations per second over time.
type CountsJSON struct {
	T0     float64            `json:"t0"`
	T1     float64            `json:"t1"`
	Counts map[string][]int64 `json:"counts"`
}

// counts cuts the trace into n buckets and counts each actor's slice ends.
func (t *traceSlices) counts(n int) CountsJSON {
	out := CountsJSON{T0: t.T0, T1: t.T1, Counts: map[string][]int64{}}
	for _, a := range t.Actors {
		out.Counts[a] = make([]int64, n)
	}
	span := t.T1 - t.T0
	if span <= 0 {
		return out
	}
	for _, r := range t.Rows {
		for _, s := range r.Slices {
			k := min(n-1, int(float64(n)*(s.ts+s.dur-t.T0)/span))
			out.Counts[t.Actors[s.actor]][max(0, k)]++
		}
	}
	return out
}

// writeCounts answers ?counts=N for the parsed trace p.
func writeCounts(w http.ResponseWriter, r *http.Request, p *parsedTrace) {
	q := r.URL.Query().Get("counts")
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 || n > MaxCountBuckets {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("counts: expected an integer from 1 to %d, found %q", MaxCountBuckets, q))
		return
	}
	t, err := p.get()
	if err != nil {
		writeErr(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, t.counts(n))
}
