package cluster

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/sluicehq/sluice/fifo"
)

// The direct TCP data path: a worker with a data listener offers it in its
// reply to a run request; the client then opens one TCP connection per
// stream, says which job and port it is for (with the job's secret), and
// the tokens go straight between the two hosts: frames of a 4-byte length,
// a flags byte and whole tokens one way, 8-byte credits the other. TCP keeps
// order and loses nothing; the credits keep the stream bounded as over NATS.

// dataHello opens a data connection.
type dataHello struct {
	Job    string `json:"job"`
	Secret string `json:"secret"`
	// Stream is "in.N" (client → worker) or "out.N" (worker → client).
	Stream string `json:"stream"`
}

const tcpHdr = 5

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

// tcpSend reads r until end of stream and writes its tokens on c in
// frames of at most chunk bytes, at most window tokens ahead of the
// credits read back from c.
func tcpSend(ctx context.Context, c net.Conn, r *fifo.Reader, tsize, window, chunk int, moved func(), lim streamLimit) error {
	defer interruptOn(ctx, c)()
	credits := make(chan int64, 64)
	var rerr error // set before credits closes
	go func() {
		var b [8]byte
		for {
			if _, err := io.ReadFull(c, b[:]); err != nil {
				rerr = err
				close(credits)
				return
			}
			credits <- int64(binary.LittleEndian.Uint64(b[:]))
		}
	}()
	defer func() {
		_ = c.Close()
		for range credits {
		}
	}()
	credit := int64(window)
	chunkTok := max(1, chunk/tsize)
	var sent int64
	var hdr [tcpHdr]byte
	bw := bufio.NewWriterSize(c, 64<<10)
	lost := func() error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("the receiver closed the data stream: %v", rerr)
	}
	for {
		for credit <= 0 {
			if err := bw.Flush(); err != nil {
				return cause(ctx, err)
			}
			select {
			case n, ok := <-credits:
				if !ok {
					return lost()
				}
				credit += n
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
	more:
		for {
			select {
			case n, ok := <-credits:
				if !ok {
					return lost()
				}
				credit += n
			default:
				break more
			}
		}
		win := r.TryAcquire(int(min(int64(chunkTok), credit)))
		if len(win) == 0 {
			if err := bw.Flush(); err != nil {
				return cause(ctx, err)
			}
			if _, err := r.Acquire(ctx, 1); err != nil {
				if errors.Is(err, fifo.ErrClosed) {
					binary.LittleEndian.PutUint32(hdr[:], 0)
					hdr[4] = flagEOS
					if _, err := bw.Write(hdr[:]); err != nil {
						return cause(ctx, err)
					}
					if err := bw.Flush(); err != nil {
						return cause(ctx, err)
					}
					// Wait until the receiver has it all: it closes.
					if tc, ok := c.(*net.TCPConn); ok {
						_ = tc.CloseWrite()
					}
					for range credits {
					}
					return nil
				}
				return cause(ctx, err)
			}
			continue
		}
		k := len(win) / tsize
		sent += int64(len(win))
		if lim.max > 0 && sent > lim.max {
			return lim.what(sent)
		}
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(win)))
		hdr[4] = 0
		if len(win)+len(hdr) > bw.Available() {
			// A large frame: what is buffered, the header and the window
			// go in one vectored write, straight from the FIFO.
			bufs := net.Buffers{hdr[:], win}
			if bw.Buffered() > 0 {
				if err := bw.Flush(); err != nil {
					return cause(ctx, err)
				}
			}
			if _, err := bufs.WriteTo(c); err != nil {
				return cause(ctx, err)
			}
		} else {
			if _, err := bw.Write(hdr[:]); err != nil {
				return cause(ctx, err)
			}
			if _, err := bw.Write(win); err != nil {
				return cause(ctx, err)
			}
		}
		r.Release(k)
		credit -= int64(k)
		if moved != nil {
			moved()
		}
	}
}

// tcpRecv reads frames from c into w until end of stream, writing credits
// back as tokens enter w. It does not close w.
func tcpRecv(ctx context.Context, c net.Conn, w *fifo.Writer, tsize, window int, moved func(), lim streamLimit) error {
	defer interruptOn(ctx, c)()
	defer c.Close()
	br := bufio.NewReaderSize(c, 64<<10)
	var hdr [tcpHdr]byte
	var pending, got int64
	thr := int64(max(1, window/4))
	credit := func() error {
		if pending == 0 {
			return nil
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(pending))
		pending = 0
		_, err := c.Write(b[:])
		return err
	}
	for {
		if br.Buffered() == 0 {
			// Nothing more queued here: return credits now.
			if err := credit(); err != nil {
				return cause(ctx, err)
			}
		}
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return cause(ctx, fmt.Errorf("data stream cut before its end: %w", err))
		}
		if hdr[4]&flagEOS != 0 {
			return nil
		}
		n := int(binary.LittleEndian.Uint32(hdr[:]))
		if n%tsize != 0 || n/tsize > window || n == 0 {
			return fmt.Errorf("data frame of %d bytes: expected 1 to %d whole %d-byte tokens", n, window, tsize)
		}
		got += int64(n)
		if lim.max > 0 && got > lim.max {
			return lim.what(got)
		}
		k := n / tsize
		win, err := w.Acquire(ctx, k)
		if err != nil {
			return cause(ctx, err)
		}
		if _, err := io.ReadFull(br, win); err != nil {
			return cause(ctx, fmt.Errorf("data stream cut before its end: %w", err))
		}
		w.Commit(k)
		if moved != nil {
			moved()
		}
		pending += int64(k)
		if pending >= thr {
			if err := credit(); err != nil {
				return cause(ctx, err)
			}
		}
	}
}
