package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/sluicehq/sluice/actors"
	_ "github.com/sluicehq/sluice/actors" // registers the built-in actors
	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device/scenario"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

type runFlags struct {
	iterations   int64
	stats        bool
	statsJSON    string
	trace        string
	profile      string
	mapping      string
	wait         string
	workers      int
	watchdog     time.Duration
	checkEmpty   bool
	progress     string
	skipAnalysis bool
	deviceMode   string
	swapMode     string
	noGraphs     bool
	deviceDepth  int
	deviceRound  int
	deviceLanes  int
	fuse         bool
	broker       string
	cred         credFlags
	metrics      string
	ui           string
	noFuseCPU    bool
	ckInterval   time.Duration // checkpoints (docs/recovery.md)
	ckDir        string
	resume       string
}

func newRun() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a graph on CPU cores, GPUs and workers",
		Long: `run loads a graph file, checks it (it refuses a graph that is invalid, has
inconsistent rates or provably deadlocks), and runs it: on the host's CPU cores,
and on the OpenCL/CUDA devices and remote workers (--broker) that --mapping
places actors on; for --iterations N iterations of the repetition vector, or
until its sources end. The graph's own output (stdout sinks) goes to standard
output; progress and statistics go to standard error.

Actors with only a declared cost: (no code yet) run as synthetic actors that
burn that cost per firing; the run says which. Graphs whose Go actors are
registered by a Go package name it with a top-level go: key; run then builds,
with the Go toolchain, a program that imports it (cached by content) and runs
the graph there with the same flags.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runGraph(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.Int64VarP(&f.iterations, "iterations", "n", 0, "run this many iterations (0: until the sources end their streams)")
	fl.BoolVar(&f.stats, "stats", false, "print per-actor and per-channel statistics at the end (standard error)")
	fl.StringVar(&f.statsJSON, "stats-json", "", "write the statistics as JSON to this file")
	fl.StringVar(&f.trace, "trace", "", "write a Chrome Trace Event JSON timeline (opens in Perfetto) to this file")
	fl.StringVar(&f.profile, "profile", "", "write measured per-actor firing times (YAML) to this file")
	fl.StringVar(&f.mapping, "mapping", "", "mapping file (replicas, priority, affinity per actor)")
	fl.StringVar(&f.wait, "wait", "spin-park", "FIFO wait strategy: spin, spin-park or park")
	fl.IntVar(&f.workers, "workers", 0, "CPU worker pool size (0: one per core)")
	fl.DurationVar(&f.watchdog, "watchdog", 0, "report a run-time deadlock after this long without progress (0: 500ms, negative: off)")
	fl.BoolVar(&f.checkEmpty, "check-empty", false, "fail if a channel holds tokens other than its initial ones at the end")
	fl.StringVar(&f.progress, "progress", "auto", "progress display: auto (bars on a terminal, lines otherwise), bars, lines, off")
	fl.BoolVar(&f.skipAnalysis, "no-check", false, "skip the static analysis before running")
	fl.StringVar(&f.deviceMode, "device-mode", "enqueue-ahead", "how kernel actors are enqueued on devices: enqueue-ahead or callback (baseline)")
	fl.StringVar(&f.swapMode, "swap-mode", "swap", "how iterated kernel actors pass swap pairs: swap, copy-device or copy-host (baselines)")
	fl.BoolVar(&f.fuse, "fuse", false, "merge each chain of element-wise kernel actors mapped onto one device into one scenario-driven kernel actor")
	fl.BoolVar(&f.noFuseCPU, "no-fuse-cpu", false, "run every CPU actor as its own scheduling unit (no fused chains of stateless actors)")
	fl.BoolVar(&f.noGraphs, "no-graphs", false, "launch GPU-resident chains kernel by kernel instead of replaying each iteration as a CUDA Graph")
	fl.IntVar(&f.deviceDepth, "device-depth", 0, "invocations of each kernel actor in flight (0: by the size of an invocation's tokens)")
	fl.IntVar(&f.deviceRound, "device-round", 0, "most invocations of each kernel actor in one round, one CUDA Graph (0: a quarter or half of the depth)")
	fl.IntVar(&f.deviceLanes, "device-lanes", 0, "most GPU streams a round's invocations are spread over (0: the device's, 1: one stream)")
	fl.StringVar(&f.broker, "broker", "", "broker URL (nats://host:port): run the actors the mapping places on workers (worker:NAME/DEVICE, any:) there")
	fl.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics of the run on this address (host:port, path /metrics) while it runs")
	fl.StringVar(&f.ui, "ui", "", "serve the ui API (GET /api/run: live progress, /metrics) on this address while it runs")
	fl.DurationVar(&f.ckInterval, "checkpoint-interval", time.Second, "time between checkpoints with --checkpoint-dir or --resume (0: none)")
	fl.StringVar(&f.ckDir, "checkpoint-dir", "", "take checkpoints of the run's state into this directory (resume with --resume DIR)")
	fl.StringVar(&f.resume, "resume", "", "continue a killed run from the last checkpoint in this directory (and go on checkpointing there)")
	f.cred.add(fl)
	return cmd
}

func runGraph(cmd *cobra.Command, path string, f runFlags) error {
	g, err := loadGraph(path)
	if err != nil {
		return err
	}
	if why := openGraph(g); why != "" {
		return fmt.Errorf("refusing to run %s: %s", path, why)
	}
	if done, err := runElsewhere(cmd, g); done || err != nil {
		return err
	}
	synthetic := actors.Synthesize(g)
	if len(synthetic) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s have no implementation: they run as synthetic actors, each firing burning the actor's declared cost on a core and writing zeros\n", names(synthetic, 8))
	}
	if !f.skipAnalysis {
		if err := refuseByAnalysis(cmd, path, g); err != nil {
			return err
		}
	}
	opts, err := runOptions(f)
	if err != nil {
		return err
	}
	if g, err = placeActors(cmd, g, &opts, f); err != nil {
		return err
	}
	cleanup, display, err := attachOutputs(cmd, path, &opts, f)
	defer cleanup()
	if err != nil {
		return err
	}
	stats, runErr := execRun(cmd, g, opts, f)
	if display != nil {
		display.finish(stats)
	}
	if runErr != nil {
		return fmt.Errorf("run %s: %w", path, runErr)
	}
	return reportRun(cmd.ErrOrStderr(), g, stats, synthetic, f)
}

// refuseByAnalysis runs check's analysis on the graph check analyses (a
// pipeline-model's initonce channels hold the application's initial
// tokens) and refuses a graph that is invalid, inconsistent or deadlocks.
func refuseByAnalysis(cmd *cobra.Command, path string, g *graph.Graph) error {
	ag := g
	if pl, err := pipelineOf(path); err == nil && pl != nil {
		ag = pl.Graph
	}
	rep := analysis.Check(ag, analysis.CheckOptions{NoThroughput: true, NoSchedule: true})
	if !rep.Valid || !rep.Consistent || rep.Deadlock {
		writeReport(cmd.ErrOrStderr(), path, rep, nil)
		return fmt.Errorf("refusing to run %s: the analysis above shows it cannot run (use --no-check to run anyway)", path)
	}
	return nil
}

// runOptions turns the run's flags into runtime options (placement,
// outputs and checkpoints come later).
func runOptions(f runFlags) (runtime.Options, error) {
	wait, err := fifo.ParseWaitStrategy(f.wait)
	if err != nil {
		return runtime.Options{}, err
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"--device-depth", f.deviceDepth}, {"--device-round", f.deviceRound}, {"--device-lanes", f.deviceLanes}} {
		if v.n < 0 {
			return runtime.Options{}, fmt.Errorf("%s %d: expected a count ≥ 0 (0: the runtime's choice)", v.name, v.n)
		}
	}
	dm, err := runtime.ParseDeviceMode(f.deviceMode)
	if err != nil {
		return runtime.Options{}, err
	}
	sm, err := runtime.ParseSwapMode(f.swapMode)
	if err != nil {
		return runtime.Options{}, err
	}
	return runtime.Options{
		DeviceMode:  dm,
		SwapMode:    sm,
		NoGraphs:    f.noGraphs,
		DeviceDepth: f.deviceDepth,
		DeviceRound: f.deviceRound,
		DeviceLanes: f.deviceLanes,
		Iterations:  f.iterations,
		Wait:        wait,
		Workers:     f.workers,
		Watchdog:    f.watchdog,
		CheckEmpty:  f.checkEmpty,
		NoFuseCPU:   f.noFuseCPU,
	}, nil
}

// placeActors sets the run's mapping: the --mapping file, kernel-only
// actors on the first fitting device, flow-model actors on devices meeting
// their requirements, then --fuse's merged chains. It returns the graph to
// run (--fuse rewrites it).
func placeActors(cmd *cobra.Command, g *graph.Graph, opts *runtime.Options, f runFlags) (*graph.Graph, error) {
	var err error
	if f.mapping != "" {
		if opts.Mapping, err = loadMapping(f.mapping); err != nil {
			return nil, err
		}
		if err := opts.Mapping.Check(g); err != nil {
			return nil, err
		}
	}
	if f.broker == "" {
		if opts.Mapping, err = placeKernelOnly(cmd.Context(), g, opts.Mapping, cmd.ErrOrStderr()); err != nil {
			return nil, err
		}
	}
	if opts.Mapping, err = flowmodel.Place(cmd.Context(), g, opts.Mapping); err != nil {
		return nil, err
	}
	if f.fuse {
		var fused []scenario.Fused
		if g, opts.Mapping, fused, err = scenario.Fuse(g, opts.Mapping); err != nil {
			return nil, err
		}
		for _, c := range fused {
			fmt.Fprintf(cmd.ErrOrStderr(), "fused %s on %s: one kernel walking a scenario of %d steps\n", c.Name, c.Device, c.Steps)
		}
	}
	return g, nil
}

// attachOutputs connects what the run reports to while it goes: the
// broker (--broker), the trace file, the progress display, the metrics
// and ui servers, and the checkpoints. cleanup releases them all, also
// after an error.
func attachOutputs(cmd *cobra.Command, path string, opts *runtime.Options, f runFlags) (cleanup func(), display *progressDisplay, err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	stderr := cmd.ErrOrStderr()
	if f.broker != "" {
		remote, closeRemote, err := connectRemote(cmd, f.broker, f.cred)
		if err != nil {
			return cleanup, nil, err
		}
		undo = append(undo, closeRemote)
		opts.Remote = remote
	}
	if f.trace != "" {
		tf, err := os.Create(f.trace)
		if err != nil {
			return cleanup, nil, err
		}
		undo = append(undo, func() { tf.Close() })
		opts.Trace = tf
	}
	if display, err = progressTo(stderr, opts, f.progress); err != nil {
		return cleanup, nil, err
	}
	if f.metrics != "" {
		stop, err := serveMetrics(f.metrics, opts, stderr)
		if err != nil {
			return cleanup, display, err
		}
		undo = append(undo, stop)
	}
	if f.ui != "" {
		stop, err := serveRunUI(f.ui, path, opts, stderr)
		if err != nil {
			return cleanup, display, err
		}
		undo = append(undo, stop)
	}
	var remoteClient *cluster.Client
	if ex, ok := opts.Remote.(*cluster.Executor); ok {
		remoteClient = ex.Client()
	}
	opts.Checkpoint, err = checkpointOptions(cmd.Context(), f, remoteClient)
	return cleanup, display, err
}

// progressTo sets the run's progress display from --progress: bars on a
// terminal, a line a second otherwise, or none.
func progressTo(stderr io.Writer, opts *runtime.Options, mode string) (*progressDisplay, error) {
	if mode == "auto" {
		mode = "lines"
		if isTerminal(stderr) {
			mode = "bars"
		}
	}
	switch mode {
	case "bars":
		display := newBars(stderr)
		opts.Progress = display.update
		return display, nil
	case "lines":
		opts.Progress = linePrinter(stderr)
		opts.ProgressInterval = time.Second
	case "off":
	default:
		return nil, fmt.Errorf("--progress %q: expected auto, bars, lines or off", mode)
	}
	return nil, nil
}

// execRun runs the graph: through cluster.RunRecovering when actors run
// on workers and checkpoints are on (a lost worker's actors are re-placed
// and the run resumes), else with runtime.Run.
func execRun(cmd *cobra.Command, g *graph.Graph, opts runtime.Options, f runFlags) (*runtime.Stats, error) {
	if opts.Remote == nil || opts.Checkpoint == nil {
		return runtime.Run(cmd.Context(), g, opts)
	}
	stderr := cmd.ErrOrStderr()
	return cluster.RunRecovering(cmd.Context(), g, opts, cluster.RecoveryOptions{Recovered: func(r cluster.Recovery) {
		from := "the start"
		if r.From != nil {
			from = fmt.Sprintf("checkpoint %d (iteration %d)", r.From.ID, r.From.Iteration)
		}
		fmt.Fprintf(stderr, "recovered from the loss of worker %s: resumed from %s, firing again %s after the loss was reported (%v)\n",
			r.Worker, from, r.Firing.Sub(r.Failed).Round(time.Millisecond), r.Err)
	}})
}

// reportRun writes what --stats, --stats-json and --profile ask for.
func reportRun(stderr io.Writer, g *graph.Graph, stats *runtime.Stats, synthetic []string, f runFlags) error {
	if f.stats {
		fmt.Fprintf(stderr, "\n%s: %s\n", g.Name, stats.Elapsed.Round(time.Microsecond))
		if err := stats.WriteTable(stderr); err != nil {
			return err
		}
		if len(synthetic) > 0 {
			fmt.Fprintf(stderr, "synthetic actors (burning their declared cost): %s\n", strings.Join(synthetic, ", "))
		}
		if c := stats.Checkpoints; c != nil {
			fmt.Fprintf(stderr, "checkpoints: %d (last: id %d at iteration %d, %d bytes; duration mean %v, max %v); resumed from checkpoint %d; recoveries %d\n",
				c.Completed, c.LastID, c.LastIteration, c.LastBytes, c.MeanDuration.Round(time.Microsecond), c.MaxDuration.Round(time.Microsecond), c.ResumedFrom, c.Recoveries)
		}
	}
	if f.statsJSON != "" {
		if err := writeFile(f.statsJSON, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(stats)
		}); err != nil {
			return err
		}
	}
	if f.profile != "" {
		return writeFile(f.profile, stats.WriteProfile)
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return fh.Close()
}

// isTerminal reports whether f (a reader or writer) is a character device
// (a terminal).
func isTerminal(f any) bool {
	fh, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := fh.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressDisplay shows one bar per actor: firings done (of the target when
// the run has one) and the average firing rate.
type progressDisplay struct {
	p    *mpb.Progress
	bars map[string]*mpb.Bar
	out  io.Writer
}

func newBars(w io.Writer) *progressDisplay {
	return &progressDisplay{
		p:    mpb.New(mpb.WithOutput(w), mpb.WithRefreshRate(150*time.Millisecond), mpb.WithWidth(40)),
		bars: map[string]*mpb.Bar{},
		out:  w,
	}
}

func (d *progressDisplay) update(s runtime.Snapshot) {
	width := 0
	for _, a := range s.Actors {
		width = max(width, len(a.Name))
	}
	for _, a := range s.Actors {
		b, ok := d.bars[a.Name]
		if !ok {
			total := a.Target
			style := mpb.BarStyle()
			var filler mpb.BarFillerBuilder = style
			if total <= 0 {
				total = 0
				filler = mpb.SpinnerStyle()
			}
			b = d.p.New(total, filler,
				mpb.PrependDecorators(decor.Name(a.Name, decor.WC{W: width + 1, C: decor.DindentRight})),
				mpb.AppendDecorators(
					decor.CurrentNoUnit(" %d firings", decor.WCSyncSpace),
					decor.AverageSpeed(nil, " %.0f/s", decor.WCSyncSpace),
				))
			d.bars[a.Name] = b
		}
		b.SetCurrent(a.Firings)
		if a.Done {
			completeBar(b)
		}
	}
}

// completeBar ends a bar where it stands: a bar of unknown total takes its
// current count as total; a bar with a target it did not reach (the stream
// ended first) is stopped, kept on screen.
func completeBar(b *mpb.Bar) {
	if b.Completed() {
		return
	}
	b.SetTotal(-1, true)
	if !b.Completed() {
		b.Abort(false)
	}
}

// finish sets every bar to the run's final counts (stats may be nil after
// an error) and waits for the display to finish drawing.
func (d *progressDisplay) finish(stats *runtime.Stats) {
	if stats != nil {
		for _, a := range stats.Actors {
			if b, ok := d.bars[a.Name]; ok {
				b.SetCurrent(a.Firings)
			}
		}
	}
	for _, b := range d.bars {
		completeBar(b)
	}
	d.p.Wait()
}

// linePrinter prints one progress line per interval when not on a terminal.
func linePrinter(w io.Writer) func(runtime.Snapshot) {
	return func(s runtime.Snapshot) {
		var parts []string
		for _, a := range s.Actors {
			parts = append(parts, progressPart(a))
		}
		fmt.Fprintf(w, "[%6.1fs] firings: %s\n", s.Elapsed.Seconds(), strings.Join(parts, " "))
	}
}

func newBuiltins() *cobra.Command {
	return &cobra.Command{
		Use:   "builtins",
		Short: "List the built-in actors (use: NAME in a graph file)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			for _, b := range runtime.Builtins() {
				fmt.Fprintf(out, "%-14s %s\n", b.Name, b.Doc)
			}
			return nil
		},
	}
}

var _ = graph.ImplBuiltin

// checkpointOptions turns --checkpoint-dir, --checkpoint-interval and
// --resume into the run's checkpoint options (nil: no checkpoints): a
// directory, or nats:NAME for the JetStream store of the broker that cl
// is connected to.
func checkpointOptions(ctx context.Context, f runFlags, cl *cluster.Client) (*runtime.CheckpointOptions, error) {
	dir := f.ckDir
	if f.resume != "" {
		if dir != "" && dir != f.resume {
			return nil, fmt.Errorf("--resume %s and --checkpoint-dir %s: expected one directory (a resumed run goes on checkpointing into its own)", f.resume, dir)
		}
		dir = f.resume
	}
	if dir == "" {
		return nil, nil
	}
	if f.ckInterval < 0 {
		return nil, fmt.Errorf("--checkpoint-interval %v: expected 0 (none) or more", f.ckInterval)
	}
	var store runtime.CheckpointStore = &runtime.DirStore{Dir: dir}
	if name, ok := strings.CutPrefix(dir, "nats:"); ok {
		if cl == nil {
			return nil, fmt.Errorf("checkpoints in %s: a nats: store needs --broker URL (a broker started with --store DIR)", dir)
		}
		js, err := cluster.NewJetStreamStore(ctx, cl, name)
		if err != nil {
			return nil, err
		}
		store = js
	}
	o := &runtime.CheckpointOptions{Interval: f.ckInterval, Store: store, SpillDir: filepath.Join(dir, "spill")}
	if name, ok := strings.CutPrefix(dir, "nats:"); ok {
		// what stdin read is kept on this host, beside the build cache
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		o.SpillDir = filepath.Join(cache, "sluice", "spill", name)
	}
	if f.ckInterval == 0 {
		o.Interval = time.Duration(1<<63 - 1) // resume only
	}
	if f.resume != "" {
		cp, err := store.Latest(ctx)
		if err != nil {
			return nil, fmt.Errorf("--resume %s: %w", f.resume, err)
		}
		if cp == nil {
			return nil, fmt.Errorf("--resume %s: no checkpoint there (expected one written by a run with --checkpoint-dir %s)", f.resume, f.resume)
		}
		o.Resume = cp
	} else if f.ckInterval == 0 {
		return nil, nil
	}
	return o, nil
}
