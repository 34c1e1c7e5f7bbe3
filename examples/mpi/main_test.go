package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/mpi"
)

// The test binary doubles as a rank process: with MPI_TEST_RANK set it runs
// that rank and exits.
func TestMain(m *testing.M) {
	if r := os.Getenv("MPI_TEST_RANK"); r != "" {
		rank, _ := strconv.Atoi(r)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := runRank(ctx, os.Getenv("MPI_TEST_URL"), "proc", 64, 4, rank, "", "cpu"); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Four goroutine ranks on an in-process NATS server, with the Go built-in
// and with the OpenCL kernel when a device is able (rank 0 checks C).
func TestFourRanks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, "", "go", 64, 4, 0, "", "cpu"); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, "", "any", 128, 4, 0, "", ""); err != nil {
		t.Fatal(err)
	}
}

// Four rank processes (this test binary re-run) on one NATS server.
func TestFourProcesses(t *testing.T) {
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	var cmds []*exec.Cmd
	for r := 0; r < 4; r++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MPI_TEST_RANK="+strconv.Itoa(r), "MPI_TEST_URL="+s.ClientURL())
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for r, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("rank %d process: %v", r, err)
		}
	}
}

// Ranks 0 and 1 on a root broker, ranks 2 and 3 on a child broker joined to
// it as a leaf (a sluice broker tree), ranks 2 and 3 firing on a flow-model
// host served at the child (as a sluice worker there does).
func TestAcrossBrokerTree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Shutdown()
	child, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "child", Listen: "127.0.0.1:0", Parent: root.LeafURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Shutdown()
	for !child.ParentConnected() {
		if ctx.Err() != nil {
			t.Fatal("child broker did not join")
		}
		time.Sleep(20 * time.Millisecond)
	}
	wc, err := nats.Connect(child.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	srv, err := flowmodel.Serve(wc, "gpu-box", flowmodel.Local{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	var got []float32
	for r := 0; r < 4; r++ {
		url, host := root.ClientURL(), ""
		if r >= 2 {
			url, host = child.ClientURL(), "gpu-box"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := nats.Connect(url)
			if err != nil {
				errs[r] = err
				return
			}
			defer nc.Close()
			var h flowmodel.Host = flowmodel.Local{}
			if host != "" {
				h = flowmodel.Remote{Conn: nc, Name: host}
			}
			c, err := mpi.Join(ctx, nc, "tree", r, 4)
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			c0, err := Multiply(ctx, c, h, "cpu", 64)
			if r == 0 {
				got = c0
			}
			errs[r] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	a, b := Inputs(64)
	if err := Check(got, a, b, 64); err != nil {
		t.Fatal(err)
	}
}
