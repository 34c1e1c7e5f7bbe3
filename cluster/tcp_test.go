package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/internal/wire"
)

// tcpCase is one direct stream: a producer filling src, tcpSend, tcpRecv
// and a consumer draining dst.
type tcpCase struct {
	tsize, capTok, chunk int
	tokens               int
	// The sender's flush timeout (0: the default, < 0: none).
	flush time.Duration
	// Most tokens the producer commits and the consumer takes at a time
	// (each picks a random count from 1 to this).
	prodMax, consMax int
	// Pauses after some commits and releases, so that both sides wait.
	prodPause, consPause time.Duration
	// How src and dst keep their tokens: "" (mirrored where possible),
	// "portable" (NoMirror) or "memory" (external Memory: lazy tail).
	srcRing, dstRing string
}

func (tc tcpCase) String() string {
	return fmt.Sprintf("ts=%d,cap=%d,chunk=%d,n=%d,src=%s,dst=%s,flush=%v", tc.tsize, tc.capTok, tc.chunk, tc.tokens, tc.srcRing, tc.dstRing, tc.flush)
}

func newRing(t *testing.T, name, kind string, tsize, capTok int) *fifo.FIFO {
	t.Helper()
	o := fifo.Options{Name: name, TokenSize: tsize, Capacity: capTok}
	switch kind {
	case "portable":
		o.NoMirror = true
	case "memory":
		// Room for 2.5 capacities: windows cross the ring's end at odd places.
		o.Memory = make([]byte, capTok*tsize+capTok*tsize*3/2+tsize)
	}
	f, err := fifo.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Free() })
	return f
}

// tcpPair connects two loopback TCP connections.
func tcpPair(t *testing.T) (send, recv net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	send, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	recv = <-acc
	if recv == nil {
		t.Fatal("accept failed")
	}
	return send, recv
}

// runTCP streams tc.tokens pseudo-random tokens and returns what the
// consumer received and the errors of tcpSend and tcpRecv.
func runTCP(t *testing.T, ctx context.Context, tc tcpCase, seed uint64) (want, got []byte, sendErr, recvErr error) {
	t.Helper()
	src := newRing(t, "src", tc.srcRing, tc.tsize, tc.capTok)
	dst := newRing(t, "dst", tc.dstRing, tc.tsize, tc.capTok)
	want = make([]byte, tc.tokens*tc.tsize)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	sc, rc := tcpPair(t)
	sendC, recvC, prodC := make(chan error, 1), make(chan error, 1), make(chan error, 1)
	go func() { // producer: random windows, filled in place
		w := src.Writer()
		defer w.Close()
		rng := rand.New(rand.NewPCG(seed, 1))
		for off := 0; off < len(want); {
			k := min(1+rng.IntN(tc.prodMax), (len(want)-off)/tc.tsize, tc.capTok)
			win, err := w.Acquire(ctx, k)
			if err != nil {
				prodC <- err
				return
			}
			off += copy(win, want[off:off+k*tc.tsize])
			w.Commit(k)
			if tc.prodPause > 0 && rng.IntN(4) == 0 {
				time.Sleep(tc.prodPause)
			}
		}
		prodC <- nil
	}()
	go func() {
		sendC <- tcpSend(ctx, sc, src.Reader(0), tc.tsize, tc.capTok, tc.chunk, tc.flush, nil, streamLimit{})
	}()
	go func() {
		err := tcpRecv(ctx, rc, dst.Writer(), tc.tsize, tc.capTok, nil, streamLimit{})
		dst.Writer().Close()
		recvC <- err
	}()
	// Consumer: random windows.
	r := dst.Reader(0)
	crng := rand.New(rand.NewPCG(seed, 2))
	for {
		k := 1 + crng.IntN(tc.consMax)
		win, err := r.Acquire(ctx, k)
		if err != nil {
			if errors.Is(err, fifo.ErrClosed) {
				k = r.Available()
				win = r.TryAcquire(k)
			} else {
				break
			}
		}
		if k == 0 {
			break
		}
		got = append(got, win...)
		r.Release(k)
		if tc.consPause > 0 && crng.IntN(4) == 0 {
			time.Sleep(tc.consPause)
		}
	}
	recvErr = <-recvC
	sendErr = <-sendC
	if err := <-prodC; err != nil && sendErr == nil {
		sendErr = err
	}
	return want, got, sendErr, recvErr
}

