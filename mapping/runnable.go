package mapping

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
)

// RunnableOptions give the kernel settings ForRuntime fills in.
type RunnableOptions struct {
	// Pinned is the mapping whose placements were kept (sluice map
	// --mapping): its kernel settings (work-items, distribution, and
	// work-groups where the mapping found none) are an actor's first
	// choice.
	Pinned *graph.Mapping
	// WorkGroups is G for a kernel actor that neither the found mapping
	// nor Pinned gives one (≤ 0: 16).
	WorkGroups int
	// WorkItems is the work-items per work-group of a kernel actor that
	// Pinned gives none (≤ 0: 64).
	WorkItems int
}

// ForRuntime turns a mapping onto a machine model's processors into one that
// sluice run accepts: an actor on a gpu processor that stands for a device
// (machine.DeviceID: a calibrated model's cuda0, opencl00) is placed on
// that device ID with the backend's kernel implementation, its work-groups
// (the found G, else Pinned's, else opt.WorkGroups), work-items and
// distribution (Pinned's, else opt.WorkItems) and no replicas; an actor on
// the CPU pool keeps its replicas and loses any kernel setting. Other
// processors (a hand-written model's) keep their names: such a mapping is
// for the simulator only. It is an error when an actor placed on a device
// has no kernel for its backend.
func ForRuntime(g *graph.Graph, mach *machine.Machine, m *graph.Mapping, opt RunnableOptions) (*graph.Mapping, error) {
	out := &graph.Mapping{Name: m.Name, Machine: mach.Name, Actors: map[string]*graph.Placement{}}
	names := make([]string, 0, len(m.Actors))
	for n := range m.Actors {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cp := *m.Actors[n]
		p := mach.Resolve(cp.Device)
		id := mach.DeviceID(p)
		switch {
		case id != "":
			if err := onDevice(g, &cp, n, id, p.Name, opt); err != nil {
				return nil, err
			}
		case p != nil && p.Kind != "gpu":
			if cp.Impl == graph.ImplOpenCL || cp.Impl == graph.ImplCUDA {
				cp.Impl = ""
			}
			cp.WorkGroups, cp.WorkItems, cp.Distribution = 0, 0, nil
		}
		out.Actors[n] = &cp
	}
	return out, nil
}

// onDevice sets pl to run actor name's kernel on device id (processor
// proc of the model).
func onDevice(g *graph.Graph, pl *graph.Placement, name, id, proc string, opt RunnableOptions) error {
	backend, _, _ := strings.Cut(id, ":")
	kind := graph.ImplKind(backend)
	if a := g.Actor(name); a != nil {
		if _, ok := a.Impl(kind); !ok {
			return fmt.Errorf("mapping: actor %s is placed on %s (device %s) but has no %s kernel: expected an actor with a %s implementation there", name, proc, id, backend, backend)
		}
	}
	var pin *graph.Placement
	if opt.Pinned != nil {
		pin = opt.Pinned.Actors[name]
	}
	pl.Device, pl.Impl, pl.Replicas = id, kind, 0
	if pin != nil && pin.Impl == kind && pl.WorkGroups <= 0 {
		pl.WorkGroups = pin.WorkGroups
	}
	if pl.WorkGroups <= 0 {
		pl.WorkGroups = opt.WorkGroups
		if pl.WorkGroups <= 0 {
			pl.WorkGroups = 16
		}
	}
	kernelThreads(pl, pin, kind, opt.WorkItems)
	return nil
}

// kernelThreads gives pl, a kernel actor's placement on a device of
// implementation kind, the work-items and distribution it runs with:
// pin's where pin's implementation is kind, and workItems (≤ 0: 64) where
// that leaves none.
func kernelThreads(pl, pin *graph.Placement, kind graph.ImplKind, workItems int) {
	if pin != nil && pin.Impl == kind {
		pl.WorkItems, pl.Distribution = pin.WorkItems, pin.Distribution
	}
	if pl.WorkItems <= 0 {
		pl.WorkItems = workItems
		if pl.WorkItems <= 0 {
			pl.WorkItems = 64
		}
	}
}

