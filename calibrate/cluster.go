package calibrate

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	_ "github.com/sluicehq/sluice/actors" // the built-ins the probes ship to workers
	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
)

// ClusterOptions say which broker tree to measure and how long.
type ClusterOptions struct {
	// Broker is the URL of a broker of the tree (nats://host:port).
	Broker string
	// Creds are the credentials the broker asks for.
	Creds cluster.Credentials
	// Workers names the workers to measure; empty: every worker the tree
	// shows.
	Workers []string
	// Hops is the number of round trips of the hop-latency probe (default
	// 500, at least 10).
	Hops int64
	// Bytes is what one round of the bandwidth probe moves (default 64 MiB,
	// rounded down to whole 256 KiB firings, at least one).
	Bytes int64
	// Rounds is the number of bandwidth rounds; their median is kept
	// (default 3).
	Rounds int
	// Log receives one line per measurement (nil: none).
	Log func(format string, args ...any)
}

// Link is what the probes measured between this host (the client) and one
// worker, through the cluster runtime's cross-machine channels.
type Link struct {
	// Worker is the worker's name; Units its CPU pool (the compute units
	// of its cpu device, the host's workers when it lends none).
	Worker string `json:"worker"`
	Units  int    `json:"units"`
	// Transport is the data path the client's executor takes: "tcp"
	// (direct streams, the worker has a data listener) or "nats".
	Transport string `json:"transport"`
	// HopNs is half the round trip of one 4-byte token client → worker →
	// client (a ping actor here, an echo actor there, capacity 1),
	// measured between the ping's first and last firings.
	HopNs float64 `json:"hop_ns"`
	// Bandwidth is bytes per second of a stream client → worker (256 KiB
	// firings, a 1 MiB channel), the median of the rounds.
	Bandwidth float64 `json:"bandwidth_bytes_per_s"`
	// StartLatencyNs is the link's start latency L in the model: the L
	// whose simulated hop probe (on the model, with the firings, rounds,
	// spinning and wake-ups of both pools) comes nearest HopNs.
	StartLatencyNs float64 `json:"start_latency_ns"`
}

// The probes' shapes.
const (
	bwFiring = 256 << 10 // bytes per firing of the bandwidth probe
	bwWindow = 1 << 20   // its channel capacity in bytes
	// linkClockHz is the clock of a worker link: a cycle is a microsecond,
	// so a bandwidth in bytes per cycle keeps 3 to 4 digits on loopback and
	// a latency rounds to a microsecond.
	linkClockHz = 1e6
)

// Cluster measures every worker of the tree at opt.Broker (or those named)
// and adds one Link per worker to r, the host's calibration: the per-hop
// latency and the bandwidth of a cross-machine channel, measured with real
// sluice graphs, a probe actor on this host and a built-in on the worker.
// The link's start latency is fitted with the simulator on r's model, so
// that the model predicts the hop latency it was given.
func (r *Result) Cluster(ctx context.Context, opt ClusterOptions) error {
	if r.Host == nil {
		return fmt.Errorf("calibrate: cluster: the host was not measured: expected a Result of Run")
	}
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	cl, err := cluster.Connect(ctx, opt.Broker, opt.Creds)
	if err != nil {
		return fmt.Errorf("calibrate: cluster: %w", err)
	}
	defer cl.Close()
	ws, err := pickWorkers(ctx, cl, opt.Workers)
	if err != nil {
		return err
	}
	ex := cluster.NewExecutor(cl, cluster.ExecutorOptions{})
	r.Links = nil
	for _, w := range ws {
		l, err := measureLink(ctx, ex, w, r.Host.Workers, opt)
		if err != nil {
			return fmt.Errorf("calibrate: worker %s: %w", w.Name, err)
		}
		r.Links = append(r.Links, l)
	}
	for _, l := range r.Links {
		h, err := fitLatency(r, l)
		if err != nil {
			return fmt.Errorf("calibrate: worker %s: fitting the link's latency: %w", l.Worker, err)
		}
		logf("worker %s (%s, %d units): hop %.1f µs (the model's with start latency %.1f µs: %.1f µs), bandwidth %.3f GB/s",
			l.Worker, l.Transport, l.Units, l.HopNs/1e3, l.StartLatencyNs/1e3, h/1e3, l.Bandwidth/1e9)
	}
	return nil
}

