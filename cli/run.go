package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	_ "github.com/sluicehq/sluice/actors" // registers the built-in actors
	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/namelist"
	"github.com/sluicehq/sluice/runtime"
)

type runFlags struct {
	iterations   int64
	stats        bool
	statsJSON    string
	trace        string
	traceLimit   int64
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
	maxTime      time.Duration // the whole run's wall-clock limit (0: none)
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
the graph there with the same flags.

--max-time D bounds the whole run's wall-clock time: when D has passed the
run is cancelled cleanly (its actors stop, its outputs are closed, --stats
are still written), it says so in one sentence and sluice exits with status
124. A recovery waiting for an unreachable checkpoint store retries until
then.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runGraph(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.Int64VarP(&f.iterations, "iterations", "n", 0, "run this many iterations (0: until the sources end their streams)")
	fl.BoolVar(&f.stats, "stats", false, "print per-actor and per-channel statistics at the end (standard error)")
	fl.StringVar(&f.statsJSON, "stats-json", "", "write the statistics as JSON to this file")
	fl.StringVar(&f.trace, "trace", "", "write a Chrome Trace Event JSON timeline (opens in Perfetto) to this file")
	fl.Int64Var(&f.traceLimit, "trace-limit", runtime.DefaultTraceLimit, "the most events --trace records, 32 bytes each in memory until the run ends; later ones are counted, not recorded (0: no limit)")
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
	fl.DurationVar(&f.maxTime, "max-time", 0, "cancel the run cleanly after this long (e.g. 10m; exit status 124; 0: no limit)")
	f.cred.add(fl)
	return cmd
}

// maxTimeExit is the exit status of a run that --max-time stopped (that
// of timeout(1)).
const maxTimeExit = 124

// errMaxTime is the cause of a run's context that --max-time ended.
var errMaxTime = errors.New("the run's --max-time passed")

// maxTimeError is what sluice run returns when --max-time stopped the
// run: one sentence, and exit status 124.
type maxTimeError struct {
	path   string
	limit  time.Duration
	resume string // the checkpoint store to resume from ("" without)
}

func (e *maxTimeError) Error() string {
	s := fmt.Sprintf("run %s: stopped at --max-time %s: the run's wall-clock limit passed and the run was cancelled cleanly (its outputs hold what it wrote until then)", e.path, e.limit)
	if e.resume != "" {
		s += "; continue it with --resume " + e.resume
	}
	return s
}

// runGraph runs the graph file at path, within --max-time when it is set.
func runGraph(cmd *cobra.Command, path string, f runFlags) error {
	if f.maxTime < 0 {
		return usageError{fmt.Errorf("--max-time %v: expected a duration ≥ 0 (0: no limit)", f.maxTime)}
	}
	if f.maxTime == 0 {
		return runGraphIn(cmd, path, f, cmd.Context())
	}
	parent := cmd.Context()
	ctx, cancel := context.WithTimeoutCause(parent, f.maxTime, errMaxTime)
	defer cancel()
	cmd.SetContext(ctx)
	defer cmd.SetContext(parent)
	err := runGraphIn(cmd, path, f, parent)
	if err != nil && errors.Is(context.Cause(ctx), errMaxTime) && !errors.As(err, new(exitError)) {
		resume := f.resume
		if resume == "" {
			resume = f.ckDir
		}
		return &maxTimeError{path: path, limit: f.maxTime, resume: resume}
	}
	return err
}

// runGraphIn runs the graph file at path; outer is the command's context
// without --max-time's deadline (for a program that runs the graph's Go
// packages and keeps the limit itself).
func runGraphIn(cmd *cobra.Command, path string, f runFlags, outer context.Context) error {
	if done, err := resumeFinished(cmd, f); done || err != nil { // resume.go
		return err
	}
	// The run's loggers (recovery, a checkpoint store that does not
	// answer, progress) write from goroutines of their own: a writer that
	// is not a file (a test's buffer) gets a lock. A file keeps its type,
	// which the progress bars look at.
	if _, isFile := cmd.ErrOrStderr().(*os.File); !isFile {
		cmd.SetErr(&syncWriter{w: cmd.ErrOrStderr()})
	}
	ctx, stderr := cmd.Context(), cmd.ErrOrStderr()
	l, err := driver.Load(ctx, path, loadOptions(cmd))
	if err != nil {
		return err
	}
	p, err := driver.Prepare(ctx, l, driver.PrepareOptions{Run: true, NoCheck: f.skipAnalysis})
	var missing *driver.MissingGoError
	if errors.As(err, &missing) {
		if err := limitChild(cmd, f, outer); err != nil {
			return err
		}
		if _, err := runElsewhere(cmd, l.Graph); err != nil {
			return err
		}
		return nil
	}
	if err != nil {
		return refusal(cmd, "run", err)
	}
	if len(p.Synthetic) > 0 {
		fmt.Fprintf(stderr, "note: %s have no implementation: they run as synthetic actors, each firing burning the actor's declared cost on a core and writing zeros\n", namelist.Short(p.Synthetic))
	}
	opts, err := runOptions(f)
	if err != nil {
		return err
	}
	var m *graph.Mapping
	if f.mapping != "" {
		if m, err = loadMapping(f.mapping); err != nil {
			return err
		}
	}
	pl, err := driver.Place(ctx, p, driver.PlaceOptions{Mapping: m, Remote: f.broker != "", Fuse: f.fuse,
		Note: func(s string) { fmt.Fprintln(stderr, s) }})
	if err != nil {
		return err
	}
	cleanup, display, err := attachOutputs(cmd, path, &opts, f)
	defer cleanup()
	if err != nil {
		return err
	}
	stats, runErr := execRun(cmd, pl, opts)
	if display != nil {
		display.finish(stats)
	}
	if runErr != nil {
		if errors.Is(context.Cause(ctx), errMaxTime) && stats != nil {
			_ = reportRun(stderr, pl.Graph, stats, p.Synthetic, f) // what it did until stopped
		}
		return fmt.Errorf("run %s: %w", path, runErr)
	}
	if err := markFinished(ctx, opts.Checkpoint); err != nil { // resume.go
		return err
	}
	return reportRun(stderr, pl.Graph, stats, p.Synthetic, f)
}

// limitChild hands what is left of --max-time to the program that runs a
// graph's Go packages (it stops itself cleanly then, with status 124) and
// lets it run under outer, without this process's deadline, which would
// interrupt it at the same moment.
func limitChild(cmd *cobra.Command, f runFlags, outer context.Context) error {
	if f.maxTime == 0 {
		return nil
	}
	ctx := cmd.Context()
	dl, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	left := time.Until(dl)
	if left <= 0 {
		return context.Cause(ctx)
	}
	if err := cmd.Flags().Set("max-time", left.String()); err != nil {
		return err
	}
	cmd.SetContext(outer)
	return nil
}

// refusal is what a command says when the driver's Prepare refuses a
// graph: the analysis report (on standard error) and one sentence, the
// same for run, simulate and map.
func refusal(cmd *cobra.Command, verb string, err error) error {
	var gate *driver.GateError
	if errors.As(err, &gate) {
		writeReport(cmd.ErrOrStderr(), gate.Path, gate.Report, nil)
		hint := ""
		if verb == "run" {
			hint = " (use --no-check to run anyway)"
		}
		return fmt.Errorf("refusing to %s %s: the analysis above shows it cannot run%s", verb, gate.Path, hint)
	}
	return err
}

// traceLimitOption is a --trace-limit flag's value as the runtime, the
// simulator and the workbench take it: 0 (no limit) becomes -1 (every
// one), a negative count is refused; what names the things counted.
func traceLimitOption(n int64, what string) (int64, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("--trace-limit %d: expected a count of %s ≥ 0 (0: no limit)", n, what)
	case n == 0:
		return -1, nil
	}
	return n, nil
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
	traceLimit, err := traceLimitOption(f.traceLimit, "events")
	if err != nil {
		return runtime.Options{}, err
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
		TraceLimit:  traceLimit,
		Wait:        wait,
		Workers:     f.workers,
		Watchdog:    f.watchdog,
		CheckEmpty:  f.checkEmpty,
		NoFuseCPU:   f.noFuseCPU,
	}, nil
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
	opts.Checkpoint, err = checkpointOptions(cmd.Context(), f, remoteClient, stderr)
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

// execRun runs the placed graph: through cluster.RunRecovering when actors run
// on workers and checkpoints are on (a lost worker's actors are re-placed
// and the run resumes), else with driver.Run.
func execRun(cmd *cobra.Command, pl *driver.Placed, opts runtime.Options) (*runtime.Stats, error) {
	if opts.Remote == nil || opts.Checkpoint == nil {
		return driver.Run(cmd.Context(), pl, opts)
	}
	g := pl.Graph
	opts.Mapping = pl.Mapping
	stderr := cmd.ErrOrStderr()
	return cluster.RunRecovering(cmd.Context(), g, opts, cluster.RecoveryOptions{Recovered: recoveryNote(stderr), // resume.go
		Logf: func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }})
}

