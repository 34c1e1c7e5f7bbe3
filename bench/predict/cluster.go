package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"time"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/sim"
)

// The -cluster mode: a graph spread over this process (the client) and
// two worker processes, children of this program, joined through an
// in-process broker, all on 127.0.0.1.

// workerEnv, when set in the environment, makes this program a worker:
// its value is "URL NAME" (the broker and the worker's name).
const workerEnv = "SLUICE_PREDICT_WORKER"

// ClusterConfig is what one -cluster comparison does.
type ClusterConfig struct {
	// Graph and Mapping are the graph file and the mapping file that
	// places its actors on workers w1 and w2.
	Graph, Mapping string
	// Warmup and Iterations are the iterations of the discarded warm-up
	// run and of the profiled and measured runs.
	Warmup, Iterations int64
	// Reps is the number of repetitions whose medians are reported.
	Reps int
	// Cluster says how long the cluster calibration probes run (its
	// Broker is filled in).
	Cluster calibrate.ClusterOptions
	// Log receives progress lines (nil: none).
	Log func(format string, args ...any)
	// Host is this host's calibration, which the cluster's links are
	// added to (a copy: Host is not changed); nil: calibrate the host now.
	Host *calibrate.Result
}

// ClusterResult is a -cluster comparison. Throughputs are in iterations
// per second; errors are 100 × (predicted − measured) / measured.
type ClusterResult struct {
	Graph      string `json:"graph"`
	Mapping    string `json:"mapping"`
	Iterations int64  `json:"iterations"`
	Reps       int    `json:"reps"`
	// Links are the calibrated worker links.
	Links []*calibrate.Link `json:"links"`
	// The measured throughput of a fresh run, the profiled run's own, and
	// the predictions from the profiled run's profile and from the graph's
	// declared costs.
	Figures
	// Availability is the share of the time GOMAXPROCS goroutines spinning
	// on the clock ran, before the comparison (1 on an idle host).
	Availability float64 `json:"availability"`
	CPU          string  `json:"cpu"`
	NumCPU       int     `json:"num_cpu"`
}

// workerMain runs this process as a cluster worker named by spec ("URL
// NAME") until ctx ends: the host's CPU lent, direct TCP data streams on
// loopback.
func workerMain(ctx context.Context, spec string) error {
	var url, name string
	if _, err := fmt.Sscan(spec, &url, &name); err != nil {
		return fmt.Errorf("%s=%q: expected \"URL NAME\": %w", workerEnv, spec, err)
	}
	w, err := cluster.StartWorker(ctx, cluster.WorkerOptions{Broker: url, Name: name, DataListen: "127.0.0.1:0",
		Devices: []device.Info{{ID: "cpu", Backend: "cpu", Name: "host cpu", Kind: device.CPU, ComputeUnits: goruntime.GOMAXPROCS(0)}}})
	if err != nil {
		return err
	}
	defer w.Close()
	<-ctx.Done()
	return nil
}

// startCluster starts a broker on 127.0.0.1 and workers w1 … wN as child
// processes of this program, and waits (up to 20 s) until the tree shows
// them. stop ends them all.
func startCluster(ctx context.Context, n int) (url string, stop func(), err error) {
	b, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "predict", Listen: "127.0.0.1:0"})
	if err != nil {
		return "", nil, err
	}
	url = b.ClientURL()
	exe, err := os.Executable()
	if err != nil {
		b.Shutdown()
		return "", nil, err
	}
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Signal(os.Interrupt)
		}
		for _, c := range cmds {
			_ = c.Wait()
		}
		b.Shutdown()
	}
	for i := range n {
		c := exec.Command(exe, "-test.run=^$")
		c.Env = append(os.Environ(), fmt.Sprintf("%s=%s w%d", workerEnv, url, i+1))
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			stop()
			return "", nil, err
		}
		cmds = append(cmds, c)
	}
	if err := waitWorkers(ctx, url, n); err != nil {
		stop()
		return "", nil, err
	}
	return url, stop, nil
}