// fitLatency sets l.StartLatencyNs to the start latency, between 0 and
// the measured hop, whose simulated hop probe comes nearest the measured
// hop (bisection: the simulated hop grows with the latency, by steps where
// a longer wait parks a unit that then pays its wake-up), and returns the
// simulated hop.
func fitLatency(r *Result, l *Link) (float64, error) {
	l.StartLatencyNs = 0
	h0, err := simulatedHop(r, l.Worker)
	if err != nil || h0 >= l.HopNs {
		return h0, err // the model's hop is long enough without latency
	}
	lo, hi := 0.0, l.HopNs
	best, bestHop := 0.0, h0
	for range 24 {
		mid := (lo + hi) / 2
		l.StartLatencyNs = mid
		h, err := simulatedHop(r, l.Worker)
		if err != nil {
			return 0, err
		}
		if math.Abs(h-l.HopNs) < math.Abs(bestHop-l.HopNs) {
			best, bestHop = mid, h
		}
		if h > l.HopNs {
			hi = mid
		} else {
			lo = mid
		}
		if hi-lo < 500 { // the link's clock counts µs
			break
		}
	}
	l.StartLatencyNs = best
	return bestHop, nil
}

// pickWorkers returns the workers named (all when none is), sorted by
// name, or an error naming those the tree does not show.
func pickWorkers(ctx context.Context, cl *cluster.Client, names []string) ([]cluster.WorkerInfo, error) {
	all, err := cl.Workers(ctx)
	if err != nil {
		return nil, fmt.Errorf("calibrate: cluster: %w", err)
	}
	slices.SortFunc(all, func(a, b cluster.WorkerInfo) int { return strings.Compare(a.Name, b.Name) })
	if len(names) == 0 {
		if len(all) == 0 {
			return nil, fmt.Errorf("calibrate: cluster: the broker tree shows no worker: expected at least one (start sluice worker --broker URL)")
		}
		return all, nil
	}
	var out []cluster.WorkerInfo
	var known, missing []string
	for _, w := range all {
		known = append(known, w.Name)
		if slices.Contains(names, w.Name) {
			out = append(out, w)
		}
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("calibrate: cluster: no worker %s in the tree: expected one of %s", strings.Join(missing, ", "), strings.Join(known, ", "))
	}
	return out, nil
}

// measureLink runs the hop-latency and bandwidth probes against worker w.
func measureLink(ctx context.Context, ex *cluster.Executor, w cluster.WorkerInfo, hostUnits int, opt ClusterOptions) (*Link, error) {
	l := &Link{Worker: w.Name, Units: hostUnits, Transport: "nats"}
	if w.DataAddr != "" {
		l.Transport = "tcp"
	}
	for _, d := range w.Devices {
		if d.Kind == device.CPU && d.ComputeUnits > 0 {
			l.Units = d.ComputeUnits
			break
		}
	}
	hops := opt.Hops
	if hops <= 0 {
		hops = 500
	}
	var err error
	if l.HopNs, err = HopLatency(ctx, ex, w.Name, max(hops, 10)); err != nil {
		return nil, err
	}
	rounds := opt.Rounds
	if rounds <= 0 {
		rounds = 3
	}
	bytes := opt.Bytes
	if bytes <= 0 {
		bytes = 64 << 20
	}
	var bw []float64
	for range rounds {
		b, err := Bandwidth(ctx, ex, w.Name, bytes)
		if err != nil {
			return nil, err
		}
		bw = append(bw, b)
	}
	l.Bandwidth = median(bw)
	return l, nil
}

