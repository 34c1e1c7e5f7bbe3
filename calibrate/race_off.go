//go:build !race

package calibrate

// raceDetector: this program was built without the race detector.
const raceDetector = false
