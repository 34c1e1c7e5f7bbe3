// Command mpi multiplies two N x N matrices with ranks that receive their
// blocks, fire a matrix-multiply flow-model and send the result back (the
// CaravelaMPI example of the seed's Fig. 12). Rank 0 sends n = N/size rows
// of A and all of B to every rank (itself included), each rank runs
// IRecvSend (receive A and B → fire → send its rows of C to rank 0), and
// rank 0 gathers C and checks it against a product computed on the host.
//
// Run all ranks as goroutines with an in-process NATS server:
//
//	go run ./examples/mpi -n 256 -ranks 4
//
// or each rank as a process on any NATS server (a sluice broker):
//
//	go run ./examples/mpi -nats nats://127.0.0.1:4222 -ranks 4 -rank 1 &
//	…
//	go run ./examples/mpi -nats nats://127.0.0.1:4222 -ranks 4 -rank 0
//
// -worker NAME fires the flow-model on that sluice worker's devices instead
// of this process's (flowmodel.Remote).
package main

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/mpi"
)

//go:embed matmul.yaml
var matmulYAML []byte

// Message tags.
const (
	tagA = iota + 1
	tagB
	tagC
)

func main() {
	var (
		url    = flag.String("nats", "", "NATS URL of the broker (empty: an in-process server, every rank a goroutine)")
		n      = flag.Int("n", 64, "matrix size N (a multiple of the number of ranks)")
		ranks  = flag.Int("ranks", 4, "number of ranks")
		rank   = flag.Int("rank", 0, "this process's rank (with -nats)")
		job    = flag.String("job", "matmul", "job name shared by the ranks")
		worker = flag.String("worker", "", "fire the flow-model on this sluice worker (default: this process's devices)")
		dev    = flag.String("device", "", "device ID to fire on (default: the first able one; cpu runs the Go built-in)")
	)
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, *url, *job, *n, *ranks, *rank, *worker, *dev); err != nil {
		fmt.Fprintln(os.Stderr, "mpi:", err)
		os.Exit(1)
	}
}