// placeOn maps actor a onto worker's CPU.
func placeOn(a, worker string) *graph.Mapping {
	return &graph.Mapping{Actors: map[string]*graph.Placement{a: {Device: "worker:" + worker + "/cpu"}}}
}

// HopLatency runs ping ⇄ echo with one f32 token in the loop, ping on this
// host and echo (the built-in scale, gain 1) on the worker, for hops round
// trips, and returns half the mean round trip in nanoseconds, between the
// ping's first and last firings (placement and connection setup are not
// measured).
func HopLatency(ctx context.Context, ex runtime.RemoteExecutor, worker string, hops int64) (float64, error) {
	if hops < 2 {
		return 0, fmt.Errorf("hop latency: %d round trips: expected at least 2", hops)
	}
	g, first, last := pingEcho(graph.Impl{Kind: graph.ImplBuiltin, Source: "scale", Params: map[string]any{"gain": 1.0}})
	if _, err := runtime.Run(ctx, g, runtime.Options{Iterations: hops, Mapping: placeOn("echo", worker), Remote: ex}); err != nil {
		return 0, fmt.Errorf("hop latency probe: %w", err)
	}
	return float64(last().Sub(first()).Nanoseconds()) / float64(hops-1) / 2, nil
}

// pingEcho is the hop probe: ping sends the count of tokens it has seen
// back, echo returns it; capacity 1 both ways, one initial token on the
// way back. first and last tell the ping's first and last firing times.
func pingEcho(echo graph.Impl) (g *graph.Graph, first, last func() time.Time) {
	f32 := graph.MustTokenType("f32")
	g = graph.New("calibrate-hop")
	var seen float32
	var t0, t1 time.Time
	ping := g.AddActor("ping", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(f *runtime.Firing) error {
		now := time.Now()
		if t0.IsZero() {
			t0 = now
		}
		t1 = now
		if v := math.Float32frombits(binary.LittleEndian.Uint32(f.In(0))); v != seen {
			return fmt.Errorf("token %g came back, expected %g", v, seen)
		}
		seen++
		binary.LittleEndian.PutUint32(f.Out(0), math.Float32bits(seen))
		return nil
	})))
	e := g.AddActor("echo", graph.WithImpl(echo))
	g.Join(ping.AddPort("y", graph.Out, f32, graph.SDF(1), ""), e.AddPort("x", graph.In, f32, graph.SDF(1), ""), graph.Capacity(1))
	g.Join(e.AddPort("y", graph.Out, f32, graph.SDF(1), ""), ping.AddPort("x", graph.In, f32, graph.SDF(1), ""), graph.Capacity(1), graph.Initial(1))
	return g, func() time.Time { return t0 }, func() time.Time { return t1 }
}

// Bandwidth moves n bytes (whole 256 KiB firings, at least one) from a
// source on this host to the worker through a channel of 1 MiB, where the
// built-in decimate keeps one byte of each firing and sends it back, and
// returns bytes per second from the source's first firing to the end of
// the run.
func Bandwidth(ctx context.Context, ex runtime.RemoteExecutor, worker string, n int64) (float64, error) {
	iters := max(1, n/bwFiring)
	u8 := graph.MustTokenType("u8")
	g := graph.New("calibrate-bandwidth")
	var t0 time.Time
	src := g.AddActor("src", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(*runtime.Firing) error {
		if t0.IsZero() {
			t0 = time.Now()
		}
		return nil
	})))
	dec := g.AddActor("take", graph.WithImpl(graph.Impl{Kind: graph.ImplBuiltin, Source: "decimate", Params: map[string]any{"factor": bwFiring}}))
	var got int64
	sink := g.AddActor("sink", graph.Stateful(), graph.WithFunc(runtime.FireFunc(func(*runtime.Firing) error {
		got++
		return nil
	})))
	g.Join(src.AddPort("y", graph.Out, u8, graph.SDF(bwFiring), ""), dec.AddPort("x", graph.In, u8, graph.SDF(bwFiring), ""), graph.Capacity(bwWindow))
	g.Join(dec.AddPort("y", graph.Out, u8, graph.SDF(1), ""), sink.AddPort("x", graph.In, u8, graph.SDF(1), ""))
	if _, err := runtime.Run(ctx, g, runtime.Options{Iterations: iters, Mapping: placeOn("take", worker), Remote: ex}); err != nil {
		return 0, fmt.Errorf("bandwidth probe: %w", err)
	}
	d := time.Since(t0)
	if got != iters {
		return 0, fmt.Errorf("bandwidth probe: the sink fired %d times: expected %d", got, iters)
	}
	return float64(iters*bwFiring) / d.Seconds(), nil
}

