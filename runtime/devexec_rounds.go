package runtime

import (
	"fmt"

	"github.com/sluicehq/sluice/device"
)

// devLanes is the most lanes the runtime deals independent kernel actors
// to (spreading may use all the batcher's lanes).
const devLanes = 4

// perRound is the most invocations of kernel actor u in one round:
// Options.DeviceRound when set, else a fraction of the invocations a unit
// may have in flight (at least one), so that several rounds are in flight
// — half when the device's actors work on device memory (one round runs
// while the host enqueues the next), a quarter when they copy to and from
// host FIFOs (copies in, kernels and copies out of three rounds overlap
// while the host works on a fourth's slots: the image pipeline at depth 16
// ran at 0.33–0.37 M frames/s with four per round, 0.30 M with eight) —
// and a round's fixed costs (a CUDA Graph
// launch, its event and its queries, ~10 µs on an H100; an OpenCL marker
// and its queries) are shared by that many invocations. On a device
// without graph replay (OpenCL, NoGraphs) an actor fed by a host FIFO
// takes one per round: the round's one event would hold the earlier
// invocations' input windows until the last completes, and the Go
// producer waits for that room (NVIDIA OpenCL host → device: 0.88–0.91 of
// the pinned write with one per round, 0.73–0.78 with two; with graphs the
// CUDA channel lost nothing).
func (d *devRunner) perRound(u *unit) int {
	if d.r != nil && d.r.opts.tune.roundPer > 0 {
		return d.r.opts.tune.roundPer
	}
	if d.r != nil && d.r.opts.DeviceRound > 0 {
		n := d.r.opts.DeviceRound
		return min(n, d.depth)
	}
	if _, graphs := d.q.(interface{ Graphs() int }); !graphs || !d.replay {
		du := u.kernel()
		for i := range du.ins {
			if p := &du.ins[i]; p.ring == nil && p.rate > 0 {
				return 1
			}
		}
	}
	if d.hostCopies() {
		return max(1, d.depth/4)
	}
	return max(1, d.depth/2)
}

// hostCopies reports whether some kernel actor of the device copies to or
// from a host FIFO through staging slots (not mapped memory): a round then
// goes through three stages of its own (copies in, kernels, copies out),
// and the host's actors need a turn before the slots are free again.
func (d *devRunner) hostCopies() bool {
	for _, u := range d.units {
		du := u.kernel()
		for _, ps := range [][]devPort{du.ins, du.outs} {
			for i := range ps {
				if p := &ps[i]; p.ring == nil && p.peer == nil && p.rate > 0 && p.stage != nil && !p.mapped {
					return true
				}
			}
		}
	}
	return false
}

// devRead is a host output's read of a round's invocation, issued on the
// copy queue once the round's batch has been enqueued.
type devRead struct {
	inv   *invocation
	dst   []byte
	stage device.Buffer
	off   int64
	// a copy into a peer ring instead: n bytes to peerOff of peer
	peer       device.Buffer
	peerOff, n int64
}

