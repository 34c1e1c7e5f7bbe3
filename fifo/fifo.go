package fifo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// ErrClosed reports the end of a stream: the writer closed it and fewer
// tokens remain than a reader asked for. Errors returned by the package wrap
// it; test with errors.Is.
var ErrClosed = errors.New("end of stream")

// ErrWriterClosed is wrapped by the error a Writer's Acquire (or Write)
// returns after Close: writing to a closed stream is a programming error.
var ErrWriterClosed = errors.New("write after close")

// ErrInvalid is wrapped by every error about an invalid argument: bad
// Options, a token count out of range, a buffer whose length is not a
// multiple of the token size.
var ErrInvalid = errors.New("invalid argument")

// ErrDetached is wrapped by the error a Reader's Acquire returns after the
// reader was closed with [Reader.Close].
var ErrDetached = errors.New("reader closed")

// WaitStrategy selects how a blocked Acquire waits for the other side.
type WaitStrategy int

const (
	// SpinPark spins for Options.SpinTime (DefaultSpinTime when zero), then
	// parks the goroutine. The default.
	SpinPark WaitStrategy = iota
	// Spin busy-waits where that pays: while the two sides run on
	// processors (the Go scheduler's Ps) of their own. Each side publishes
	// its processor with its position. A wait whose other side last
	// published from the waiter's processor yields it first, as Park
	// does (the other side cannot run while it spins); one whose other
	// side is elsewhere polls, yields after 1 µs and at doubling
	// intervals, and parks after 50 µs (the other side's thread is off
	// its core). Each side also measures, now and then, its progress
	// spinning and parking, and waits as Park does for a while where
	// parking serves it better: where the cores are far apart, or where
	// its waits keep outlasting 1 µs although its partner answers faster
	// than that as a rule (the partner's thread is off its core). Lowest
	// latency where both sides have cores of their own; burns a core
	// while it spins. docs/fifo.md, "Wait strategies", has the details.
	Spin
	// Park yields the processor once, then blocks the goroutine until the
	// other side signals (or the context ends). Cheapest while waiting, a
	// wakeup costs a scheduler hop.
	Park
)

// DefaultSpinTime is how long SpinPark spins before parking when
// Options.SpinTime is zero.
const DefaultSpinTime = 5 * time.Microsecond

// String returns the name ParseWaitStrategy accepts: "spin-park", "spin"
// or "park".
func (w WaitStrategy) String() string {
	switch w {
	case SpinPark:
		return "spin-park"
	case Spin:
		return "spin"
	case Park:
		return "park"
	}
	return fmt.Sprintf("WaitStrategy(%d)", int(w))
}

// ParseWaitStrategy parses "spin", "spin-park" or "park" (case-insensitive;
// "spinpark" and "spin_park" are accepted too, and "" means the default,
// SpinPark).
func ParseWaitStrategy(s string) (WaitStrategy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "spin-park", "spinpark", "spin_park", "":
		return SpinPark, nil
	case "spin":
		return Spin, nil
	case "park":
		return Park, nil
	}
	return 0, fmt.Errorf("fifo: wait strategy: expected one of spin, spin-park, park; found %q: %w", s, ErrInvalid)
}

