package fifo

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Reader is one read cursor of a FIFO. Exactly one goroutine uses it. With
// several readers each sees every token, from the same memory.
type Reader struct {
	_ pad
	// Published, read by the writer.
	pos      atomic.Uint64 // tokens released since creation
	detached atomic.Bool
	proc     atomic.Int32 // Spin: the processor of the last Release (noProc before)
	_        pad
	waiter   // parking state, read by the writer on Commit and Close
	_        pad
	// Private to the reading goroutine (the atomics are read by statistics).
	f        *FIFO
	idx      int
	rpos     uint64   // == pos, without the atomic load
	wSeen    uint64   // writer's position, as last seen
	off      int      // byte offset of rpos in the ring
	acquired int      // tokens handed out and not released
	lastProc int32    // Spin: proc as last published (stored only when it changes)
	closed   bool     // Close was called
	stat     waitStat // its waits: spinning now, time blocked
	copied   atomic.Int64
	_        pad
}

func (r *Reader) avail() int { return int(r.wSeen - r.rpos) }

// Acquire blocks until n tokens are available and returns them as one
// contiguous window of n*TokenSize bytes (also where the ring wraps), without
// consuming them: Release does. Acquiring again without releasing returns the
// same first tokens. When the writer has closed the stream and fewer than n
// tokens remain, it returns an error wrapping ErrClosed; the remaining tokens
// are still obtainable with TryAcquire. It also fails when n is outside
// 0..Capacity (ErrInvalid), after Close (ErrDetached), and when ctx ends
// (wrapping ctx.Err()).
func (r *Reader) Acquire(ctx context.Context, n int) ([]byte, error) {
	f := r.f
	if uint(n) > uint(f.capacity) {
		return nil, f.countError(fmt.Sprintf("Reader(%d)", r.idx), "Acquire", n)
	}
	if r.avail() < n || r.closed {
		r.wSeen = f.writer.pos.Load()
		if r.avail() < n || r.closed {
			if err := r.waitData(ctx, n); err != nil {
				return nil, err
			}
		}
	}
	if n > r.acquired {
		r.acquired = n
	}
	return f.window(r.off, n, true), nil
}

func (r *Reader) waitData(ctx context.Context, n int) error {
	f := r.f
	if r.closed {
		return fmt.Errorf("fifo %s: Reader(%d).Acquire after Close: %w", f.name, r.idx, ErrDetached)
	}
	closed := false
	err := f.block(ctx, &r.waiter, &r.stat, r.rpos+uint64(n), r.rpos, false, n, func() bool {
		// Closed first, then the position: a close seen means every
		// commit is seen.
		closed = f.writer.closed.Load()
		r.wSeen = f.writer.pos.Load()
		return closed || r.avail() >= n
	})
	if err != nil {
		return err
	}
	if r.avail() < n {
		return f.errClosed
	}
	return nil
}

// TryAcquire returns the tokens available now, up to n, as one contiguous
// window (empty when there are none, when n <= 0, or after Close), without
// consuming them.
func (r *Reader) TryAcquire(n int) []byte {
	f := r.f
	if n <= 0 || r.closed {
		return nil
	}
	n = min(n, f.capacity)
	if r.avail() < n {
		r.wSeen = f.writer.pos.Load()
	}
	n = min(n, r.avail())
	if n <= 0 {
		return nil
	}
	if n > r.acquired {
		r.acquired = n
	}
	return f.window(r.off, n, true)
}

// TryAcquireAt returns tokens skip to skip+n of those available now as one
// contiguous window, or nil unless all skip+n are there (or when n <= 0,
// skip < 0, skip+n > Capacity, or after Close). The first skip+n tokens
// stay acquired as after TryAcquire(skip+n). Only these n tokens need be
// contiguous: a device copying one invocation's tokens of many acquired
// asks for them so, and a ring with external Memory then copies nothing
// into its tail unless these n cross the ring's end.
func (r *Reader) TryAcquireAt(skip, n int) []byte {
	f := r.f
	if n <= 0 || skip < 0 || skip+n > f.capacity || r.closed {
		return nil
	}
	if r.avail() < skip+n {
		r.wSeen = f.writer.pos.Load()
		if r.avail() < skip+n {
			return nil
		}
	}
	if skip+n > r.acquired {
		r.acquired = skip + n
	}
	off := r.off + skip*f.tokenSize
	if off >= f.size {
		off -= f.size
	}
	return f.window(off, n, true)
}

