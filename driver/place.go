package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/scenario"
	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/spec"
)

// LoadMapping reads a mapping file (YAML, or ETH XML), refusing a file of
// another kind with Load's sentences.
func LoadMapping(path string) (*graph.Mapping, error) {
	data, err := ReadInput(path, filekind.Mapping)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(strings.ToLower(path), ".xml") {
		return spec.ImportETHMapping(path, data)
	}
	return spec.ParseMapping(path, data)
}

// PlaceOptions tune Place.
type PlaceOptions struct {
	// Mapping places actors (nil: none; the runtime's defaults).
	Mapping *graph.Mapping
	// Remote says actors may run on workers (sluice run --broker): the
	// actors that have only kernels are then left to the mapping.
	Remote bool
	// Fuse merges each chain of element-wise kernel actors mapped onto one
	// device into one scenario-driven kernel actor.
	Fuse bool
	// Note receives one line per decision Place makes for the user
	// (where a kernel-only actor went, what was fused); nil: none.
	Note func(string)
}

// Placed is a graph with the mapping it runs with.
type Placed struct {
	*Prepared
	// Graph is the graph to run (Fuse rewrites it).
	Graph *graph.Graph
	// Mapping is the mapping to run with (nil: the runtime's defaults).
	Mapping *graph.Mapping
	// Fused lists the chains Fuse merged.
	Fused []scenario.Fused
}

// MachineError is Place's refusal of a mapping made for another machine
// model than this host's.
type MachineError struct {
	File, Machine, Host string
	// Actor is placed on Device, a processor of Machine and no device here.
	Actor, Device string
}

func (e *MachineError) Error() string {
	return fmt.Sprintf("%s: the mapping was written for machine %s, not this host (%s): it places actor %s on %s, a processor of that model; map the graph for this host with `sluice map GRAPH -o FILE` (no --machine), "+
		"or predict this mapping on its machine with `sluice simulate GRAPH --machine MACHINE --mapping %s`",
		e.File, e.Machine, e.Host, e.Actor, e.Device, e.File)
}

// modelDevice returns the first actor (by name) m places on a processor
// of a machine model rather than on a device a run knows (the CPU, a
// device ID such as opencl:0:0 or cuda:0, a backend, a worker), or "".
func modelDevice(m *graph.Mapping) (actor, dev string) {
	names := make([]string, 0, len(m.Actors))
	for n := range m.Actors {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		d := strings.ToLower(m.Actors[n].Device)
		switch {
		case d == "" || d == "cpu" || d == "host" || d == "opencl" || d == "cuda" || strings.Contains(d, ":"):
		default:
			return n, m.Actors[n].Device
		}
	}
	return "", ""
}

// Place sets the mapping a prepared graph runs with: the mapping checked
// against the graph and against the machine it was made for (a mapping
// sluice map wrote for another machine model is refused with
// *MachineError), actors that have only kernels placed on the first
// fitting device, flow-model actors on devices meeting their
// requirements, then the fused chains.
func Place(ctx context.Context, p *Prepared, o PlaceOptions) (*Placed, error) {
	note := o.Note
	if note == nil {
		note = func(string) {}
	}
	g, m := p.Graph, o.Mapping.Clone()
	if m != nil {
		if m.Machine != "" && m.Machine != calibrate.ModelName() {
			if a, dev := modelDevice(m); a != "" {
				return nil, &MachineError{File: mappingFile(m), Machine: m.Machine, Host: calibrate.ModelName(), Actor: a, Device: dev}
			}
		}
		if err := m.Check(g); err != nil {
			return nil, err
		}
	}
	var err error
	if !o.Remote {
		if m, err = placeKernelOnly(ctx, g, m, note); err != nil {
			return nil, err
		}
	}
	if m, err = flowmodel.Place(ctx, g, m); err != nil {
		return nil, err
	}
	pl := &Placed{Prepared: p, Graph: g, Mapping: m}
	if o.Fuse {
		if pl.Graph, pl.Mapping, pl.Fused, err = scenario.Fuse(g, m); err != nil {
			return nil, err
		}
		for _, c := range pl.Fused {
			note(fmt.Sprintf("fused %s on %s: one kernel walking a scenario of %d steps", c.Name, c.Device, c.Steps))
		}
	}
	return pl, nil
}

