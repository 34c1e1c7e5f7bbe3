package fifo

import (
	"context"
	"fmt"
	"testing"
)

// The throughput benchmarks count one op per token (b.N tokens), so the
// FIFO and the channel read in the same unit.

const benchWindow = 1024

// BenchmarkThroughput moves 4-byte tokens from a producer goroutine to a
// consumer: through a FIFO in windows of 1024 (the producer fills each
// window, the consumer sums it) and through a buffered chan float32, one
// value per send (the same work per value).
func BenchmarkThroughput(b *testing.B) {
	for _, ws := range []WaitStrategy{SpinPark, Spin, Park} {
		b.Run("fifo-1024/"+ws.String(), func(b *testing.B) {
			benchFIFOThroughput(b, ws)
		})
	}
	b.Run("chan", benchChanThroughput)
}

func benchFIFOThroughput(b *testing.B, ws WaitStrategy) {
	f := mustNew(b, Options{Name: "bench", TokenSize: 4, Capacity: 16 * benchWindow, Wait: ws})
	ctx := context.Background()
	windows := (b.N + benchWindow - 1) / benchWindow
	b.SetBytes(4)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		w := f.Writer()
		for i := range windows {
			win, _ := w.Acquire(ctx, benchWindow)
			v := Tokens[float32](win)
			base := float32(i * benchWindow)
			for k := range v {
				v[k] = base + float32(k)
			}
			w.Commit(benchWindow)
		}
	}()
	r := f.Reader(0)
	var s float32
	for range windows {
		win, _ := r.Acquire(ctx, benchWindow)
		for _, x := range Tokens[float32](win) {
			s += x
		}
		r.Release(benchWindow)
	}
	b.StopTimer()
	sink = s
}

var sink float32

func benchChanThroughput(b *testing.B) {
	c := make(chan float32, 16*benchWindow)
	b.SetBytes(4)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for i := range b.N {
			c <- float32(i)
		}
	}()
	var s float32
	for range b.N {
		s += <-c
	}
	b.StopTimer()
	sink = s
}

// BenchmarkWindow64K moves 64 KiB per op: through a FIFO of 4 windows
// (the producer copies its block into the window, the same one memmove as
// the baseline; the consumer takes the window without copying, or in
// "copy-in-out" copies it out too, so the data crosses cores) versus one
// plain copy of 64 KiB.
func BenchmarkWindow64K(b *testing.B) {
	const size = 64 << 10
	for _, copyOut := range []bool{false, true} {
		name := "fifo-copy-in"
		if copyOut {
			name = "fifo-copy-in-out"
		}
		b.Run(name, func(b *testing.B) { bench64K(b, copyOut) })
	}
	b.Run("copy", func(b *testing.B) {
		src, dst := make([]byte, size), make([]byte, size)
		b.SetBytes(size)
		b.ReportAllocs()
		for range b.N {
			copy(dst, src)
		}
	})
}

func bench64K(b *testing.B, copyOut bool) {
	const size = 64 << 10
	{
		f := mustNew(b, Options{Name: "bench64k", TokenSize: 4, Capacity: 4 * size / 4})
		ctx := context.Background()
		src, dst := make([]byte, size), make([]byte, size)
		b.SetBytes(size)
		b.ReportAllocs()
		b.ResetTimer()
		go func() {
			w := f.Writer()
			for range b.N {
				win, _ := w.Acquire(ctx, size/4)
				copy(win, src)
				w.Commit(size / 4)
			}
		}()
		r := f.Reader(0)
		var s byte
		for range b.N {
			win, _ := r.Acquire(ctx, size/4)
			if copyOut {
				copy(dst, win)
			} else {
				s += win[0]
			}
			r.Release(size / 4)
		}
		sink = float32(s)
	}
}

// BenchmarkHop measures the latency of one hop: a token goes to a partner
// goroutine through one FIFO (capacity 1) and comes back through another;
// ns/hop is half the round trip. spin-parked is Spin with every side's
// tuner settled on parking: what Spin costs where parking serves it better.
func BenchmarkHop(b *testing.B) {
	for _, c := range []struct {
		name    string
		ws      WaitStrategy
		untimed bool
		parked  bool
	}{{"park", Park, false, false}, {"park-untimed", Park, true, false}, {"spin", Spin, false, false}, {"spin-parked", Spin, false, true}, {"spin-park", SpinPark, false, false}} {
		ws, untimed := c.ws, c.untimed
		parked := c.parked
		b.Run(c.name, func(b *testing.B) {
			there := mustNew(b, Options{Name: "there", TokenSize: 8, Capacity: 1, Wait: ws, NoWaitTime: untimed})
			back := mustNew(b, Options{Name: "back", TokenSize: 8, Capacity: 1, Wait: ws, NoWaitTime: untimed})
			if parked {
				// Spin sides whose tuners chose parking (and do not probe
				// spinning again during the benchmark).
				for _, f := range []*FIFO{there, back} {
					for _, st := range []*waitStat{&f.writer.stat, &f.readers[0].stat} {
						st.tune.park, st.tune.gap, st.tune.left = true, 1<<30, 1<<30
					}
					f.spinSides.Store(0)
				}
			}
			ctx := context.Background()
			done := make(chan struct{})
			go func() {
				defer close(done)
				r, w := there.Reader(0), back.Writer()
				for {
					in, err := r.Acquire(ctx, 1)
					if err != nil {
						return
					}
					out, _ := w.Acquire(ctx, 1)
					copy(out, in)
					r.Release(1)
					w.Commit(1)
				}
			}()
			w, r := there.Writer(), back.Reader(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				out, _ := w.Acquire(ctx, 1)
				Tokens[uint64](out)[0] = uint64(i)
				w.Commit(1)
				in, _ := r.Acquire(ctx, 1)
				if Tokens[uint64](in)[0] != uint64(i) {
					panic(fmt.Sprint("hop: wrong token ", i))
				}
				r.Release(1)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/hop")
			w.Close()
			<-done
		})
	}
	b.Run("chan", func(b *testing.B) {
		there, back := make(chan uint64, 1), make(chan uint64, 1)
		go func() {
			for v := range there {
				back <- v
			}
		}()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			there <- uint64(i)
			<-back
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/hop")
		close(there)
	})
}
