package fifo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var strategies = []WaitStrategy{SpinPark, Spin, Park}

func mustNew(t testing.TB, o Options) *FIFO {
	t.Helper()
	f, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	t.Cleanup(func() {
		if err := f.Free(); err != nil {
			t.Errorf("Free: %v", err)
		}
	})
	return f
}

// tokenByte is the content of byte j of token s.
func tokenByte(s uint64, j int) byte {
	return byte(s>>(8*(j%8))) ^ byte(j*29) ^ byte(s>>17)
}

func fillTokens(win []byte, ts int, first uint64) {
	for k := 0; k*ts < len(win); k++ {
		s := first + uint64(k)
		tok := win[k*ts : (k+1)*ts]
		for j := range tok {
			tok[j] = tokenByte(s, j)
		}
	}
}

// checkTokens returns the first token of win that does not hold its
// expected content, or -1.
func checkTokens(win []byte, ts int, first uint64) int {
	for k := 0; k*ts < len(win); k++ {
		s := first + uint64(k)
		tok := win[k*ts : (k+1)*ts]
		for j := range tok {
			if tok[j] != tokenByte(s, j) {
				return k
			}
		}
	}
	return -1
}

// sum is an order-sensitive checksum (FNV-1a, 64 bits).
type sum uint64

func newSum() sum { return 14695981039346656037 }

