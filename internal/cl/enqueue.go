package cl

import (
	"fmt"
	"unsafe"
)

// Event is a cl_event: the completion of one enqueued command. The zero
// Event is "no event". Release every event you asked for exactly once.
type Event struct{ h uintptr }

// ExecStatus is a command's execution status (CL_COMPLETE, CL_RUNNING, …);
// a negative value is the error the command failed with.
type ExecStatus int32

// Execution statuses.
const (
	Complete  ExecStatus = 0
	Running   ExecStatus = 1
	Submitted ExecStatus = 2
	Queued    ExecStatus = 3
)

// String names the status.
func (s ExecStatus) String() string {
	switch s {
	case Complete:
		return "complete"
	case Running:
		return "running"
	case Submitted:
		return "submitted"
	case Queued:
		return "queued"
	}
	return "failed: " + Status(s).Error()
}

// Valid reports whether e refers to an event.
func (e Event) Valid() bool { return e.h != 0 }

// Handle returns the raw cl_event.
func (e Event) Handle() uintptr { return e.h }

// Wait blocks until the command completes; it returns the command's error
// status if it failed.
func (e Event) Wait() error {
	if e.h == 0 {
		return nil
	}
	h := e.h
	st := call(fn.WaitForEvents, 1, uintptr(unsafe.Pointer(&h)))
	if st == int32(ErrExecStatusErrorForEventsInWaitList) {
		if s, err := e.Status(); err == nil && s < 0 {
			return &Error{Op: "command", Status: Status(s)}
		}
	}
	return check("clWaitForEvents", st)
}

// WaitAll blocks until every event has completed.
func WaitAll(evs []Event) error {
	hs := make([]uintptr, 0, len(evs))
	for _, e := range evs {
		if e.h != 0 {
			hs = append(hs, e.h)
		}
	}
	if len(hs) == 0 {
		return nil
	}
	return check("clWaitForEvents", call(fn.WaitForEvents, uintptr(len(hs)), uintptr(unsafe.Pointer(&hs[0]))))
}

// Status polls the command's execution status without blocking.
func (e Event) Status() (ExecStatus, error) {
	var s int32
	err := check("clGetEventInfo", call(fn.GetEventInfo, e.h, eventCommandExecutionStatus, 4, uintptr(unsafe.Pointer(&s)), 0))
	return ExecStatus(s), err
}

// Times are a command's profiling timestamps in device nanoseconds.
type Times struct{ Queued, Submit, Start, End uint64 }

// Profile returns the command's profiling times; it fails with
// ErrProfilingInfoNotAvailable unless the queue has profiling enabled and
// the command has completed.
func (e Event) Profile() (Times, error) {
	var t Times
	for _, x := range []struct {
		p uint32
		v *uint64
	}{{profilingCommandQueued, &t.Queued}, {profilingCommandSubmit, &t.Submit}, {profilingCommandStart, &t.Start}, {profilingCommandEnd, &t.End}} {
		if err := check("clGetEventProfilingInfo", call(fn.GetEventProfilingInfo, e.h, uintptr(x.p), 8, uintptr(unsafe.Pointer(x.v)), 0)); err != nil {
			return t, err
		}
	}
	return t, nil
}

// Retain adds a reference to the event (release it once more).
func (e Event) Retain() error {
	if e.h == 0 {
		return nil
	}
	live.events.Add(1)
	return check("clRetainEvent", call(fn.RetainEvent, e.h))
}

// Release drops the reference this package handed out.
func (e Event) Release() error {
	if e.h == 0 {
		return nil
	}
	live.events.Add(-1)
	return check("clReleaseEvent", call(fn.ReleaseEvent, e.h))
}

// waitList returns the count and the handles of a wait list.
//
// The callers pass the list and the event out-parameter converted to
// uintptr in the call expression itself (uintptr(unsafe.Pointer(…))):
// only then does call's go:uintptrescapes keep them alive and in place
// during the call. A uintptr computed beforehand (as helper functions
// did) leaves a local Event on the stack, which may move when the stack
// grows inside the call: the library then wrote the new event's handle
// into the old stack, the command's event was lost, and a kernel that
// should have waited for a write ran before it.
func waitList(wait []Event) (n uintptr, hs []uintptr) {
	for _, e := range wait {
		if e.h != 0 {
			hs = append(hs, e.h)
		}
	}
	return uintptr(len(hs)), hs
}

func gotEvent(ev *Event, st int32) {
	if st == 0 && ev != nil && ev.h != 0 {
		live.events.Add(1)
	}
}

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// EnqueueWrite copies size bytes from host memory src into b at offset.
// Unless blocking, src must stay valid and untouched until the event (or a
// later Finish) completes. ev, when not nil, receives the command's event.
func (q *Queue) EnqueueWrite(b *Buffer, blocking bool, offset, size uintptr, src unsafe.Pointer, wait []Event, ev *Event) error {
	n, hs := waitList(wait)
	st := call(fn.EnqueueWriteBuffer, q.h, b.h, boolArg(blocking), offset, size, uintptr(src), n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)))
	gotEvent(ev, st)
	if st != 0 {
		return &Error{Op: "clEnqueueWriteBuffer", Status: Status(st), Detail: fmt.Sprintf("%d bytes at %d into a %d-byte buffer", size, offset, b.size)}
	}
	return nil
}

