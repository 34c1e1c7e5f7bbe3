package fifo

import (
	"sync/atomic"
	_ "unsafe" // for go:linkname
)

// procPin returns the id of the runtime's processor (P) the calling
// goroutine runs on, and keeps it there until procUnpin: the call
// sync.Pool is built on, which the runtime exports for packages outside
// the standard library (go.dev/issue/67401).
//
//go:linkname procPin runtime.procPin
func procPin() int

// procUnpin undoes procPin.
//
//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// curP returns the id of the processor the calling goroutine runs on now.
// It may have moved by the time the caller looks at the answer, but only
// where the goroutine gives its processor up (a yield, a park, a
// preemption): between those it stays.
func curP() int32 {
	p := procPin()
	procUnpin()
	return int32(p)
}

// noProc is a side's published processor before its first publish: no
// processor has that id.
const noProc = -1

// procFlag is a flag of one processor, on a cache line of its own.
type procFlag struct {
	set atomic.Bool
	_   [63]byte
}

// readiedSlots is the size of the readied table: processors whose ids
// differ by a multiple of it share a flag (a spurious yield, no more).
const readiedSlots = 256

// readied[p] is set when a goroutine running on processor p woke a parked
// FIFO side (see waiter.signal): the Go runtime puts a goroutine readied by
// a channel send in the waker's processor's runnext slot, where only that
// processor runs it soon (idle processors steal it only after ~3 µs). A
// Spin wait that starts on p yields first when the flag is set (and clears
// it), rather than spin while the goroutine it woke waits behind it.
var readied [readiedSlots]procFlag

// markReadied records that the calling goroutine has just readied a
// goroutine on its processor. It writes the flag's line only when the flag
// is clear.
func markReadied() {
	f := &readied[uint32(curP())%readiedSlots]
	if !f.set.Load() {
		f.set.Store(true)
	}
}

// takeReadied reports whether a goroutine was readied on processor p since
// the last call for p, and clears the flag.
func takeReadied(p int32) bool {
	f := &readied[uint32(p)%readiedSlots]
	if !f.set.Load() {
		return false
	}
	f.set.Store(false)
	return true
}
