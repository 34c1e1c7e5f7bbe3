package machine

import (
	"fmt"
	"strconv"
	"strings"
)

// Format writes m as a machine file (`kind: machine`) that Parse reads back
// to an equal machine: every processor, memory and interconnect with the
// keys that differ from their defaults, then the calibration record. header
// lines, if any, are written first as comments.
func Format(m *Machine, header ...string) []byte {
	var b strings.Builder
	for _, h := range header {
		for _, l := range strings.Split(h, "\n") {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	b.WriteString("kind: machine\n")
	fmt.Fprintf(&b, "name: %s\n", quote(m.Name))
	if len(m.Processors) > 0 {
		b.WriteString("processors:\n")
	}
	for _, p := range m.Processors {
		var f []string
		add := func(k string, v any) { f = append(f, fmt.Sprintf("%s: %v", k, v)) }
		add("kind", quote(p.Kind))
		add("clock", clockString(p.ClockHz))
		if p.Units != 1 {
			add("units", p.Units)
		}
		if p.HasIO {
			add("io", true)
		}
		if len(p.AddressSpace) > 0 {
			var as []string
			for _, a := range p.AddressSpace {
				if a.Base != 0 {
					as = append(as, fmt.Sprintf("{memory: %s, base: %#x}", quote(a.Memory), a.Base))
				} else {
					as = append(as, quote(a.Memory))
				}
			}
			add("address_space", "["+strings.Join(as, ", ")+"]")
		}
		nz := func(k string, v int64) {
			if v != 0 {
				add(k, v)
			}
		}
		nz("push_acquire_cost", p.PushAcq)
		nz("push_send_fixed_cost", p.PushSend.Fixed)
		nz("push_send_unit", p.PushSend.Unit)
		nz("push_send_unit_cost", p.PushSend.UnitCost)
		nz("pop_acquire_fixed_cost", p.PopAcq.Fixed)
		nz("pop_acquire_unit", p.PopAcq.Unit)
		nz("pop_acquire_unit_cost", p.PopAcq.UnitCost)
		nz("pop_discard_cost", p.PopDisc)
		nz("wake_latency", p.WakeLatency)
		nz("wake_cost", p.WakeCost)
		if p.Pool {
			add("pool", true)
		}
		nz("firing_cost", p.FiringCost)
		nz("round_cost", p.RoundCost)
		nz("spin_time", p.SpinTime)
		nz("time_slice", p.TimeSlice)
		nz("round_time", p.RoundTime)
		nz("threads", p.Threads)
		nz("issue_cost", p.IssueCost)
		nz("copy_issue_cost", p.CopyIssueCost)
		fmt.Fprintf(&b, "  %s: {%s}\n", quote(p.Name), strings.Join(f, ", "))
	}
	if len(m.Memories) > 0 {
		b.WriteString("memories:\n")
	}
	for _, mm := range m.Memories {
		f := []string{"clock: " + clockString(mm.ClockHz)}
		if mm.Size > 0 {
			f = append(f, fmt.Sprintf("size: %d", mm.Size))
		}
		if mm.Latency > 0 {
			f = append(f, fmt.Sprintf("latency: %d", mm.Latency))
		}
		if mm.Bandwidth > 0 {
			f = append(f, fmt.Sprintf("bandwidth: %d", mm.Bandwidth))
		}
		fmt.Fprintf(&b, "  %s: {%s}\n", quote(mm.Name), strings.Join(f, ", "))
	}
	if len(m.Interconnects) > 0 {
		b.WriteString("interconnects:\n")
	}
	for _, ic := range m.Interconnects {
		els := make([]string, len(ic.Elements))
		for i, e := range ic.Elements {
			els[i] = quote(e)
		}
		f := []string{"elements: [" + strings.Join(els, ", ") + "]", "clock: " + clockString(ic.ClockHz)}
		if len(ic.Duplex) > 0 {
			f = append(f, "duplex: "+boolMap(ic.Duplex))
		}
		if len(ic.Routing) > 0 {
			keys := sortedKeys(ic.Routing)
			var kv []string
			for _, k := range keys {
				kv = append(kv, quote(k)+": "+string(ic.Routing[k]))
			}
			f = append(f, "routing: {"+strings.Join(kv, ", ")+"}")
		}
		for _, kv := range []struct {
			k string
			v int64
		}{{"start_latency", ic.StartLatency}, {"start_cost", ic.StartCost}, {"bandwidth", ic.Bandwidth}, {"finish_cost", ic.FinishCost}} {
			if kv.v != 0 {
				f = append(f, fmt.Sprintf("%s: %d", kv.k, kv.v))
			}
		}
		f = append(f, fmt.Sprintf("channels: %d", ic.Channels))
		if !ic.Multiplexable {
			f = append(f, "multiplexable: false")
		}
		if ic.Credits {
			f = append(f, "credits: true")
		}
		fmt.Fprintf(&b, "  %s: {%s}\n", quote(ic.Name), strings.Join(f, ", "))
	}
	if len(m.Aliases) > 0 {
		b.WriteString("aliases:\n")
		for _, k := range sortedKeys(m.Aliases) {
			fmt.Fprintf(&b, "  %s: %s\n", quote(k), quote(m.Aliases[k]))
		}
	}
	if len(m.Calibration) > 0 {
		b.WriteString("calibration:\n")
		for _, k := range sortedKeys(m.Calibration) {
			fmt.Fprintf(&b, "  %s: %s\n", quote(k), strconv.Quote(m.Calibration[k]))
		}
	}
	return []byte(b.String())
}

func boolMap(m map[string]bool) string {
	var kv []string
	for _, k := range sortedKeys(m) {
		kv = append(kv, fmt.Sprintf("%s: %t", quote(k), m[k]))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// clockString writes a clock rate in Hz so that Parse reads it back exactly.
func clockString(hz float64) string {
	for _, u := range []struct {
		f    float64
		name string
	}{{1e9, "GHz"}, {1e6, "MHz"}, {1e3, "kHz"}} {
		if v := hz / u.f; v >= 1 && v == float64(int64(v)) && v*u.f == hz {
			return strconv.FormatInt(int64(v), 10) + u.name
		}
	}
	return strconv.FormatFloat(hz, 'f', -1, 64) + "Hz"
}

// quote returns s as a YAML double-quoted string when it is not a plain
// name.
func quote(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if plain && (s[0] >= '0' && s[0] <= '9' || s[0] == '-' || s[0] == '.') {
		plain = false
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n":
		plain = false
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}