// MapOptions are sluice map's settings.
type MapOptions struct {
	// Strategy is "heft", "search" or "all" (both; the best is kept).
	Strategy string
	// Seed, Evaluations and Iterations are the search's (SearchOptions).
	Seed        uint64
	Evaluations int
	Iterations  int64
	// WorkGroups lists the G the search tries for actors on gpu
	// processors; the largest is the G of an actor placed there without
	// one (HEFT's). Empty: G is left to Settings and RunnableOptions.
	WorkGroups []int
	// WorkItems is RunnableOptions.WorkItems.
	WorkItems int
	// Settings gives kernel settings per actor (work-items, distribution,
	// G) for the runnable mapping (RunnableOptions.Pinned); nil: the
	// pinned mapping's (Input.Fixed).
	Settings *graph.Mapping
	// Capacities lets the search raise channel capacities too
	// (SearchOptions.FixedCapacities unset): the mapping written does not
	// carry them, so the run gets them only where the user sets them.
	Capacities bool
}

// Mapped is what Map found.
type Mapped struct {
	// Found lists each strategy's mapping with its prediction.
	Found []*Found
	// Best is the one with the shortest predicted period.
	Best *Found
	// Runnable is Best's mapping made runnable (ForRuntime).
	Runnable *graph.Mapping
	// Assumptions say, one sentence each, what the predictions assumed
	// beyond the graph (StaticEstimate's rates for dynamic ports); empty
	// when nothing was.
	Assumptions []string
}

// Map runs the strategies as sluice map does — HEFT (its kernel actors
// given the largest of opt.WorkGroups), the search from HEFT's mapping
// over placements, replicas, opt.WorkGroups and, with opt.Capacities,
// capacities, or both —
// keeps the mapping with the shortest predicted period and makes it
// runnable. A graph with dynamic (KPN) ports is mapped and simulated
// through StaticEstimate, whose sentences are the result's Assumptions.
func Map(ctx context.Context, in Input, opt MapOptions) (*Mapped, error) {
	switch opt.Strategy {
	case "heft", "search", "all":
	default:
		return nil, fmt.Errorf("mapping: strategy %q: expected heft, search or all", opt.Strategy)
	}
	orig := in.Graph
	est, assumed, err := StaticEstimate(in.Graph)
	if err != nil {
		return nil, err
	}
	in.Graph = est
	g := 0
	for _, v := range opt.WorkGroups {
		g = max(g, v)
	}
	pin := opt.Settings
	if pin == nil {
		pin = in.Fixed
	}
	heft, err := heftWithG(in, opt.Iterations, g, pin, opt.WorkItems)
	if err != nil {
		return nil, err
	}
	out := &Mapped{Assumptions: assumed}
	if opt.Strategy != "search" {
		out.Found = append(out.Found, heft)
	}
	if opt.Strategy != "heft" {
		s, err := Search(ctx, in, SearchOptions{Seed: opt.Seed, Evaluations: opt.Evaluations, Iterations: opt.Iterations,
			Start: heft.Mapping, WorkGroups: opt.WorkGroups, Settings: pin, WorkItems: opt.WorkItems, FixedCapacities: !opt.Capacities})
		if err != nil {
			return nil, err
		}
		out.Found = append(out.Found, s)
	}
	out.Best = out.Found[0]
	for _, f := range out.Found {
		if f.Period < out.Best.Period && math.Abs(f.Period-out.Best.Period) > 1e-12*out.Best.Period {
			out.Best = f
		}
	}
	out.Runnable, err = ForRuntime(orig, in.Machine, out.Best.Mapping, RunnableOptions{Pinned: pin, WorkGroups: g, WorkItems: opt.WorkItems})
	return out, err
}

// heftWithG is HEFTFound with G given to the actors HEFT places on gpu
// processors without one (g > 0) and their kernel settings (see
// kernelSettings), simulated so.
func heftWithG(in Input, iterations int64, g int, settings *graph.Mapping, workItems int) (*Found, error) {
	f, err := HEFTFound(in, iterations)
	if err != nil {
		return f, err
	}
	changed := false
	for _, pl := range f.Mapping.Actors {
		if p := in.Machine.Resolve(pl.Device); p != nil && p.Kind == "gpu" {
			if g > 0 && pl.WorkGroups <= 0 {
				pl.WorkGroups, changed = g, true
			}
			changed = changed || pl.WorkItems <= 0
		}
	}
	if !changed {
		return f, nil
	}
	kernelSettings(in.Machine, f.Mapping, settings, workItems)
	pr, err := prepare(in)
	if err != nil {
		return nil, err
	}
	if iterations <= 0 {
		iterations = 64
	}
	r, err := evaluateSteady(in, f.Mapping, nil, steadyIterations(f.Mapping, pr.rv, iterations))
	if err != nil {
		return nil, fmt.Errorf("mapping: simulating HEFT's mapping with G %d: %w", g, err)
	}
	f.Period, f.Throughput, f.Evaluations = r.Period, r.Throughput, f.Evaluations+1
	return f, nil
}
