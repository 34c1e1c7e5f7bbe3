package cluster

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/device"
)

// Requirement is one condition of a device query: Key Op Value, for
// example memory>=8GiB.
type Requirement struct {
	// Key is the device field, Op the comparison, Value what it compares to.
	Key, Op, Value string
}

// requirementKeys are the device fields a query may test.
var requirementKeys = []string{"backend", "kind", "name", "vendor", "id", "worker", "broker", "memory", "units", "clock", "max-alloc", "local-memory"}

// ParseRequirements parses "backend=cuda,memory>=8GiB": comma-separated
// conditions, each a key (backend, kind, name, vendor, id, worker, broker,
// memory, units, clock, max-alloc, local-memory), an operator (=, !=, >=,
// <=, >, <) and a value; sizes take KiB/MiB/GiB/KB/MB/GB suffixes. Text
// keys compare case-insensitively; name also matches a substring.
func ParseRequirements(s string) ([]Requirement, error) {
	var rs []Requirement
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		i := strings.IndexAny(part, "<>=!")
		if i <= 0 {
			return nil, fmt.Errorf("requirement %q: expected KEY OP VALUE such as memory>=8GiB", part)
		}
		key := strings.TrimSpace(part[:i])
		rest := part[i:]
		op := ""
		for _, o := range []string{">=", "<=", "!=", "=", ">", "<"} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, fmt.Errorf("requirement %q: expected an operator =, !=, >=, <=, > or <", part)
		}
		val := strings.TrimSpace(rest[len(op):])
		known := false
		for _, k := range requirementKeys {
			known = known || k == key
		}
		if !known {
			return nil, fmt.Errorf("requirement %q: unknown key %q: expected one of %s", part, key, strings.Join(requirementKeys, ", "))
		}
		if numericKey(key) {
			if _, err := ParseSize(val); err != nil {
				return nil, fmt.Errorf("requirement %q: %w", part, err)
			}
		} else if op != "=" && op != "!=" {
			return nil, fmt.Errorf("requirement %q: key %s takes = or !=, found %s", part, key, op)
		}
		rs = append(rs, Requirement{Key: key, Op: op, Value: val})
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("requirements %q: expected at least one KEY OP VALUE", s)
	}
	return rs, nil
}

func numericKey(k string) bool {
	switch k {
	case "memory", "units", "clock", "max-alloc", "local-memory":
		return true
	}
	return false
}

// ParseSize parses a byte count or number: "8GiB", "512MiB", "64KB", "1e6", "12".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		s string
		m int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.s) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.s)), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("size %q: expected a non-negative number with an optional unit (KiB, MiB, GiB, KB, MB, GB)", s)
	}
	return int64(f * float64(mult)), nil
}

// RemoteDevice is one device somewhere in the tree: the device, the worker
// lending it and the broker path from the root to the worker's broker.
type RemoteDevice struct {
	device.Info
	// Worker is the worker's name.
	Worker string `json:"worker"`
	// Path is the broker path, root first ("root/child").
	Path string `json:"path"`
	// Limits are the worker's limits.
	Limits Limits `json:"limits"`
	// Jobs is the number of jobs the worker runs now.
	Jobs int `json:"jobs"`
	// DataAddr is the worker's direct TCP data address, if it has one.
	DataAddr string `json:"data_addr,omitempty"`
}

// Matches reports whether the device meets every requirement.
func (d RemoteDevice) Matches(rs []Requirement) bool {
	for _, r := range rs {
		if !d.match(r) {
			return false
		}
	}
	return true
}

func (d RemoteDevice) match(r Requirement) bool {
	if numericKey(r.Key) {
		var v int64
		switch r.Key {
		case "memory":
			v = d.GlobalMem
		case "units":
			v = int64(d.ComputeUnits)
		case "clock":
			v = int64(d.ClockMHz)
		case "max-alloc":
			v = d.MaxAlloc
		case "local-memory":
			v = d.LocalMem
		}
		w, _ := ParseSize(r.Value)
		switch r.Op {
		case "=":
			return v == w
		case "!=":
			return v != w
		case ">=":
			return v >= w
		case "<=":
			return v <= w
		case ">":
			return v > w
		case "<":
			return v < w
		}
		return false
	}
	var v string
	switch r.Key {
	case "backend":
		v = d.Backend
	case "kind":
		v = string(d.Kind)
	case "name":
		v = d.Name
	case "vendor":
		v = d.Vendor
	case "id":
		v = d.ID
	case "worker":
		v = d.Worker
	case "broker":
		v = d.Path
	}
	eq := strings.EqualFold(v, r.Value) || (r.Key == "name" && strings.Contains(strings.ToLower(v), strings.ToLower(r.Value))) ||
		(r.Key == "broker" && (strings.HasSuffix(v, "/"+r.Value) || v == r.Value))
	if r.Op == "!=" {
		return !eq
	}
	return eq
}
