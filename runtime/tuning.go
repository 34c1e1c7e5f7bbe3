package runtime

import "sync/atomic"

// tuning holds the switches that turn a part of the runtime off for one
// run, so that a benchmark can compare it with its baseline (A/B) and a
// test can reach a path the host would not take. The zero value is the
// runtime as every user runs it. It travels in Options' unexported field
// tune: tests of this package set it directly or through export_test.go;
// nothing outside the package can, and no package variable holds it, so
// tests that set it run in parallel with the others.
type tuning struct {
	// noPeer turns peer channels off: a channel between kernel actors of
	// two devices is staged through host memory (devexec_rings.go).
	noPeer bool
	// noMapped turns mapped staging of small invocations off (devexec.go).
	noMapped bool
	// fifoMemory makes host FIFOs next to kernel actors live in device
	// host memory on any device (PoCL has no GPU).
	fifoMemory bool
	// noFork puts every launch of a device round on one stream (lanes
	// off, devexec_rounds.go); noSpread keeps every pass of a round on its
	// unit's lane (devexec_spread.go).
	noFork, noSpread bool
	// roundPer, when > 0, fixes the invocations per kernel actor in a
	// device round; 0 lets perRound choose.
	roundPer int
	// earlyReleases, when set, counts the invocations whose copied host
	// inputs were released before they completed (devexec_loop.go).
	earlyReleases *atomic.Int64
}