// TestTCPStreamExact checks that every token arrives once, in order, for
// token sizes that do and do not divide the chunk and the page size,
// windows smaller and larger than a chunk, every kind of ring, and
// producers and consumers that are fast, slow or pause.
func TestTCPStreamExact(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cases := []tcpCase{
		{tsize: 4, capTok: 1, chunk: DefaultChunk, tokens: 3000, prodMax: 1, consMax: 1},
		{tsize: 4, capTok: 3, chunk: 8, tokens: 5000, prodMax: 3, consMax: 2},
		{tsize: 4, capTok: 1 << 16, chunk: DefaultChunk, tokens: 1 << 20, prodMax: 1 << 14, consMax: 1 << 15},
		{tsize: 4, capTok: 1 << 16, chunk: 1000, tokens: 1 << 18, prodMax: 700, consMax: 5000, srcRing: "portable", dstRing: "portable"},
		{tsize: 12, capTok: 1000, chunk: 4096, tokens: 50000, prodMax: 333, consMax: 999, srcRing: "memory", dstRing: "memory"},
		{tsize: 4108, capTok: 64, chunk: DefaultChunk, tokens: 3000, prodMax: 7, consMax: 64, dstRing: "memory"},
		{tsize: 1, capTok: 100000, chunk: 65536, tokens: 2_000_000, prodMax: 100000, consMax: 7, srcRing: "memory"},
		{tsize: 8, capTok: 4096, chunk: 8192, tokens: 40000, prodMax: 100, consMax: 4096, prodPause: 50 * time.Microsecond},
		{tsize: 8, capTok: 4096, chunk: 8192, tokens: 40000, prodMax: 4096, consMax: 100, consPause: 50 * time.Microsecond},
		// Small firings with pauses: batches cut by the flush timeout, and
		// with none at all.
		{tsize: 4, capTok: 8192, chunk: 1 << 16, tokens: 30000, prodMax: 64, consMax: 8192, prodPause: 200 * time.Microsecond, flush: 100 * time.Microsecond},
		{tsize: 4, capTok: 8192, chunk: 1 << 16, tokens: 30000, prodMax: 64, consMax: 8192, prodPause: 20 * time.Microsecond, flush: -1},
	}
	for i, tc := range cases {
		t.Run(tc.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			want, got, serr, rerr := runTCP(t, ctx, tc, uint64(i))
			if serr != nil || rerr != nil {
				t.Fatalf("send: %v; receive: %v", serr, rerr)
			}
			if !bytes.Equal(got, want) {
				at := 0
				for at < min(len(got), len(want)) && got[at] == want[at] {
					at++
				}
				t.Fatalf("received %d bytes, sent %d; first difference at byte %d (token %d)", len(got), len(want), at, at/tc.tsize)
			}
		})
	}
}

// TestTCPStreamEmpty: a stream closed before any token ends cleanly.
func TestTCPStreamEmpty(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, got, serr, rerr := runTCP(t, ctx, tcpCase{tsize: 4, capTok: 16, chunk: 64, prodMax: 1, consMax: 1}, 1)
	if serr != nil || rerr != nil || len(got) != 0 {
		t.Fatalf("send: %v; receive: %v; %d bytes received, want none", serr, rerr, len(got))
	}
}

