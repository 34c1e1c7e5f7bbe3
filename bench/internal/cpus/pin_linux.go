//go:build linux

package cpus

import (
	"fmt"
	goruntime "runtime"

	"golang.org/x/sys/unix"
)

// pinned runs start (which forks a child) on a locked OS thread whose
// affinity is the first n CPUs this process may use, so the child inherits
// that mask; the thread's mask is restored afterwards.
func pinned(n int, start func() error) error {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("cpus: reading the affinity mask: %w", err)
	}
	if old.Count() < n {
		return fmt.Errorf("cpus: %d CPUs requested, %d available to this process", n, old.Count())
	}
	var set unix.CPUSet
	set.Zero()
	for c, k := 0, 0; k < n && c < 1024; c++ {
		if old.IsSet(c) {
			set.Set(c)
			k++
		}
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("cpus: setting the affinity mask: %w", err)
	}
	defer unix.SchedSetaffinity(0, &old) //nolint:errcheck // best effort on a thread about to be unlocked
	return start()
}