// run starts the ranks: all of them as goroutines when url is empty, else
// this process's one.
func run(ctx context.Context, url, job string, n, ranks, rank int, worker, dev string) error {
	if url == "" {
		s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
		if err != nil {
			return err
		}
		go s.Start()
		defer s.Shutdown()
		if !s.ReadyForConnections(10 * time.Second) {
			return errors.New("in-process NATS server not ready")
		}
		url = s.ClientURL()
		var wg sync.WaitGroup
		errs := make([]error, ranks)
		for r := 0; r < ranks; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[r] = runRank(ctx, url, job, n, ranks, r, worker, dev)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	return runRank(ctx, url, job, n, ranks, rank, worker, dev)
}

// runRank connects one rank and runs it.
func runRank(ctx context.Context, url, job string, n, ranks, rank int, worker, dev string) error {
	nc, err := nats.Connect(url, nats.Name(fmt.Sprintf("mpi-%s-%d", job, rank)))
	if err != nil {
		return err
	}
	defer nc.Close()
	var host flowmodel.Host = flowmodel.Local{}
	if worker != "" {
		host = flowmodel.Remote{Conn: nc, Name: worker}
	}
	c, err := mpi.Join(ctx, nc, job, rank, ranks)
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	got, err := Multiply(ctx, c, host, dev, n)
	if err != nil || rank != 0 {
		return err
	}
	a, b := Inputs(n)
	if err := Check(got, a, b, n); err != nil {
		return err
	}
	fmt.Printf("C = A x B (%d x %d) on %d ranks: correct, %v\n", n, n, ranks, time.Since(start).Round(time.Millisecond))
	return nil
}

// Model returns the matrix-multiply flow-model sized for rows rows of an
// n x n product: the OpenCL kernel of matmul.yaml, or the Go built-in
// matmul_f32 when builtin is set.
func Model(rows, n int, builtin bool) (*flowmodel.Model, error) {
	m, err := flowmodel.Parse("matmul.yaml", matmulYAML)
	if err != nil {
		return nil, err
	}
	m.In[0].Length, m.In[1].Length, m.Out[0].Length = rows*n, n*n, rows*n
	m.Params[0].Value, m.Params[1].Value = float64(rows), float64(n)
	if builtin {
		m.Kernel = flowmodel.Kernel{Builtin: "matmul_f32"}
		m.Params = []flowmodel.Param{{Name: "n", Type: "i32", Value: float64(rows)}, {Name: "k", Type: "i32", Value: float64(n)}, {Name: "m", Type: "i32", Value: float64(n)}}
	}
	return m, m.Validate()
}

// mapModel maps the flow-model on dev of host ("cpu": the Go built-in;
// "": an OpenCL device when one is able, else the built-in).
func mapModel(ctx context.Context, host flowmodel.Host, dev string, rows, n int) (flowmodel.Instance, error) {
	if dev != "cpu" {
		m, err := Model(rows, n, false)
		if err != nil {
			return nil, err
		}
		in, err := host.Map(ctx, m, dev)
		if err == nil || dev != "" {
			return in, err
		}
	}
	m, err := Model(rows, n, true)
	if err != nil {
		return nil, err
	}
	return host.Map(ctx, m, "cpu")
}

// Multiply runs Fig. 12 on rank c: rank 0 distributes A's rows and B,
// every rank fires its block with IRecvSend, rank 0 gathers C (returned;
// nil on other ranks).
func Multiply(ctx context.Context, c *mpi.Comm, host flowmodel.Host, dev string, n int) ([]float32, error) {
	size := c.Size()
	if n%size != 0 {
		return nil, fmt.Errorf("N = %d: expected a multiple of the %d ranks", n, size)
	}
	rows := n / size
	in, err := mapModel(ctx, host, dev, rows, n)
	if err != nil {
		return nil, fmt.Errorf("rank %d: %w", c.Rank(), err)
	}
	defer in.Release(ctx)
	req, err := c.IRecvSend(mpi.Op{
		Model: in,
		Recv:  []mpi.Endpoint{{Rank: 0, Tag: tagA, Stream: "a"}, {Rank: 0, Tag: tagB, Stream: "b"}},
		Send:  []mpi.Endpoint{{Rank: 0, Tag: tagC, Stream: "c"}},
	})
	if err != nil {
		return nil, err
	}
	if c.Rank() != 0 {
		return nil, c.Wait(ctx, req)
	}
	a, b := Inputs(n)
	bb := bytesOf(b)
	for r := 0; r < size; r++ {
		if err := c.SendData(ctx, r, tagA, bytesOf(a[r*rows*n:(r+1)*rows*n])); err != nil {
			return nil, err
		}
		if err := c.SendData(ctx, r, tagB, bb); err != nil {
			return nil, err
		}
	}
	if err := c.Wait(ctx, req); err != nil {
		return nil, err
	}
	out := make([]float32, 0, n*n)
	for r := 0; r < size; r++ {
		d, err := c.RecvData(ctx, r, tagC)
		if err != nil {
			return nil, err
		}
		out = append(out, floatsOf(d)...)
	}
	return out, nil
}

// Inputs returns the example's A and B (small integers: products are exact
// in float32 for the sizes used).
func Inputs(n int) (a, b []float32) {
	a, b = make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%7 - 3)
		b[i] = float32((i*5)%11 - 5)
	}
	return a, b
}

// Check compares C with a float64 product computed on the host.
func Check(c, a, b []float32, n int) error {
	if len(c) != n*n {
		return fmt.Errorf("C has %d elements: expected %d", len(c), n*n)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += float64(a[i*n+k]) * float64(b[k*n+j])
			}
			if math.Abs(float64(c[i*n+j])-s) > 1e-3*math.Max(1, math.Abs(s)) {
				return fmt.Errorf("C[%d][%d] = %g: expected %g", i, j, c[i*n+j], s)
			}
		}
	}
	return nil
}

func bytesOf(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func floatsOf(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
