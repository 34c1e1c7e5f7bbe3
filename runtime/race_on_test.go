//go:build race

package runtime

// raceEnabled: the race detector slows every firing about tenfold, so
// tests that run long graphs run shorter ones.
const raceEnabled = true