func mappingFile(m *graph.Mapping) string {
	if m.Origin != "" {
		return m.Origin
	}
	return "mapping " + m.Name
}

// placeKernelOnly places the actors that have only OpenCL or CUDA kernels
// (no Go or built-in version to run on the CPU) and that m leaves out on the
// first device of a backend they have a kernel for — CUDA first, then
// OpenCL — so that such a graph runs without a mapping file. With no
// fitting device it names the actor, the kernels it has and why each
// backend is missing. m may be nil; the result is m or a new mapping.
func placeKernelOnly(ctx context.Context, g *graph.Graph, m *graph.Mapping, note func(string)) (*graph.Mapping, error) {
	flat, err := g.Flatten()
	if err != nil {
		return m, nil // the runtime reports it
	}
	var reports []device.Report
	for _, a := range flat.Actors {
		if a.Pattern != nil || hasCPUImpl(a) || (m != nil && m.Actors[a.Name] != nil) {
			continue
		}
		kinds := kernelKinds(a)
		if len(kinds) == 0 {
			continue
		}
		if reports == nil {
			reports = device.Discover(ctx)
		}
		id, kind, why := firstDevice(reports, kinds)
		if id == "" {
			return m, fmt.Errorf("actor %s has only %s kernel(s) and no Go or built-in version for the CPU, and this machine has no device to run them: %s (give a mapping that places it on a worker with --broker, or add a Go implementation)", a.Name, strings.Join(kindNames(kinds), " and "), why)
		}
		if m == nil {
			m = &graph.Mapping{Name: "default", Actors: map[string]*graph.Placement{}}
		}
		m.Actors[a.Name] = &graph.Placement{Device: id, Impl: kind}
		note(fmt.Sprintf("note: actor %s has no CPU version: placed on %s (%s kernel); choose with --mapping", a.Name, id, kind))
	}
	return m, nil
}

// hasCPUImpl reports whether a has a Go or built-in implementation.
func hasCPUImpl(a *graph.Actor) bool {
	return slices.ContainsFunc(a.Impls, func(im graph.Impl) bool {
		return im.Kind == graph.ImplGo || im.Kind == graph.ImplBuiltin
	})
}

// kernelKinds lists a's kernel kinds, CUDA before OpenCL.
func kernelKinds(a *graph.Actor) []graph.ImplKind {
	var ks []graph.ImplKind
	for _, k := range []graph.ImplKind{graph.ImplCUDA, graph.ImplOpenCL} {
		if slices.ContainsFunc(a.Impls, func(im graph.Impl) bool { return im.Kind == k }) {
			ks = append(ks, k)
		}
	}
	return ks
}

func kindNames(ks []graph.ImplKind) []string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = map[graph.ImplKind]string{graph.ImplCUDA: "CUDA", graph.ImplOpenCL: "OpenCL"}[k]
	}
	return s
}

// firstDevice returns the ID of the first discovered device of the first
// backend in kinds that has one, or why none has.
func firstDevice(reports []device.Report, kinds []graph.ImplKind) (string, graph.ImplKind, string) {
	var why []string
	for _, k := range kinds {
		for _, r := range reports {
			if r.Backend != string(k) {
				continue
			}
			if r.Available() {
				return r.Devices[0].ID, k, ""
			}
			reason := r.Reason
			if reason == "" {
				reason = "no device"
			}
			why = append(why, fmt.Sprintf("%s: %s", r.Backend, reason))
		}
	}
	if len(why) == 0 {
		return "", "", "no backend for these kernels is built in"
	}
	return "", "", strings.Join(why, "; ")
}