// setupRounds decides whether the manager enqueues in rounds (its queue is
// a device.Batcher and no actor copies between iterations, which would put
// other commands between a batch's launches) and orders the units so that
// producers come before their ring consumers (Kahn; units on cycles keep
// their order).
func (d *devRunner) setupRounds() {
	b, ok := d.q.(device.Batcher)
	if !ok || d.r.opts.DeviceMode == Callback {
		return
	}
	for _, u := range d.units {
		if u.kernel().iters > 1 && d.r.opts.SwapMode != Swap && d.r.opts.SwapMode != "" {
			return
		}
	}
	d.bat, d.replay = b, !d.r.opts.NoGraphs
	if !d.r.opts.tune.noFork {
		d.lb, _ = b.(device.LaneBatcher)
	}
	d.laneUnits()
	for _, u := range d.units {
		du := u.kernel()
		du.perRound = d.perRound(u)
		d.passes = max(d.passes, du.perRound)
	}
	d.setupSpread()
	indeg := map[*unit]int{}
	next := map[*unit][]*unit{}
	on := map[*unit]bool{}
	for _, u := range d.units {
		on[u] = true
	}
	for _, u := range d.units {
		du := u.kernel()
		for i := range du.ins {
			if g := du.ins[i].ring; g != nil && on[g.prod] && g.prod != u && g.wpos == 0 {
				indeg[u]++
				next[g.prod] = append(next[g.prod], u)
			}
		}
	}
	var order []*unit
	done := map[*unit]bool{}
	for len(order) < len(d.units) {
		moved := false
		for _, u := range d.units {
			if !done[u] && indeg[u] == 0 {
				done[u] = true
				order = append(order, u)
				for _, v := range next[u] {
					indeg[v]--
				}
				moved = true
			}
		}
		if !moved { // a cycle: the rest in their order
			for _, u := range d.units {
				if !done[u] {
					done[u] = true
					order = append(order, u)
				}
			}
		}
	}
	d.units = order
}

// laneUnits deals the device's kernel actors to lanes: actors joined by a
// device ring (directly or through others) share one, so their launches
// stay in order on one stream; independent groups go round-robin to
// devLanes lanes and run concurrently in a round. One group: no lanes.
func (d *devRunner) laneUnits() {
	if d.lb == nil {
		return
	}
	n := min(devLanes, d.lb.Lanes())
	root := map[*unit]*unit{}
	var find func(u *unit) *unit
	find = func(u *unit) *unit {
		if r := root[u]; r != nil && r != u {
			root[u] = find(r)
			return root[u]
		}
		return u
	}
	for _, u := range d.units {
		root[u] = u
	}
	for _, u := range d.units {
		du := u.kernel()
		for i := range du.ins {
			if g := du.ins[i].ring; g != nil && root[g.prod] != nil {
				root[find(u)] = find(g.prod)
			}
		}
	}
	lane := map[*unit]int{}
	for _, u := range d.units {
		r := find(u)
		if _, ok := lane[r]; !ok {
			lane[r] = len(lane) % n
		}
		u.kernel().lane = lane[r]
	}
	d.lanes = len(lane) > 1
}

// endRound ends the open round: it enqueues the batch of its launches,
// then its host outputs' reads (after the batch), and gives each
// invocation its event: its last read's, or the batch's, shared.
func (d *devRunner) endRound() error {
	ev, err := d.bat.EndBatch()
	if err != nil {
		return fmt.Errorf("device %s: %w", d.id, err)
	}
	if len(d.round) == 0 {
		if ev != nil {
			ev.Release()
		}
		return nil
	}
	if ev == nil {
		return fmt.Errorf("device %s: a round of %d invocations launched nothing", d.id, len(d.round))
	}
	sh := &sharedEvent{Event: ev}
	ri := 0
	for _, inv := range d.round {
		for ; ri < len(d.reads) && d.reads[ri].inv == inv; ri++ {
			rd := d.reads[ri]
			var rev device.Event
			var err error
			if rd.peer != nil {
				rev, err = d.cq.(device.PeerCopier).CopyPeer(rd.peer, rd.peerOff, rd.stage, rd.off, rd.n, ev)
			} else {
				rev, err = d.read(rd.dst, rd.stage, rd.off, ev)
				if err == nil {
					d.traceCopy(rev, true, inv.u, int64(len(rd.dst)))
				}
			}
			if err != nil {
				return fmt.Errorf("actor %s firings %d–%d on %s: copy to host: %w", inv.u.name, inv.base, inv.base+inv.k-1, d.id, err)
			}
			if inv.ev != nil {
				inv.ev.Release()
			}
			inv.ev = rev
		}
		if inv.ev == nil {
			inv.ev = sh
			sh.refs++
		}
	}
	if sh.refs == 0 {
		ev.Release()
	}
	clear(d.round)
	d.round = d.round[:0]
	clear(d.reads)
	d.reads = d.reads[:0]
	return nil
}
