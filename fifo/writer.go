package fifo

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// pad separates fields written by different goroutines onto different cache
// lines (128 bytes: two lines, as adjacent-line prefetch pairs them).
type pad [128]byte

// Writer is the producing end of a FIFO. Exactly one goroutine uses it.
type Writer struct {
	_ pad
	// Published, read by the readers.
	pos    atomic.Uint64 // tokens committed since creation
	closed atomic.Bool
	proc   atomic.Int32 // Spin: the processor of the last Commit (noProc before)
	_      pad
	waiter // parking state, read by the readers on Release
	_      pad
	// Private to the writing goroutine (the atomics are read by statistics).
	f        *FIFO
	wpos     uint64 // == pos, without the atomic load
	minSeen  uint64 // slowest reader's position, as last seen
	peakSeen uint64 // f.peak, without the atomic load
	off      int    // byte offset of wpos in the ring
	acquired int    // tokens of room handed out and not committed
	lastProc int32  // Spin: proc as last published (stored only when it changes)
	isClosed bool
	stat     waitStat // its waits: spinning now, time blocked
	copied   atomic.Int64
	_        pad
}

// room returns the room by the cached view of the readers.
func (w *Writer) room() int { return w.f.capacity - int(w.wpos-w.minSeen) }

// refresh reloads the slowest reader's position.
func (w *Writer) refresh() { w.minSeen = w.f.minReaderPos(w.wpos) }

// Acquire blocks until there is room for n tokens and returns it as one
// contiguous window of n*TokenSize bytes (also where the ring wraps). Fill
// it and publish it with Commit. Acquiring again without committing returns
// the same room (n may differ). It fails when n is outside 0..Capacity
// (ErrInvalid), when the writer was closed (ErrWriterClosed), or when ctx
// ends (wrapping ctx.Err()).
func (w *Writer) Acquire(ctx context.Context, n int) ([]byte, error) {
	f := w.f
	if uint(n) > uint(f.capacity) {
		return nil, f.countError("Writer", "Acquire", n)
	}
	if w.isClosed {
		return nil, w.closedError()
	}
	if w.room() < n {
		w.refresh()
		if w.room() < n {
			if err := w.waitRoom(ctx, n); err != nil {
				return nil, err
			}
		}
	}
	if n > w.acquired {
		w.acquired = n
	}
	end := w.off + n*f.tokenSize
	return f.buf[w.off:end:end], nil
}

func (w *Writer) closedError() error {
	return fmt.Errorf("fifo %s: Writer.Acquire after Close: %w", w.f.name, ErrWriterClosed)
}

func (w *Writer) waitRoom(ctx context.Context, n int) error {
	f := w.f
	// Room for n means the slowest reader at or past wpos+n-capacity.
	need := w.wpos + uint64(n) - uint64(f.capacity)
	return f.block(ctx, &w.waiter, &w.stat, need, w.wpos, true, n, func() bool {
		w.refresh()
		return w.room() >= n
	})
}

// TryAcquire returns the room available now, up to n tokens, as one
// contiguous window (empty when there is none, when n <= 0, or after
// Close). n larger than Capacity is treated as Capacity.
func (w *Writer) TryAcquire(n int) []byte {
	f := w.f
	if n <= 0 || w.isClosed {
		return nil
	}
	n = min(n, f.capacity)
	if w.room() < n {
		w.refresh()
	}
	n = min(n, w.room())
	if n <= 0 {
		return nil
	}
	if n > w.acquired {
		w.acquired = n
	}
	end := w.off + n*f.tokenSize
	return f.buf[w.off:end:end]
}

// TryAcquireAt returns room for tokens skip to skip+n past the writer's
// position as one contiguous window, or nil unless there is room for all
// skip+n (or when n <= 0, skip < 0, skip+n > Capacity, or after Close).
// The room for skip+n tokens stays acquired as after TryAcquire(skip+n).
// Commit the tokens in order; with external Memory a window that crosses
// the ring's end must be committed by one Commit that covers its end (as a
// device's invocation is), or its tokens past the end are lost.
func (w *Writer) TryAcquireAt(skip, n int) []byte {
	f := w.f
	if n <= 0 || skip < 0 || skip+n > f.capacity || w.isClosed {
		return nil
	}
	if w.room() < skip+n {
		w.refresh()
		if w.room() < skip+n {
			return nil
		}
	}
	if skip+n > w.acquired {
		w.acquired = skip + n
	}
	off := w.off + skip*f.tokenSize
	if off >= f.size {
		off -= f.size
	}
	end := off + n*f.tokenSize
	return f.buf[off:end:end]
}

