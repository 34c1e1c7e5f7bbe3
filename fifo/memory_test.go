package fifo

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// A FIFO in external Memory carries a stream intact through windows of
// every size, whole (Acquire, TryAcquire) and ranged (TryAcquireAt), that
// cross the ring's end or not; aligned windows copy nothing into the tail.
func TestMemoryStream(t *testing.T) {
	for _, tc := range []struct {
		name          string
		capacity, mem int // tokens; Memory in tokens
		ranged        bool
		maxW          int
	}{
		{"aligned", 64, 192, true, 16},
		{"odd-ring", 60, 131, true, 30},
		{"whole-windows", 50, 100, false, 25},
		{"ranged-random", 33, 80, true, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const ts = 4
			mem := make([]byte, tc.mem*ts)
			f, err := New(Options{Name: tc.name, TokenSize: ts, Capacity: tc.capacity, Memory: mem})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Free()
			if f.Mirrored() || f.RingBytes() != (tc.mem-tc.capacity)*ts {
				t.Fatalf("mirrored %v, ring %d bytes: expected a portable ring of %d", f.Mirrored(), f.RingBytes(), (tc.mem-tc.capacity)*ts)
			}
			const total = 20000
			// windows of at most half the capacity: both sides can always wait
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errc := make(chan error, 1)
			go func() { // writer
				rng := rand.New(rand.NewPCG(1, 2))
				w := f.Writer()
				next := uint32(0)
				for next < total {
					n := 1 + rng.IntN(tc.maxW)
					n = min(n, total-int(next))
					if tc.ranged {
						// several windows acquired, each committed in order
						k := 1 + rng.IntN(3)
						var wins [][]byte
						skip := 0
						for range k {
							if skip+n > tc.capacity {
								break
							}
							win := w.TryAcquireAt(skip, n)
							if win == nil {
								break
							}
							wins = append(wins, win)
							skip += n
						}
						if len(wins) == 0 {
							if _, err := w.Acquire(ctx, n); err != nil {
								errc <- err
								return
							}
							continue
						}
						for _, win := range wins {
							for j := range n {
								binary.LittleEndian.PutUint32(win[j*ts:], next+uint32(j))
							}
							next += uint32(n)
							w.Commit(n)
							if int(next) >= total {
								break
							}
							n = min(n, total-int(next))
						}
						continue
					}
					win, err := w.Acquire(ctx, n)
					if err != nil {
						errc <- err
						return
					}
					for j := range n {
						binary.LittleEndian.PutUint32(win[j*ts:], next+uint32(j))
					}
					next += uint32(n)
					w.Commit(n)
				}
				w.Close()
				errc <- nil
			}()
			rng := rand.New(rand.NewPCG(3, 4))
			r := f.Reader(0)
			got := uint32(0)
			for got < total {
				n := 1 + rng.IntN(tc.maxW)
				var win []byte
				if tc.ranged && rng.IntN(2) == 0 {
					skip := rng.IntN(tc.capacity - n + 1)
					if w := r.TryAcquireAt(skip, n); w != nil {
						for j := range n {
							if v := binary.LittleEndian.Uint32(w[j*ts:]); v != got+uint32(skip+j) {
								t.Fatalf("token %d: found %d", got+uint32(skip+j), v)
							}
						}
					}
				}
				win, err := r.Acquire(ctx, n)
				if errors.Is(err, ErrClosed) {
					win = r.TryAcquire(n)
					n = len(win) / ts
				} else if err != nil {
					t.Fatal(err)
				}
				for j := range n {
					if v := binary.LittleEndian.Uint32(win[j*ts:]); v != got+uint32(j) {
						t.Fatalf("token %d: found %d", got+uint32(j), v)
					}
				}
				got += uint32(n)
				r.Release(n)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMemoryOptions(t *testing.T) {
	if _, err := New(Options{TokenSize: 4, Capacity: 8, Memory: make([]byte, 63)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short Memory: %v", err)
	}
	if _, err := New(Options{TokenSize: 4, Capacity: 8, Readers: 2, Memory: make([]byte, 64)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("two readers: %v", err)
	}
	// aligned windows never touch the tail
	mem := make([]byte, 3*16*4)
	f, err := New(Options{TokenSize: 4, Capacity: 16, Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	w, r := f.Writer(), f.Reader(0)
	for i := range 10 {
		win := w.TryAcquireAt(0, 8)
		for j := range win {
			win[j] = byte(i + 1)
		}
		w.Commit(8)
		rw := r.TryAcquireAt(0, 8)
		if rw[0] != byte(i+1) || rw[31] != byte(i+1) {
			t.Fatalf("window %d: found %d", i, rw[0])
		}
		r.Release(8)
	}
	for _, b := range mem[32*4:] {
		if b != 0 {
			t.Fatal("an aligned stream wrote into the tail")
		}
	}
	if n := f.TailCopiedBytes(); n != 0 {
		t.Fatalf("aligned windows: %d bytes copied to or from the tail, want 0", n)
	}
	// from token 16 of the 32-token ring, windows of 16, 12 and 12 tokens
	// cross nothing; the next 12, from token 24, cross the end: their 4
	// tokens past the end are copied to the ring's start when committed, and
	// back to the tail for the reader
	for _, n := range []int{16, 12, 12, 12} {
		w.TryAcquireAt(0, n)
		w.Commit(n)
		r.TryAcquireAt(0, n)
		r.Release(n)
	}
	if n := f.TailCopiedBytes(); n != 2*(24+12-32)*4 {
		t.Fatalf("a window crossing the end: %d bytes copied, want %d", n, 2*(24+12-32)*4)
	}
}
