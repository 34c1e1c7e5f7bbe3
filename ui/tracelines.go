package ui

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// scanTraceLines reads a trace as sluice's runtime writes it
// (runtime/trace.go) and hands each event to add: a first line holding
// the header and the process's name, then one event a line, each but the
// last followed by a comma, and "]}" alone at the end; every event's keys
// in the writer's order. It takes only what encoding/json would read the
// same way (FuzzScanTraceLines holds it so): strings without escapes or
// control characters, JSON's numbers, args it does not read that are
// plain keys and values. It reads a million firings (a long run) in a
// third to a half of encoding/json's time and a third of its memory
// (BenchmarkTraceBuckets: 0.39–0.87 s against 1.15–1.91 s, side by side).
// Anything else — another writer's layout, a name with an escape, a key
// out of place — makes it answer false, having handed add some of the
// events or none, and parseTrace reads the file with encoding/json
// instead.
func scanTraceLines(data []byte, add func(*traceEvent)) bool {
	text := string(data)
	first, rest, ok := strings.Cut(text, "\n")
	if !ok {
		return false
	}
	// The header: {"displayTimeUnit":"ns","otherData":{"graph":NAME},"traceEvents":[
	header, ok := strings.CutPrefix(first, `{"displayTimeUnit":"ns","otherData":{"graph":`)
	if !ok {
		return false
	}
	if _, header, ok = scanString(header); !ok {
		return false
	}
	line, ok := strings.CutPrefix(header, `},"traceEvents":[`)
	if !ok {
		return false
	}
	// Each event line but the last ends with a comma; the last is
	// followed by "]}" alone, then white space at most.
	var e traceEvent // one for every event: add copies what it keeps
	for {
		next, more, _ := strings.Cut(rest, "\n")
		event, comma := strings.CutSuffix(line, ",")
		if comma == (next == "]}") {
			return false
		}
		if e, ok = scanTraceEvent(event); !ok {
			return false
		}
		add(&e)
		if !comma {
			return strings.Trim(more, " \t\r\n") == ""
		}
		if more == "" && next == "" {
			return false
		}
		line, rest = next, more
	}
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
// index): `,"args":{"KEY":VALUE,…}}`, every value a plain string or a
// number, no key "name" in any case (which encoding/json would read).
func plainArgs(rest string) bool {
	args, ok := strings.CutPrefix(rest, `,"args":{`)
	if !ok {
		return false
	}
	for {
		var key string
		if key, args, ok = scanString(args); !ok || strings.EqualFold(key, "name") {
			return false
		}
		if args, ok = strings.CutPrefix(args, ":"); !ok {
			return false
		}
		if strings.HasPrefix(args, `"`) {
			_, args, ok = scanString(args)
		} else {
			i := strings.IndexAny(args, ",}")
			ok = i > 0 && jsonNumber(args[:i])
			if ok {
				args = args[i:]
			}
		}
		if !ok {
			return false
		}
		if args == "}}" {
			return true
		}
		if args, ok = strings.CutPrefix(args, ","); !ok {
			return false
		}
	}
}

// scanString reads a JSON string at the start of s that encoding/json
// would read as it stands: no escape, no control character, valid UTF-8.
func scanString(s string) (string, string, bool) {
	body, ok := strings.CutPrefix(s, `"`)
	if !ok {
		return "", s, false
	}
	i := strings.IndexAny(body, `"\`)
	if i < 0 || body[i] != '"' {
		return "", s, false
	}
	str := body[:i]
	if !utf8.ValidString(str) || strings.ContainsFunc(str, func(r rune) bool { return r < 0x20 }) {
		return "", s, false
	}
	return str, body[i+1:], true
}

// scanInt reads a JSON integer at the start of s.
func scanInt(s string) (int, string, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if !jsonNumber(s[:i]) {
		return 0, s, false
	}
	v, err := strconv.Atoi(s[:i])
	return v, s[i:], err == nil
}

// scanFloat reads a JSON number at the start of s, ended by a comma or a
// brace.
func scanFloat(s string) (float64, string, bool) {
	i := strings.IndexAny(s, ",}")
	if i <= 0 || !jsonNumber(s[:i]) {
		return 0, s, false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	return v, s[i:], err == nil
}

// jsonNumber reports whether s is a number as JSON writes one:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func jsonNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	digits := func(s string) (string, bool) {
		t := strings.TrimLeft(s, "0123456789")
		return t, len(t) < len(s)
	}
	switch {
	case strings.HasPrefix(s, "0"):
		s = s[1:]
	default:
		var ok bool
		if s, ok = digits(s); !ok {
			return false
		}
	}
	if f, ok := strings.CutPrefix(s, "."); ok {
		if s, ok = digits(f); !ok {
			return false
		}
	}
	if len(s) > 0 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
			s = s[1:]
		}
		var ok bool
		if s, ok = digits(s); !ok {
			return false
		}
	}
	return s == ""
}
