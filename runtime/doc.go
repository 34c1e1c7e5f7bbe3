// Package runtime runs a dataflow graph: it turns every actor of a
// validated graph.Graph into a scheduling unit, joins them by lock-free
// FIFOs (package fifo) and fires them until the requested iterations are
// done, the streams end, an actor fails, the context ends or the watchdog
// finds a deadlock. Run is the entry point; Options say what a user may
// set; Stats is what comes back. docs/runtime.md explains the behaviour
// and its measured choices; this comment is a map of the code.
//
// Its name is the standard library's: files of this package that need the
// Go scheduler import it as goruntime.
//
// # The model
//
// Units. Each actor of the (flattened) graph is a unit (unit.go): a core
// that every way of running shares — ports, pool, scheduling state,
// counters, laid out on cache lines by who reads and writes them — and a
// mode (mode.go), the small interface behind which sits how the unit runs
// and the state only that way keeps. The runner asks the mode for a round
// (mode.round) and a helper task joins a team's round through it
// (mode.join); notifiers wake a unit through it, and the watchdog,
// statistics, checkpoints and executors ask it what differs. Setup
// (setup.go) picks each unit's mode; each mode is one file:
//
//   - sequential (unit.go): an SDF/CSDF actor that the CPU pool (or the
//     I/O pool, for actors marked IO) fires when it is ready: a worker
//     takes it from a run queue (sched.go), fires a round of firings and
//     commits them;
//   - splitTeam (teamround.go), replicaTeam (team.go): pooled actors of
//     several replicas (see Teams); teamRound holds their rounds'
//     counters;
//   - fusion, fusedStage (fuse.go): a fused chain's unit, and the actors
//     it fires (see Fused chains);
//   - dedicated, kpnProcess (own.go): an SDF/CSDF actor on its own
//     goroutine, blocking on its FIFOs (next to a KPN process, or pinned
//     to CPUs), and a KPN process (a ProcessFunc);
//   - devUnit (devexec.go): a kernel actor, run by its device's manager;
//   - remoteUnit (executor.go): an actor run by a RemoteExecutor on
//     another machine (package cluster provides one).
//
// Rounds. A pooled unit fires in rounds: prepare (unit.go) finds how many
// firings its inputs and room allow, acquires their windows in one piece
// per port, the firings run on sub-windows, and commit publishes them and
// wakes the neighbours. A round lasts about roundTargetNs (200 µs): short
// firings are batched, so scheduling stays a small part of the work; a
// round of long firings ends after each one that passes that time, so its
// consumers start on it at once (producer and consumer overlap, as the
// simulator assumes). A worker keeps a ready unit for up to sliceNs before
// others queued get a turn (runPooled).
//
// Teams. A stateless actor mapped with several replicas is a team: a
// round's firings are claimed by the pool's workers and committed in
// firing order (teamround.go: splitTeam, teamRound). A stateful one with
// graph.TeamReplicate keeps one state per replica and every replica runs
// every firing (team.go).
//
// Fused chains. Maximal chains of stateless, single-rate, pooled CPU
// actors become one unit, a team of one replica per worker: a worker
// claims a batch of firings and runs it through every stage back to back
// in its cache (fuse.go). Actors whose declared cost is fuseMaxCost or
// more are not fused: they gain more from pipelining.
//
// Device executors. Kernel actors (OpenCL, CUDA) run on one manager
// goroutine per device, which enqueues invocations ahead, batches them in
// rounds (CUDA Graphs), spreads rounds over lanes, stages host channels
// and keeps channels between kernel actors in device rings
// (devexec.go, devexec_enqueue.go, devexec_loop.go, devexec_rounds.go,
// devexec_spread.go, devexec_rings.go). The Executor interface
// (executor.go) is what the run sees of every place an actor runs.
//
// Checkpoints. With Options.Checkpoint the run takes aligned barriers:
// each actor stops at the barrier's firing, its snapshot (state, history,
// initial tokens, shared variables) is taken, and the checkpoint is stored
// (checkpoint.go, checkpoint_store.go); kernel actors and dedicated
// goroutines (checkpoint_device.go) and remote sources held at a barrier
// (checkpoint_hold.go) have their own paths. A cluster worker drives
// external checkpoints through the run's Handle.
//
// # Run state
//
// Everything one run needs lives on its *run (run.go), reached from the
// units, the execution contexts and the Firing and Process values given to
// actors; nothing of a run is kept in context values or package
// variables, so runs in one process are independent. The actors reach
// their run through Firing and Process methods (State, shared variables,
// tags) and through a *Handle (handle.go). Switches for A/B measurements
// and tests are Options' unexported tune field (tuning.go).
//
// # Where to start reading
//
//   - run.go: Options, Run, the supervision loop (completion, errors,
//     cancellation, progress, watchdog).
//   - setup.go: units from actors, FIFOs and their capacities, modes,
//     pools; fuse.go plans fused chains before the channels are made.
//   - unit.go: the unit's core and its round (prepare, runPooled,
//     fireSeq, commit); mode.go: the mode interface and the answers the
//     pooled modes (onPool) and the others (offPool) share; sched.go:
//     pools, workers, run queues, execution contexts.
//   - firing.go: what an actor sees (Firing, Process, FireFunc, Actor,
//     Starter, Stopper); registry.go: built-in actors.
//   - state.go, shared.go, tags.go, history.go, iterate.go,
//     conditional.go, switch.go: declared state, shared variables, stream
//     tags, input history, iterated actors, conditional patterns and the
//     boolean-dataflow built-ins.
//   - stats.go, live.go, trace.go, watchdog.go: statistics, live progress
//     (Snapshot), the Chrome trace and deadlock detection; a device's
//     copies on the trace's link tracks (devexec_trace.go) and the device
//     work Go actors report (spans.go, Firing.TraceDevice).
//   - rv.go: repetition vector and minimal buffers from package analysis.
package runtime
