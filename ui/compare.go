package ui

import (
	"context"
	"fmt"
	"math"
	"net/http"
	goruntime "runtime"
	"strings"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/sim"
)

// CompareJSON is the answer of GET /api/run/compare: for the last run, the
// simulator's predicted throughput beside the runtime's measured one, for
// the graph (iterations/s) and per actor (firings/s).
type CompareJSON struct {
	// Machine describes the model the prediction used.
	Machine string `json:"machine"`
	// Simulated is the number of iterations simulated.
	Simulated int64    `json:"simulated"`
	Graph     RatePair `json:"graph"`
	// Placement is the plan predicted: each actor's processor of the model.
	Placement map[string]string `json:"placement,omitempty"`
	Actors    []ActorRateJSON   `json:"actors"`
	Notes     []string          `json:"notes,omitempty"`
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
	p, workers, running := s.ctl.prepared, s.ctl.workers, s.ctl.running
	s.ctl.mu.Unlock()
	switch {
	case running:
		writeErr(w, http.StatusConflict, "the run is going on: the comparison comes when it ends")
		return
	case p == nil:
		writeErr(w, http.StatusNotFound, "no run to compare: start one with POST /api/run/start")
		return
	}
	s.Live.mu.Lock()
	last := s.Live.last
	s.Live.mu.Unlock()
	mach, err := s.predictionMachine(workers)
	if err != nil {
		writeErr(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	out, err := compare(r.Context(), p, mach, last)
	if err != nil {
		writeErr(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// compare predicts the prepared graph's throughput on mach with the
// driver (the prediction sluice simulate makes for the graph and the
// model) and sets it beside the measured run.
func compare(ctx context.Context, p *driver.Prepared, mach *driver.Machine, run *RunJSON) (*CompareJSON, error) {
	flat, err := p.Graph.Flatten()
	if err != nil {
		return nil, err
	}
	rv, err := analysis.RepetitionVector(flat)
	if err != nil {
		return nil, fmt.Errorf("repetition vector: %v", err)
	}
	out := &CompareJSON{Machine: mach.From + ", actors placed by HEFT, costs from the graph"}
	res := &sim.Result{}
	if pr, err := driver.Predict(ctx, p, driver.PredictOptions{Machine: mach}); err != nil {
		out.Notes = append(out.Notes, "no prediction: "+err.Error())
	} else {
		res = pr.Result
		out.Simulated, out.Placement = res.Iterations, pr.Placement
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

// predictionMachine is the model the workbench predicts with: the
// server's (Server.Machine), else this host's calibrated model when sluice
// calibrate cached one, else a machine of n CPU cores with no runtime
// costs.
func (s *Server) predictionMachine(n int) (*driver.Machine, error) {
	if s.Machine != nil {
		return s.Machine, nil
	}
	if m, err := driver.HostMachine(); err == nil {
		m.From = fmt.Sprintf("this host's calibrated model (%s, from sluice calibrate)", strings.TrimPrefix(m.From, "calibrated model "))
		return m, nil
	}
	return driver.CPUMachine(n)
}

// report is check's report of g for the page, its throughput the
// driver's prediction on the workbench's model (the number the run's
// comparison shows) where the analysis finds one: the findings and the
// tables never disagree.
func (s *Server) report(g *graph.Graph) *analysis.Report {
	rep := analysis.Check(g, s.Check)
	if !rep.Valid || !rep.Consistent || rep.Deadlock || rep.IterationsPerSecond == 0 {
		return rep
	}
	ctx := context.Background()
	p, err := driver.Prepare(ctx, &driver.Loaded{Path: g.Origin, Graph: g}, driver.PrepareOptions{NoCheck: true})
	if err != nil {
		return rep
	}
	mach, err := s.predictionMachine(goruntime.GOMAXPROCS(0))
	if err != nil {
		return rep
	}
	pr, err := driver.Predict(ctx, p, driver.PredictOptions{Machine: mach})
	if err != nil || !(pr.Throughput() > 0) || math.IsInf(pr.Throughput(), 0) {
		return rep
	}
	rep.IterationsPerSecond, rep.PeriodNS = pr.Throughput(), 1e9/pr.Throughput()
	return rep
}
