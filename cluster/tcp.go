package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	goruntime "runtime"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/internal/wire"
)

// The direct TCP data path: a worker with a data listener offers it in its
// reply to a run request; the client then opens one TCP connection per
// stream, says which job and port it is for (with the job's secret), and
// the tokens go straight between the two hosts: internal/wire's frames
// (a 13-byte header and whole tokens) one way, its 8-byte credits the
// other. TCP keeps order and loses nothing; the credits keep the stream
// bounded as over NATS, and the sender batches small firings the same way.

// dataHello opens a data connection.
type dataHello struct {
	Job    string `json:"job"`
	Secret string `json:"secret"`
	// Stream is "in.N" (client → worker) or "out.N" (worker → client).
	Stream string `json:"stream"`
}

// dialData opens a data connection to a worker.
func dialData(ctx context.Context, addr string, h dataHello) (net.Conn, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("opening the data stream %s to %s: %w", h.Stream, addr, err)
	}
	b, _ := json.Marshal(h)
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.Close()
		return nil, fmt.Errorf("opening the data stream %s to %s: %w", h.Stream, addr, err)
	}
	return c, nil
}

// readHello reads a data connection's hello (within 5 s).
func readHello(c net.Conn) (dataHello, error) {
	var h dataHello
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	line := make([]byte, 0, 128)
	var one [1]byte
	for len(line) < 1024 {
		if _, err := c.Read(one[:]); err != nil {
			return h, err
		}
		if one[0] == '\n' {
			return h, json.Unmarshal(line, &h)
		}
		line = append(line, one[0])
	}
	return h, errors.New("data hello longer than 1 KiB")
}

// interruptOn makes blocked I/O on c return when ctx ends.
func interruptOn(ctx context.Context, c net.Conn) func() bool {
	return context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
}

// The two ends of a direct stream move tokens between the FIFO's ring and
// the socket without copies of their own: the sender writes its frames
// with one vectored write (headers and windows of the ring), the receiver
// reads tokens straight into a window of its ring. Hand-offs with the
// actors on either side are batched: the sender takes a large window when
// one is ready and otherwise waits for a batch until its flush timeout
// (wire.Batch), the receiver lingers briefly for room in its FIFO, so
// neither wakes its partner once per small step.
const (
	// tcpStage is the receiver's buffer for frame headers: a read into it
	// takes a header and, for a small frame, its tokens too; a larger
	// frame's tokens beyond it go from the socket straight into the FIFO.
	tcpStage = 4 << 10
	// lingerQuiet is how long a side waits for a batch that stopped
	// growing before it goes ahead with what it has.
	lingerQuiet = 2 * time.Microsecond
	// lingerMax bounds the wait for a batch that keeps growing.
	lingerMax = 20 * time.Microsecond
)

// linger polls avail while it grows, until it reaches lo, stops growing
// for lingerQuiet, or lingerMax passed, and returns the last count (at
// least n). It never blocks for long, so a partner that stopped short of
// lo (waiting for something else) is not kept waiting.
func linger(n, lo int, avail func() int) int {
	start := time.Now()
	last := start
	for i := 1; n < lo; i++ {
		if i%8 == 0 {
			goruntime.Gosched()
		}
		now := time.Now()
		if m := avail(); m > n {
			n, last = m, now
			continue
		}
		if now.Sub(last) >= lingerQuiet || now.Sub(start) >= lingerMax {
			break
		}
	}
	return n
}

// creditIn reads the credits a receiver sends back on a data connection.
// The sender reads them itself, without a goroutine of its own: a
// non-blocking read before each send takes what arrived, and it blocks
// reading only when no credit is left.
type creditIn struct {
	c   net.Conn
	rc  syscall.RawConn // nil: no non-blocking reads on this connection
	cr  *wire.Credits   // tokens the sender may still send
	buf [512]byte
}

func newCreditIn(c net.Conn, window int) *creditIn {
	return &creditIn{c: c, rc: rawConn(c), cr: wire.NewCredits(window)}
}

// add takes k more bytes read into buf.
func (ci *creditIn) add(k int) error { return ci.cr.Add(ci.buf[:k]) }

// poll takes the credits that arrived, without blocking.
func (ci *creditIn) poll() error {
	if ci.rc == nil {
		return nil
	}
	var k int
	var err error
	if rerr := ci.rc.Read(func(fd uintptr) bool {
		k, err = readNonblock(fd, ci.buf[:])
		return true
	}); rerr != nil {
		return rerr
	}
	switch {
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR):
		return nil
	case err != nil:
		return err
	case k == 0:
		return io.EOF
	}
	return ci.add(k)
}

