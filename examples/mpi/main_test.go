package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
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
