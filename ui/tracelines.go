package ui

import (
	"strconv"
	"strings"
)

// scanTraceLines reads a trace as sluice's runtime writes it
// (runtime/trace.go) and hands each event to add: a first line holding
// the header and the process's name, then one event a line, each but the
// last followed by a comma, and "]}" alone at the end; every event's keys
// in the writer's order. It reads a million firings (a long run) in a
// fifth to a third of encoding/json's time and a third of its memory
// (BenchmarkTraceBuckets: 0.32–0.52 s against 1.57–1.83 s). Anything
// else — another writer's layout, a name with an escape, a key out of
// place — makes it answer false, having handed add some of the events or
// none, and parseTrace reads the file with encoding/json instead.
func scanTraceLines(data []byte, add func(*traceEvent)) bool {
	text := string(data)
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(first, `{"displayTimeUnit":`) {
		return false
	}
	_, process, ok := strings.Cut(first, `"traceEvents":[`)
	if !ok {
		return false
	}
	var e traceEvent // one for every event: add copies what it keeps
	if e, ok = scanTraceEvent(strings.TrimSuffix(process, ",")); !ok {
		return false
	}
	add(&e)
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if line == "]}" {
			return strings.TrimSpace(rest) == ""
		}
		if e, ok = scanTraceEvent(strings.TrimSuffix(line, ",")); !ok {
			return false
		}
		add(&e)
	}
	return false
}

// scanTraceEvent reads one event line of the runtime's writer: metadata
// (`{"name":N,"ph":"M","pid":1,"tid":T,"args":{…}}`) or a complete event
// (`{"name":N,"cat":C,"ph":"X","pid":1,"tid":T,"ts":F,"dur":F[,"args":{…}]}`).
func scanTraceEvent(line string) (traceEvent, bool) {
	var e traceEvent
	rest, ok := strings.CutPrefix(line, `{"name":`)
	if !ok {
		return e, false
	}
	if e.Name, rest, ok = scanString(rest); !ok {
		return e, false
	}
	if rest, ok = strings.CutPrefix(rest, `,"ph":"M","pid":1,"tid":`); ok {
		e.Ph = "M"
		if e.Tid, rest, ok = scanInt(rest); !ok {
			return e, false
		}
		if named, ok := strings.CutPrefix(rest, `,"args":{"name":`); ok {
			e.Args.Name, rest, ok = scanString(named)
			return e, ok && rest == "}}"
		}
		return e, e.Name != "thread_name" && plainArgs(rest)
	}
	if rest, ok = strings.CutPrefix(rest, `,"cat":`); !ok {
		return e, false
	}
	if e.Cat, rest, ok = scanString(rest); !ok {
		return e, false
	}
	if rest, ok = strings.CutPrefix(rest, `,"ph":"X","pid":1,"tid":`); !ok {
		return e, false
	}
	e.Ph = "X"
	if e.Tid, rest, ok = scanInt(rest); !ok {
		return e, false
	}
	if rest, ok = strings.CutPrefix(rest, `,"ts":`); !ok {
		return e, false
	}
	if e.Ts, rest, ok = scanFloat(rest); !ok {
		return e, false
	}
	if rest, ok = strings.CutPrefix(rest, `,"dur":`); !ok {
		return e, false
	}
	if e.Dur, rest, ok = scanFloat(rest); !ok {
		return e, false
	}
	if rest == "}" {
		return e, true
	}
	return e, plainArgs(rest)
}

// plainArgs reports whether rest closes an event with args that are not
// read (a firing's number, a copy's bytes, a fused chain's name, a sort
// index), none of them holding a brace or an escape.
func plainArgs(rest string) bool {
	args, ok := strings.CutPrefix(rest, `,"args":{`)
	return ok && strings.HasSuffix(args, "}}") && !strings.ContainsAny(args[:len(args)-2], `{}\`) && !strings.Contains(args, `"name":`)
}

// scanString reads a JSON string without escapes at the start of s.
func scanString(s string) (string, string, bool) {
	body, ok := strings.CutPrefix(s, `"`)
	if !ok {
		return "", s, false
	}
	i := strings.IndexAny(body, `"\`)
	if i < 0 || body[i] != '"' {
		return "", s, false
	}
	return body[:i], body[i+1:], true
}

// scanInt reads a decimal integer at the start of s.
func scanInt(s string) (int, string, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	v, err := strconv.Atoi(s[:i])
	return v, s[i:], err == nil
}

// scanFloat reads a JSON number at the start of s.
func scanFloat(s string) (float64, string, bool) {
	i := strings.IndexAny(s, ",}")
	if i <= 0 || strings.Trim(s[:i], "0123456789.-+eE") != "" {
		return 0, s, false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	return v, s[i:], err == nil
}