// Options configure a FIFO. TokenSize and Capacity are required.
type Options struct {
	// Name identifies the FIFO in error messages, e.g. "a.out->b.in".
	Name string
	// TokenSize is the size of one token in bytes, > 0.
	TokenSize int
	// Capacity is the logical capacity in tokens, > 0. It is exact: the
	// writer can never be more than Capacity tokens ahead of the slowest
	// reader, whatever the size of the physical ring.
	Capacity int
	// Readers is the number of read cursors (broadcast); 0 means 1.
	Readers int
	// Wait selects how blocked Acquire calls wait; the zero value is
	// SpinPark.
	Wait WaitStrategy
	// SpinTime is how long SpinPark spins before parking; 0 means
	// DefaultSpinTime. Ignored by Spin and Park.
	SpinTime time.Duration
	// Initial is the number of tokens present at creation (delays), 0 <=
	// Initial <= Capacity. They are zero-valued unless InitialData is given.
	Initial int
	// InitialData, when not nil, holds the initial tokens:
	// len(InitialData) == Initial*TokenSize.
	InitialData []byte
	// NoWaitTime skips measuring the time blocked in Acquire: the readers'
	// and the writer's BlockedTime stay 0, and a blocking wait reads the
	// clock only where SpinPark needs its deadline and Spin its yields. Two clock reads are a
	// large part of a parked hand-off where reading the clock is slow (a
	// virtual machine's clock source): see docs/fifo.md, "Wait strategies".
	NoWaitTime bool
	// NoMirror forces the portable buffer even where the mirrored mapping is
	// available (for tests and for comparison; see FIFO.Mirrored).
	NoMirror bool
	// Memory, when not nil, is where the FIFO keeps its tokens instead of
	// memory of its own: e.g. pinned host memory of a device, so that the
	// device's copies from and to windows run by DMA. The FIFO does not own
	// it (Free leaves it alone) and uses the portable layout in it: a ring
	// of len(Memory) - Capacity*TokenSize bytes (rounded down to whole
	// tokens; at least Capacity tokens) followed by a tail of Capacity
	// tokens. Unlike the portable buffer in the FIFO's own memory, the tail
	// is brought up to date only for windows that cross the ring's end (a
	// writer's on Commit, a reader's when acquired), so a ring whose size
	// is a multiple of every window size copies nothing. It needs exactly
	// one reader.
	Memory []byte
}

// maxRingBytes bounds Capacity*TokenSize (1 TiB).
const maxRingBytes = 1 << 40

// maxReaders bounds Options.Readers.
const maxReaders = 1 << 16

// FIFO is a bounded ring buffer of fixed-size tokens with one Writer and one
// or more Readers. Create it with New; release its memory with Free.
type FIFO struct {
	writer  Writer
	readers []Reader

	name      string
	tokenSize int
	capacity  int
	wait      WaitStrategy
	spinTime  time.Duration
	untimed   bool // Options.NoWaitTime
	// spinSides counts, for a Spin FIFO, the sides whose tuner spins (see
	// tuner): while it is 0, every side waits as Park does and nobody
	// reads the processors the sides publish, so Commit and Release skip
	// that. It changes only when a tuner changes its mode.
	spinSides atomic.Int32

	buf      []byte // mirrored: 2*size bytes; portable: size+tail bytes
	size     int    // bytes in the physical ring
	tail     int    // portable only: bytes of ring start mirrored after the end
	mirrored bool
	lazy     bool // external Memory: the tail is fixed up only for windows crossing the end
	// tailCopied counts the bytes copied between a portable ring and its
	// tail (fixupWrite, fixupRead).
	tailCopied atomic.Int64

	peak    atomic.Uint64 // max tokens ever held; written by the writer
	freed   atomic.Bool
	release func() error // unmaps (mirrored); nil for the portable buffer
	cleanup runtime.Cleanup

	errClosed error // prebuilt so end of stream allocates nothing

	// modeHook, when set (by tests), chooses for every Spin wait whether
	// it parks, in place of the side's tuner.
	modeHook func() bool
}

