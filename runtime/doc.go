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
// Units. Each actor of the (flattened) graph is a unit (unit.go). How it
// runs is its mode, chosen in setup.go (assignModes) and in the files
// named below:
//
//   - pooled: an SDF/CSDF actor that the CPU pool (or the I/O pool, for
//     actors marked IO) fires when it is ready: a worker takes it from a
//     run queue, fires a round of firings and commits them (unit.go,
//     sched.go);
//   - dedicated: an SDF/CSDF actor on its own goroutine, blocking on its
//     FIFOs: next to a KPN process, or pinned to CPUs (sched.go);
//   - process: a KPN process (a ProcessFunc) on its own goroutine
//     (sched.go);
//   - device: a kernel actor, run by its device's manager (devexec*.go);
//   - remote: an actor run by a RemoteExecutor on another machine
//     (executor.go; package cluster provides one);
//   - fused: a stage of a fused chain, fired by the chain's unit (fuse.go).
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
// firing order (unit.go: teamRound, claimLoop). A stateful one with
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
//   - unit.go: the unit and its round (prepare, fireSeq, commit), team
//     rounds; sched.go: pools, workers, run queues, execution contexts,
//     dedicated goroutines and processes.
//   - firing.go: what an actor sees (Firing, Process, FireFunc, Actor,
//     Starter, Stopper); registry.go: built-in actors.
//   - state.go, shared.go, tags.go, history.go, iterate.go,
//     conditional.go, switch.go: declared state, shared variables, stream
//     tags, input history, iterated actors, conditional patterns and the
//     boolean-dataflow built-ins.
//   - stats.go, live.go, trace.go, watchdog.go: statistics, live progress
//     (Snapshot), the Chrome trace and deadlock detection.
//   - rv.go: repetition vector and minimal buffers from package analysis.
package runtime
