package cluster

import (
	"context"
	"fmt"
	"net"
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	done := make(chan int64)
	go func() {
		c, err := l.Accept()
		if err != nil {
			done <- -1
			return
		}
		defer c.Close()
		// Read in benchBuf pieces (io.Copy to io.Discard would read 8 KiB at a time).
		buf := make([]byte, benchBuf)
		var n int64
		for {
			k, err := c.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
		}
		done <- n
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, benchBuf)
	b.SetBytes(1)
	b.ResetTimer()
	for left := b.N; left > 0; left -= benchBuf {
		if _, err := c.Write(buf[:min(left, benchBuf)]); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	if n := <-done; n != int64(b.N) {
		b.Fatalf("received %d bytes, sent %d", n, b.N)
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
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	const ts = 4
	capTok := window / ts
	src, _ := fifo.New(fifo.Options{Name: "src", TokenSize: ts, Capacity: capTok})
	dst, _ := fifo.New(fifo.Options{Name: "dst", TokenSize: ts, Capacity: capTok})
	defer src.Free()
	defer dst.Free()
	total := b.N / ts * ts
	b.SetBytes(1)
	b.ResetTimer()
	errc := make(chan error, 4)
	go func() {
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
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			errc <- err
			return
		}
		errc <- tcpSend(ctx, c, src.Reader(0), ts, capTok, benchChunk, nil, streamLimit{})
	}()
	go func() {
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
	c, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	if err := tcpRecv(ctx, c, dst.Writer(), ts, capTok, nil, streamLimit{}); err != nil {
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
		errc <- sendStream(ctx, pc, "bench.data", creds, src.Reader(0), ts, capTok, benchChunk, nil, streamLimit{})
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