// New creates a FIFO. Its errors wrap ErrInvalid and say what was expected,
// what was found, and the FIFO's name.
func New(opts Options) (*FIFO, error) {
	where := quoteName(opts.Name)
	bad := func(field, expected string, found any) error {
		return fmt.Errorf("fifo %s: %s: expected %s, found %v: %w", where, field, expected, found, ErrInvalid)
	}
	switch {
	case opts.TokenSize <= 0:
		return nil, bad("TokenSize", "> 0", opts.TokenSize)
	case opts.Capacity <= 0:
		return nil, bad("Capacity", "> 0 tokens", opts.Capacity)
	case int64(opts.Capacity) > maxRingBytes/int64(opts.TokenSize):
		return nil, bad("Capacity*TokenSize", fmt.Sprintf("<= %d bytes", int64(maxRingBytes)),
			fmt.Sprintf("%d*%d", opts.Capacity, opts.TokenSize))
	case opts.Readers < 0 || opts.Readers > maxReaders:
		return nil, bad("Readers", fmt.Sprintf("0..%d (0 means 1)", maxReaders), opts.Readers)
	case opts.Wait < SpinPark || opts.Wait > Park:
		return nil, bad("Wait", "SpinPark, Spin or Park", opts.Wait)
	case opts.SpinTime < 0:
		return nil, bad("SpinTime", ">= 0", opts.SpinTime)
	case opts.Initial < 0 || opts.Initial > opts.Capacity:
		return nil, bad("Initial", fmt.Sprintf("0..Capacity (%d) tokens", opts.Capacity), opts.Initial)
	case opts.InitialData != nil && len(opts.InitialData) != opts.Initial*opts.TokenSize:
		return nil, bad("len(InitialData)", fmt.Sprintf("Initial*TokenSize = %d*%d = %d bytes",
			opts.Initial, opts.TokenSize, opts.Initial*opts.TokenSize), len(opts.InitialData))
	}
	nr := opts.Readers
	if nr == 0 {
		nr = 1
	}
	need := opts.Capacity * opts.TokenSize
	if opts.Memory != nil {
		switch {
		case nr != 1:
			return nil, bad("Readers", "1 with Memory", nr)
		case len(opts.Memory) < 2*need:
			return nil, bad("len(Memory)", fmt.Sprintf(">= 2*Capacity*TokenSize = %d bytes", 2*need), len(opts.Memory))
		}
	}
	f := &FIFO{
		name:      where,
		tokenSize: opts.TokenSize,
		capacity:  opts.Capacity,
		wait:      opts.Wait,
		spinTime:  opts.SpinTime,
		untimed:   opts.NoWaitTime,
		readers:   make([]Reader, nr),
	}
	if f.spinTime == 0 {
		f.spinTime = DefaultSpinTime
	}
	f.errClosed = fmt.Errorf("fifo %s: %w", where, ErrClosed)

	if opts.Memory != nil {
		f.tail = need
		f.size = (len(opts.Memory) - need) / opts.TokenSize * opts.TokenSize
		f.buf = opts.Memory[: f.size+f.tail : f.size+f.tail]
		f.lazy = true
	} else if !opts.NoMirror {
		if size, ok := mirrorSize(need, opts.TokenSize); ok {
			if buf, rel, err := mapMirror(size); err == nil {
				f.buf, f.size, f.release, f.mirrored = buf, size, rel, true
				f.cleanup = runtime.AddCleanup(f, func(rel func() error) { _ = rel() }, rel)
			}
		}
	}
	if !f.mirrored && !f.lazy {
		// Portable buffer: a ring of 2*Capacity tokens followed by a tail
		// that mirrors the ring's first Capacity slots (kept up to date by
		// the writer), so every window of at most Capacity tokens is
		// contiguous.
		f.size = 2 * need
		f.tail = need
		f.buf = make([]byte, f.size+f.tail)
	}

	f.writer.f = f
	f.writer.wake = make(chan struct{}, 1)
	f.writer.proc.Store(noProc)
	f.writer.lastProc = noProc
	f.writer.spin = f.wait == Spin
	if f.wait == Spin {
		f.spinSides.Store(int32(1 + len(f.readers)))
	}
	for i := range f.readers {
		r := &f.readers[i]
		r.f, r.idx = f, i
		r.wake = make(chan struct{}, 1)
		r.proc.Store(noProc)
		r.lastProc = noProc
		r.spin = f.wait == Spin
	}
	if opts.Initial > 0 {
		nb := opts.Initial * opts.TokenSize
		if opts.InitialData != nil {
			copy(f.buf[:nb], opts.InitialData)
		}
		if !f.mirrored && !f.lazy {
			f.fixupWrite(0, nb)
		}
		w := &f.writer
		w.wpos = uint64(opts.Initial)
		w.off = nb
		w.pos.Store(w.wpos)
		w.peakSeen = w.wpos
		f.peak.Store(w.wpos)
	}
	return f, nil
}

