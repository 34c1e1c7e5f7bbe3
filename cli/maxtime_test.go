package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/doccmd"
)

// runExit runs the sluice command line in the module's root and returns
// its standard error and exit status as Main would set it.
func runExit(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		return errb.String(), 0
	}
	if _, ok := err.(exitError); !ok {
		errb.WriteString("sluice: " + err.Error() + "\n")
	}
	return errb.String(), exitCode(err)
}

// endlessGraph writes a graph that would run forever: an endless ramp
// into a file sink.
func endlessGraph(t *testing.T, dir string) string {
	t.Helper()
	g := filepath.Join(dir, "endless.yaml")
	src := fmt.Sprintf(`kind: graph
name: endless
actors:
  src:  {use: gen.ramp, out: {y: {type: f32, rate: 64}}}
  sink: {use: file.write, with: {path: %q}, in: {x: {type: f32, rate: 64}}, stateful: true}
channels:
  - {from: src.y, to: sink.x}
`, filepath.Join(dir, "out.f32"))
	if err := os.WriteFile(g, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRunMaxTime: --max-time stops a run that would go on forever: it is
// cancelled cleanly when the limit passes, says so in one sentence (and
// how to continue it from its checkpoints), still writes --stats, is not
// marked finished (so --resume continues it) and exits with status 124. A
// negative limit is a usage error; a run that ends first exits 0.
func TestRunMaxTime(t *testing.T) {
	dir := t.TempDir()
	g := endlessGraph(t, dir)
	ck := filepath.Join(dir, "ck")
	start := time.Now()
	errs, code := runExit(t, "run", g, "--progress", "off", "--stats", "--max-time", "1500ms", "--checkpoint-dir", ck, "--checkpoint-interval", "100ms")
	took := time.Since(start)
	if code != 124 {
		t.Fatalf("an endless run with --max-time 1500ms: exit %d, expected 124:\n%s", code, errs)
	}
	want := "run " + g + ": stopped at --max-time 1.5s: the run's wall-clock limit passed and the run was cancelled cleanly (its outputs hold what it wrote until then); continue it with --resume " + ck
	if !strings.Contains(errs, want) {
		t.Fatalf("stderr:\n%s\nexpected the sentence %q", errs, want)
	}
	if !strings.Contains(errs, "endless:") || !strings.Contains(errs, "sink") {
		t.Errorf("stderr:\n%s\nexpected the --stats table of what the run did", errs)
	}
	if took > 60*time.Second {
		t.Errorf("the run took %s to stop after its 1.5 s limit", took)
	}
	if fi, err := os.Stat(filepath.Join(dir, "out.f32")); err != nil || fi.Size() == 0 {
		t.Errorf("the stopped run's output: %v: expected what it wrote until then", err)
	}
	if _, err := os.Stat(filepath.Join(ck, "finished.json")); err == nil {
		t.Error("a run stopped by --max-time was marked finished: --resume would not continue it")
	}
	if errs, code := runExit(t, "run", g, "--max-time", "-1s"); code != 2 || !strings.Contains(errs, "expected a duration ≥ 0") {
		t.Errorf("--max-time -1s: exit %d, %s: expected a usage error", code, errs)
	}
	short := filepath.Join(dir, "short.yaml")
	if err := os.WriteFile(short, []byte("kind: graph\nname: short\nactors:\n  src: {use: gen.ramp, with: {count: 10}, out: {y: {type: f32, rate: 1}}}\n  sink: {use: file.write, with: {path: "+filepath.Join(dir, "short.f32")+"}, in: {x: {type: f32, rate: 1}}, stateful: true}\nchannels: [{from: src.y, to: sink.x}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if errs, code := runExit(t, "run", short, "--progress", "off", "--max-time", "10m"); code != 0 {
		t.Errorf("a short run within --max-time 10m: exit %d: %s", code, errs)
	}
}

// TestRunMaxTimeStoreUnreachable: a run on a worker checkpoints into a
// broker's JetStream (nats:); the broker restarts without --store under
// it, so the recovery finds the checkpoint store unreachable: it says so
// within 5 s, says it retries until the run's time limit, retries until
// --max-time passes, and the run then stops with status 124.
func TestRunMaxTimeStoreUnreachable(t *testing.T) {
	t.Parallel() // most of its time is the run waiting for --max-time
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "store")})
	if err != nil {
		t.Fatal(err)
	}
	url := b.ClientURL()
	var restarted *cluster.Broker
	t.Cleanup(func() {
		b.Shutdown()
		if restarted != nil {
			restarted.Shutdown()
		}
	})
	w, err := cluster.StartWorker(ctx, cluster.WorkerOptions{Broker: url, Name: "w1", Devices: []device.Info{{ID: "cpu", Backend: "cpu", Name: "test cpu", Kind: device.CPU, ComputeUnits: 2, GlobalMem: 1 << 30, HostUnified: true}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	g := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(g, []byte(`kind: graph
name: endless
actors:
  src:   {use: gen.ramp, out: {y: {type: f32, rate: 64}}}
  scale: {use: saxpy, with: {a: 2, y: 1}, in: {x: {type: f32, rate: 64}}, out: {z: {type: f32, rate: 64}}}
  sink:  {use: file.write, with: {path: `+filepath.Join(dir, "out.f32")+`}, in: {x: {type: f32, rate: 64}}, stateful: true}
channels:
  - {from: src.y, to: scale.x}
  - {from: scale.z, to: sink.x}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(m, []byte("kind: mapping\nname: on-w1\nmapping:\n  scale: {device: worker:w1/cpu}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Once the run's first checkpoint is in the store, restart the broker
	// on its address without --store.
	go func() {
		cl, err := cluster.Connect(ctx, url, cluster.Credentials{})
		if err != nil {
			t.Errorf("watching the store: %v", err)
			return
		}
		defer cl.Close()
		s, err := cluster.NewJetStreamStore(ctx, cl, "endless")
		if err != nil {
			t.Errorf("watching the store: %v", err)
			return
		}
		for {
			if cp, err := s.Latest(ctx); err == nil && cp != nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		b.Shutdown()
		nb, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: strings.TrimPrefix(url, "nats://")})
		if err != nil {
			t.Errorf("restarting the broker: %v", err)
			return
		}
		restarted = nb
	}()
	const limit = 12 * time.Second
	start := time.Now()
	errs, code := runExit(t, "run", g, "--progress", "off", "--broker", url, "--mapping", m,
		"--checkpoint-dir", "nats:endless", "--checkpoint-interval", "50ms", "--max-time", limit.String())
	took := time.Since(start)
	if code != 124 {
		t.Fatalf("exit %d, expected 124 (--max-time):\n%s", code, errs)
	}
	if restarted == nil {
		t.Fatalf("the run stopped before the broker restarted:\n%s", errs)
	}
	// The broker's restart is seen either as a lost connection (the run
	// recovers and reads the store) or only by the save under way: both
	// say the store does not answer, until the run's time limit.
	for _, want := range []string{
		"the checkpoint store does not answer",
		"until the run's time limit",
		"stopped at --max-time " + limit.String(),
		"continue it with --resume nats:endless",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// A checkpoint being saved when the broker went away is bounded by
	// the limit too (the runtime lets a save go on 30 s past a run's end).
	if took < limit || took > limit+15*time.Second {
		t.Errorf("the run stopped after %s: expected soon after its --max-time of %s", took, limit)
	}
}

// TestRunMaxTimeIdleStdin: a run reading a standard input nobody writes
// (a terminal, an open pipe) stops at --max-time, status 124, rather than
// when the input ends: a read of stdin is not a place a stopped run waits.
func TestRunMaxTimeIdleStdin(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("..")
	bin := filepath.Join(doccmd.Sluice(t, root), "sluice")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close() // held open: the run sees no end of its input
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "examples/run/stdin-saxpy.yaml", "--max-time", "1s")
	cmd.Dir = root
	cmd.Stdin = pr
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err = cmd.Run()
	pr.Close()
	took := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 124 || !strings.Contains(errb.String(), "stopped at --max-time 1s") {
		t.Fatalf("exit %v after %s: expected status 124 and the --max-time message:\n%s", err, took, errb.String())
	}
	if took > 20*time.Second {
		t.Fatalf("the run ended %s after it started: expected soon after its --max-time of 1s", took)
	}
}