// Release consumes the first n tokens of the acquired window, giving their
// slots back to the writer (once every reader released them), and wakes
// the writer if it is parked waiting for them. n must not exceed the tokens
// acquired (it panics otherwise: a programming error).
func (r *Reader) Release(n int) {
	if uint(n) > uint(r.acquired) {
		panic(fmt.Sprintf("fifo %s: Reader(%d).Release(%d): expected 0 <= n <= acquired (%d tokens)",
			r.f.name, r.idx, n, r.acquired))
	}
	if n == 0 {
		return
	}
	f := r.f
	r.acquired -= n
	r.rpos += uint64(n)
	r.off += n * f.tokenSize
	if r.off >= f.size {
		r.off -= f.size
	}
	if f.wait == Spin && f.spinSides.Load() > 0 {
		// On the line that the next store writes; stored only when it
		// changed (an atomic store is a locked instruction), and only
		// while a side spins (a spinning wait reads it, see peerOn).
		if p := curP(); p != r.lastProc {
			r.proc.Store(p)
			r.lastProc = p
		}
	}
	r.pos.Store(r.rpos)
	w := &f.writer
	if w.wants(r.rpos) {
		w.signal()
	}
}

// Read copies len(p)/TokenSize tokens into p (len(p) must be a multiple of
// the token size), blocking until it has them all; p may be longer than the
// capacity. It returns the number of bytes read: len(p) with a nil error, or
// fewer with an error wrapping ErrClosed (end of stream), ctx.Err(), or
// ErrInvalid.
func (r *Reader) Read(ctx context.Context, p []byte) (int, error) {
	f := r.f
	if len(p)%f.tokenSize != 0 {
		return 0, f.lenError(fmt.Sprintf("Reader(%d)", r.idx), "Read", len(p))
	}
	done := 0
	for done < len(p) {
		want := (len(p) - done) / f.tokenSize
		win := r.TryAcquire(want)
		if len(win) == 0 {
			if _, err := r.Acquire(ctx, 1); err != nil {
				return done, err
			}
			win = r.TryAcquire(want)
		}
		c := copy(p[done:], win)
		done += c
		r.copied.Add(int64(c))
		r.Release(c / f.tokenSize)
	}
	return done, nil
}

// Available returns the number of tokens available to this reader now.
func (r *Reader) Available() int {
	r.wSeen = r.f.writer.pos.Load()
	return r.avail()
}

// Open reports whether the stream may still deliver tokens to this reader:
// false once the writer has closed it and this reader has released every
// token (ACOTES task_allopen is the conjunction over a task's inputs).
func (r *Reader) Open() bool {
	w := &r.f.writer
	if !w.closed.Load() {
		return true
	}
	return w.pos.Load() != r.rpos
}

// Close detaches this reader: the writer no longer waits for it (its
// position stops counting for room and Len), and its Acquire fails with
// ErrDetached. Use it when a consumer stops early on a broadcast FIFO.
// Close is idempotent; the reader's goroutine calls it.
func (r *Reader) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.acquired = 0
	r.detached.Store(true)
	r.f.writer.signal()
}

// Index returns the reader's index, as passed to FIFO.Reader.
func (r *Reader) Index() int { return r.idx }

// Position returns the number of tokens this reader has released since
// creation.
func (r *Reader) Position() uint64 { return r.pos.Load() }

// Blocked reports whether the reader is waiting in Acquire right now: parked,
// or spinning past its first 64 polls (safe from any goroutine).
func (r *Reader) Blocked() bool { return r.need.Load() != 0 || r.stat.spinning.Load() }

// BlockedTime returns the total time the reader has spent waiting for
// tokens (safe from any goroutine). With the Park strategy a wait that one
// yield ends (the other side answered within its turn: a few hundred ns)
// is not counted, so that such hand-offs read no clock; with Spin, likewise,
// a wait that ends within its first 64 polls or its first yield.
func (r *Reader) BlockedTime() time.Duration { return time.Duration(r.stat.ns.Load()) }

// SpinWaits returns, for a FIFO with the Spin strategy, how many of the
// reader's waits (those its first poll did not end) spun and how many
// waited as Park does because its tuner found parking faster (see
// docs/fifo.md, "Wait strategies"); both are 0 for other strategies. The
// counts are the reading goroutine's own: call it from that goroutine, or
// once it is done with the reader (after a channel or WaitGroup that it
// signals when it ends).
func (r *Reader) SpinWaits() (spun, parked int64) {
	return r.stat.spun, r.stat.parked
}