func quoteName(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return fmt.Sprintf("%q", name)
}

// mirrorSize returns the size of the mirrored ring for need bytes: the
// smallest multiple of lcm(page size, token size) that holds need bytes. It
// refuses (false) when that would waste more than the need itself and more
// than 1 MiB (token sizes with a large odd factor): the portable buffer is
// used then.
func mirrorSize(need, tokenSize int) (int, bool) {
	page := os.Getpagesize()
	unit := page / gcd(page, tokenSize) * tokenSize
	size := (need + unit - 1) / unit * unit
	if size-need > need && size-need > 1<<20 {
		return 0, false
	}
	return size, true
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fixupWrite keeps the portable buffer's tail equal to the ring's first
// f.tail bytes after the writer wrote [off, off+nb) (off < size; the range
// may run into the tail).
func (f *FIFO) fixupWrite(off, nb int) {
	end := off + nb
	if off < f.tail && !f.lazy {
		e := min(end, f.size, f.tail)
		f.tailCopied.Add(int64(copy(f.buf[f.size+off:f.size+e], f.buf[off:e])))
	}
	if end > f.size {
		f.tailCopied.Add(int64(copy(f.buf[:end-f.size], f.buf[f.size:end])))
	}
}

// fixupRead makes the tail equal to the ring's start up to end (end >
// f.size), for a reader's window [off, end) that crosses the end of a lazy
// ring. The writer is never inside that part of the tail at the same time:
// it cannot cross the same end while a reader's window does.
func (f *FIFO) fixupRead(end int) {
	f.tailCopied.Add(int64(copy(f.buf[f.size:end], f.buf[:end-f.size])))
}

// window returns the bytes of n tokens at byte offset off of the ring
// (off < f.size) for a reader (fixing a lazy tail up) or a writer.
func (f *FIFO) window(off, n int, reader bool) []byte {
	end := off + n*f.tokenSize
	if reader && f.lazy && end > f.size {
		f.fixupRead(end)
	}
	return f.buf[off:end:end]
}

// Writer returns the FIFO's writer. Exactly one goroutine may use it.
func (f *FIFO) Writer() *Writer { return &f.writer }

// Reader returns read cursor i, 0 <= i < Readers (it panics otherwise).
// Exactly one goroutine may use each reader.
func (f *FIFO) Reader(i int) *Reader {
	if i < 0 || i >= len(f.readers) {
		panic(fmt.Sprintf("fifo %s: Reader(%d): expected 0 <= i < %d", f.name, i, len(f.readers)))
	}
	return &f.readers[i]
}

// Readers returns the number of read cursors.
func (f *FIFO) Readers() int { return len(f.readers) }

// Name returns the FIFO's name as given in Options (quoted), or "(unnamed)".
func (f *FIFO) Name() string { return f.name }

// TokenSize returns the size of a token in bytes.
func (f *FIFO) TokenSize() int { return f.tokenSize }

// Capacity returns the logical capacity in tokens.
func (f *FIFO) Capacity() int { return f.capacity }

// Wait returns the FIFO's wait strategy.
func (f *FIFO) Wait() WaitStrategy { return f.wait }

// Mirrored reports whether the ring is a mirrored (double-mapped) mapping.
// When false the portable buffer is in use: windows are still contiguous,
// but the writer copies tokens landing in the ring's first Capacity slots a
// second time, into the tail.
func (f *FIFO) Mirrored() bool { return f.mirrored }

// RingBytes returns the size of the physical ring in bytes (>=
// Capacity*TokenSize; a multiple of the page size when mirrored).
func (f *FIFO) RingBytes() int { return f.size }

// Len returns the number of tokens currently held for the slowest reader
// (committed and not yet released). Readers closed with Reader.Close do not
// count; with none left Len is 0.
func (f *FIFO) Len() int {
	w := f.writer.pos.Load()
	return int(w - f.minReaderPos(w))
}

// PeakFill returns the largest number of tokens the FIFO held right after a
// commit (or at creation): the fill statistic for buffer sizing.
func (f *FIFO) PeakFill() int { return int(f.peak.Load()) }

// CopiedBytes returns the bytes moved by the copy-access calls Writer.Write
// and Reader.Read (window access adds nothing).
func (f *FIFO) CopiedBytes() int64 {
	n := f.writer.copied.Load()
	for i := range f.readers {
		n += f.readers[i].copied.Load()
	}
	return n
}

// TailCopiedBytes returns the bytes a ring that is not mirrored copied
// between its end and its tail to keep windows contiguous (0 for a
// mirrored ring, and for one whose windows never cross its end).
func (f *FIFO) TailCopiedBytes() int64 { return f.tailCopied.Load() }

// Blocked reports which sides are waiting in Acquire right now (parked, or
// spinning past their first 64 polls): the indexes of the blocked
// readers and whether the writer is blocked. It is cheap (one atomic load
// per side) and meant for a deadlock watchdog that samples every FIFO: a
// graph whose every actor has been blocked for a while, with no progress
// in between, is deadlocked. It allocates only when some reader is blocked.
func (f *FIFO) Blocked() (readers []int, writer bool) {
	for i := range f.readers {
		if f.readers[i].Blocked() {
			readers = append(readers, i)
		}
	}
	return readers, f.writer.Blocked()
}

// Progress returns the writer's position and the sum of the readers'
// positions (tokens committed and released since creation, initial tokens
// included): a watchdog sees progress when either changes.
func (f *FIFO) Progress() (written, read uint64) {
	written = f.writer.pos.Load()
	for i := range f.readers {
		read += f.readers[i].pos.Load()
	}
	return written, read
}

// Free releases the FIFO's memory (unmaps the mirrored ring). Call it once,
// after the writer and every reader are done; windows must not be used
// afterwards. Further calls do nothing. A FIFO that becomes unreachable
// without Free is unmapped by a cleanup, but only Free is deterministic.
// Free also lets go of the contexts its sides last parked with: each keeps
// the FIFO reachable, to wake a parked side when it ends, until it ends or
// Free is called.
func (f *FIFO) Free() error {
	if f.freed.Swap(true) {
		return nil
	}
	f.writer.unwatch()
	for i := range f.readers {
		f.readers[i].unwatch()
	}
	var err error
	if f.release != nil {
		f.cleanup.Stop()
		if e := f.release(); e != nil {
			err = fmt.Errorf("fifo %s: free: %w", f.name, e)
		}
		f.release = nil
	}
	f.buf = nil
	return err
}

// minReaderPos returns the slowest attached reader's position, or w when no
// reader is attached.
func (f *FIFO) minReaderPos(w uint64) uint64 {
	m := w
	for i := range f.readers {
		r := &f.readers[i]
		if r.detached.Load() {
			continue
		}
		if p := r.pos.Load(); p < m {
			m = p
		}
	}
	return m
}

// countError reports a token count out of range.
func (f *FIFO) countError(side, call string, n int) error {
	return fmt.Errorf("fifo %s: %s.%s(%d): expected 0 <= n <= Capacity (%d tokens): %w",
		f.name, side, call, n, f.capacity, ErrInvalid)
}

func (f *FIFO) lenError(side, call string, n int) error {
	return fmt.Errorf("fifo %s: %s.%s: expected a length that is a multiple of the token size %d, found %d bytes: %w",
		f.name, side, call, f.tokenSize, n, ErrInvalid)
}

// waiter is the parking state of one side, on its own cache line: one word
// that the other side loads after every publish. need is 0 unless the side
// is parked; while it is, need holds the other side's position that makes
// it ready, and a publish that reaches it sends a token on wake. A
// spinning side writes nothing here (see waitStat), so the other side's
// loads find the line unchanged.
type waiter struct {
	need atomic.Uint64
	wake chan struct{}
	spin bool // the FIFO's strategy is Spin (see signal)
	// The context whose end signals wake (see watch): its Done channel and
	// the function that stops the registration. Used by the side's own
	// goroutine only, and by Free.
	watched   <-chan struct{}
	stopWatch func() bool
}

// wants reports whether a side that has just moved to pos must signal ws.
func (ws *waiter) wants(pos uint64) bool {
	n := ws.need.Load()
	return n != 0 && pos >= n
}

// waitStat is a side's own record of its waits, on its private cache
// line: whether it is spinning in Acquire now, and the time it has spent
// blocked. Only the side's goroutine writes it; statistics and the
// watchdog read it.
type waitStat struct {
	spinning atomic.Bool
	ns       atomic.Int64
	// spun and parked count a Spin side's waits past the first poll by
	// the mode its tuner chose (see Writer.SpinWaits). Only the side's
	// goroutine uses them.
	spun, parked int64
	// yieldSoon: the side's last spinning wait of SpinPark ended right
	// after a yield, so the other side ran in its turn — the two share a
	// processor — and the next wait yields after a few polls rather
	// than spinCheck (see spin). Only the side's goroutine uses it.
	yieldSoon bool
	// tune chooses between spinning and parking for a Spin side (see
	// tuner). Only the side's goroutine uses it.
	tune tuner
}

// signal wakes the side if it is parked (a token in a full channel, one
// spurious re-check at most, if not). A goroutine woken so waits in the
// signalling goroutine's processor's runnext slot: for a Spin FIFO,
// markReadied tells a Spin wait on that processor to let it run first.
func (ws *waiter) signal() {
	select {
	case ws.wake <- struct{}{}:
		if ws.spin {
			markReadied()
		}
	default:
	}
}

// spinCheck is how many polls pass between checks of the clock and the
// context while spinning.
const spinCheck = 64

// block waits until ready returns true, by the FIFO's strategy. need is the
// other side's position that makes ready true (for the wakeup filter; at
// least 1). st is the caller's record of its waits, own its position (the
// writer's written position, the reader's read position) and writer tells
// which side it is.
func (f *FIFO) block(ctx context.Context, ws *waiter, st *waitStat,
	need, own uint64, writer bool, n int, ready func() bool) error {
	if ready() {
		return nil
	}
	// A SpinPark wait is timed from here (it needs the clock for its
	// deadline); a Park or Spin one only once its yield or its first
	// spinCheck polls have not ended it: a hand-off within those then
	// reads no clock.
	var t0 int64
	var err error
	switch f.wait {
	case Spin:
		var found uint8
		t0, found, err = f.waitSpin(ctx, ws, st, need, writer, ready)
		if err == nil {
			parked := st.tune.park
			st.tune.after(own, found)
			if st.tune.park != parked {
				d := int32(1)
				if st.tune.park {
					d = -1
				}
				f.spinSides.Add(d)
			}
		}
	case SpinPark:
		t0, err = f.blockSlow(ctx, ws, st, nanotime(), need, ready)
	default:
		t0, err = f.blockSlow(ctx, ws, st, 0, need, ready)
	}
	if !f.untimed && t0 != 0 {
		st.ns.Store(st.ns.Load() + nanotime() - t0)
	}
	if err != nil {
		who := "reader"
		if writer {
			who = "writer"
		}
		return fmt.Errorf("fifo %s: %s waiting for %d tokens: %w", f.name, who, n, err)
	}
	return nil
}

// blockSlow is the wait of Park and SpinPark past block's first poll; it
// returns when its timing started (start, or the time it went on to park;
// 0: not timed).
func (f *FIFO) blockSlow(ctx context.Context, ws *waiter, st *waitStat, start int64, need uint64, ready func() bool) (int64, error) {
	if f.wait == SpinPark {
		ok, err := f.spin(ctx, st, start, ready)
		if ok || err != nil {
			return start, err
		}
	}
	// One yield before parking: the other side, readied by this side's
	// last publish, often answers within its turn, and then neither side
	// pays for a park and a wake-up. (Yielding to the caller's own
	// processor's run queue instead, runtime.goyield, was no faster at 2
	// and 4 cores and slower at 8 and 16: idle processors steal from that
	// queue too; docs/fifo.md.)
	runtime.Gosched()
	if ready() {
		return start, nil
	}
	if start == 0 && !f.untimed {
		start = nanotime()
	}
	ws.need.Store(need)
	err := park(ctx, ws, ready)
	ws.need.Store(0)
	return start, err
}

// spin is SpinPark's spinning: it polls ready until it is true (true), the
// context ends (its error), or SpinTime has passed since start (false).
// Every spinCheck polls it checks the context and the deadline and yields
// by runtime.Gosched — which offers the spinner to an idle processor, so
// two spinners that started on one processor spread over two cores — and
// every 16th time by sched_yield, so that a spinner lets its partner's
// thread run on an oversubscribed machine. The side says that it spins
// (st.spinning) once it has yielded.
//
// When the other side answered right after one of this side's yields (it
// ran in this side's turn: the two goroutines share a processor), the next
// wait yields after yieldSoonPolls polls instead of spinCheck, and goes
// back to spinCheck (st.yieldSoon cleared) once an answer comes between
// its yields (the two are on two cores again). The Spin strategy waits
// otherwise (waitSpin).
func (f *FIFO) spin(ctx context.Context, st *waitStat, start int64, ready func() bool) (bool, error) {
	done := ctx.Done()
	flagged := false
	defer func() {
		if flagged {
			st.spinning.Store(false)
		}
	}()
	every := spinCheck
	if st.yieldSoon {
		every = yieldSoonPolls
	}
	afterYield := false // the last poll followed a yield
	for i := 1; ; i++ {
		if ready() {
			st.yieldSoon = afterYield
			return true, nil
		}
		afterYield = false
		if i%every != 0 {
			continue
		}
		select {
		case <-done:
			return false, ctx.Err()
		default:
		}
		if nanotime()-start >= int64(f.spinTime) {
			return false, nil
		}
		if !flagged {
			st.spinning.Store(true)
			flagged = true
		}
		if i%(16*spinCheck) == 0 {
			osYield()
		} else {
			runtime.Gosched()
		}
		afterYield = true
	}
}

// yieldSoonPolls is how many polls a SpinPark spinner whose partner shares
// its processor makes between yields (see spin).
const yieldSoonPolls = 4

// park blocks on ws.wake until ready is true or the context ends; the
// caller has published what it needs in ws.need. A cancellable context
// wakes it through ws.wake too (see waiter.watch), so that parking is a
// plain receive: a select on ctx.Done() as well would lock that channel,
// which every goroutine of a run shares, on each park and each wake-up.
func park(ctx context.Context, ws *waiter, ready func() bool) error {
	done := ctx.Done()
	if done != nil && done != ws.watched {
		ws.watch(ctx, done)
	}
	for {
		if ready() {
			return nil
		}
		if done != nil {
			select {
			case <-done:
				return ctx.Err()
			default:
			}
		}
		<-ws.wake
	}
}

// watch makes the end of ctx (whose Done channel is done) signal ws, by
// context.AfterFunc, in place of the registration for an earlier context.
// It is kept from park to park while the context stays the same: a side
// waits with one context for its whole life, as a run's actors do. The
// context holds on to ws until it ends or unwatch stops it.
func (ws *waiter) watch(ctx context.Context, done <-chan struct{}) {
	ws.unwatch()
	ws.watched = done
	ws.stopWatch = context.AfterFunc(ctx, ws.signal)
}

// unwatch stops the registration made by watch, if any.
func (ws *waiter) unwatch() {
	if ws.stopWatch != nil {
		ws.stopWatch()
		ws.stopWatch, ws.watched = nil, nil
	}
}
