// Package fifo implements sluice's channels: bounded ring buffers of
// fixed-size tokens with one writer and one or more readers, windowed
// (zero-copy) access, end of stream, and selectable wait strategies.
//
// # Model
//
// A FIFO holds at most Capacity tokens of TokenSize bytes each. Exactly one
// goroutine writes through the [Writer]; each of Readers goroutines reads
// through its own [Reader]. With several readers the FIFO is a broadcast:
// every reader sees every token, in order, from the same memory (nothing is
// copied per reader), and the writer's room is limited by the slowest reader.
//
// Access is by windows, the ACOTES acquire/push/pop and HDPC
// acquire/release model:
//
//	win, err := w.Acquire(ctx, n) // n tokens of room, one contiguous []byte
//	... fill win ...
//	w.Commit(n)                   // publish them to the readers
//
//	win, err := r.Acquire(ctx, n) // the next n tokens, one contiguous []byte
//	... use win ...
//	r.Release(n)                  // give the slots back to the writer
//
// A window is always contiguous, also where the ring wraps: on Linux the
// ring's pages are mapped twice, back to back (memfd_create + two MAP_FIXED
// mappings inside one reservation), so the bytes after the end of the ring are
// the bytes at its start. Elsewhere, or when the mapping cannot be made, a
// portable buffer with a mirrored tail is used instead (see [FIFO.Mirrored]);
// the API and semantics are identical, the writer then copies the tokens that
// land in the first Capacity slots of the ring a second time.
//
// Acquire never moves the stream: acquiring twice returns the same first
// tokens (a longer window if asked). Commit and Release move it. The copy
// interfaces [Writer.Write] and [Reader.Read] (HDPC read/write) are built on
// windows and count their bytes in [FIFO.CopiedBytes].
//
// [Tokens] and [Bytes] view a window as a typed slice without copying, e.g.
// fifo.Tokens[float32](win).
//
// # Positions, capacity, initial tokens
//
// Positions are monotonically increasing uint64 token counts, one written
// position and one read position per reader, each on its own cache line; each
// side caches the position it last saw of the other side, so the hot path
// touches shared cache lines only when its cached view runs out. The writer's
// room is exactly Capacity - (written - slowest read); the physical ring may
// be larger (a multiple of the page size and of the token size), but the
// writer never gets more than Capacity tokens ahead. Options.Initial tokens
// (delays, ACOTES initial values, Caravela INITONCE) are present at creation.
//
// # End of stream
//
// [Writer.Close] ends the stream. Readers still receive every committed
// token; an Acquire of n tokens that can no longer be satisfied returns an
// error matching [ErrClosed] (the remainder is still available through
// TryAcquire), and [Reader.Open] reports false once the stream is closed and
// the reader has drained it (ACOTES task_allopen).
//
// # Waiting
//
// A blocked Acquire waits according to the FIFO's [WaitStrategy]: [Spin]
// busy-waits while both sides run on processors of their own and waits
// as Park does otherwise (each side publishes its processor with its
// position, and measures now and then which of the two serves it
// better), [Park] yields its processor once and then blocks the
// goroutine, [SpinPark] (the default) spins a few microseconds and then
// parks. Waiting honours the context: cancellation returns ctx.Err()
// wrapped with the FIFO's name; a parked side is woken by its context's
// end through [context.AfterFunc], registered once per side and context.
// No wakeup is lost: a waiter publishes that it is parked, re-checks, then
// blocks on a one-slot channel; the other side signals only when it sees
// the flag, so the hot path costs one atomic load. No goroutine is started
// per FIFO (AfterFunc starts one per side only for a context of a type
// that the context package does not know, until it ends or Free).
//
// [FIFO.Blocked] (and [Writer.Blocked], [Reader.Blocked]) report which sides
// are currently waiting in Acquire, for a deadlock watchdog;
// [Writer.BlockedTime] and [Reader.BlockedTime] accumulate the time spent
// waiting (HDPC's blocked-time statistics).
//
// # Concurrency contract
//
// One goroutine at a time uses the Writer, and one goroutine at a time uses
// each Reader. The FIFO's statistics methods (Len, PeakFill, CopiedBytes,
// Blocked, ...) may be called from any goroutine. Free releases the memory
// and must be called once, after every user is done; windows must not be
// used after it.
//
// The steady-state calls (Acquire, TryAcquire, Commit, Release, Write, Read
// when they do not fail) allocate nothing.
package fifo