func (h *sum) add(b []byte) {
	x := uint64(*h)
	for _, c := range b {
		x ^= uint64(c)
		x *= 1099511628211
	}
	*h = sum(x)
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want []string
	}{
		{"token size", Options{Name: "a.out->b.in", Capacity: 4}, []string{`"a.out->b.in"`, "TokenSize", "expected > 0", "found 0"}},
		{"negative capacity", Options{Name: "x", TokenSize: 4, Capacity: -1}, []string{`"x"`, "Capacity", "found -1"}},
		{"zero capacity", Options{TokenSize: 4}, []string{"(unnamed)", "Capacity", "found 0"}},
		{"too large", Options{Name: "big", TokenSize: 1 << 20, Capacity: 1 << 30}, []string{"Capacity*TokenSize", "1073741824*1048576"}},
		{"readers", Options{Name: "r", TokenSize: 4, Capacity: 4, Readers: -2}, []string{"Readers", "found -2"}},
		{"wait", Options{Name: "w", TokenSize: 4, Capacity: 4, Wait: 7}, []string{"Wait", "WaitStrategy(7)"}},
		{"spin time", Options{Name: "w", TokenSize: 4, Capacity: 4, SpinTime: -1}, []string{"SpinTime", ">= 0"}},
		{"initial above capacity", Options{Name: "i", TokenSize: 4, Capacity: 4, Initial: 5}, []string{"Initial", "0..Capacity (4)", "found 5"}},
		{"initial negative", Options{Name: "i", TokenSize: 4, Capacity: 4, Initial: -1}, []string{"Initial", "found -1"}},
		{"initial data length", Options{Name: "d", TokenSize: 4, Capacity: 4, Initial: 2, InitialData: make([]byte, 7)},
			[]string{"len(InitialData)", "2*4 = 8 bytes", "found 7"}},
		{"initial data without count", Options{Name: "d", TokenSize: 4, Capacity: 4, InitialData: make([]byte, 4)},
			[]string{"len(InitialData)", "found 4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := New(c.o)
			if err == nil {
				f.Free()
				t.Fatalf("New(%+v) succeeded, expected an error", c.o)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %q does not wrap ErrInvalid", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseWaitStrategy(t *testing.T) {
	cases := []struct {
		in   string
		want WaitStrategy
		ok   bool
	}{
		{"spin", Spin, true}, {"park", Park, true}, {"spin-park", SpinPark, true}, {"SpinPark", SpinPark, true},
		{" Park ", Park, true}, {"", SpinPark, true}, {"sleep", 0, false}, {"spinning", 0, false},
	}
	for _, c := range cases {
		got, err := ParseWaitStrategy(c.in)
		if c.ok != (err == nil) || (c.ok && got != c.want) {
			t.Errorf("ParseWaitStrategy(%q) = %v, %v; expected %v, ok=%v", c.in, got, err, c.want, c.ok)
		}
		if c.ok {
			back, err := ParseWaitStrategy(got.String())
			if err != nil || back != got {
				t.Errorf("round trip of %v via %q: %v, %v", got, got.String(), back, err)
			}
		} else if err != nil && !strings.Contains(err.Error(), c.in) {
			t.Errorf("error %q does not quote the input %q", err, c.in)
		}
	}
}

func TestMirrorLayout(t *testing.T) {
	cases := []struct{ ts, capacity int }{{1, 1}, {4, 1000}, {12, 1000}, {3, 5000}, {4096, 3}, {24, 100000}}
	for _, c := range cases {
		f := mustNew(t, Options{Name: "m", TokenSize: c.ts, Capacity: c.capacity})
		if !f.Mirrored() {
			t.Skipf("no mirrored mapping on this system")
		}
		if f.size%4096 != 0 || f.size%c.ts != 0 || f.size < c.ts*c.capacity {
			t.Errorf("ts=%d cap=%d: ring of %d bytes, expected a multiple of the page and of the token size, >= %d",
				c.ts, c.capacity, f.size, c.ts*c.capacity)
		}
		f.buf[f.size-1] = 42
		f.buf[f.size+3] = 7
		if f.buf[2*f.size-1] != 42 || f.buf[3] != 7 {
			t.Errorf("ts=%d cap=%d: the two mappings are not the same pages", c.ts, c.capacity)
		}
	}
}

// TestStream sends many tokens through FIFOs of various shapes with random
// window sizes on both sides and checks every token, the order, and a
// checksum of everything; the windows must be contiguous across the wrap.
func TestStream(t *testing.T) {
	type tc struct {
		name              string
		ts, capacity, nrd int
		wait              WaitStrategy
		noMirror          bool
		tokens            int
		maxWin            int
	}
	cases := []tc{
		{"12B cap1000 mirrored", 12, 1000, 1, SpinPark, false, 2_000_000, 1000},
		{"12B cap1000 portable", 12, 1000, 1, SpinPark, true, 1_000_000, 1000},
		{"3B cap777 spin", 3, 777, 1, Spin, false, 500_000, 300},
		{"1B cap1 park", 1, 1, 1, Park, false, 20_000, 1},
		{"100B cap10 park", 100, 10, 1, Park, false, 100_000, 10},
		{"4096B cap3 portable", 4096, 3, 1, SpinPark, true, 20_000, 3},
		{"20B cap1000 broadcast3", 20, 1000, 3, SpinPark, false, 300_000, 500},
		{"20B cap513 broadcast2 portable", 20, 513, 2, Park, true, 200_000, 513},
	}
	for _, c := range cases {
		for _, closeEnd := range []bool{true, false} {
			c := c
			name := c.name
			if !closeEnd {
				name += " no close"
			}
			t.Run(name, func(t *testing.T) {
				tokens := c.tokens
				if testing.Short() {
					tokens /= 10
				}
				f := mustNew(t, Options{Name: name, TokenSize: c.ts, Capacity: c.capacity, Readers: c.nrd, Wait: c.wait, NoMirror: c.noMirror})
				if c.noMirror == f.Mirrored() {
					t.Fatalf("Mirrored() = %v with NoMirror %v", f.Mirrored(), c.noMirror)
				}
				wmax := min(c.maxWin, (c.capacity+1)/2)
				rmax := min(c.maxWin, c.capacity+1-wmax)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				var wg sync.WaitGroup
				var wsum sum
				wrapsW := 0
				wg.Add(1)
				go func() {
					defer wg.Done()
					w := f.Writer()
					rng := rand.New(rand.NewPCG(1, uint64(c.ts)))
					wsum = newSum()
					var seq uint64
					for int(seq) < tokens {
						// Blocking windows on both sides must fit together
						// (writer + reader <= capacity+1) or they deadlock, as
						// an SDF graph with too small a buffer does;
						// TryAcquire may ask for anything.
						n := min(1+rng.IntN(wmax), tokens-int(seq))
						var win []byte
						if rng.IntN(4) == 0 {
							win = w.TryAcquire(min(1+rng.IntN(c.capacity), tokens-int(seq)))
							if len(win) == 0 {
								continue
							}
						} else {
							var err error
							win, err = w.Acquire(ctx, n)
							if err != nil {
								t.Errorf("writer Acquire(%d): %v", n, err)
								return
							}
						}
						if len(win)%c.ts != 0 || cap(win) != len(win) {
							t.Errorf("writer window len %d cap %d", len(win), cap(win))
							return
						}
						if w.off+len(win) > f.size {
							wrapsW++
						}
						k := len(win) / c.ts
						if rng.IntN(3) == 0 {
							k = 1 + rng.IntN(k) // commit part of the window
						}
						fillTokens(win[:k*c.ts], c.ts, seq)
						wsum.add(win[:k*c.ts])
						// Capacity is exact: never more than Capacity tokens ahead.
						if held := seq + uint64(k) - f.minReaderPos(seq); held > uint64(c.capacity) {
							t.Errorf("writer holds %d tokens, capacity %d", held, c.capacity)
							return
						}
						w.Commit(k)
						seq += uint64(k)
					}
					if closeEnd {
						w.Close()
					}
				}()
				rsums := make([]sum, c.nrd)
				wrapsR := make([]int, c.nrd)
				for i := range c.nrd {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := f.Reader(i)
						rng := rand.New(rand.NewPCG(2, uint64(i)))
						h := newSum()
						var seq uint64
						for {
							if !closeEnd && int(seq) == tokens {
								break
							}
							n := 1 + rng.IntN(rmax)
							if !closeEnd {
								n = min(n, tokens-int(seq))
							}
							var win []byte
							var err error
							if rng.IntN(4) == 0 {
								win = r.TryAcquire(1 + rng.IntN(c.capacity))
								if len(win) == 0 {
									if !r.Open() {
										break
									}
									continue
								}
							} else {
								win, err = r.Acquire(ctx, n)
								if errors.Is(err, ErrClosed) {
									if r.Open() != (r.Available() > 0) {
										t.Errorf("reader %d: Open() = %v with %d available after close", i, r.Open(), r.Available())
									}
									win = r.TryAcquire(n)
									if len(win) == 0 {
										break
									}
									if len(win) >= n*c.ts {
										t.Errorf("reader %d: ErrClosed for %d tokens but TryAcquire gave %d", i, n, len(win)/c.ts)
									}
								} else if err != nil {
									t.Errorf("reader %d Acquire(%d): %v", i, n, err)
									return
								} else if len(win) != n*c.ts {
									t.Errorf("reader %d: window of %d bytes for %d tokens", i, len(win), n)
									return
								}
							}
							if r.off+len(win) > f.size {
								wrapsR[i]++
							}
							if k := checkTokens(win, c.ts, seq); k >= 0 {
								t.Errorf("reader %d: token %d (window at %d, %d tokens) corrupt: % x", i, seq+uint64(k), seq, len(win)/c.ts, win[k*c.ts:(k+1)*c.ts])
								return
							}
							k := len(win) / c.ts
							if rng.IntN(3) == 0 {
								k = 1 + rng.IntN(k)
							}
							h.add(win[:k*c.ts])
							r.Release(k)
							seq += uint64(k)
							if i == 0 && c.nrd > 1 && rng.IntN(64) == 0 {
								time.Sleep(10 * time.Microsecond) // a slow reader
							}
						}
						if int(seq) != tokens {
							t.Errorf("reader %d got %d tokens, expected %d", i, seq, tokens)
						}
						if closeEnd && r.Open() {
							t.Errorf("reader %d: Open() after end of stream", i)
						}
						rsums[i] = h
					}()
				}
				wg.Wait()
				for i, h := range rsums {
					if h != wsum {
						t.Errorf("reader %d checksum %x, writer %x", i, h, wsum)
					}
				}
				if tokens > 10*c.capacity && c.maxWin > 1 {
					if wrapsW == 0 {
						t.Errorf("writer windows never wrapped")
					}
					for i, n := range wrapsR {
						if n == 0 {
							t.Errorf("reader %d windows never wrapped", i)
						}
					}
				}
				if f.Len() != 0 {
					t.Errorf("Len() = %d at the end", f.Len())
				}
				if p := f.PeakFill(); p < 1 || p > c.capacity {
					t.Errorf("PeakFill() = %d, expected 1..%d", p, c.capacity)
				}
				if f.CopiedBytes() != 0 {
					t.Errorf("CopiedBytes() = %d with window access only", f.CopiedBytes())
				}
			})
		}
	}
}

// TestBroadcast: three readers at different speeds each see every token
// once, in order, and the writer is held back by the slowest.
func TestBroadcast(t *testing.T) {
	for _, ws := range strategies {
		t.Run(ws.String(), func(t *testing.T) {
			const capacity, tokens = 64, 20_000
			f := mustNew(t, Options{Name: "bc", TokenSize: 8, Capacity: capacity, Readers: 3, Wait: ws})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			wg.Add(4)
			go func() {
				defer wg.Done()
				w := f.Writer()
				for s := uint64(0); s < tokens; {
					n := min(1+int(s%17), tokens-int(s))
					win, err := w.Acquire(ctx, n)
					if err != nil {
						t.Error(err)
						return
					}
					ts := Tokens[uint64](win)
					for k := range ts {
						ts[k] = s + uint64(k)
					}
					w.Commit(n)
					s += uint64(n)
				}
				w.Close()
			}()
			delays := []time.Duration{0, 2 * time.Microsecond, 50 * time.Microsecond}
			for i := range 3 {
				go func() {
					defer wg.Done()
					r := f.Reader(i)
					var next uint64
					for {
						win, err := r.Acquire(ctx, 1)
						if errors.Is(err, ErrClosed) {
							break
						}
						if err != nil {
							t.Error(err)
							return
						}
						if v := Tokens[uint64](win)[0]; v != next {
							t.Errorf("reader %d: token %d, expected %d", i, v, next)
							return
						}
						r.Release(1)
						next++
						if next%256 == 0 && delays[i] > 0 {
							time.Sleep(delays[i])
						}
					}
					if next != tokens {
						t.Errorf("reader %d: %d tokens, expected %d", i, next, tokens)
					}
				}()
			}
			wg.Wait()
			if f.Writer().BlockedTime() == 0 {
				t.Errorf("the writer never waited although reader 2 is slow")
			}
		})
	}
}

// TestSlowestReaderHoldsWriter checks, deterministically, that room is
// limited by the slowest reader and that Reader.Close releases the writer.
func TestSlowestReaderHoldsWriter(t *testing.T) {
	f := mustNew(t, Options{Name: "slow", TokenSize: 4, Capacity: 10, Readers: 3})
	w := f.Writer()
	ctx := context.Background()
	if _, err := w.Acquire(ctx, 10); err != nil {
		t.Fatal(err)
	}
	w.Commit(10)
	for i := range 2 { // readers 0 and 1 drain; reader 2 does not
		r := f.Reader(i)
		if _, err := r.Acquire(ctx, 10); err != nil {
			t.Fatal(err)
		}
		r.Release(10)
	}
	if got := w.Room(); got != 0 {
		t.Fatalf("Room() = %d, expected 0 while reader 2 holds 10 tokens", got)
	}
	if win := w.TryAcquire(1); len(win) != 0 {
		t.Fatalf("TryAcquire gave %d bytes with a full FIFO", len(win))
	}
	if f.Len() != 10 {
		t.Fatalf("Len() = %d, expected 10", f.Len())
	}
	r2 := f.Reader(2)
	if _, err := r2.Acquire(ctx, 3); err != nil {
		t.Fatal(err)
	}
	r2.Release(3)
	if got := w.Room(); got != 3 {
		t.Fatalf("Room() = %d, expected 3", got)
	}
	// A writer blocked by reader 2 is released by Reader.Close.
	done := make(chan error)
	go func() {
		_, err := w.Acquire(ctx, 10)
		done <- err
	}()
	waitFor(t, func() bool { return w.Blocked() })
	if rd, wb := f.Blocked(); !wb || len(rd) != 0 {
		t.Errorf("Blocked() = %v, %v; expected no reader, writer blocked", rd, wb)
	}
	r2.Close()
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if _, err := r2.Acquire(ctx, 1); !errors.Is(err, ErrDetached) {
		t.Errorf("Acquire after Reader.Close: %v, expected ErrDetached", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestCloseEndOfStream(t *testing.T) {
	for _, ws := range strategies {
		t.Run(ws.String(), func(t *testing.T) {
			ctx := context.Background()
			f := mustNew(t, Options{Name: "eos", TokenSize: 2, Capacity: 16, Wait: ws})
			w, r := f.Writer(), f.Reader(0)
			if err := w.Write(ctx, Bytes([]uint16{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})); err != nil {
				t.Fatal(err)
			}
			if !r.Open() {
				t.Fatal("Open() false before close")
			}
			w.Close()
			w.Close() // idempotent
			if !w.Closed() {
				t.Error("Closed() false after Close")
			}
			for _, want := range [][]uint16{{1, 2, 3, 4}, {5, 6, 7, 8}} {
				win, err := r.Acquire(ctx, 4)
				if err != nil {
					t.Fatalf("Acquire after close with tokens left: %v", err)
				}
				if got := Tokens[uint16](win); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("got %v, expected %v", got, want)
				}
				r.Release(4)
				if !r.Open() {
					t.Fatal("Open() false with tokens left")
				}
			}
			_, err := r.Acquire(ctx, 4)
			if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), `"eos"`) {
				t.Fatalf("Acquire(4) with 2 left after close: %v, expected ErrClosed naming the FIFO", err)
			}
			win := r.TryAcquire(4)
			if got := Tokens[uint16](win); fmt.Sprint(got) != "[9 10]" {
				t.Fatalf("TryAcquire after end of stream: %v, expected [9 10]", got)
			}
			r.Release(2)
			if r.Open() {
				t.Error("Open() true after draining a closed stream")
			}
			if _, err := r.Acquire(ctx, 1); !errors.Is(err, ErrClosed) {
				t.Errorf("Acquire on drained stream: %v", err)
			}
			if _, err := r.Acquire(ctx, 0); err != nil {
				t.Errorf("Acquire(0) on drained stream: %v", err)
			}
			_, err = w.Acquire(ctx, 1)
			if !errors.Is(err, ErrWriterClosed) {
				t.Errorf("writer Acquire after Close: %v, expected ErrWriterClosed", err)
			}
			if err := w.Write(ctx, []byte{1, 2}); !errors.Is(err, ErrWriterClosed) {
				t.Errorf("Write after Close: %v", err)
			}
			if w.TryAcquire(1) != nil || w.Room() != 0 {
				t.Error("room after Close")
			}

			// Close wakes a reader waiting for more than will come.
			f2 := mustNew(t, Options{Name: "eos2", TokenSize: 1, Capacity: 8, Wait: ws})
			done := make(chan error)
			go func() {
				_, err := f2.Reader(0).Acquire(ctx, 5)
				done <- err
			}()
			if err := f2.Writer().Write(ctx, []byte{1, 2}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { return f2.Reader(0).Blocked() })
			f2.Writer().Close()
			if err := <-done; !errors.Is(err, ErrClosed) {
				t.Errorf("blocked Acquire(5) after Close: %v, expected ErrClosed", err)
			}
			p := make([]byte, 4)
			n, err := f2.Reader(0).Read(ctx, p)
			if n != 2 || !errors.Is(err, ErrClosed) || !bytes.Equal(p[:2], []byte{1, 2}) {
				t.Errorf("Read at end of stream: %d, %v, %v", n, err, p)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	for _, ws := range strategies {
		t.Run(ws.String(), func(t *testing.T) {
			f := mustNew(t, Options{Name: "c.out->d.in", TokenSize: 4, Capacity: 4, Wait: ws})
			w, r := f.Writer(), f.Reader(0)
			ctx, cancel := context.WithCancel(context.Background())
			errs := make(chan error, 2)
			go func() { // reader waits on an empty FIFO
				_, err := r.Acquire(ctx, 1)
				errs <- err
			}()
			if _, err := w.Acquire(context.Background(), 4); err != nil {
				t.Fatal(err)
			}
			w.Commit(4)
			// Now the reader may have taken the data; make the writer block on a
			// full FIFO after the reader returned or is still waiting.
			err := <-errs
			if err != nil {
				t.Fatalf("reader: %v", err)
			}
			go func() {
				_, err := w.Acquire(ctx, 1)
				errs <- err
			}()
			waitFor(t, w.Blocked)
			f2 := mustNew(t, Options{Name: "e.out->f.in", TokenSize: 4, Capacity: 4, Wait: ws})
			go func() {
				_, err := f2.Reader(0).Acquire(ctx, 2)
				errs <- err
			}()
			waitFor(t, f2.Reader(0).Blocked)
			if rd, _ := f2.Blocked(); len(rd) != 1 || rd[0] != 0 {
				t.Errorf("Blocked() readers = %v, expected [0]", rd)
			}
			cancel()
			for range 2 {
				err := <-errs
				if !errors.Is(err, context.Canceled) {
					t.Errorf("after cancel: %v, expected context.Canceled", err)
				}
				if !strings.Contains(err.Error(), ".out->") {
					t.Errorf("error %q does not name the FIFO", err)
				}
			}
			if w.Blocked() || f2.Reader(0).Blocked() {
				t.Error("Blocked() still true after cancellation")
			}
			// Deadlines work too.
			dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			defer dcancel()
			if _, err := w.Acquire(dctx, 1); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("writer with deadline: %v", err)
			}
			if err := w.Write(dctx, make([]byte, 4)); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Write with deadline: %v", err)
			}
		})
	}
}

func TestCapacityExact(t *testing.T) {
	cases := []struct{ ts, capacity int }{{4, 1000}, {12, 1000}, {1, 1}, {1, 4097}, {8, 3}}
	for _, c := range cases {
		for _, noMirror := range []bool{false, true} {
			t.Run(fmt.Sprintf("ts%d cap%d nomirror=%v", c.ts, c.capacity, noMirror), func(t *testing.T) {
				ctx := context.Background()
				f := mustNew(t, Options{Name: "cap", TokenSize: c.ts, Capacity: c.capacity, NoMirror: noMirror})
				w, r := f.Writer(), f.Reader(0)
				if f.RingBytes() < c.ts*c.capacity {
					t.Fatalf("ring of %d bytes < capacity", f.RingBytes())
				}
				for round := range 3 { // at different ring offsets
					if got := len(w.TryAcquire(1 << 30)); got != c.capacity*c.ts {
						t.Fatalf("round %d: TryAcquire(huge) = %d bytes, expected exactly %d", round, got, c.capacity*c.ts)
					}
					if w.Room() != c.capacity {
						t.Fatalf("Room() = %d", w.Room())
					}
					_, err := w.Acquire(ctx, c.capacity+1)
					if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprintf("Capacity (%d tokens)", c.capacity)) {
						t.Fatalf("Acquire(capacity+1): %v", err)
					}
					if _, err := w.Acquire(ctx, -1); !errors.Is(err, ErrInvalid) {
						t.Fatalf("Acquire(-1): %v", err)
					}
					if _, err := r.Acquire(ctx, c.capacity+1); !errors.Is(err, ErrInvalid) {
						t.Fatalf("reader Acquire(capacity+1): %v", err)
					}
					if _, err := w.Acquire(ctx, c.capacity); err != nil {
						t.Fatal(err)
					}
					w.Commit(c.capacity)
					if win := w.TryAcquire(1); len(win) != 0 || w.Room() != 0 {
						t.Fatalf("room after filling: %d bytes, Room %d", len(win), w.Room())
					}
					if f.Len() != c.capacity {
						t.Fatalf("Len() = %d", f.Len())
					}
					n := c.capacity/2 + 1
					if _, err := r.Acquire(ctx, n); err != nil {
						t.Fatal(err)
					}
					r.Release(n)
					if got := len(w.TryAcquire(1<<30)) / c.ts; got != n {
						t.Fatalf("room after releasing %d: %d", n, got)
					}
					if _, err := r.Acquire(ctx, c.capacity-n); err != nil {
						t.Fatal(err)
					}
					r.Release(c.capacity - n)
				}
				if f.PeakFill() != c.capacity {
					t.Errorf("PeakFill() = %d, expected %d", f.PeakFill(), c.capacity)
				}
			})
		}
	}
}

func TestInitialTokens(t *testing.T) {
	ctx := context.Background()
	for _, noMirror := range []bool{false, true} {
		data := Bytes([]int32{-1, 2, -3})
		f := mustNew(t, Options{Name: "delay", TokenSize: 4, Capacity: 5, Initial: 3, InitialData: data, Readers: 2, NoMirror: noMirror})
		if f.Len() != 3 || f.PeakFill() != 3 || f.Writer().Room() != 2 {
			t.Fatalf("Len %d PeakFill %d Room %d, expected 3 3 2", f.Len(), f.PeakFill(), f.Writer().Room())
		}
		if err := f.Writer().Write(ctx, Bytes([]int32{4, 5})); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			win, err := f.Reader(i).Acquire(ctx, 5)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(Tokens[int32](win)); got != "[-1 2 -3 4 5]" {
				t.Errorf("reader %d: %s", i, got)
			}
		}
		z := mustNew(t, Options{Name: "zeros", TokenSize: 3, Capacity: 2, Initial: 2, NoMirror: noMirror})
		win, err := z.Reader(0).Acquire(ctx, 2)
		if err != nil || !bytes.Equal(win, make([]byte, 6)) {
			t.Errorf("zero initial tokens: % x, %v", win, err)
		}
	}
}

func TestMisuse(t *testing.T) {
	f := mustNew(t, Options{Name: "misuse", TokenSize: 4, Capacity: 4})
	w, r := f.Writer(), f.Reader(0)
	mustPanic(t, "Commit without Acquire", func() { w.Commit(1) }, "acquired (0 tokens)")
	w.TryAcquire(2)
	mustPanic(t, "Commit beyond window", func() { w.Commit(3) }, "acquired (2 tokens)")
	w.Commit(2)
	mustPanic(t, "Release without Acquire", func() { r.Release(1) }, "Release(1)")
	mustPanic(t, "Reader(1)", func() { f.Reader(1) }, "Reader(1)")
	if err := w.Write(context.Background(), make([]byte, 5)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "found 5 bytes") {
		t.Errorf("Write of 5 bytes: %v", err)
	}
	if _, err := r.Read(context.Background(), make([]byte, 3)); !errors.Is(err, ErrInvalid) {
		t.Errorf("Read of 3 bytes: %v", err)
	}
	mustPanic(t, "Tokens of bad length", func() { Tokens[uint32](make([]byte, 6)) }, "multiple of 4")
}

func mustPanic(t *testing.T, what string, fn func(), want string) {
	t.Helper()
	defer func() {
		t.Helper()
		p := recover()
		if p == nil {
			t.Errorf("%s did not panic", what)
		} else if !strings.Contains(fmt.Sprint(p), want) {
			t.Errorf("%s: panic %q does not mention %q", what, p, want)
		}
	}()
	fn()
}

func TestCopyAccess(t *testing.T) {
	for _, ws := range strategies {
		t.Run(ws.String(), func(t *testing.T) {
			ctx := context.Background()
			f := mustNew(t, Options{Name: "copy", TokenSize: 5, Capacity: 7, Wait: ws})
			src := make([]byte, 5*1000)
			for i := range src {
				src[i] = byte(i * 7)
			}
			errc := make(chan error, 1)
			go func() { errc <- f.Writer().Write(ctx, src) }() // longer than capacity
			dst := make([]byte, len(src))
			n, err := f.Reader(0).Read(ctx, dst)
			if n != len(src) || err != nil || !bytes.Equal(src, dst) {
				t.Fatalf("Read: %d, %v, equal=%v", n, err, bytes.Equal(src, dst))
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if got := f.CopiedBytes(); got != int64(2*len(src)) {
				t.Errorf("CopiedBytes() = %d, expected %d", got, 2*len(src))
			}
		})
	}
}

func TestAllocs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, noMirror := range []bool{false, true} {
		f := mustNew(t, Options{Name: "allocs", TokenSize: 4, Capacity: 1000, Readers: 2, NoMirror: noMirror})
		w, r0, r1 := f.Writer(), f.Reader(0), f.Reader(1)
		buf := make([]byte, 4*300)
		cases := []struct {
			name string
			fn   func()
		}{
			{"window", func() {
				win, _ := w.Acquire(ctx, 300)
				win[0] = 1
				w.Commit(300)
				for _, r := range []*Reader{r0, r1} {
					win, _ := r.Acquire(ctx, 300)
					_ = win[0]
					r.Release(300)
				}
			}},
			{"try", func() {
				w.Commit(len(w.TryAcquire(123)) / 4)
				for _, r := range []*Reader{r0, r1} {
					r.Release(len(r.TryAcquire(200)) / 4)
				}
			}},
			{"copy", func() {
				_ = w.Write(ctx, buf)
				_, _ = r0.Read(ctx, buf)
				_, _ = r1.Read(ctx, buf)
			}},
			{"stats", func() { _ = f.Len() + f.PeakFill() + w.Room() + r0.Available(); _, _ = f.Blocked() }},
		}
		for _, c := range cases {
			if a := testing.AllocsPerRun(1000, c.fn); a != 0 {
				t.Errorf("nomirror=%v %s: %v allocs per run, expected 0", noMirror, c.name, a)
			}
		}
	}
}

func TestTokensBytes(t *testing.T) {
	type pix struct{ R, G, B float32 }
	p := []pix{{1, 2, 3}, {4, 5, 6}}
	b := Bytes(p)
	if len(b) != 24 {
		t.Fatalf("Bytes: %d bytes", len(b))
	}
	q := Tokens[pix](b)
	q[1].G = 50
	if p[1].G != 50 || len(q) != 2 {
		t.Error("Tokens does not alias the bytes")
	}
	if Tokens[pix](nil) != nil || Bytes[pix](nil) != nil {
		t.Error("empty views are not nil")
	}
	mustPanic(t, "misaligned", func() { Tokens[uint64](make([]byte, 16)[1:9]) }, "alignment")
}

func TestFree(t *testing.T) {
	for _, noMirror := range []bool{false, true} {
		f, err := New(Options{Name: "free", TokenSize: 4, Capacity: 1 << 16, NoMirror: noMirror})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Free(); err != nil {
			t.Errorf("Free: %v", err)
		}
		if err := f.Free(); err != nil {
			t.Errorf("second Free: %v", err)
		}
	}
}

// TestManyFIFOs creates and frees many mirrored FIFOs (mapping leaks would
// run into the map count limit or memory).
func TestManyFIFOs(t *testing.T) {
	for i := range 5000 {
		f, err := New(Options{Name: "many", TokenSize: 8, Capacity: 1024})
		if err != nil {
			t.Fatalf("FIFO %d: %v", i, err)
		}
		if err := f.Free(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPingPong(t *testing.T) {
	for _, ws := range strategies {
		t.Run(ws.String(), func(t *testing.T) {
			ctx := context.Background()
			a := mustNew(t, Options{Name: "ping", TokenSize: 8, Capacity: 1, Wait: ws})
			b := mustNew(t, Options{Name: "pong", TokenSize: 8, Capacity: 1, Wait: ws})
			const rounds = 5000
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					win, err := a.Reader(0).Acquire(ctx, 1)
					if err != nil {
						return
					}
					v := Tokens[uint64](win)[0]
					a.Reader(0).Release(1)
					out, _ := b.Writer().Acquire(ctx, 1)
					Tokens[uint64](out)[0] = v + 1
					b.Writer().Commit(1)
				}
			}()
			for i := uint64(0); i < rounds; i++ {
				win, _ := a.Writer().Acquire(ctx, 1)
				Tokens[uint64](win)[0] = 2 * i
				a.Writer().Commit(1)
				back, err := b.Reader(0).Acquire(ctx, 1)
				if err != nil {
					t.Fatal(err)
				}
				if v := Tokens[uint64](back)[0]; v != 2*i+1 {
					t.Fatalf("round %d: %d", i, v)
				}
				b.Reader(0).Release(1)
			}
			a.Writer().Close()
			<-done
		})
	}
}

// TestNoWaitTime checks that a FIFO made with NoWaitTime still blocks and
// wakes its sides, reports them as blocked while they wait, and measures no
// blocked time, while the same exchange on a timed FIFO measures some.
func TestNoWaitTime(t *testing.T) {
	for _, untimed := range []bool{false, true} {
		for _, ws := range []WaitStrategy{Park, Spin, SpinPark} {
			t.Run(fmt.Sprintf("untimed=%v/%s", untimed, ws), func(t *testing.T) {
				f := mustNew(t, Options{Name: "nt", TokenSize: 8, Capacity: 1, Wait: ws, NoWaitTime: untimed, SpinTime: time.Millisecond})
				ctx := context.Background()
				got := make(chan uint64, 1)
				go func() {
					r := f.Reader(0)
					win, err := r.Acquire(ctx, 1)
					if err != nil {
						t.Error(err)
						got <- 0
						return
					}
					got <- Tokens[uint64](win)[0]
					r.Release(1)
				}()
				deadline := time.Now().Add(10 * time.Second)
				for {
					if rs, _ := f.Blocked(); len(rs) == 1 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the reader never showed as blocked")
					}
					time.Sleep(100 * time.Microsecond)
				}
				time.Sleep(2 * time.Millisecond)
				w := f.Writer()
				win, err := w.Acquire(ctx, 1)
				if err != nil {
					t.Fatal(err)
				}
				Tokens[uint64](win)[0] = 42
				w.Commit(1)
				if v := <-got; v != 42 {
					t.Fatalf("reader got %d, expected 42", v)
				}
				if rs, wb := f.Blocked(); len(rs) != 0 || wb {
					t.Errorf("after the exchange: blocked readers %v, writer %v; expected none", rs, wb)
				}
				bt := f.Reader(0).BlockedTime()
				if untimed && bt != 0 {
					t.Errorf("NoWaitTime: reader's BlockedTime %v, expected 0", bt)
				}
				if !untimed && bt < time.Millisecond {
					t.Errorf("reader's BlockedTime %v, expected at least the 2 ms it waited", bt)
				}
			})
		}
	}
}

// TestParkContexts checks the wake-up of a parked side by its context's
// end: a side parked several times with one context, then with a new one
// (the first still live) is woken by the new one's end; a wait with a
// context that ended before the call fails at once; Free stops the watch of
// a context that never ends (goleak would see its goroutine otherwise, for
// a context of a type of its own).
func TestParkContexts(t *testing.T) {
	f := mustNew(t, Options{Name: "pc", TokenSize: 8, Capacity: 1, Wait: Park})
	w, r := f.Writer(), f.Reader(0)
	live, stopLive := context.WithCancel(context.Background())
	defer stopLive()
	for i := range 3 { // parks and is woken by data, with the same context
		got := make(chan error, 1)
		go func() {
			_, err := r.Acquire(live, 1)
			r.Release(1)
			got <- err
		}()
		waitFor(t, r.Blocked)
		win, _ := w.Acquire(live, 1)
		Tokens[uint64](win)[0] = uint64(i)
		w.Commit(1)
		if err := <-got; err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := r.Acquire(ctx, 1)
		got <- err
	}()
	waitFor(t, r.Blocked)
	cancel()
	select {
	case err := <-got:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("after cancel: %v, expected context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a reader parked with a new context was not woken by its end")
	}
	if _, err := r.Acquire(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with an ended context: %v, expected context.Canceled", err)
	}
	own := ownContext{Context: context.Background(), done: make(chan struct{})}
	go func() {
		if _, err := w.Acquire(own, 1); err != nil {
			got <- err
			return
		}
		w.Commit(1)
		_, err := w.Acquire(own, 1) // full: parks, watching own
		got <- err
	}()
	waitFor(t, w.Blocked)
	if _, err := r.Acquire(live, 1); err != nil {
		t.Fatal(err)
	}
	r.Release(1)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := f.Free(); err != nil {
		t.Fatal(err)
	}
}

// ownContext is a context of a type of its own, whose end AfterFunc can
// only watch with a goroutine.
type ownContext struct {
	context.Context
	done chan struct{}
}

func (c ownContext) Done() <-chan struct{} { return c.done }
