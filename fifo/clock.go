package fifo

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock in nanoseconds: what
// time.Now's monotonic reading is made of, without the wall clock, so a
// blocking wait costs one clock read on each side instead of two.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
