package runtime

import (
	"bufio"
	"io"
	"slices"
	"strconv"
)

// traceEvent is one recorded firing (firing -1: a process's life time).
type traceEvent struct {
	unit   int32
	firing int64
	ts     int64 // ns since the run started
	dur    int64 // ns
}

// traceDropped counts the events the trace did not record, its
// Options.TraceLimit reached. The run's goroutines have ended.
func (r *run) traceDropped() int64 {
	var n int64
	for _, c := range r.ctxs {
		n += c.traceDropped
	}
	r.spans.mu.Lock()
	defer r.spans.mu.Unlock()
	for _, c := range r.spans.lanes {
		n += c.traceDropped
	}
	return n
}

// writeTrace writes the Chrome Trace Event JSON: process 1, one thread per
// execution context (thread_name metadata), one complete ("X") event per
// firing with the actor's name and the firing's index, in microseconds.
// When the limit left events out (dropped), otherData says how many and
// what the limit was.
func (r *run) writeTrace(w io.Writer, dropped int64) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 256)
	buf = append(buf, `{"displayTimeUnit":"ns","otherData":{"graph":`...)
	buf = strconv.AppendQuote(buf, r.g.Name)
	if dropped > 0 {
		buf = append(buf, `,"trace_limit":`...)
		buf = strconv.AppendInt(buf, r.traceLimit(), 10)
		buf = append(buf, `,"dropped_events":`...)
		buf = strconv.AppendInt(buf, dropped, 10)
	}
	buf = append(buf, `},"traceEvents":[`...)
	buf = append(buf, `{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":`...)
	buf = strconv.AppendQuote(buf, "sluice "+r.g.Name)
	buf = append(buf, `}}`...)
	bw.Write(buf)
	// the lanes of device work Go actors reported follow the run's own
	r.spans.mu.Lock()
	ctxs := append(slices.Clip(r.ctxs), r.spans.lanes...)
	for i, c := range r.spans.lanes {
		c.id = len(r.ctxs) + i
	}
	r.spans.mu.Unlock()
	for _, c := range ctxs {
		buf = append(buf[:0], `,`+"\n"+`{"name":"thread_name","ph":"M","pid":1,"tid":`...)
		buf = strconv.AppendInt(buf, int64(c.id), 10)
		buf = append(buf, `,"args":{"name":`...)
		buf = strconv.AppendQuote(buf, c.name)
		buf = append(buf, `}},`+"\n"+`{"name":"thread_sort_index","ph":"M","pid":1,"tid":`...)
		buf = strconv.AppendInt(buf, int64(c.id), 10)
		buf = append(buf, `,"args":{"sort_index":`...)
		buf = strconv.AppendInt(buf, int64(c.id), 10)
		buf = append(buf, `}}`...)
		bw.Write(buf)
	}
	names := make([][]byte, len(r.units))
	fused := make([][]byte, len(r.units)) // `,"fused":"NAME"` for a fused chain's stages
	for i, u := range r.units {
		names[i] = strconv.AppendQuote(nil, u.name)
		if fu := u.fusedBy(); fu != nil {
			fused[i] = strconv.AppendQuote([]byte(`,"fused":`), fu.name)
		}
	}
	for _, c := range ctxs {
		for _, e := range c.trace {
			buf = append(buf[:0], ",\n"+`{"name":`...)
			buf = append(buf, names[e.unit]...)
			switch {
			case c.copies:
				buf = append(buf, `,"cat":"copy","ph":"X","pid":1,"tid":`...)
			case e.firing < 0:
				buf = append(buf, `,"cat":"process","ph":"X","pid":1,"tid":`...)
			default:
				buf = append(buf, `,"cat":"firing","ph":"X","pid":1,"tid":`...)
			}
			buf = strconv.AppendInt(buf, int64(c.id), 10)
			buf = append(buf, `,"ts":`...)
			buf = appendMicros(buf, e.ts)
			buf = append(buf, `,"dur":`...)
			buf = appendMicros(buf, e.dur)
			if c.copies {
				buf = append(buf, `,"args":{"bytes":`...)
				buf = strconv.AppendInt(buf, e.firing, 10)
				buf = append(buf, '}')
			} else if e.firing >= 0 {
				buf = append(buf, `,"args":{"firing":`...)
				buf = strconv.AppendInt(buf, e.firing, 10)
				buf = append(buf, fused[e.unit]...)
				buf = append(buf, '}')
			}
			buf = append(buf, '}')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
		}
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// traceLimit is the run's Options.TraceLimit in effect (< 0: no limit).
func (r *run) traceLimit() int64 {
	if r.opts.TraceLimit == 0 {
		return DefaultTraceLimit
	}
	return r.opts.TraceLimit
}

// appendMicros appends ns as microseconds with three decimals.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	return b
}
