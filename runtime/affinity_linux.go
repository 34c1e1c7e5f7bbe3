//go:build linux

package runtime

import "golang.org/x/sys/unix"

// setAffinity pins the calling OS thread (locked by the caller) to cpus.
func setAffinity(cpus []int) error {
	var set unix.CPUSet
	set.Zero()
	for _, c := range cpus {
		set.Set(c)
	}
	return unix.SchedSetaffinity(0, &set)
}
