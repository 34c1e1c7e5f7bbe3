//go:build !linux

package fifo

import "runtime"

// osYield yields the processor (runtime.Gosched where no sched_yield is
// used).
func osYield() { runtime.Gosched() }