// waitWorkers polls the tree at url until it shows n workers (20 s at
// most).
func waitWorkers(ctx context.Context, url string, n int) error {
	cl, err := cluster.Connect(ctx, url, cluster.Credentials{})
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		ws, _ := cl.Workers(ctx)
		if len(ws) == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d workers joined the broker at %s within 20 s", len(ws), n, url)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// CompareCluster starts the cluster, calibrates it (host and links), and
// compares, cfg.Reps times, the measured throughput of the graph spread
// over the workers by the mapping with the simulator's predictions.
func CompareCluster(ctx context.Context, cfg ClusterConfig) (*ClusterResult, error) {
	if cfg.Iterations <= 0 || cfg.Reps <= 0 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("iterations %d, reps %d, warm-up %d: expected iterations and reps > 0, warm-up ≥ 0", cfg.Iterations, cfg.Reps, cfg.Warmup)
	}
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	url, stop, err := startCluster(ctx, 2)
	if err != nil {
		return nil, err
	}
	defer stop()
	res := &ClusterResult{Graph: cfg.Graph, Mapping: cfg.Mapping, Iterations: cfg.Iterations, Reps: cfg.Reps,
		CPU: calibrate.CPUModel(), NumCPU: goruntime.NumCPU(),
		Availability: calibrate.Availability(goruntime.GOMAXPROCS(0), 50*time.Millisecond)}
	var cal *calibrate.Result
	if cfg.Host != nil {
		c := *cfg.Host // Cluster adds the links to its receiver
		cal = &c
	} else if cal, err = calibrate.Run(ctx, calibrate.Options{NoGPU: true, Log: logf}); err != nil {
		return nil, err
	}
	co := cfg.Cluster
	co.Broker, co.Log = url, logf
	if err := cal.Cluster(ctx, co); err != nil {
		return nil, err
	}
	res.Links = cal.Links
	m := cal.Model()
	cl, err := cluster.Connect(ctx, url, cluster.Credentials{})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ex := cluster.NewExecutor(cl, cluster.ExecutorOptions{})
	for rep := range cfg.Reps {
		c, err := compareClusterOnce(ctx, cfg, m, ex)
		if err != nil {
			return nil, err
		}
		logf("%s rep %d: measured %.0f it/s (profiled run %.0f); predicted from the profile %.0f it/s (%+.1f%%), from declared costs %.0f it/s (%+.1f%%)",
			cfg.Graph, rep+1, c.measured, c.sameRun, c.profile, pct(c.profile, c.measured), c.declared, pct(c.declared, c.measured))
		res.add(c)
	}
	res.summarize()
	return res, nil
}

// clusterRun runs the graph file across the cluster for iters iterations.
func clusterRun(ctx context.Context, cfg ClusterConfig, ex runtime.RemoteExecutor, iters int64) (*graph.Graph, *runtime.Stats, error) {
	g, err := driver.LoadGraph(context.Background(), cfg.Graph, driver.Options{})
	if err != nil {
		return nil, nil, err
	}
	mp, err := driver.LoadMapping(cfg.Mapping)
	if err != nil {
		return nil, nil, err
	}
	st, err := runtime.Run(ctx, g, runtime.Options{Iterations: iters, Mapping: mp, Remote: ex})
	if err != nil {
		return nil, nil, fmt.Errorf("%s across the cluster: %w", cfg.Graph, err)
	}
	return g, st, nil
}

// compareClusterOnce warms up, profiles one run, simulates it from the
// profile and from the declared costs, and measures a fresh run.
func compareClusterOnce(ctx context.Context, cfg ClusterConfig, m *machine.Machine, ex runtime.RemoteExecutor) (comparison, error) {
	var c comparison
	if cfg.Warmup > 0 {
		if _, _, err := clusterRun(ctx, cfg, ex, cfg.Warmup); err != nil {
			return c, err
		}
	}
	g, st, err := clusterRun(ctx, cfg, ex, cfg.Iterations)
	if err != nil {
		return c, err
	}
	c.sameRun = float64(cfg.Iterations) / st.Elapsed.Seconds()
	var buf bytes.Buffer
	if err := st.WriteProfile(&buf); err != nil {
		return c, err
	}
	prof, err := sim.ParseProfile(cfg.Graph+" (profile)", buf.Bytes())
	if err != nil {
		return c, err
	}
	mp, err := driver.LoadMapping(cfg.Mapping)
	if err != nil {
		return c, err
	}
	if c.profile, err = PredictMapped(g, mp, m, &sim.Costs{Profile: prof}, cfg.Iterations); err != nil {
		return c, err
	}
	if declaresCosts(g) {
		if c.declared, err = PredictMapped(g, mp, m, DeclaredCosts(m, nil), cfg.Iterations); err != nil {
			return c, err
		}
	}
	if _, st, err = clusterRun(ctx, cfg, ex, cfg.Iterations); err != nil {
		return c, err
	}
	c.measured = float64(cfg.Iterations) / st.Elapsed.Seconds()
	return c, nil
}

// PredictMapped simulates iters iterations of g placed by mp on m (a
// worker's placement worker:w1/cpu on processor w1) and returns iters over
// the simulated makespan, counted as the runtime counts its iterations.
func PredictMapped(g *graph.Graph, mp *graph.Mapping, m *machine.Machine, costs *sim.Costs, iters int64) (float64, error) {
	prog, err := sim.Build(g, mp, m, costs, sim.Options{})
	if err != nil {
		return 0, err
	}
	res, err := sim.Run(prog, sim.Config{Iterations: iters})
	if err != nil {
		return 0, err
	}
	if !(res.Makespan > 0) {
		return 0, fmt.Errorf("simulated makespan %g s for %d iterations: expected a positive time", res.Makespan, iters)
	}
	return float64(iters) / res.Makespan, nil
}