// TestTCPStreamBounded: with a consumer that takes nothing, the sender
// stops at one window in flight beyond the receiver's full FIFO.
func TestTCPStreamBounded(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const capTok = 1000
	ctx, cancel := context.WithCancel(context.Background())
	src := newRing(t, "src", "", 4, capTok)
	dst := newRing(t, "dst", "", 4, capTok)
	sc, rc := tcpPair(t)
	done := make(chan error, 3)
	go func() {
		w := src.Writer()
		for {
			if _, err := w.Acquire(ctx, 10); err != nil {
				done <- nil
				return
			}
			w.Commit(10)
		}
	}()
	go func() { done <- tcpSend(ctx, sc, src.Reader(0), 4, capTok, 1024, 0, nil, streamLimit{}) }()
	go func() { done <- tcpRecv(ctx, rc, dst.Writer(), 4, capTok, nil, streamLimit{}) }()
	// Wait until nothing moves any more.
	last := uint64(0)
	for stable := 0; stable < 10; time.Sleep(20 * time.Millisecond) {
		if p := src.Reader(0).Position(); p == last {
			stable++
		} else {
			last, stable = p, 0
		}
	}
	if sent, held := src.Reader(0).Position(), dst.Len(); held != capTok || sent > 2*capTok || sent < capTok {
		t.Errorf("sender released %d tokens, the receiver's FIFO holds %d: expected a full FIFO (%d) and at most one window (%d) more in flight", sent, held, capTok, capTok)
	}
	cancel()
	for range 3 {
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("after cancel: %v, expected nil or context.Canceled", err)
		}
	}
}

// TestTCPStreamCancel: cancelling either side's context mid-stream ends
// both sides with an error and leaves no goroutine behind.
func TestTCPStreamCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, side := range []string{"sender", "receiver"} {
		t.Run(side, func(t *testing.T) {
			src := newRing(t, "src", "", 4, 256)
			dst := newRing(t, "dst", "", 4, 256)
			sc, rc := tcpPair(t)
			sctx, scancel := context.WithCancel(context.Background())
			rctx, rcancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer wg.Wait()
			defer scancel()
			defer rcancel()
			wg.Add(2)
			go func() { // an endless producer; it stops with the sender's context
				defer wg.Done()
				w := src.Writer()
				for {
					if _, err := w.Acquire(sctx, 16); err != nil {
						return
					}
					w.Commit(16)
				}
			}()
			go func() { // a consumer that keeps up
				defer wg.Done()
				r := dst.Reader(0)
				for {
					if _, err := r.Acquire(rctx, 1); err != nil {
						return
					}
					n := r.Available()
					r.TryAcquire(n)
					r.Release(n)
				}
			}()
			sendC, recvC := make(chan error, 1), make(chan error, 1)
			go func() { sendC <- tcpSend(sctx, sc, src.Reader(0), 4, 256, 64, 0, nil, streamLimit{}) }()
			go func() { recvC <- tcpRecv(rctx, rc, dst.Writer(), 4, 256, nil, streamLimit{}) }()
			time.Sleep(50 * time.Millisecond)
			if side == "sender" {
				scancel()
			} else {
				rcancel()
			}
			for _, c := range []chan error{sendC, recvC} {
				select {
				case err := <-c:
					if err == nil {
						t.Error("a side ended without an error, expected the cancellation or a cut stream")
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a side did not end within 10 s of the cancellation")
				}
			}
			scancel()
			rcancel()
		})
	}
}

// TestTCPStreamCut: a receiver that goes away fails the sender, and a
// sender that goes away before the end of the stream fails the receiver.
func TestTCPStreamCut(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	src := newRing(t, "src", "", 4, 64)
	sc, rc := tcpPair(t)
	go func() { // the receiver reads one frame and leaves
		var b [wire.HeaderLen + 4]byte
		_, _ = rc.Read(b[:])
		rc.Close()
	}()
	w := src.Writer()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if _, err := w.Acquire(ctx, 1); err != nil {
				return
			}
			w.Commit(1)
		}
	}()
	err := tcpSend(ctx, sc, src.Reader(0), 4, 64, 16, 0, nil, streamLimit{})
	if err == nil || ctx.Err() != nil {
		t.Errorf("sender after the receiver left: %v, expected an error before the deadline", err)
	}

	dst := newRing(t, "dst", "", 4, 64)
	sc2, rc2 := tcpPair(t)
	var frame [wire.HeaderLen + 8]byte
	wire.Header{Len: 8}.Put(frame[:])
	_, _ = sc2.Write(frame[:wire.HeaderLen+4]) // half a frame, then gone
	sc2.Close()
	err = tcpRecv(ctx, rc2, dst.Writer(), 4, 64, nil, streamLimit{})
	if err == nil || !strings.Contains(err.Error(), "data stream cut before its end") {
		t.Errorf("receiver after the sender left mid-frame: %v, expected \"data stream cut before its end\"", err)
	}
	cancel()
}

