//go:build linux

package fifo

import "golang.org/x/sys/unix"

// osYield gives the rest of the thread's time slice to another OS thread
// (sched_yield), as HDPC's spin wait does: a spinning reader or writer then
// lets its partner run on an oversubscribed machine.
func osYield() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
