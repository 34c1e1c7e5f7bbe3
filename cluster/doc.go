// Package cluster runs sluice graphs across machines: brokers (embedded
// NATS servers that form a tree through leaf-node connections), workers
// (NATS micro services that lend their devices and run the actors they are
// given) and the remote executor, which the runtime uses for actors that a
// mapping places on a worker ("worker:NAME/DEVICE" or any: requirements).
//
// Control goes over NATS request/reply; token batches go over NATS in large
// chunks on per-job subjects, with credit-based back-pressure sized from the
// consumer's FIFO capacity, so a cross-machine channel stays bounded and
// keeps order, end of stream and exactly-once delivery (chunks carry
// sequence numbers; a gap or duplicate fails the run). Workers and clients
// exchange heartbeats during a job: a worker that dies or is cut off is
// detected within HeartbeatTimeout and the run fails naming the worker and
// its actors. With checkpoints (runtime.CheckpointOptions), remote actors
// take part in them (checkpoint.go), and RunRecovering resumes a run that
// lost a worker from its last checkpoint with that worker's actors placed
// on others; JetStreamStore keeps the checkpoints in a broker's JetStream
// store (docs/recovery.md).
//
// The runtime sits below this package: it defines runtime.RemoteExecutor,
// which Executor implements; package cli wires the two.
package cluster
