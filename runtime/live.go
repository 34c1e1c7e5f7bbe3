package runtime

import "time"

// Live statistics: what Options.Progress sees of a run while it runs,
// read from atomic state only (the FIFOs' positions, counters mirrored by
// the runners when the run has a Progress callback), so a snapshot never
// waits for, or races with, the actors.

// ChannelProgress is one channel's state in a Snapshot.
type ChannelProgress struct {
	// Name is the (flattened) channel name, "a.out->b.in".
	Name string
	// Capacity is the channel's capacity in tokens.
	Capacity int
	// Fill is the number of tokens it holds now; -1 for a ring in device
	// memory between two kernel actors (its positions belong to the
	// device's manager while the run lasts).
	Fill int64
	// CopiedBytes counts the bytes copied between the channel's host FIFO
	// and a device so far (0 for channels between CPU actors, whose
	// windows are read and written in place).
	CopiedBytes int64
}

// DeviceProgress is one device's state in a Snapshot.
type DeviceProgress struct {
	// ID is the device's ID, e.g. "opencl:0:0" or "cuda:0".
	ID string
	// InFlight is the number of kernel-actor invocations enqueued on the
	// device and not yet completed (its queue depth).
	InFlight int64
}

// liveBlocked returns the time u has waited so far: between rounds for a
// pooled unit, in its FIFOs' blocking calls for one on its own goroutine.
func (u *unit) liveBlocked() time.Duration {
	d := time.Duration(u.blockedLive.Load())
	for i := range u.ins {
		if r := u.ins[i].r; r != nil {
			d += r.BlockedTime()
		}
	}
	for i := range u.outs {
		if w := u.outs[i].w; w != nil {
			d += w.BlockedTime()
		}
	}
	return d
}

// liveChannels returns every channel's fill and copied bytes.
func (r *run) liveChannels() []ChannelProgress {
	cs := make([]ChannelProgress, 0, len(r.chans))
	for _, c := range r.chans {
		cp := ChannelProgress{Name: c.c.Name, Fill: -1, CopiedBytes: c.devCopied.Load()}
		switch {
		case c.leftSet.Load():
			cp.Fill = c.leftN.Load()
		case c.ring == nil && c.fr != nil:
			// The reader's position first: the writer's, read after it,
			// is at least as far, so the difference is never negative (at
			// most the capacity, unless a commit landed in between).
			rp := c.fr.f.Reader(c.reader).Position()
			cp.Fill = min(int64(c.fr.f.Writer().Position()-rp), int64(c.fr.f.Capacity()))
		}
		switch {
		case c.fr != nil:
			cp.Capacity = c.fr.f.Capacity()
		case c.ring != nil:
			cp.Capacity = int(c.ring.cap) // set before the run starts
		}
		cs = append(cs, cp)
	}
	return cs
}

// liveDevices returns the invocations in flight on every device.
func (r *run) liveDevices() []DeviceProgress {
	ds := make([]DeviceProgress, 0, len(r.devs))
	for _, d := range r.devs {
		ds = append(ds, DeviceProgress{ID: d.id, InFlight: d.inflightLive.Load()})
	}
	return ds
}