// simulatedHop simulates the hop probe on r's model (the links with their
// start latencies as they stand) and returns half the simulated round trip
// in ns.
func simulatedHop(r *Result, worker string) (float64, error) {
	m := r.Model()
	if m.Interconnect(linkName(m, worker)) == nil {
		return 0, fmt.Errorf("the model has no link to worker %s", worker)
	}
	g, _, _ := pingEcho(graph.Impl{Kind: graph.ImplGo, Source: "calibrate.echo"})
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"ping": {Device: "cpu"}, "echo": {Device: "worker:" + worker + "/cpu"}}}
	p, err := sim.Build(g, mp, m, nil, sim.Options{})
	if err != nil {
		return 0, err
	}
	res, err := sim.Run(p, sim.Config{Iterations: 200})
	if err != nil {
		return 0, err
	}
	return res.Period * 1e9 / 2, nil
}

// workerProcName is the model's processor for a worker's CPU: its name, or
// NAME-cpu when the name is taken by another element of the host's model.
func workerProcName(m *machine.Machine, worker string) string {
	if m.Processor(worker) == nil && m.Memory(worker) == nil && m.Interconnect(worker) == nil {
		return worker
	}
	return worker + "-cpu"
}

// linkName is the interconnect between the host's cpu and a worker.
func linkName(m *machine.Machine, worker string) string {
	for _, ic := range m.Interconnects {
		if ic.Credits && strings.TrimPrefix(ic.Name, "net-") == worker {
			return ic.Name
		}
	}
	return "net-" + worker
}

// addLinks adds each link's worker to m as a processor (a copy of the
// host's pool processor cpu with the worker's units: its costs are taken
// to be the host's) joined to cpu by a credit link "net-NAME" (clock
// 1 MHz: start latency in µs, bandwidth in bytes per µs; one channel per
// direction; cpu relays store-and-forward, as the client relays streams
// between workers).
func addLinks(m *machine.Machine, links []*Link, calib map[string]string) {
	cpu := m.Processor("cpu")
	for _, l := range links {
		wp := *cpu
		wp.Name, wp.Units, wp.AddressSpace = workerProcName(m, l.Worker), max(1, l.Units), nil
		m.Processors = append(m.Processors, &wp)
		m.Interconnects = append(m.Interconnects, &machine.Interconnect{Name: "net-" + l.Worker, ClockHz: linkClockHz,
			Elements: []string{"cpu", wp.Name}, StartLatency: int64(math.Round(l.StartLatencyNs / 1e3)),
			Bandwidth: max(1, int64(math.Round(l.Bandwidth/linkClockHz))), Channels: 2, Multiplexable: true, Credits: true,
			Routing: map[string]machine.Routing{"cpu": machine.StoreAndForward}})
		p := "worker_" + sanitize(l.Worker) + "_"
		f := func(v float64) string { return fmt.Sprintf("%.4g", v) }
		calib[p+"transport"], calib[p+"units"] = l.Transport, fmt.Sprint(l.Units)
		calib[p+"hop_ns"], calib[p+"start_latency_ns"] = f(l.HopNs), f(l.StartLatencyNs)
		calib[p+"bandwidth_gb_s"] = f(l.Bandwidth / 1e9)
	}
}
