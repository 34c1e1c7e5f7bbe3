//go:build !linux

package cpus

// pinned runs start: without Linux affinity only GOMAXPROCS confines the
// child.
func pinned(n int, start func() error) error { return start() }
