package runtime

import (
	"math"

	"github.com/sluicehq/sluice/device"
)

// linkTrace records, when the run is traced, a device's copies between
// host memory and the device: one trace lane per direction ("link to
// cuda:0", "link from cuda:0"), one slice per copy named after
// the kernel actor whose tokens it moves. The times are the device's own
// (device.Event.Times), moved onto the run's clock by the offset that
// puts every copy's end at or before the moment the manager saw it done:
// the smallest (seen − end) over a lane's copies. A copy cannot start
// before the host enqueued it, so a start earlier than that is raised to
// it (a CUDA event's start is the end of the queue's previous command).
type linkTrace struct {
	lanes [2]linkLane // 0: host to device, 1: device to host
}

// linkLane is one direction's copies: those in flight, oldest first (an
// in-order queue completes them in order), and those done.
type linkLane struct {
	c       *execCtx // the lane's trace context
	pending []tracedCopy
	done    []copyTimes
}

// tracedCopy is a copy in flight: a retained reference to its event.
type tracedCopy struct {
	ev    device.Event
	unit  int32
	bytes int64
	enq   int64 // run time it was enqueued
}

// copyTimes is a completed copy: its device times and the run times it
// was enqueued and seen complete.
type copyTimes struct {
	unit             int32
	bytes            int64
	enq, seen        int64
	devStart, devEnd int64
}

// newLinkTrace makes the two lanes of device d's copies.
func newLinkTrace(r *run, id string) *linkTrace {
	t := &linkTrace{}
	for i, dir := range [2]string{"link to ", "link from "} {
		c := r.newCtx(dir + id)
		c.copies = true
		t.lanes[i].c = c
	}
	return t
}

// traceCopy notes a copy of bytes for unit u just enqueued (out: to the
// host) whose completion is ev; the trace keeps its own reference.
func (d *devRunner) traceCopy(ev device.Event, out bool, u *unit, bytes int64) {
	if d.link == nil || ev == nil {
		return
	}
	rt, ok := ev.(device.Retainer)
	if !ok {
		return
	}
	held, err := rt.Retain()
	if err != nil {
		return
	}
	l := &d.link.lanes[0]
	if out {
		l = &d.link.lanes[1]
	}
	l.pending = append(l.pending, tracedCopy{ev: held, unit: int32(u.idx), bytes: bytes, enq: d.c.now()})
}

// read enqueues a copy of a staging slot to the host after the event
// after (nil: none). When copies are traced, the wait goes before the
// copy as a marker of its own, so that the copy's device start is its
// own, not the end of the wait.
func (d *devRunner) read(dst []byte, stage device.Buffer, off int64, after device.Event) (device.Event, error) {
	if after == nil {
		return d.cq.Read(dst, stage, off)
	}
	if d.link == nil {
		return d.cq.Read(dst, stage, off, after)
	}
	mk, ok := d.cq.(marker)
	if !ok {
		return d.cq.Read(dst, stage, off, after)
	}
	m, err := mk.Marker(after)
	if err != nil {
		return nil, err
	}
	m.Release()
	return d.cq.Read(dst, stage, off)
}

// marker is a queue that enqueues a wait of its own (both backends).
type marker interface {
	Marker(wait ...device.Event) (device.Event, error)
}

// collect moves the copies that completed, oldest first, to done; with
// all, it waits for none and takes every one (the queues are finished).
func (t *linkTrace) collect(now int64, all bool) {
	if t == nil {
		return
	}
	for i := range t.lanes {
		l := &t.lanes[i]
		n := 0
		for _, p := range l.pending {
			if !all {
				if st, err := p.ev.Status(); err != nil || st != device.Complete {
					break
				}
			}
			if tm, err := p.ev.Times(); err == nil && tm.End >= tm.Start {
				l.done = append(l.done, copyTimes{unit: p.unit, bytes: p.bytes, enq: p.enq, seen: now,
					devStart: int64(tm.Start), devEnd: int64(tm.End)})
			}
			p.ev.Release()
			n++
		}
		l.pending = append(l.pending[:0], l.pending[n:]...)
	}
}

// finish ends the lanes: their copies, on the run's clock, become the
// lanes' trace events (the bytes moved where a firing's index would be).
func (t *linkTrace) finish(now int64) {
	if t == nil {
		return
	}
	t.collect(now, true)
	for i := range t.lanes {
		l := &t.lanes[i]
		off := int64(math.MaxInt64)
		for _, ct := range l.done {
			off = min(off, ct.seen-ct.devEnd)
		}
		for _, ct := range l.done {
			s, e := max(ct.devStart+off, ct.enq), ct.devEnd+off
			l.c.addTrace(traceEvent{unit: ct.unit, firing: ct.bytes, ts: s, dur: max(e-s, 0)})
		}
		l.done = nil
	}
}
