//go:build !linux

package runtime

// setAffinity does nothing where thread affinity is not supported.
func setAffinity(cpus []int) error { return nil }
