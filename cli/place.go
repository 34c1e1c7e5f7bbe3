package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

// placeKernelOnly places the actors that have only OpenCL or CUDA kernels
// (no Go or built-in version to run on the CPU) and that m leaves out on the
// first device of a backend they have a kernel for — CUDA first, then
// OpenCL — so that such a graph runs without a mapping file. It says on w
// where it put each; with no fitting device it names the actor, the kernels
// it has and why each backend is missing. m may be nil; the result is m or
// a new mapping.
func placeKernelOnly(ctx context.Context, g *graph.Graph, m *graph.Mapping, w io.Writer) (*graph.Mapping, error) {
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
		fmt.Fprintf(w, "note: actor %s has no CPU version: placed on %s (%s kernel); choose with --mapping\n", a.Name, id, kind)
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
