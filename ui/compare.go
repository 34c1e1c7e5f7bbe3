package ui

import (
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/mapping"
	"github.com/sluicehq/sluice/sim"
)

// CompareJSON is the answer of GET /api/run/compare: for the last run, the
// simulator's predicted throughput beside the runtime's measured one, for
// the graph (iterations/s) and per actor (firings/s).
type CompareJSON struct {
	// Machine describes the model the prediction used.
	Machine string `json:"machine"`
	// Simulated is the number of iterations simulated.
	Simulated int64           `json:"simulated"`
	Graph     RatePair        `json:"graph"`
	Actors    []ActorRateJSON `json:"actors"`
	Notes     []string        `json:"notes,omitempty"`
}

// RatePair is one predicted and one measured rate, per second (0 when
// unknown).
type RatePair struct {
	Predicted float64 `json:"predicted"`
	Measured  float64 `json:"measured"`
}

// ActorRateJSON is one actor's firings per second, predicted and measured,
// and its firings per graph iteration.
type ActorRateJSON struct {
	Name        string `json:"name"`
	Repetitions int64  `json:"repetitions"`
	RatePair
}

// maxSimulated bounds the iterations GET /api/run/compare simulates.
const maxSimulated = 100

func (s *Server) getRunCompare(w http.ResponseWriter, r *http.Request) {
	s.ctl.mu.Lock()
	g, workers, burns, running := s.ctl.graph, s.ctl.workers, s.ctl.burns, s.ctl.running
	s.ctl.mu.Unlock()
	switch {
	case running:
		writeErr(w, http.StatusConflict, "the run is going on: the comparison comes when it ends")
		return
	case g == nil:
		writeErr(w, http.StatusNotFound, "no run to compare: start one with POST /api/run/start")
		return
	}
	s.Live.mu.Lock()
	last := s.Live.last
	s.Live.mu.Unlock()
	out, err := compare(g, workers, burns, last)
	if err != nil {
		writeErr(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// compare predicts g's throughput on a machine of n CPU cores (actors
// placed by HEFT, firing costs from the graph; the synthetic actors
// named in burns as their busy loops last on the calibrated host) and
// sets it beside the measured run.
func compare(g *graph.Graph, n int, burns []string, run *RunJSON) (*CompareJSON, error) {
	flat, err := g.Flatten()
	if err != nil {
		return nil, err
	}
	rv, err := analysis.RepetitionVector(flat)
	if err != nil {
		return nil, fmt.Errorf("repetition vector: %v", err)
	}
	mach, what, err := predictionMachine(n)
	if err != nil {
		return nil, err
	}
	out := &CompareJSON{Machine: what}
	res, err := predict(flat, mach, calibrate.SyntheticBurn(mach, burns))
	if err != nil {
		out.Notes = append(out.Notes, "no prediction: "+err.Error())
		res = &sim.Result{}
	} else {
		out.Simulated = res.Iterations
		out.Notes = append(out.Notes, res.Notes...)
	}
	if !math.IsInf(res.Throughput, 0) {
		out.Graph.Predicted = res.Throughput
	} else {
		out.Notes = append(out.Notes, "every cost is zero: the predicted throughput is unbounded")
	}
	measured := map[string]int64{}
	var secs float64
	if run != nil && run.ElapsedNS > 0 {
		secs = float64(run.ElapsedNS) / 1e9
		for _, a := range run.Actors {
			measured[a.Name] = a.Firings
		}
	}
	iters := math.Inf(1)
	for _, a := range flat.Actors {
		q := rv.Firings[a.Name]
		ar := ActorRateJSON{Name: a.Name, Repetitions: q}
		ar.Predicted = out.Graph.Predicted * float64(q)
		if secs > 0 {
			ar.Measured = float64(measured[a.Name]) / secs
			if q > 0 {
				iters = min(iters, float64(measured[a.Name])/float64(q))
			}
		}
		out.Actors = append(out.Actors, ar)
	}
	if secs > 0 && !math.IsInf(iters, 1) {
		out.Graph.Measured = iters / secs
	}
	return out, nil
}

// predictionMachine is the machine the prediction uses, and its words for
// the page: this host's calibrated model when `sluice calibrate` has
// cached one (the runtime's pool, with the measured costs), else a
// machine of n CPU cores with no runtime costs.
func predictionMachine(n int) (*machine.Machine, string, error) {
	if m, path, err := calibrate.Cached(); err == nil {
		return m, fmt.Sprintf("this host's calibrated model (%s, from sluice calibrate), actors placed by HEFT, costs from the graph", path), nil
	}
	m, err := machine.Parse("cpus.yaml", []byte(cpuMachine(n)))
	if err != nil {
		return nil, "", err
	}
	return m, fmt.Sprintf("%d CPU cores with no runtime costs (run sluice calibrate for this host's model), actors placed by HEFT, costs from the graph", n), nil
}

// predict simulates g on mach, long enough to reach the steady state,
// with burn's model of the synthetic actors' busy loops (nil: none).
func predict(g *graph.Graph, mach *machine.Machine, burn *sim.Burn) (*sim.Result, error) {
	m, _, err := mapping.HEFTMapping(mapping.Input{Graph: g, Machine: mach})
	if err != nil {
		return nil, err
	}
	var costs *sim.Costs
	if burn != nil {
		costs = &sim.Costs{Burn: burn}
	}
	prog, err := sim.Build(g, m, mach, costs, sim.Options{})
	if err != nil {
		return nil, err
	}
	return sim.Run(prog, sim.Config{Iterations: max(maxSimulated, sim.SteadyIterations(prog))})
}

// cpuMachine is the YAML of a machine of n CPU cores sharing one link that
// costs nothing (a shared-memory host; times in seconds).
func cpuMachine(n int) string {
	var b strings.Builder
	b.WriteString("name: cpus\nprocessors:\n")
	var names []string
	for i := range max(n, 1) {
		fmt.Fprintf(&b, "  cpu%d: {kind: cpu, clock: 1Hz, io: true}\n", i)
		names = append(names, fmt.Sprintf("cpu%d", i))
	}
	if len(names) > 1 {
		fmt.Fprintf(&b, "interconnects:\n  memory: {elements: [%s], clock: 1Hz, start_latency: 0, start_cost: 0, bandwidth: 0, finish_cost: 0, channels: %d}\n",
			strings.Join(names, ", "), len(names))
	}
	return b.String()
}
