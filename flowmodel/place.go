package flowmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

// Place checks and completes mapping mp for the flow-model actors of g
// (those made by Model.Actor or Define, and so by a graph file's
// flowmodel: key): an actor placed on a device of this process is checked
// against its model's requirements, and a mismatch is an error naming the
// actor, the requirement and the device; an actor without a placement is
// placed on the first device of this process that meets them (of the
// placement's implementation kind, when it names one). Actors
// placed on cluster workers (worker:, any:) are left to the cluster.
//
// It returns the mapping to run with: mp when nothing was added, else a
// copy of mp (or a new mapping when mp is nil) with the added placements.
// Only g's own actors are looked at, not those inside composite actors.
func Place(ctx context.Context, g *graph.Graph, mp *graph.Mapping) (*graph.Mapping, error) {
	out := mp
	var devs []device.Info
	var errs []string
	for _, a := range g.Actors {
		raw, ok := a.Attrs[AttrRequires]
		if !ok {
			continue
		}
		var ri requireInfo
		if err := json.Unmarshal([]byte(raw), &ri); err != nil {
			errs = append(errs, fmt.Sprintf("actor %s: attribute %s: %v: expected the JSON Model.Actor writes", a.Name, AttrRequires, err))
			continue
		}
		var pl *graph.Placement
		if mp != nil {
			pl = mp.Actors[a.Name]
		}
		if pl != nil && (pl.Any != "" || strings.HasPrefix(pl.Device, "worker:")) {
			continue
		}
		if devs == nil {
			devs = discover(ctx)
		}
		if pl == nil || pl.Device == "" {
			able := devs
			if pl != nil && pl.Impl != "" {
				able = nil
				for _, d := range devs {
					if d.Backend == string(pl.Impl) {
						able = append(able, d)
					}
				}
			}
			d, err := chooseDevice(ri, able)
			if err != nil {
				errs = append(errs, fmt.Sprintf("actor %s: %v", a.Name, err))
				continue
			}
			if out == mp {
				out = copyMapping(mp)
			}
			np := &graph.Placement{Device: d.ID}
			if pl != nil {
				c := *pl
				c.Device = d.ID
				np = &c
			}
			out.Actors[a.Name] = np
			continue
		}
		d, err := resolveDevice(ctx, pl.Device, devs)
		if err != nil {
			errs = append(errs, fmt.Sprintf("actor %s: flow-model %s: device %q: %v", a.Name, ri.Model, pl.Device, err))
			continue
		}
		if err := checkDevice(ri.Requires, ri.Backends, ri.Streams, d); err != nil {
			errs = append(errs, fmt.Sprintf("actor %s: flow-model %s is mapped to a device that does not meet its requirements: %v", a.Name, ri.Model, err))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// chooseDevice returns the first device meeting ri, or an error listing
// why each device was refused.
func chooseDevice(ri requireInfo, devs []device.Info) (device.Info, error) {
	var why []string
	for _, d := range devs {
		err := checkDevice(ri.Requires, ri.Backends, ri.Streams, d)
		if err == nil {
			return d, nil
		}
		why = append(why, err.Error())
	}
	return device.Info{}, fmt.Errorf("flow-model %s: no device of this host meets its requirements: %s", ri.Model, strings.Join(why, "; "))
}

// resolveDevice returns the description of the device a placement names:
// a listed ID, or what device.Open resolves (a backend or part of a name).
func resolveDevice(ctx context.Context, name string, devs []device.Info) (device.Info, error) {
	for _, d := range devs {
		if d.ID == name {
			return d, nil
		}
	}
	dev, err := device.Open(ctx, name)
	if err != nil {
		return device.Info{}, err
	}
	defer dev.Close()
	return dev.Info(), nil
}

// copyMapping returns a copy of mp whose Actors may be changed (a new,
// empty mapping for nil).
func copyMapping(mp *graph.Mapping) *graph.Mapping {
	if mp == nil {
		return &graph.Mapping{Name: "flowmodel", Actors: map[string]*graph.Placement{}}
	}
	return mp.Clone()
}
