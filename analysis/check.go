package analysis

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/graph"
)

// CheckOptions tunes Check.
type CheckOptions struct {
	// NoThroughput skips the throughput figures even when costs are given.
	NoThroughput bool
	// NoSchedule skips the looped single-processor schedule.
	NoSchedule bool
	// ThroughputBudget bounds the search for throughput-optimal buffers;
	// 0 means DefaultThroughputBudget, < 0 no limit. When it runs out the
	// report keeps the throughput bound and says so in a warning.
	ThroughputBudget time.Duration
}

// DefaultThroughputBudget is Check's default time for the throughput-optimal
// buffer search.
const DefaultThroughputBudget = 2 * time.Second

// Report is everything `sluice check` prints, ready for JSON.
type Report struct {
	Graph  string   `json:"graph"`
	Valid  bool     `json:"valid"`
	Errors []string `json:"errors"`
	// Consistent is true when the balance equations have a solution;
	// Inconsistency, when they have none, is the two paths (or the cycle)
	// whose rates disagree.
	Consistent    bool               `json:"consistent"`
	Inconsistency *InconsistentError `json:"inconsistency,omitempty"`
	Repetitions   map[string]int64   `json:"repetitions"`
	// Skipped lists dynamic (KPN) actors left out of the analysis.
	Skipped []string `json:"skipped,omitempty"`
	// Deadlock is true when one iteration cannot complete with the given
	// capacities and initial tokens; Cycles, Initialize, Enlarge and
	// Blocked then say where and what to change (see DeadlockResult).
	Deadlock   bool           `json:"deadlock"`
	Cycles     [][]string     `json:"cycles,omitempty"`
	Initialize map[string]int `json:"initialize,omitempty"`
	Enlarge    map[string]int `json:"enlarge,omitempty"`
	Blocked    []string       `json:"blocked,omitempty"`
	// BlockedActors is Blocked as data (actor, channel, state).
	BlockedActors []BlockedActor `json:"blocked_actors,omitempty"`
	// Buffers are locally minimal deadlock-free capacities (see
	// MinimalBuffers). When the graph deadlocks for lack of initial tokens
	// they are computed for the graph with Initialize applied (a warning
	// says so).
	Buffers map[string]int `json:"buffers"`
	// ThroughputBuffers reach the unbounded-capacity period; PeriodNS and
	// IterationsPerSecond are that period, given only when actors have
	// costs.
	ThroughputBuffers   map[string]int `json:"throughput_buffers,omitempty"`
	PeriodNS            float64        `json:"period_ns,omitempty"`
	IterationsPerSecond float64        `json:"iterations_per_second,omitempty"`
	// Critical lists the actors that set the period (see
	// Throughput.Critical): the ones to speed up.
	Critical []string `json:"critical,omitempty"`
	// Schedule is a looped single-processor schedule of one iteration.
	Schedule []Loop   `json:"schedule,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Branches gives, per conditional pattern actor, each branch's inner
	// firings per firing of the pattern (the pattern itself counts as one
	// SDF actor in Repetitions).
	Branches map[string][]map[string]int64 `json:"branches,omitempty"`
	// Pipeline is the pipeline-model report, for a graph with roles
	// (see CheckPipeline); nil otherwise.
	Pipeline *PipelineReport `json:"pipeline,omitempty"`
}

// Check validates g and runs the analyses in order: balance equations,
// deadlock with the given capacities, minimal buffers, a single-processor
// schedule and, when some actor has a cost, the throughput and the
// throughput-optimal buffers. It stops at the first failing stage
// (invalid graph, inconsistent rates); every problem is a string in
// Errors saying what was expected, what was found and where.
func Check(g *graph.Graph, opts CheckOptions) *Report {
	r := &Report{Errors: []string{}}
	if g == nil {
		r.Errors = append(r.Errors, "no graph")
		return r
	}
	r.Graph = g.Name
	if err := g.Validate(); err != nil {
		r.Errors = append(r.Errors, graph.ErrorLines(err)...)
		return r
	}
	r.Valid = true
	var perr []string
	if r.Branches, perr = checkPatterns(g); len(perr) > 0 {
		r.Errors = append(r.Errors, perr...)
		return r
	}
	rv, err := RepetitionVector(g)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		var ie *InconsistentError
		if errors.As(err, &ie) {
			r.Inconsistency = ie
		}
		return r
	}
	r.Consistent = true
	r.Repetitions = rv.Firings
	r.Skipped = rv.Skipped
	if len(rv.Skipped) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("dynamic (KPN) actors left out of the static analysis: %v; channels touching them are unconstrained: %v", rv.Skipped, rv.Unconstrained))
	}
	m, err := build(g)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	q, err := m.targets(rv)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	d, err := m.deadlock(q)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	r.Deadlock, r.Cycles, r.Initialize, r.Enlarge, r.Blocked = d.Deadlock, d.Cycles, d.Initialize, d.Enlarge, d.Blocked
	r.BlockedActors = d.BlockedActors
	add := make([]int64, len(m.chans))
	if len(d.Initialize) > 0 {
		for i, c := range m.chans {
			add[i] = int64(d.Initialize[c.name])
		}
		r.Warnings = append(r.Warnings, "buffers are given for the graph with the suggested initial tokens added")
	}
	init := m.initOf(add)
	caps, err := m.minimalBuffers(q, init)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	r.Buffers = m.capMap(caps)
	if r.Deadlock {
		return r
	}
	if !opts.NoSchedule {
		if ls, err := LoopedSchedule(g, rv); err == nil {
			r.Schedule = ls
		} else {
			r.Warnings = append(r.Warnings, "schedule: "+err.Error())
		}
	}
	if _, unit := m.costs(); !unit && !opts.NoThroughput {
		budget := opts.ThroughputBudget
		if budget == 0 {
			budget = DefaultThroughputBudget
		}
		tb, th, err := ThroughputBuffersWithin(g, rv, max(budget, 0))
		if errors.Is(err, ErrPartlyLowered) {
			limit := "the search's 500 evaluations"
			if errors.Is(err, ErrTimeBudget) {
				limit = fmt.Sprintf("%s (allow more time with --budget)", budget)
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("throughput-optimal capacities lowered only in part within %s: those given reach the period, smaller ones may too", limit))
			err = nil
		}
		if err != nil {
			msg := "throughput: " + err.Error()
			if errors.Is(err, ErrTimeBudget) {
				msg = fmt.Sprintf("throughput-optimal capacities not found within %s (the period bound above holds; allow more time with --budget)", budget)
			}
			r.Warnings = append(r.Warnings, msg)
			if th0, err := ThroughputBound(g, rv, nil); err == nil {
				r.PeriodNS, r.IterationsPerSecond, r.Critical = th0.PeriodNS, th0.IterationsPerSecond, th0.Critical
			}
		} else {
			r.ThroughputBuffers = tb
			r.PeriodNS, r.IterationsPerSecond, r.Critical = th.PeriodNS, th.IterationsPerSecond, th.Critical
		}
	}
	return r
}
