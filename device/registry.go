package device

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/internal/registry"
)

// Backend is a family of devices (the CPU, OpenCL, CUDA). Backends call
// Register from an init function.
type Backend interface {
	// Name is the backend's name and the prefix of its device IDs.
	Name() string
	// Discover lists the backend's devices, or returns why it has none as
	// an error (library not found, no platform, no device).
	Discover(ctx context.Context) ([]Info, error)
	// Open opens the device with the given ID (one Discover listed).
	Open(ctx context.Context, id string) (Device, error)
}

// backends holds the registered backends by name (internal/registry's
// rule: a name is registered once; a second registration panics naming
// both places).
var backends = registry.New[Backend]("device backend", 1)

// Register adds a backend under its name. It panics when the name is
// taken, naming both registrations, as two backends answering to one name
// is a programming error.
func Register(b Backend) { backends.Register(b.Name(), b) }

// Backends returns the registered backends: the CPU first, then the
// others by name.
func Backends() []Backend {
	all := backends.Values()
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name() == "cpu" && all[j].Name() != "cpu" })
	return all
}

// Report is what one backend says at discovery: its devices, or why it has
// none.
type Report struct {
	// Backend is the backend's name.
	Backend string `json:"backend"`
	// Devices lists the devices found.
	Devices []Info `json:"devices,omitempty"`
	// Reason says why the backend is unavailable ("" when it has devices).
	Reason string `json:"reason,omitempty"`
	// Err is the error behind Reason.
	Err error `json:"-"`
}

// Available reports whether the backend found devices.
func (r Report) Available() bool { return r.Err == nil && len(r.Devices) > 0 }

// Discover asks every registered backend for its devices.
func Discover(ctx context.Context) []Report {
	var out []Report
	for _, b := range Backends() {
		r := Report{Backend: b.Name()}
		ds, err := b.Discover(ctx)
		switch {
		case err != nil:
			r.Err, r.Reason = err, err.Error()
		case len(ds) == 0:
			r.Err = fmt.Errorf("%s: %w", b.Name(), ErrNotFound)
			r.Reason = "no device"
		default:
			r.Devices = ds
		}
		out = append(out, r)
	}
	return out
}

// Devices returns every device that Discover found, the CPU first.
func Devices(ctx context.Context) []Info {
	var out []Info
	for _, r := range Discover(ctx) {
		out = append(out, r.Devices...)
	}
	return out
}

// NotFoundError is returned by Open when no device matches: it lists the
// devices that exist and the backends that are unavailable, with reasons.
type NotFoundError struct {
	ID          string
	Known       []Info
	Unavailable []Report
}

// Error names what was asked for, the devices that exist and why the
// unavailable backends are unavailable.
func (e *NotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no device %q: expected one of ", e.ID)
	for i, d := range e.Known {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
	}
	if len(e.Known) == 0 {
		b.WriteString("(none found)")
	}
	for i, r := range e.Unavailable {
		if i == 0 {
			b.WriteString("; unavailable: ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", r.Backend, r.Reason)
	}
	return b.String()
}

// Unwrap returns ErrNotFound.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Open opens a device by ID ("cpu", "opencl:0:0"), by backend name alone
// (its first device: "opencl"), or by a case-insensitive part of the
// device's name that matches exactly one device. It returns a
// *NotFoundError listing what exists when nothing matches.
func Open(ctx context.Context, id string) (Device, error) {
	reports := Discover(ctx)
	var all []Info
	var unavailable []Report
	for _, r := range reports {
		all = append(all, r.Devices...)
		if !r.Available() {
			unavailable = append(unavailable, r)
		}
	}
	pick := func(d Info) (Device, error) {
		for _, b := range Backends() {
			if b.Name() == d.Backend {
				return b.Open(ctx, d.ID)
			}
		}
		return nil, &NotFoundError{ID: id, Known: all, Unavailable: unavailable}
	}
	for _, d := range all {
		if d.ID == id {
			return pick(d)
		}
	}
	for _, d := range all {
		if d.Backend == id {
			return pick(d)
		}
	}
	var match []Info
	if strings.TrimSpace(id) != "" {
		for _, d := range all {
			if strings.Contains(strings.ToLower(d.Name), strings.ToLower(id)) {
				match = append(match, d)
			}
		}
	}
	if len(match) == 1 {
		return pick(match[0])
	}
	return nil, &NotFoundError{ID: id, Known: all, Unavailable: unavailable}
}

// IsNotFound reports whether err says a device does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Lookup returns the index of the device with the given ID among infos (a
// backend's devices), or a *NotFoundError that lists them.
func Lookup(infos []Info, id string) (int, error) {
	for i := range infos {
		if infos[i].ID == id {
			return i, nil
		}
	}
	return -1, &NotFoundError{ID: id, Known: infos}
}

// Available reports whether the backend named backend ("opencl", "cuda",
// …) finds at least one device on this machine.
func Available(ctx context.Context, backend string) bool {
	for _, r := range Discover(ctx) {
		if r.Backend == backend && r.Available() {
			return true
		}
	}
	return false
}
