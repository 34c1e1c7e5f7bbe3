package driver

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// PrepareOptions tune Prepare.
type PrepareOptions struct {
	// Run says the graph is to run in this program: an open graph (inputs
	// or outputs bound to no channel) and Go actors whose functions this
	// program lacks are refused. A prediction or a mapping needs neither.
	Run bool
	// NoCheck skips the analysis gate (sluice run --no-check).
	NoCheck bool
	// Checks tunes the gate's analysis; the zero value skips the
	// throughput and schedule analyses, which the gate does not need.
	Checks *analysis.CheckOptions
}

// Prepared is a graph ready to place, map, predict or run: every actor has
// an implementation this program can run (synthetic ones burn their
// declared cost), and analysis found nothing that stops it.
type Prepared struct {
	*Loaded
	// Synthetic names the actors (flattened names) given a synthetic
	// implementation: no code, only a declared cost.
	Synthetic []string
	// Report is the gate's analysis (nil with NoCheck).
	Report *analysis.Report
}

// MissingGoError is Prepare's refusal of a graph whose Go actors this
// program does not have: their functions are registered by the Go
// packages the graph's go: key names (sluice run builds a program that
// imports them and runs the graph there).
type MissingGoError struct {
	Graph *graph.Graph
	// Missing lists (actor, function) pairs.
	Missing [][2]string
}

func (e *MissingGoError) Error() string {
	first := e.Missing[0]
	if len(e.Graph.GoPackages) == 0 {
		return fmt.Sprintf("%s: actor %s runs the Go function %s, which this sluice binary does not have: "+
			"name the Go package that registers it (runtime.RegisterFunc in its init) with a top-level go: key in the graph file, "+
			"e.g. `go: [.]` for the package beside the file; sluice run then builds a program that imports it", e.Graph.Origin, first[0], first[1])
	}
	return fmt.Sprintf("%s: actor %s runs the Go function %s, but no package named by go: (%s) registers it (expected runtime.RegisterFunc(%q, ...) in one of them)",
		e.Graph.Origin, first[0], first[1], strings.Join(e.Graph.GoPackages, ", "), first[1])
}

// GateError is Prepare's refusal of a graph that analysis proves invalid,
// inconsistent or deadlocking; Report says why.
type GateError struct {
	Path   string
	Report *analysis.Report
}

func (e *GateError) Error() string {
	r, why := e.Report, "the analysis shows it cannot run"
	switch {
	case (!r.Valid || !r.Consistent) && len(r.Errors) > 0:
		why = r.Errors[0]
	case r.Deadlock:
		why = "one iteration deadlocks"
		if len(r.Cycles) > 0 {
			why += " (blocked cycle " + strings.Join(r.Cycles[0], " ⇒ ") + ")"
		}
	}
	return fmt.Sprintf("refusing to run %s: %s", e.Path, why)
}

// OpenError is Prepare's refusal (with Run) of an open graph.
type OpenError struct {
	Path string
	Why  string
}

func (e *OpenError) Error() string { return fmt.Sprintf("refusing to run %s: %s", e.Path, e.Why) }

// Prepare readies a loaded graph: with o.Closed an open graph is refused
// (*OpenError); Go actors whose functions this program lacks are refused
// (*MissingGoError: a front end may build a program that has them);
// actors with no implementation become synthetic; the analysis gate
// refuses (*GateError) a graph that cannot run. It changes l.Graph (the
// synthetic actors' implementations).
func Prepare(ctx context.Context, l *Loaded, o PrepareOptions) (*Prepared, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := l.Graph
	if o.Run {
		if why := Open(g); why != "" {
			return nil, &OpenError{Path: l.Path, Why: why}
		}
		if missing := UnregisteredGo(g); len(missing) > 0 {
			return nil, &MissingGoError{Graph: g, Missing: missing}
		}
	}
	p := &Prepared{Loaded: l, Synthetic: actors.Synthesize(g)}
	if l.Pipeline != nil && l.Pipeline.Graph != g {
		actors.Synthesize(l.Pipeline.Graph)
	}
	if o.NoCheck {
		return p, nil
	}
	opts := analysis.CheckOptions{NoThroughput: true, NoSchedule: true}
	if o.Checks != nil {
		opts = *o.Checks
	}
	p.Report = analysis.Check(l.Analysed(), opts)
	if r := p.Report; !r.Valid || !r.Consistent || r.Deadlock {
		return p, &GateError{Path: l.Path, Report: r}
	}
	return p, nil
}

// Open says why g cannot run as it is ("" when it can): graph inputs or
// outputs bound to no channel.
func Open(g *graph.Graph) string {
	if len(g.Inputs) == 0 && len(g.Outputs) == 0 {
		return ""
	}
	var ports []string
	for _, b := range g.Inputs {
		ports = append(ports, "input "+b.Name)
	}
	for _, b := range g.Outputs {
		ports = append(ports, "output "+b.Name)
	}
	return fmt.Sprintf("graph %s is open (%s bound to no channel): sluice run runs closed graphs only; "+
		"run it from a program that feeds and drains those ports (a pipeline-model through package metapipe: see docs/metapipeline.md), "+
		"or use it as a composite (graph: FILE) inside a closed graph", g.Name, strings.Join(ports, ", "))
}

// UnregisteredGo lists (actor, function) pairs of g's actors whose
// implementation is a Go function not registered in this program.
func UnregisteredGo(g *graph.Graph) [][2]string {
	var out [][2]string
	var walk func(g *graph.Graph)
	walk = func(g *graph.Graph) {
		for _, a := range g.Actors {
			if a.Sub != nil {
				walk(a.Sub)
				continue
			}
			if a.Pattern != nil {
				for _, b := range a.Pattern.Branches {
					walk(b)
				}
				continue
			}
			for _, im := range a.Impls {
				if im.Kind == graph.ImplGo && im.Func == nil && im.Source != "" && !runtime.Registered(im.Source) {
					out = append(out, [2]string{a.Name, im.Source})
				}
			}
		}
	}
	walk(g)
	return out
}