// TestTCPRecvRefuses: frames that are not whole tokens, or larger than
// the window, and streams past their limit fail with what was expected.
func TestTCPRecvRefuses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		n    uint32
		lim  int64
		want string
	}{
		{6, 0, "data frame of 6 bytes: expected 1 to 8 whole 4-byte tokens"},
		{40, 0, "data frame of 40 bytes: expected 1 to 8 whole 4-byte tokens"},
		{0, 0, "data frame of 0 bytes"},
		{16, 12, "over the limit after 16 bytes"},
	} {
		dst := newRing(t, "dst", "", 4, 8)
		sc, rc := tcpPair(t)
		frame := make([]byte, wire.HeaderLen+int(tc.n))
		wire.Header{Len: int(tc.n)}.Put(frame)
		go func() { _, _ = sc.Write(frame) }()
		lim := streamLimit{max: tc.lim, what: func(n int64) error { return fmt.Errorf("over the limit after %d bytes", n) }}
		err := tcpRecv(ctx, rc, dst.Writer(), 4, 8, nil, lim)
		sc.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("frame of %d bytes: %v, expected %q", tc.n, err, tc.want)
		}
	}
}

// TestTCPSendLimit: a sender stops once its stream passes the limit.
func TestTCPSendLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	src := newRing(t, "src", "", 4, 64)
	dst := newRing(t, "dst", "", 4, 64)
	sc, rc := tcpPair(t)
	w := src.Writer()
	if _, err := w.Acquire(ctx, 64); err != nil {
		t.Fatal(err)
	}
	w.Commit(64)
	w.Close()
	recvC := make(chan error, 1)
	go func() { recvC <- tcpRecv(ctx, rc, dst.Writer(), 4, 64, nil, streamLimit{}) }()
	lim := streamLimit{max: 100, what: func(n int64) error { return fmt.Errorf("over the limit after %d bytes", n) }}
	// Frames of 64 bytes: the second passes the limit.
	err := tcpSend(ctx, sc, src.Reader(0), 4, 64, 64, 0, nil, lim)
	if err == nil || !strings.Contains(err.Error(), "over the limit after 128 bytes") {
		t.Errorf("sending 256 bytes with a limit of 100 in 64-byte frames: %v, expected \"over the limit after 128 bytes\"", err)
	}
	if err := <-recvC; err == nil {
		t.Error("the receiver of a stream stopped at its limit ended without an error")
	}
	if dst.Len() != 16 {
		t.Errorf("the receiver took %d tokens, expected the 16 of the one frame within the limit", dst.Len())
	}
}

// TestTCPFlushTimeout: a lone firing that fills no batch waits for the
// flush timeout on the sender (not less), then goes; a full batch goes
// without waiting for its (long) timeout; with no timeout a lone firing
// goes too.
func TestTCPFlushTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, tc := range []struct {
		name     string
		flush    time.Duration
		tokens   int           // committed at once
		min, max time.Duration // when they may arrive
	}{
		{"lone firing", 80 * time.Millisecond, 4, 72 * time.Millisecond, 20 * time.Second},
		{"full batch", 10 * time.Second, 512, 0, 9 * time.Second}, // half the window
		{"no timeout", -1, 4, 0, 9 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			src := newRing(t, "src", "", 4, 1024)
			dst := newRing(t, "dst", "", 4, 1024)
			sc, rc := tcpPair(t)
			done := make(chan error, 2)
			go func() { done <- tcpSend(ctx, sc, src.Reader(0), 4, 1024, DefaultChunk, tc.flush, nil, streamLimit{}) }()
			go func() { done <- tcpRecv(ctx, rc, dst.Writer(), 4, 1024, nil, streamLimit{}) }()
			w := src.Writer()
			if _, err := w.Acquire(ctx, tc.tokens); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			w.Commit(tc.tokens)
			if _, err := dst.Reader(0).Acquire(ctx, tc.tokens); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(t0); took < tc.min || took > tc.max {
				t.Errorf("%d tokens with a flush timeout of %v arrived after %v: expected %v to %v", tc.tokens, tc.flush, took, tc.min, tc.max)
			}
			w.Close()
			for range 2 {
				if err := <-done; err != nil {
					t.Error(err)
				}
			}
		})
	}
}