// reportRun writes what --stats, --stats-json and --profile ask for.
func reportRun(stderr io.Writer, g *graph.Graph, stats *runtime.Stats, synthetic []string, f runFlags) error {
	if f.trace != "" && stats.TraceDropped > 0 {
		fmt.Fprintf(stderr, "trace: %s holds the run's first events, at most %d; %d later ones were not recorded (--trace-limit N keeps more, 0 every one)\n",
			f.trace, f.traceLimit, stats.TraceDropped)
	}
	if f.stats {
		fmt.Fprintf(stderr, "\n%s: %s\n", g.Name, stats.Elapsed.Round(time.Microsecond))
		if err := stats.WriteTable(stderr); err != nil {
			return err
		}
		if len(synthetic) > 0 {
			fmt.Fprintf(stderr, "synthetic actors (burning their declared cost): %s\n", namelist.Short(synthetic))
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
	p     *mpb.Progress
	bars  map[string]*mpb.Bar
	out   io.Writer
	rates rateText
}

func newBars(w io.Writer) *progressDisplay {
	return &progressDisplay{
		p:    barsContainer(w), // progress.go
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
					d.rates.decorator(a.Name),
				), mpb.BarWidth(barWidth))
			d.bars[a.Name] = b
		}
		d.rates.set(a.Name, a.Firings, s.Elapsed)
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
				d.rates.set(a.Name, a.Firings, stats.Elapsed)
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
func checkpointOptions(ctx context.Context, f runFlags, cl *cluster.Client, stderr io.Writer) (*runtime.CheckpointOptions, error) {
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
		if dl, ok := ctx.Deadline(); ok {
			js.StopBy(dl) // --max-time bounds a save still going on at the run's end
		}
		js.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
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

// syncWriter serialises the writes of several goroutines to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
