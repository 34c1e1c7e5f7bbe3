package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// Fuzz targets of what a worker decodes from the network: run requests
// (validated, then built), the requests of a live worker, the direct TCP
// data frames and hello, and NATS data chunks. None may panic, hang or
// take the worker's service down. scripts/fuzz.sh runs them.

// seedRuns are the fuzz seeds: valid requests and the malformed corpus.
func seedRuns(f *testing.F) [][]byte {
	good, _ := json.Marshal(baseRun("seed"))
	kernel := baseRun("seedk")
	kernel.Actor.Impls = []ImplSpec{{Kind: graph.ImplOpenCL, Source: "k.cl", Code: []byte("__kernel void k() {}"), Entry: "k"}}
	k, _ := json.Marshal(kernel)
	seeds := [][]byte{good, k}
	for _, c := range malformedRuns(f) {
		if len(c.data) < 64<<10 {
			seeds = append(seeds, c.data)
		}
	}
	return seeds
}

// FuzzValidateRun decodes and checks arbitrary run requests as a worker
// does; a request the checks take must build into a valid one-actor graph
// without panicking.
func FuzzValidateRun(f *testing.F) {
	for _, s := range seedRuns(f) {
		f.Add(s)
	}
	lim := DefaultRequestLimits()
	f.Fuzz(func(t *testing.T, data []byte) {
		if lim.checkMessage(data) != nil {
			return
		}
		var req RunRequest
		if json.Unmarshal(data, &req) != nil {
			return
		}
		err := lim.validateRun(&req, []string{"cpu"})
		if err != nil {
			if !strings.Contains(err.Error(), "expected") {
				t.Fatalf("refusal %q does not say what was expected", err)
			}
			return
		}
		if len(req.Ins) != len(req.Actor.Inputs) || len(req.Outs) != len(req.Actor.Outputs) || req.Chunk < 0 || req.Replicas < 0 {
			t.Fatalf("accepted an inconsistent request: %+v", req)
		}
		g := graph.New("fuzz")
		a, err := req.Actor.build(g, t.TempDir())
		if err != nil {
			return
		}
		for _, p := range append(append([]*graph.Port(nil), a.Inputs...), a.Outputs...) {
			if int64(p.Rate.Max())*int64(p.Type.Size) > lim.MaxChannelBytes {
				t.Fatalf("accepted port %s: %d tokens of %d bytes a firing, over %d bytes", p.Name, p.Rate.Max(), p.Type.Size, lim.MaxChannelBytes)
			}
		}
	})
}