// Commit publishes the first n tokens of the acquired window to the
// readers and wakes a reader parked waiting for them. n must not exceed
// the tokens acquired (it panics otherwise: a programming error, like an
// index out of range). The rest of the window stays acquired.
func (w *Writer) Commit(n int) {
	if uint(n) > uint(w.acquired) {
		panic(fmt.Sprintf("fifo %s: Writer.Commit(%d): expected 0 <= n <= acquired (%d tokens)", w.f.name, n, w.acquired))
	}
	if n == 0 {
		return
	}
	f := w.f
	nb := n * f.tokenSize
	if !f.mirrored {
		f.fixupWrite(w.off, nb)
	}
	w.acquired -= n
	w.wpos += uint64(n)
	w.off += nb
	if w.off >= f.size {
		w.off -= f.size
	}
	if f.wait == Spin && f.spinSides.Load() > 0 {
		// On the line that the next store writes; stored only when it
		// changed (an atomic store is a locked instruction), and only
		// while a side spins (a spinning wait reads it, see peerOn).
		if p := curP(); p != w.lastProc {
			w.proc.Store(p)
			w.lastProc = p
		}
	}
	w.pos.Store(w.wpos)
	for i := range f.readers {
		r := &f.readers[i]
		if r.wants(w.wpos) {
			r.signal()
		}
	}
	// Peak fill: the cached view overestimates, so look at the readers
	// only when it suggests a new peak.
	if w.wpos-w.minSeen > w.peakSeen {
		w.refresh()
		if fill := w.wpos - w.minSeen; fill > w.peakSeen {
			w.peakSeen = fill
			f.peak.Store(fill)
		}
	}
}

// Write copies p (a whole number of tokens) into the FIFO, blocking for room
// as needed; p may be longer than the capacity. It returns nil once all of p
// is committed, or an error (wrapping ErrInvalid, ErrWriterClosed or
// ctx.Err()); tokens committed before a cancellation stay committed.
func (w *Writer) Write(ctx context.Context, p []byte) error {
	f := w.f
	if len(p)%f.tokenSize != 0 {
		return f.lenError("Writer", "Write", len(p))
	}
	if w.isClosed {
		return w.closedError()
	}
	for len(p) > 0 {
		want := len(p) / f.tokenSize
		win := w.TryAcquire(want)
		if len(win) == 0 {
			if _, err := w.Acquire(ctx, 1); err != nil {
				return err
			}
			win = w.TryAcquire(want)
		}
		c := copy(win, p)
		p = p[c:]
		w.copied.Add(int64(c))
		w.Commit(c / f.tokenSize)
	}
	return nil
}

// Close ends the stream: readers receive every committed token, then
// ErrClosed. Tokens acquired and not committed are dropped. Acquire after
// Close returns an error wrapping ErrWriterClosed. Close is idempotent.
func (w *Writer) Close() {
	if w.isClosed {
		return
	}
	w.isClosed = true
	w.acquired = 0
	w.closed.Store(true)
	f := w.f
	for i := range f.readers {
		f.readers[i].signal()
	}
}

// Closed reports whether Close was called.
func (w *Writer) Closed() bool { return w.closed.Load() }

// Room returns the number of tokens the writer could acquire now without
// blocking (0 after Close).
func (w *Writer) Room() int {
	if w.isClosed {
		return 0
	}
	w.refresh()
	return w.room()
}

// Position returns the number of tokens committed since creation, initial
// tokens included.
func (w *Writer) Position() uint64 { return w.pos.Load() }

// Blocked reports whether the writer is waiting in Acquire right now: parked,
// or spinning past its first 64 polls (safe from any goroutine).
func (w *Writer) Blocked() bool { return w.need.Load() != 0 || w.stat.spinning.Load() }

// BlockedTime returns the total time the writer has spent waiting for room
// (safe from any goroutine). With the Park strategy a wait that one yield
// ends (the other side answered within its turn: a few hundred ns) is not
// counted, so that such hand-offs read no clock; with Spin, likewise, a
// wait that ends within its first 64 polls or its first yield.
func (w *Writer) BlockedTime() time.Duration { return time.Duration(w.stat.ns.Load()) }

// SpinWaits returns, for a FIFO with the Spin strategy, how many of the
// writer's waits (those its first poll did not end) spun and how many
// waited as Park does because its tuner found parking faster (see
// docs/fifo.md, "Wait strategies"); both are 0 for other strategies. The
// counts are the writing goroutine's own: call it from that goroutine, or
// once it is done with the writer (after a channel or WaitGroup that it
// signals when it ends).
func (w *Writer) SpinWaits() (spun, parked int64) {
	return w.stat.spun, w.stat.parked
}
