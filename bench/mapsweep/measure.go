package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sluicehq/sluice/actors"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
)

// load reads the graph file afresh (a run consumes its graph) and gives
// actors without an implementation a synthetic one.
func load(file string) (*graph.Graph, error) {
	g, err := driver.LoadGraph(context.Background(), file, driver.Options{})
	if err != nil {
		return nil, err
	}
	actors.Synthesize(g)
	return g, nil
}

// run is one measured run of a mapping.
type run struct {
	// whole is iterations over the run's elapsed time; steady the rate
	// after every actor has done a tenth of its firings (start-up and
	// kernel compilation left out), both in iterations per second.
	whole, steady float64
	profile       *sim.Profile // mean firing times (s), kernel actors' G and device mode
	raw           []byte       // the profile as Stats.WriteProfile wrote it
	iters         int64        // iterations of the measured run
}

// lengthen is the iterations of a measured run: iters, or more where the
// warm-up's rate says the run would last less than minTime (at most 50 ×
// iters).
func lengthen(iters, warm int64, warmTook, minTime time.Duration) int64 {
	if warm <= 0 || warmTook <= 0 || minTime <= 0 {
		return iters
	}
	want := int64(float64(warm) / warmTook.Seconds() * minTime.Seconds())
	return min(max(iters, want), 50*iters)
}

// measure runs the graph with mapping m (capacity: channel capacities in
// tokens where the mapping search assumed some; nil: the runtime's): a
// warm-up run, then a run of iters iterations (more if it would last less
// than minTime) whose throughput and profile it returns; kernel actors'
// invocations are enqueued by mode ("": the runtime's default).
func measure(ctx context.Context, file string, m *graph.Mapping, capacity map[string]int, workers int, warm, iters int64, minTime time.Duration, mode runtime.DeviceMode) (run, error) {
	var r run
	opts := runtime.Options{Mapping: m, Workers: workers, DeviceMode: mode}
	if len(capacity) > 0 {
		opts.DefaultCapacity = func(c *graph.Channel) int { return capacity[c.Name] }
	}
	if warm > 0 {
		g, err := load(file)
		if err != nil {
			return r, err
		}
		opts.Iterations = warm
		st, err := runtime.Run(ctx, g, opts)
		if err != nil {
			return r, fmt.Errorf("%s, mapping %s: warm-up run: %w", file, describe(m), err)
		}
		iters = lengthen(iters, warm, st.Elapsed, minTime)
	}
	g, err := load(file)
	if err != nil {
		return r, err
	}
	var tenth steadyMark
	opts.Iterations, opts.ProgressInterval, opts.Progress = iters, 5*time.Millisecond, tenth.observe
	st, err := runtime.Run(ctx, g, opts)
	if err != nil {
		return r, fmt.Errorf("%s, mapping %s: measured run: %w", file, describe(m), err)
	}
	r.iters = iters
	r.whole = float64(iters) / st.Elapsed.Seconds()
	r.steady = tenth.rate(iters, st.Elapsed)
	var buf bytes.Buffer
	if err := st.WriteProfile(&buf); err != nil {
		return r, err
	}
	prof, err := sim.ParseProfileFull(file+" (profile)", buf.Bytes())
	if err != nil {
		return r, err
	}
	r.profile, r.raw = prof, buf.Bytes()
	return r, nil
}

// steadyMark remembers when the slowest actor reached a tenth of its
// firings.
type steadyMark struct {
	mu   sync.Mutex
	at   time.Duration
	frac float64
}

func (s *steadyMark) observe(sn runtime.Snapshot) {
	lo := math.Inf(1)
	for _, a := range sn.Actors {
		if a.Target > 0 {
			lo = min(lo, float64(a.Firings)/float64(a.Target))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == 0 && lo >= 0.1 && !math.IsInf(lo, 1) {
		s.at, s.frac = sn.Elapsed, lo
	}
}

// rate is the iterations per second after the mark (the whole run's rate
// when no snapshot passed a tenth before the end).
func (s *steadyMark) rate(iters int64, elapsed time.Duration) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at <= 0 || s.frac >= 1 || elapsed <= s.at {
		return float64(iters) / elapsed.Seconds()
	}
	return (1 - s.frac) * float64(iters) / (elapsed - s.at).Seconds()
}

// prediction is the simulator's view of a mapping.
type prediction struct {
	whole, steady float64 // iterations over makespan; 1 / period
}

// predict simulates iters iterations of the graph with mapping m on the
// model with the given costs and capacities (nil: the simulator's
// defaults, which are the runtime's).
func predict(file string, m *graph.Mapping, mach *machine.Machine, costs *sim.Costs, capacity map[string]int, iters int64) (prediction, error) {
	var p prediction
	g, err := load(file)
	if err != nil {
		return p, err
	}
	prog, err := sim.Build(g, m, mach, costs, sim.Options{Capacity: capacity})
	if err != nil {
		return p, err
	}
	res, err := sim.Run(prog, sim.Config{Iterations: iters, Seed: 1})
	if err != nil {
		return p, err
	}
	if res.Makespan <= 0 || res.Period <= 0 {
		return p, fmt.Errorf("%s, mapping %s: simulated makespan %g s, period %g s: expected positive times", file, describe(m), res.Makespan, res.Period)
	}
	return prediction{whole: float64(iters) / res.Makespan, steady: res.Throughput}, nil
}
