package cluster

import (
	"context"
	"flag"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/fifo"
)

// The cross-machine channel's bandwidth against a raw TCP stream, both on
// loopback, moving the same bytes in the same buffer size:
//
//	go test -run '^$' -bench 'Loopback' -benchtime 256MiBx ./cluster
//
// (b.N is bytes: -benchtime NNNx sets how many.)

const benchBuf = 1 << 20 // bytes per write

var benchChunk = DefaultChunk // bytes per chunk, as the executor sends

// BenchmarkLoopbackRawTCP writes b.N bytes over one TCP connection.
func BenchmarkLoopbackRawTCP(b *testing.B) {
	b.SetBytes(1)
	b.ResetTimer()
	if _, err := loopbackRawTCP(int64(b.N)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoopbackChannel moves b.N bytes from one FIFO to another through
// a broker, as a cross-machine channel does: chunks over NATS with credits,
// the producer and consumer on two connections.
func BenchmarkLoopbackChannel(b *testing.B) {
	for _, capKiB := range []int{1024, 4096} {
		b.Run(fmt.Sprintf("window=%dKiB", capKiB), func(b *testing.B) { benchChannel(b, capKiB<<10) })
	}
}

// BenchmarkLoopbackChannelTCP moves b.N bytes from one FIFO to another
// over the direct TCP data path (frames and credits on one connection).
func BenchmarkLoopbackChannelTCP(b *testing.B) {
	for _, capKiB := range []int{1024, 4096} {
		b.Run(fmt.Sprintf("window=%dKiB", capKiB), func(b *testing.B) { benchChannelTCP(b, capKiB<<10) })
	}
}

func benchChannelTCP(b *testing.B, window int) {
	b.SetBytes(1)
	b.ResetTimer()
	if _, err := loopbackChannelTCP(window, int64(b.N)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoopbackChannelVsTCP runs the direct TCP channel and the raw
// TCP stream side by side, alternating, -rounds times, each moving b.N
// bytes, and reports the median of the per-round ratios (channel / raw)
// with both medians in MB/s:
//
//	go test -run '^$' -bench ChannelVsTCP -benchtime 268435456x ./cluster
func BenchmarkLoopbackChannelVsTCP(b *testing.B) {
	for _, capKiB := range []int{1024, 4096} {
		b.Run(fmt.Sprintf("window=%dKiB", capKiB), func(b *testing.B) {
			var ch, raw, ratio []float64
			for i := range *benchRounds {
				// Alternate which goes first, so neither always meets a
				// warmer or a busier machine.
				var c, r time.Duration
				var err error
				if i%2 == 0 {
					if r, err = loopbackRawTCP(int64(b.N)); err == nil {
						c, err = loopbackChannelTCP(capKiB<<10, int64(b.N))
					}
				} else if c, err = loopbackChannelTCP(capKiB<<10, int64(b.N)); err == nil {
					r, err = loopbackRawTCP(int64(b.N))
				}
				if err != nil {
					b.Fatal(err)
				}
				ch = append(ch, float64(b.N)/c.Seconds()/1e6)
				raw = append(raw, float64(b.N)/r.Seconds()/1e6)
				ratio = append(ratio, r.Seconds()/c.Seconds())
			}
			b.ReportMetric(median(ch), "channel-MB/s")
			b.ReportMetric(median(raw), "raw-MB/s")
			b.ReportMetric(median(ratio), "ratio")
			b.ReportMetric(slices.Min(ratio), "ratio-min")
			b.ReportMetric(slices.Max(ratio), "ratio-max")
		})
	}
}

var benchRounds = flag.Int("rounds", 5, "rounds of BenchmarkLoopbackChannelVsTCP")

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loopbackRawTCP writes n bytes over one loopback TCP connection in
// benchBuf writes, read in benchBuf reads, and returns the time from the
// first write until the reader has everything.
func loopbackRawTCP(n int64) (time.Duration, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	done := make(chan int64, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			done <- -1
			return
		}
		defer c.Close()
		buf := make([]byte, benchBuf)
		var got int64
		for {
			k, err := c.Read(buf)
			got += int64(k)
			if err != nil {
				break
			}
		}
		done <- got
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return 0, err
	}
	// Real bytes: pages never written could all be the kernel's one zero
	// page, always in cache, which flatters the reference.
	buf := make([]byte, benchBuf)
	for i := range buf {
		buf[i] = byte(i)
	}
	t0 := time.Now()
	for left := n; left > 0; left -= benchBuf {
		if _, err := c.Write(buf[:min(left, benchBuf)]); err != nil {
			c.Close()
			return 0, err
		}
	}
	c.Close()
	got := <-done
	d := time.Since(t0)
	if got != n {
		return 0, fmt.Errorf("raw TCP: received %d bytes, sent %d", got, n)
	}
	return d, nil
}

// loopbackChannelTCP moves n bytes (rounded down to 4-byte tokens) from a
// FIFO through tcpSend and tcpRecv into another FIFO of window bytes, as a
// cross-machine channel does, and returns the time it took. The producer
// commits windows of a quarter of the FIFO (at most benchBuf bytes) in
// place and the consumer releases what arrives, as actors do with their
// windows; like the raw stream's ends, neither touches the bytes.
func loopbackChannelTCP(window int, n int64) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	const ts = 4
	capTok := window / ts
	src, _ := fifo.New(fifo.Options{Name: "src", TokenSize: ts, Capacity: capTok})
	dst, _ := fifo.New(fifo.Options{Name: "dst", TokenSize: ts, Capacity: capTok})
	defer src.Free()
	defer dst.Free()
	total := n / ts
	piece := max(1, min(benchBuf/ts, capTok/4)) // tokens the producer commits at a time
	errc := make(chan error, 3)
	fail := func(err error) { // the first error stops the others
		if err != nil {
			cancel()
		}
		errc <- err
	}
	t0 := time.Now()
	go func() { // producer
		w := src.Writer()
		defer w.Close()
		for left := total; left > 0; {
			k := int(min(left, int64(piece)))
			if _, err := w.Acquire(ctx, k); err != nil {
				fail(err)
				return
			}
			w.Commit(k)
			left -= int64(k)
		}
		fail(nil)
	}()
	go func() {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			fail(err)
			return
		}
		fail(tcpSend(ctx, c, src.Reader(0), ts, capTok, benchChunk, 0, nil, streamLimit{}))
	}()
	go func() { // consumer
		r := dst.Reader(0)
		for {
			if _, err := r.Acquire(ctx, 1); err != nil {
				errc <- nil
				return
			}
			k := r.Available()
			r.TryAcquire(k)
			r.Release(k)
		}
	}()
	c, err := l.Accept()
	if err != nil {
		cancel()
		return 0, err
	}
	err = tcpRecv(ctx, c, dst.Writer(), ts, capTok, nil, streamLimit{})
	if err != nil {
		cancel()
	}
	dst.Writer().Close()
	for range 3 {
		if e := <-errc; e != nil && err == nil {
			err = e
		}
	}
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if got := int64(dst.Writer().Position()); got != total {
		return 0, fmt.Errorf("channel: moved %d tokens, want %d", got, total)
	}
	return d, nil
}

func benchChannel(b *testing.B, window int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	br, err := StartBroker(ctx, BrokerOptions{Name: "bench", Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Shutdown()
	pc, err := nats.Connect(br.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	cc, err := nats.Connect(br.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	const ts = 4 // f32 tokens
	capTok := window / ts
	src, _ := fifo.New(fifo.Options{Name: "src", TokenSize: ts, Capacity: capTok})
	dst, _ := fifo.New(fifo.Options{Name: "dst", TokenSize: ts, Capacity: capTok})
	defer src.Free()
	defer dst.Free()
	data, _ := cc.SubscribeSync("bench.data")
	_ = data.SetPendingLimits(-1, -1)
	creds, _ := pc.SubscribeSync("bench.credit")
	_ = cc.Flush()
	_ = pc.Flush()
	total := b.N / ts * ts
	b.SetBytes(1)
	b.ResetTimer()
	errc := make(chan error, 3)
	go func() { // producer
		w := src.Writer()
		buf := make([]byte, benchBuf)
		for left := total; left > 0; left -= benchBuf {
			if err := w.Write(ctx, buf[:min(left, benchBuf)]); err != nil {
				errc <- err
				return
			}
		}
		w.Close()
		errc <- nil
	}()
	go func() {
		errc <- sendStream(ctx, pc, "bench.data", creds, src.Reader(0), ts, capTok, benchChunk, 0, nil, streamLimit{})
	}()
	go func() { // consumer: drain dst
		r := dst.Reader(0)
		for {
			n := r.Available()
			if n == 0 {
				if _, err := r.Acquire(ctx, 1); err != nil {
					errc <- nil
					return
				}
				continue
			}
			r.TryAcquire(n)
			r.Release(n)
		}
	}()
	if err := recvStream(ctx, cc, data, "bench.credit", dst.Writer(), ts, capTok, nil, streamLimit{}); err != nil {
		b.Fatal(err)
	}
	dst.Writer().Close()
	for range 3 {
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
	}
	if got := dst.Writer().Position() * ts; got != uint64(total) {
		b.Fatalf("moved %d bytes, want %d", got, total)
	}
}