// EnqueueRead copies size bytes of b at offset into host memory dst. Unless
// blocking, dst must stay valid until the event completes.
func (q *Queue) EnqueueRead(b *Buffer, blocking bool, offset, size uintptr, dst unsafe.Pointer, wait []Event, ev *Event) error {
	n, hs := waitList(wait)
	st := call(fn.EnqueueReadBuffer, q.h, b.h, boolArg(blocking), offset, size, uintptr(dst), n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)))
	gotEvent(ev, st)
	if st != 0 {
		return &Error{Op: "clEnqueueReadBuffer", Status: Status(st), Detail: fmt.Sprintf("%d bytes at %d from a %d-byte buffer", size, offset, b.size)}
	}
	return nil
}

// EnqueueCopy copies size bytes from src at srcOff to dst at dstOff on the
// device (both buffers in this queue's context).
func (q *Queue) EnqueueCopy(src, dst *Buffer, srcOff, dstOff, size uintptr, wait []Event, ev *Event) error {
	n, hs := waitList(wait)
	st := call(fn.EnqueueCopyBuffer, q.h, src.h, dst.h, srcOff, dstOff, size, n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)))
	gotEvent(ev, st)
	if st != 0 {
		return &Error{Op: "clEnqueueCopyBuffer", Status: Status(st), Detail: fmt.Sprintf("%d bytes from %d/%d to %d/%d", size, srcOff, src.size, dstOff, dst.size)}
	}
	return nil
}

// EnqueueFill fills size bytes of b at offset with the repeated pattern
// (1, 2, 4, … 128 bytes). It needs OpenCL 1.2.
func (q *Queue) EnqueueFill(b *Buffer, pattern []byte, offset, size uintptr, wait []Event, ev *Event) error {
	if fn.EnqueueFillBuffer == 0 {
		return &Error{Op: "clEnqueueFillBuffer", Status: ErrInvalidOperation, Detail: "not provided by the library"}
	}
	if len(pattern) == 0 {
		return &Error{Op: "clEnqueueFillBuffer", Status: ErrInvalidValue, Detail: "empty pattern"}
	}
	n, hs := waitList(wait)
	st := call(fn.EnqueueFillBuffer, q.h, b.h, uintptr(unsafe.Pointer(&pattern[0])), uintptr(len(pattern)), offset, size, n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)))
	gotEvent(ev, st)
	return check("clEnqueueFillBuffer", st)
}

// EnqueueMap maps size bytes of b at offset into host memory and returns the
// host pointer (valid until EnqueueUnmap). For a buffer created with
// MemAllocHostPtr this is pinned memory the device reaches directly.
func (q *Queue) EnqueueMap(b *Buffer, blocking bool, flags MapFlags, offset, size uintptr, wait []Event, ev *Event) (unsafe.Pointer, error) {
	n, hs := waitList(wait)
	var st int32
	p := callp(fn.EnqueueMapBuffer, q.h, b.h, boolArg(blocking), uintptr(flags), offset, size, n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)), uintptr(unsafe.Pointer(&st)))
	gotEvent(ev, st)
	if st != 0 {
		return nil, &Error{Op: "clEnqueueMapBuffer", Status: Status(st), Detail: fmt.Sprintf("%d bytes at %d of a %d-byte buffer", size, offset, b.size)}
	}
	return ptrFromC(p), nil
}

// EnqueueUnmap unmaps a pointer returned by EnqueueMap.
func (q *Queue) EnqueueUnmap(b *Buffer, p unsafe.Pointer, wait []Event, ev *Event) error {
	n, hs := waitList(wait)
	st := call(fn.EnqueueUnmapMemObject, q.h, b.h, uintptr(p), n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)))
	gotEvent(ev, st)
	return check("clEnqueueUnmapMemObject", st)
}

// EnqueueKernel launches k over a global range (1 to 3 dimensions) split
// into work-groups of local size (nil lets the runtime choose).
func (q *Queue) EnqueueKernel(k *Kernel, offset, global, local []uintptr, wait []Event, ev *Event) error {
	dims := len(global)
	if dims < 1 || dims > 3 || (local != nil && len(local) != dims) || (offset != nil && len(offset) != dims) {
		return &Error{Op: "clEnqueueNDRangeKernel", Status: ErrInvalidWorkDimension, Detail: fmt.Sprintf("kernel %s: global %v local %v", k.name, global, local)}
	}
	var g [3]uintptr
	copy(g[:], global)
	var lp, op *uintptr // nil, or arrays of dims sizes
	if local != nil {
		l := new([3]uintptr)
		copy(l[:], local)
		lp = &l[0]
	}
	if offset != nil {
		o := new([3]uintptr)
		copy(o[:], offset)
		op = &o[0]
	}
	n, hs := waitList(wait)
	st := call(fn.EnqueueNDRangeKernel, q.h, k.h, uintptr(dims), uintptr(unsafe.Pointer(op)), uintptr(unsafe.Pointer(&g[0])), uintptr(unsafe.Pointer(lp)), n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)))
	gotEvent(ev, st)
	if st != 0 {
		return &Error{Op: "clEnqueueNDRangeKernel", Status: Status(st), Detail: fmt.Sprintf("kernel %s: global %v local %v", k.name, global[:dims], local)}
	}
	return nil
}

// EnqueueMarker enqueues a marker that completes when the listed events (or,
// with none, every earlier command) have completed, and returns its event.
func (q *Queue) EnqueueMarker(wait []Event, ev *Event) error {
	if fn.EnqueueMarkerWithWaitList == 0 {
		return &Error{Op: "clEnqueueMarkerWithWaitList", Status: ErrInvalidOperation, Detail: "not provided by the library"}
	}
	n, hs := waitList(wait)
	st := call(fn.EnqueueMarkerWithWaitList, q.h, n, uintptr(unsafe.Pointer(unsafe.SliceData(hs))), uintptr(unsafe.Pointer(ev)))
	gotEvent(ev, st)
	return check("clEnqueueMarkerWithWaitList", st)
}
