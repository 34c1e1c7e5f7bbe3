package mpi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/mpi"
)

func startNATS(t *testing.T) string {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

func connect(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// ranks joins size ranks of job as goroutines and runs body for each.
func ranks(t *testing.T, url, job string, size int, body func(ctx context.Context, c *mpi.Comm) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, size)
	for r := 0; r < size; r++ {
		nc := connect(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := mpi.Join(ctx, nc, job, r, size)
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			errs[r] = body(ctx, c)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func f32(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func floats(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// saxpy: y = 2x + y0 over 4 floats, with y and y0 swapped between
// iterations.
func saxpy(t *testing.T, ctx context.Context, h flowmodel.Host) flowmodel.Instance {
	m := &flowmodel.Model{
		Name:   "saxpy",
		Kernel: flowmodel.Kernel{Builtin: "saxpy_f32"},
		In:     []flowmodel.Stream{{Name: "x", Type: "f32", Length: 4}, {Name: "y0", Type: "f32", Length: 4}},
		Out:    []flowmodel.Stream{{Name: "y", Type: "f32", Length: 4}},
		Params: []flowmodel.Param{{Name: "a", Type: "f32", Value: 2}},
		Swap:   []flowmodel.SwapPair{{Out: "y", In: "y0"}},
	}
	in, err := h.Map(ctx, m, "cpu")
	if err != nil {
		t.Error(err)
		return nil
	}
	return in
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Rank 1 receives x and y0 from rank 0, fires 3 iterations, sends y back
// (RecvSend); rank 0 uses Send (Calculate-Send) and Recv (Recv-Calculate)
// on its own flow-model around it.
func TestSyncRecvSend(t *testing.T) {
	url := startNATS(t)
	ranks(t, url, "sync", 2, func(ctx context.Context, c *mpi.Comm) error {
		in := saxpy(t, ctx, flowmodel.Local{})
		defer in.Release(ctx)
		if c.Rank() == 1 {
			return c.RecvSend(ctx, mpi.Op{Model: in, Iterations: 3,
				Recv: []mpi.Endpoint{{Rank: 0, Tag: 1, Stream: "x"}, {Rank: 0, Tag: 2, Stream: "y0"}},
				Send: []mpi.Endpoint{{Rank: 0, Tag: 3, Stream: "y"}}})
		}
		// Calculate-Send: y = 2x + y0 = (3, 5, 7, 9) sent as rank 1's x;
		// rank 1's y0 comes raw.
		if err := c.Send(ctx, mpi.Op{Model: in, Inputs: map[string][]byte{"x": f32(1, 2, 3, 4), "y0": f32(1, 1, 1, 1)},
			Send: []mpi.Endpoint{{Rank: 1, Tag: 1, Stream: "y"}}}); err != nil {
			return err
		}
		if err := c.SendData(ctx, 1, 2, f32(0, 0, 0, 0)); err != nil {
			return err
		}
		// Recv-Calculate: rank 1's y = 3*2*x = (18, 30, 42, 54) arrives as x.
		res, err := c.Recv(ctx, mpi.Op{Model: in, Inputs: map[string][]byte{"y0": f32(0, 0, 0, 0)},
			Recv: []mpi.Endpoint{{Rank: 1, Tag: 3, Stream: "x"}}, Results: []string{"y"}})
		if err != nil {
			return err
		}
		if got, want := floats(res["y"]), []float32{36, 60, 84, 108}; !equal(got, want) {
			t.Errorf("rank 0: y = %v: expected %v", got, want)
		}
		return nil
	})
}

// Waiting for one request advances the others: when rank 1 waits for its
// second IRecv, the first one (whose message came first) completes too.
func TestProgressEngine(t *testing.T) {
	url := startNATS(t)
	ranks(t, url, "progress", 2, func(ctx context.Context, c *mpi.Comm) error {
		if c.Rank() == 0 {
			if err := c.SendData(ctx, 1, 7, f32(1, 1, 1, 1)); err != nil {
				return err
			}
			return c.SendData(ctx, 1, 8, f32(2, 2, 2, 2))
		}
		a, b := saxpy(t, ctx, flowmodel.Local{}), saxpy(t, ctx, flowmodel.Local{})
		defer a.Release(ctx)
		defer b.Release(ctx)
		zero := map[string][]byte{"y0": f32(0, 0, 0, 0)}
		r1, err := c.IRecv(mpi.Op{Model: a, Inputs: zero, Recv: []mpi.Endpoint{{Rank: 0, Tag: 7, Stream: "x"}}, Results: []string{"y"}})
		if err != nil {
			return err
		}
		r2, err := c.IRecv(mpi.Op{Model: b, Inputs: zero, Recv: []mpi.Endpoint{{Rank: mpi.AnySource, Tag: 8, Stream: "x"}}, Results: []string{"y"}})
		if err != nil {
			return err
		}
		if err := c.Wait(ctx, r2); err != nil {
			return err
		}
		if !r1.Done() {
			t.Error("the first request did not progress while waiting for the second")
		}
		if done, err := c.Test(ctx, r1); !done || err != nil {
			t.Errorf("Test(r1) = %v, %v: expected done", done, err)
		}
		if got := floats(r1.Results()["y"]); !equal(got, []float32{2, 2, 2, 2}) {
			t.Errorf("r1: y = %v", got)
		}
		if got := floats(r2.Results()["y"]); !equal(got, []float32{4, 4, 4, 4}) {
			t.Errorf("r2: y = %v", got)
		}
		return nil
	})
}

// Ranks fire on remote hosts served over the same NATS (as sluice workers
// do), and Test reports an unfinished request as not done.
func TestRemoteHostsAndTest(t *testing.T) {
	url := startNATS(t)
	srv, err := flowmodel.Serve(connect(t, url), "w1", flowmodel.Local{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ranks(t, url, "remote", 2, func(ctx context.Context, c *mpi.Comm) error {
		if c.Rank() == 0 {
			if _, err := c.RecvData(ctx, 1, 99); err != nil { // rank 1 is ready
				return err
			}
			if err := c.SendData(ctx, 1, 1, f32(1, 2, 3, 4)); err != nil {
				return err
			}
			d, err := c.RecvData(ctx, 1, 2)
			if err == nil && !equal(floats(d), []float32{4, 8, 12, 16}) {
				t.Errorf("rank 0: got %v", floats(d))
			}
			return err
		}
		in := saxpy(t, ctx, flowmodel.Remote{Conn: connect(t, url), Name: "w1"})
		defer in.Release(ctx)
		r, err := c.IRecvSend(mpi.Op{Model: in, Iterations: 2, Inputs: map[string][]byte{"y0": f32(0, 0, 0, 0)},
			Recv: []mpi.Endpoint{{Rank: 0, Tag: 1, Stream: "x"}}, Send: []mpi.Endpoint{{Rank: 0, Tag: 2, Stream: "y"}}})
		if err != nil {
			return err
		}
		if done, err := c.Test(ctx, r); done || err != nil {
			t.Errorf("Test before the message: %v, %v: expected not done", done, err)
		}
		if err := c.SendData(ctx, 0, 99, nil); err != nil {
			return err
		}
		return c.Wait(ctx, r)
	})
}

func TestErrors(t *testing.T) {
	url := startNATS(t)
	nc := connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := mpi.Join(ctx, nc, "e", 2, 2); err == nil || !strings.Contains(err.Error(), "rank 2 of 2") {
		t.Errorf("bad rank: %v", err)
	}
	if _, err := mpi.Join(ctx, nc, "e", 0, 2); err == nil || !strings.Contains(err.Error(), "did not join") {
		t.Errorf("missing peer: %v", err)
	}
	ranks(t, url, "e1", 1, func(ctx context.Context, c *mpi.Comm) error {
		if _, err := c.IRecvSend(mpi.Op{}); err == nil {
			t.Error("IRecvSend without streams: expected an error")
		}
		in := saxpy(t, ctx, flowmodel.Local{})
		defer in.Release(ctx)
		if _, err := c.ISend(mpi.Op{Model: in, Send: []mpi.Endpoint{{Rank: 5, Stream: "y"}}}); err == nil {
			t.Error("send to rank 5 of 1: expected an error")
		}
		r, err := c.ISend(mpi.Op{Model: in, Inputs: map[string][]byte{"x": f32(1)}, Send: []mpi.Endpoint{{Rank: 0, Stream: "y"}}})
		if err != nil {
			return err
		}
		if err := c.Wait(ctx, r); err == nil || !strings.Contains(err.Error(), "found 4 bytes") {
			t.Errorf("short input: %v, expected a size error", err)
		}
		return nil
	})
}

// TestLongMessagesAndRefusals: a message of several parts arrives whole,
// and a malformed one (a length over the limit) fails the receive with
// what was expected instead of being allocated.
func TestLongMessagesAndRefusals(t *testing.T) {
	url := startNATS(t)
	nc := connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := mpi.Join(ctx, nc, "a.b", 0, 1); err == nil || !strings.Contains(err.Error(), "expected a non-empty name") {
		t.Errorf("a job name with a dot: %v, expected a refusal", err)
	}
	c, err := mpi.Join(ctx, nc, "long", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 700_001) // three parts
	for i := range data {
		data[i] = byte(i * 13)
	}
	if err := c.SendData(ctx, 0, 7, data); err != nil {
		t.Fatal(err)
	}
	got, err := c.RecvData(ctx, 0, 7)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("a message of %d bytes: %d bytes back, %v", len(data), len(got), err)
	}
	m := nats.NewMsg("sluice.mpi.long.0")
	for k, v := range map[string]string{"Src": "0", "Tag": "8", "Id": "x", "Off": "0", "Total": "99999999999"} {
		m.Header.Set(k, v)
	}
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RecvData(ctx, 0, 8); err == nil || !strings.Contains(err.Error(), "message of 99999999999 bytes: expected 0 to 1073741824") {
		t.Errorf("a message over the limit: %v, expected a refusal naming the limit", err)
	}
}
