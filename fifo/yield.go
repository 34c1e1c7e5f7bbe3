package fifo

import _ "unsafe" // for go:linkname

// goyield gives the processor (the Go scheduler's P) to the next goroutine
// in its local run queue and puts the caller at the end of that queue. It
// is runtime.Gosched without the global run queue and without waking an
// idle processor: a goroutine readied by this side's publish, or a partner
// that yielded in turn, runs next on the same core, and no other core is
// woken to steal the caller (which on many cores turns a hand-off between
// two goroutines on one core into one between two cores, each woken
// through the OS). With nothing else to run it returns at once.
//
//go:linkname goyield runtime.goyield
func goyield()
