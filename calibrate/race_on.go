//go:build race

package calibrate

// raceDetector: this program was built with the race detector, which
// slows every firing about tenfold. A calibration then measures shorter
// runs: its figures describe an instrumented program, not the host, and
// are only for tests.
const raceDetector = true
