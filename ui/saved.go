package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/runtime"
)

// SavedRun is a run recorded elsewhere (`sluice run --stats-json FILE
// --trace FILE`, e.g. on a GPU machine) that the page shows as the last
// run: its figures on the drawing and its timeline.
type SavedRun struct {
	Run   *RunJSON
	Trace []byte // Chrome Trace Event JSON; nil when none was recorded
	// TraceLimit and TraceDropped say how many events the trace held at
	// most and how many it did not keep (sluice run --trace-limit), from
	// its otherData; 0 when it kept every one.
	TraceLimit, TraceDropped int64
}

// LoadSavedRun reads the statistics JSON written by `sluice run
// --stats-json` and, when traceFile is not empty, the trace written by
// --trace.
func LoadSavedRun(statsFile, traceFile string) (*SavedRun, error) {
	data, err := os.ReadFile(statsFile)
	if err != nil {
		return nil, err
	}
	var st runtime.Stats
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: expected the statistics JSON of `sluice run --stats-json`, found: %v", statsFile, err)
	}
	if len(st.Actors) == 0 {
		return nil, fmt.Errorf("%s: expected the statistics of a run's actors, found none", statsFile)
	}
	out := &SavedRun{Run: finalRun(&st)}
	if traceFile != "" {
		if out.Trace, err = os.ReadFile(traceFile); err != nil {
			return nil, err
		}
		if _, err := parseTrace(out.Trace); err != nil {
			return nil, fmt.Errorf("%s: expected the Chrome Trace Event JSON of `sluice run --trace`, found: %v", traceFile, err)
		}
		out.TraceLimit, out.TraceDropped = traceLimits(out.Trace)
	}
	return out, nil
}

// traceLimits reads the trace's otherData (written before its events)
// for the limit it was recorded with and the events it did not keep; 0, 0
// when it says nothing of them.
func traceLimits(trace []byte) (limit, dropped int64) {
	dec := json.NewDecoder(bytes.NewReader(trace))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, 0
		}
		if key != "otherData" {
			if key == "traceEvents" {
				return 0, 0
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0, 0
			}
			continue
		}
		var od struct {
			Limit   int64 `json:"trace_limit"`
			Dropped int64 `json:"dropped_events"`
		}
		if dec.Decode(&od) != nil {
			return 0, 0
		}
		return od.Limit, od.Dropped
	}
	return 0, 0
}

// showSaved makes s.Saved the last run: GET /api/run answers its figures,
// GET /api/run/trace its trace.
func (s *Server) showSaved() {
	if s.Saved == nil {
		return
	}
	if s.Live == nil {
		s.Live = &Live{}
	}
	s.Live.set(s.Saved.Run)
	c := &s.ctl
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs = 1
	if s.Saved.Trace != nil {
		c.trace = s.Saved.Trace
		c.parsed = &parsedTrace{data: c.trace}
		c.limit, c.dropped = s.Saved.TraceLimit, s.Saved.TraceDropped
	}
}