// wait blocks until credits arrive. It polls for a short while first
// (fifo.DefaultSpinTime), as the FIFOs spin before they park: credits
// usually follow soon, and a parked sender costs a wakeup.
func (ci *creditIn) wait() error {
	if ci.rc != nil {
		for start := time.Now(); time.Since(start) < fifo.DefaultSpinTime; {
			goruntime.Gosched()
			if err := ci.poll(); err != nil || ci.cr.N > 0 {
				return err
			}
		}
	}
	k, err := ci.c.Read(ci.buf[:])
	if k > 0 {
		return ci.add(k)
	}
	return err
}

// drain reads until the receiver closes the connection, which it does
// once it has every frame.
func (ci *creditIn) drain() error {
	for {
		if _, err := ci.c.Read(ci.buf[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// frameWriter writes a window of tokens as frames of at most chunk bytes,
// all in one vectored write straight from the window.
type frameWriter struct {
	chunk int // bytes, whole tokens
	enc   wire.Encoder
	hdrs  []byte
	bufs  [][]byte
}

func (fw *frameWriter) write(c net.Conn, win []byte) error {
	nf := (len(win) + fw.chunk - 1) / fw.chunk
	if len(fw.hdrs) < nf*wire.HeaderLen {
		fw.hdrs = make([]byte, nf*wire.HeaderLen)
	}
	bufs := fw.bufs[:0]
	for i := 0; len(win) > 0; i++ {
		p := win[:min(len(win), fw.chunk)]
		win = win[len(p):]
		h := fw.hdrs[i*wire.HeaderLen : (i+1)*wire.HeaderLen]
		fw.enc.Header(len(p), false).Put(h)
		bufs = append(bufs, h, p)
	}
	fw.bufs = bufs
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(c)
	return err
}

// tcpSend reads r until end of stream and writes its tokens on c in
// frames of at most chunk bytes, at most window tokens ahead of the
// credits read back from c, batching small firings for at most flush (0:
// wire.DefaultFlush; < 0: none).
func tcpSend(ctx context.Context, c net.Conn, r *fifo.Reader, tsize, window, chunk int, flush time.Duration, moved func(), lim streamLimit) error {
	defer interruptOn(ctx, c)()
	defer c.Close()
	ci := newCreditIn(c, window)
	lost := func(err error) error {
		return cause(ctx, fmt.Errorf("the receiver closed the data stream: %w", err))
	}
	b := wire.NewBatch(tsize, window, chunk, flush)
	fw := frameWriter{chunk: b.ChunkTokens * tsize}
	var sent, sentTok int64
	for {
		if err := ci.poll(); err != nil {
			return lost(err)
		}
		for ci.cr.N == 0 {
			if err := ci.wait(); err != nil {
				return lost(err)
			}
		}
		want, err := lim.gate.allow(ctx, sentTok, int(min(ci.cr.N, int64(b.Most))))
		if err != nil {
			return cause(ctx, err)
		}
		n, err := ready(ctx, r, want, b)
		if errors.Is(err, fifo.ErrClosed) {
			return endStream(ctx, c, ci, &fw.enc)
		}
		if err != nil {
			return cause(ctx, err)
		}
		if n = lim.gate.clamp(sentTok, n); n == 0 {
			continue // a barrier closed the gate while ready waited
		}
		win := r.TryAcquire(n)
		sent += int64(len(win))
		sentTok += int64(n)
		if lim.max > 0 && sent > lim.max {
			return lim.what(sent)
		}
		if err := fw.write(c, win); err != nil {
			return cause(ctx, err)
		}
		r.Release(n)
		ci.cr.Sent(n)
		if moved != nil {
			moved()
		}
	}
}

// batch returns how much of what avail counts to take now, 1 to want: it
// waits with one for the first unit, then lingers while fewer than lo
// (at most want) are there.
func batch(avail func() int, one func() error, want, lo int) (int, error) {
	n := avail()
	if n == 0 {
		if err := one(); err != nil {
			return 0, err
		}
		n = avail()
	}
	if lo = min(lo, want); n < lo {
		n = linger(n, lo, avail)
	}
	return min(n, want), nil
}

// endStream sends the end-of-stream frame and waits until the receiver
// has everything: it closes the connection.
func endStream(ctx context.Context, c net.Conn, ci *creditIn, enc *wire.Encoder) error {
	var hdr [wire.HeaderLen]byte
	enc.Header(0, true).Put(hdr[:])
	if _, err := c.Write(hdr[:]); err != nil {
		return cause(ctx, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	if err := ci.drain(); err != nil {
		return cause(ctx, fmt.Errorf("waiting for the receiver to take the end of the stream: %w", err))
	}
	return nil
}

// frameReader reads frame headers through a small staging buffer and
// frame payloads straight into the caller's memory. Where it can, the read
// that ends a payload also takes what follows into the stage (the next
// header, and a small frame whole), so that a header costs no read of its
// own while frames keep coming.
type frameReader struct {
	c     net.Conn
	dec   *wire.Decoder
	rc    syscall.RawConn // nil: payloads and headers in separate reads
	stage []byte
	r, w  int // stage[r:w] is read and not consumed
}

func newFrameReader(c net.Conn, lim wire.Limits) *frameReader {
	fr := &frameReader{c: c, dec: wire.NewDecoder(lim), stage: make([]byte, tcpStage)}
	if readv != nil {
		fr.rc = rawConn(c)
	}
	return fr
}

// header reads the next frame's header. A read error is the stream cut
// (errCut); a header outside the limits is refused as such.
func (fr *frameReader) header() (wire.Header, error) {
	for fr.w-fr.r < wire.HeaderLen {
		if fr.r > 0 {
			fr.w = copy(fr.stage, fr.stage[fr.r:fr.w])
			fr.r = 0
		}
		k, err := fr.c.Read(fr.stage[fr.w:])
		fr.w += k
		if err != nil && fr.w < wire.HeaderLen {
			if errors.Is(err, io.EOF) && fr.w > 0 {
				err = io.ErrUnexpectedEOF
			}
			return wire.Header{}, fmt.Errorf("%w: %w", errCut, err)
		}
	}
	h, err := fr.dec.Header(fr.stage[fr.r : fr.r+wire.HeaderLen])
	fr.r += wire.HeaderLen
	return h, err
}

// errCut is a direct stream's connection broken before its end.
var errCut = errors.New("data stream cut before its end")

// fill reads len(p) payload bytes into p: what the stage holds, then the
// rest from the connection.
func (fr *frameReader) fill(p []byte) error {
	k := copy(p, fr.stage[fr.r:fr.w])
	fr.r += k
	if fr.r == fr.w {
		fr.r, fr.w = 0, 0
	}
	if p = p[k:]; len(p) == 0 {
		return nil
	}
	if fr.rc == nil {
		_, err := io.ReadFull(fr.c, p)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	// The stage is empty: what the reads bring past p goes there.
	for len(p) > 0 {
		n, err := readv(fr.rc, p, fr.stage)
		if n > len(p) {
			fr.w = n - len(p)
			n = len(p)
		}
		p = p[n:]
		if err != nil && len(p) > 0 {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// tcpRecv reads frames from c into w until end of stream, writing credits
// back as tokens enter w. It does not close w.
func tcpRecv(ctx context.Context, c net.Conn, w *fifo.Writer, tsize, window int, moved func(), lim streamLimit) error {
	defer interruptOn(ctx, c)()
	defer c.Close()
	fr := newFrameReader(c, wire.Limits{TokenSize: tsize, Window: window})
	var pending, got int64
	thr := int64(wire.CreditBatch(window, tsize))
	cb := make([]byte, 0, wire.CreditLen)
	for {
		h, err := fr.header()
		if err != nil {
			return cause(ctx, err)
		}
		if h.End() {
			return nil
		}
		n := h.Len
		got += int64(n)
		if lim.max > 0 && got > lim.max {
			return lim.what(got)
		}
		for left := n / tsize; left > 0; {
			k, err := room(ctx, w, left, max(1, window/4))
			if err != nil {
				return cause(ctx, err)
			}
			if err := fr.fill(w.TryAcquire(k)); err != nil {
				return cause(ctx, fmt.Errorf("%w: %w", errCut, err))
			}
			w.Commit(k)
			left -= k
			if moved != nil {
				moved()
			}
			if pending += int64(k); pending >= thr {
				cb = wire.AppendCredit(cb[:0], pending)
				pending = 0
				if _, err := c.Write(cb); err != nil {
					return cause(ctx, fmt.Errorf("returning credits: %w", err))
				}
			}
		}
	}
}

// room returns how many tokens of room in w to fill now, 1 to want: it
// waits for room for one, then lingers while there is room for fewer than
// lo.
func room(ctx context.Context, w *fifo.Writer, want, lo int) (int, error) {
	return batch(w.Room, func() error { _, err := w.Acquire(ctx, 1); return err }, want, lo)
}