// FuzzWorkerRequest sends arbitrary messages to a live in-process
// worker's run, snapshot, hold and release subjects: each is answered,
// and the worker still answers its info request afterwards.
func FuzzWorkerRequest(f *testing.F) {
	for i, s := range seedRuns(f) {
		f.Add(uint8(0), s)
		if i < 3 {
			f.Add(uint8(1+i), s)
		}
	}
	f.Add(uint8(1), binary.LittleEndian.AppendUint64(nil, 3))
	f.Add(uint8(1), []byte{1, 2, 3})
	f.Add(uint8(2), []byte(nil))
	s := startSolo(f, WorkerOptions{})
	nc := s.cl.nc
	// A job whose snapshot and hold subjects take the messages.
	req := baseRun("fuzzjob")
	req.Target = -1
	data, _ := json.Marshal(req)
	if m, err := nc.Request(workerSubject("w1", "run"), data, 5*time.Second); err != nil || !strings.Contains(string(m.Data), `"ok":true`) {
		f.Fatalf("the fuzz job was not taken: %v", err)
	}
	stop := make(chan struct{})
	var beat sync.WaitGroup
	beat.Add(1)
	go func() {
		defer beat.Done()
		for {
			_ = nc.Publish(jobSubject("fuzzjob", "hb.c"), nil)
			select {
			case <-stop:
				_ = nc.Publish(jobSubject("fuzzjob", "cancel"), nil)
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	f.Cleanup(func() { close(stop); beat.Wait() })
	subjects := []string{workerSubject("w1", "run"), jobSubject("fuzzjob", "snap"), jobSubject("fuzzjob", "hold"), jobSubject("fuzzjob", "release"), workerSubject("w1", "info")}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		subj := subjects[int(which)%len(subjects)]
		if len(data) > 1<<20 {
			data = data[:1<<20]
		}
		if _, err := validateSnapRequest(data); err == nil && subj == subjects[1] {
			// A snapshot at a firing the actor has not reached waits for
			// it (or for a free place): an answer may not come now.
			_, _ = nc.Request(subj, data, 20*time.Millisecond)
			return
		}
		m, err := nc.Request(subj, data, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: no answer to %d bytes: %v", subj, len(data), err)
		}
		if subj == subjects[0] {
			var rep RunReply
			if err := json.Unmarshal(m.Data, &rep); err != nil {
				t.Fatalf("run reply %q: %v", m.Data, err)
			}
			if rep.OK {
				var req RunRequest
				_ = json.Unmarshal(data, &req)
				_ = nc.Publish(jobSubject(req.Job, "cancel"), nil)
			}
		}
		if _, err := nc.Request(workerSubject("w1", "info"), nil, 10*time.Second); err != nil {
			t.Fatalf("the worker stopped answering after %d bytes on %s: %v", len(data), subj, err)
		}
	})
}

// fuzzConn is a net.Conn reading a fixed byte stream and discarding
// writes (the credits).
type fuzzConn struct {
	r io.Reader
}

func (c *fuzzConn) Read(p []byte) (int, error)         { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error)        { return len(p), nil }
func (c *fuzzConn) Close() error                       { return nil }
func (c *fuzzConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *fuzzConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *fuzzConn) SetDeadline(t time.Time) error      { return nil }
func (c *fuzzConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(t time.Time) error { return nil }

// drained is a FIFO of capTok tokens whose reader takes everything, until
// the writer closes.
func drained(t *testing.T, tsize, capTok int) (*fifo.FIFO, func()) {
	ff, err := fifo.New(fifo.Options{Name: "fuzz", TokenSize: tsize, Capacity: capTok})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := ff.Reader(0)
		for {
			b, err := r.Acquire(context.Background(), 1)
			if err != nil {
				return
			}
			r.Release(len(b) / tsize)
		}
	}()
	return ff, func() { ff.Writer().Close(); wg.Wait(); _ = ff.Free() }
}

// FuzzTCPRecv feeds arbitrary bytes to the receiving end of a direct TCP
// data stream: it ends with the stream or an error, never panics, never
// takes more than the window's tokens at once.
func FuzzTCPRecv(f *testing.F) {
	frame := func(flags byte, payload []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
		return append(append(b, flags), payload...)
	}
	f.Add(uint8(4), uint8(8), append(frame(0, make([]byte, 16)), frame(flagEOS, nil)...))
	f.Add(uint8(4), uint8(2), frame(0, make([]byte, 12)))
	f.Add(uint8(1), uint8(1), []byte{0xff, 0xff, 0xff, 0xff, 0})
	f.Add(uint8(8), uint8(4), []byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, ts, window uint8, data []byte) {
		tsize, win := int(ts%16)+1, int(window%64)+1
		ff, done := drained(t, tsize, win)
		defer done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := tcpRecv(ctx, &fuzzConn{r: bytes.NewReader(data)}, ff.Writer(), tsize, win, nil, streamLimit{})
		if ctx.Err() != nil {
			t.Fatalf("tcpRecv of %d bytes did not end: %v", len(data), err)
		}
	})
}

// FuzzReadHello feeds arbitrary bytes to a data connection's hello.
func FuzzReadHello(f *testing.F) {
	f.Add([]byte(`{"job":"j","secret":"s","stream":"in.0"}` + "\n"))
	f.Add([]byte(`{"job":5}` + "\n"))
	f.Add(bytes.Repeat([]byte("a"), 2000))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := readHello(&fuzzConn{r: bytes.NewReader(data)})
		if err == nil && len(h.Job)+len(h.Secret)+len(h.Stream) > 1024 {
			t.Fatalf("a hello of more than 1 KiB taken: %+v", h)
		}
	})
}

// FuzzRecvStream feeds arbitrary data messages (each a 2-byte length and
// its bytes) to the receiving end of a NATS data stream: it ends with the
// stream or an error, never panics.
func FuzzRecvStream(f *testing.F) {
	msg := func(seq uint64, flags byte, payload []byte) []byte {
		b := binary.LittleEndian.AppendUint64(nil, seq)
		b = append(b, flags)
		b = append(b, payload...)
		return append(binary.LittleEndian.AppendUint16(nil, uint16(len(b))), b...)
	}
	f.Add(uint8(4), append(msg(0, 0, make([]byte, 8)), msg(1, flagEOS, nil)...))
	f.Add(uint8(4), msg(1, 0, make([]byte, 4)))
	f.Add(uint8(2), msg(0, 0, make([]byte, 3)))
	srv, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		f.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		f.Fatal("nats server not ready")
	}
	f.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(nc.Close)
	f.Fuzz(func(t *testing.T, ts uint8, data []byte) {
		tsize := int(ts%16) + 1
		subj := nc.NewInbox()
		sub, err := nc.SubscribeSync(subj)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		for len(data) >= 2 {
			l := int(binary.LittleEndian.Uint16(data))
			data = data[2:]
			l = min(l, len(data))
			_ = nc.Publish(subj, data[:l])
			data = data[l:]
		}
		_ = nc.Publish(subj, nil) // not a data message: ends a stream that did not end
		ff, done := drained(t, tsize, 8)
		defer done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = recvStream(ctx, nc, sub, subj+".credits", ff.Writer(), tsize, 8, nil, streamLimit{})
		if ctx.Err() != nil {
			t.Fatalf("recvStream did not end: %v", err)
		}
		if err != nil && errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
	})
}
