package flowmodel

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/device"
)

// Requirements are what a device must offer to run a flow-model.
type Requirements struct {
	// Backend is "opencl", "cuda" or "cpu" (Go built-ins); empty: any
	// backend the kernel has source for.
	Backend string `yaml:"backend,omitempty" json:"backend,omitempty"`
	// Version is the least language version: OpenCL C "1.2", CUDA compute
	// capability "7.0" (compared with the device's reported version).
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Kinds restricts the device kind (cpu, gpu, accelerator).
	Kinds []device.Kind `yaml:"kinds,omitempty" json:"kinds,omitempty"`
	// Types are the token types the kernel computes with: when set, every
	// stream's type must be among them.
	Types []string `yaml:"types,omitempty" json:"types,omitempty"`
	// MinMemory is the least global memory in bytes.
	MinMemory int64 `yaml:"min_memory,omitempty" json:"min_memory,omitempty"`
	// MinComputeUnits is the least number of compute units.
	MinComputeUnits int `yaml:"min_compute_units,omitempty" json:"min_compute_units,omitempty"`
}

// validate checks the requirements' own fields.
func (r Requirements) validate() error {
	switch r.Backend {
	case "", "opencl", "cuda", "cpu":
	default:
		return fmt.Errorf("backend %q: expected opencl, cuda or cpu", r.Backend)
	}
	if r.Version != "" {
		if _, ok := parseVersion(r.Version); !ok {
			return fmt.Errorf("version %q: expected MAJOR.MINOR", r.Version)
		}
	}
	for _, t := range r.Types {
		if typeSize(t) == 0 {
			return fmt.Errorf("type %q: expected one of %s", t, knownTypes())
		}
	}
	return nil
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)`)

// parseVersion finds the first MAJOR.MINOR in s as MAJOR*1000+MINOR.
func parseVersion(s string) (int, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a*1000 + b, true
}

// backends returns the backends the model can run on.
func (m *Model) backends() []string {
	if m.Kernel.Builtin != "" {
		return []string{"cpu"}
	}
	var b []string
	if m.Kernel.OpenCL != "" {
		b = append(b, "opencl")
	}
	if m.Kernel.CUDA != "" {
		b = append(b, "cuda")
	}
	return b
}

// Check says why device d cannot run the model (nil when it can): the
// message names the device and the requirement it misses.
func (m *Model) Check(d device.Info) error {
	return checkDevice(m.Requires, m.backends(), m.streams(), d)
}

// checkDevice says why device d does not meet requirements r of a model
// with code for backends and the given streams (nil when it does).
func checkDevice(r Requirements, backends []string, streams []Stream, d device.Info) error {
	if !contains(backends, d.Backend) {
		return fmt.Errorf("%s: backend %s: the flow-model has code for %s", d.ID, d.Backend, strings.Join(backends, ", "))
	}
	if r.Backend != "" && r.Backend != d.Backend {
		return fmt.Errorf("%s: backend %s: requires.backend expects %s", d.ID, d.Backend, r.Backend)
	}
	if len(r.Kinds) > 0 && !contains(r.Kinds, d.Kind) {
		return fmt.Errorf("%s: kind %s: requires.kinds expects one of %v", d.ID, d.Kind, r.Kinds)
	}
	if r.MinMemory > 0 && d.GlobalMem < r.MinMemory {
		return fmt.Errorf("%s: memory %s: requires.min_memory expects at least %s", d.ID, device.Size(d.GlobalMem), device.Size(r.MinMemory))
	}
	if r.MinComputeUnits > 0 && d.ComputeUnits < r.MinComputeUnits {
		return fmt.Errorf("%s: %d compute units: requires.min_compute_units expects at least %d", d.ID, d.ComputeUnits, r.MinComputeUnits)
	}
	var need int64
	for _, s := range streams {
		need += s.Bytes()
		if len(r.Types) > 0 && !contains(r.Types, s.Type) {
			return fmt.Errorf("stream %q: type %s is not among requires.types %v", s.Name, s.Type, r.Types)
		}
	}
	if d.GlobalMem > 0 && need > d.GlobalMem {
		return fmt.Errorf("%s: streams need %s: the device has %s", d.ID, device.Size(need), device.Size(d.GlobalMem))
	}
	if r.Version != "" && d.Backend != "cpu" {
		want, _ := parseVersion(r.Version)
		have, ok := parseVersion(d.Version)
		if !ok || have < want {
			return fmt.Errorf("%s: version %q: requires.version expects at least %s", d.ID, d.Version, r.Version)
		}
	}
	return nil
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Platform is one platform or adapter of a host with its devices.
type Platform struct {
	// Name is the OpenCL platform, or the backend's name.
	Name    string        `json:"name"`
	Backend string        `json:"backend"`
	Devices []device.Info `json:"devices"`
}

// HostInfo is the device hierarchy of one host: host → platform → device.
type HostInfo struct {
	// Host names the host (a worker's name for remote hosts).
	Host      string     `json:"host"`
	Platforms []Platform `json:"platforms"`
}

// Tree groups devices into the host → platform → device hierarchy.
func Tree(host string, ds []device.Info) HostInfo {
	h := HostInfo{Host: host}
	idx := map[string]int{}
	for _, d := range ds {
		key := d.Backend + "/" + d.Platform
		i, ok := idx[key]
		if !ok {
			name := d.Platform
			if name == "" {
				name = d.Backend
			}
			i = len(h.Platforms)
			idx[key] = i
			h.Platforms = append(h.Platforms, Platform{Name: name, Backend: d.Backend})
		}
		h.Platforms[i].Devices = append(h.Platforms[i].Devices, d)
	}
	return h
}

// Match walks the hierarchy and returns the devices able to run m, in
// order, or an error listing why each device was refused.
func (h HostInfo) Match(m *Model) ([]device.Info, error) {
	var ok []device.Info
	var why []string
	for _, p := range h.Platforms {
		for _, d := range p.Devices {
			if err := m.Check(d); err != nil {
				why = append(why, err.Error())
				continue
			}
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		return nil, fmt.Errorf("no device of host %s meets flow-model %s: %s", h.Host, m.Name, strings.Join(why, "; "))
	}
	return ok, nil
}
