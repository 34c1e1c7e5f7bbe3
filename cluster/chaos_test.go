package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chaosGraph is a stateful chain: a noisy tone, a FIR filter, a decimator
// with anti-alias taps, a second FIR whose input keeps a history window,
// written to a file.
const chaosGraph = `kind: graph
name: chaos
actors:
  tone:  {use: gen.sine, with: {freq: 0.0625, amplitude: 1, count: %d}, out: {y: {type: f32, rate: 256}}}
  noise: {use: gen.random, with: {seed: 1, min: -0.1, max: 0.1}, out: {y: {type: f32, rate: 256}}}
  mix:   {use: add, in: {x: {type: f32, rate: 256}, n: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 256}}}
  lowpass: {use: fir, with: {cutoff: 0.1, ntaps: 31}, in: {x: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 256}}, stateful: true}
  down:  {use: decimate, with: {factor: 4, cutoff: 0.1, ntaps: 15}, in: {x: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 64}}, stateful: true}
  smooth: {use: fir, with: {taps: [0.5, 0.25, 0.125, 0.125]}, in: {x: {type: f32, rate: 64}}, out: {y: {type: f32, rate: 64}}, stateful: true}
  sink:  {use: file.write, with: {path: %q}, in: {x: {type: f32, rate: 64}}, stateful: true}
channels:
  - {from: tone.y, to: mix.x}
  - {from: noise.y, to: mix.n}
  - {from: mix.y, to: lowpass.x}
  - {from: lowpass.y, to: down.x}
  - {from: down.y, to: smooth.x}
  - {from: smooth.y, to: sink.x}
`

const chaosMapping = `kind: mapping
name: chaos
mapping:
  mix:     {device: worker:w3/cpu}
  lowpass: {device: worker:w1/cpu}
  down:    {device: worker:w2/cpu}
  smooth:  {device: worker:w3/cpu}
`

// TestChaos starts a broker (with a JetStream store) and three workers as
// processes on loopback, runs a stateful chain across them with
// checkpoints, and kills a worker running one of its actors with SIGKILL
// at random moments three times (restarting it under its name): the
// output file is byte-identical to the fault-free local run's, up to at
// least chaosPast iterations past the third recovery's checkpoint, where
// the run is stopped (or to its end). Then the same with the broker
// killed and restarted on its store, where a run may also ride through a
// kill without a recovery (the broker back before a heartbeat was
// missed) if it ends without an error and with the local run's output
// whole. The test fails if a worker's kill landed after the run had
// ended.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sluice binary and starts processes")
	}
	dir := t.TempDir()
	bin := sluiceBin(t)
	const count = 300_000
	writeGraph := func(out string) string {
		p := filepath.Join(dir, filepath.Base(out)+".yaml")
		if err := os.WriteFile(p, fmt.Appendf(nil, chaosGraph, count, out), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mapping := filepath.Join(dir, "map.yaml")
	if err := os.WriteFile(mapping, []byte(chaosMapping), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref.f32")
	if out, err := exec.Command(bin, "run", writeGraph(ref), "--progress", "off").CombinedOutput(); err != nil {
		t.Fatalf("local run: %v\n%s", err, out)
	}
	want, err := os.ReadFile(ref)
	if err != nil || len(want) != count*64*4 {
		t.Fatalf("local run wrote %d bytes (%v): expected %d", len(want), err, count*64*4)
	}

	start := procStarter(t, bin, "", false)
	port := freeTCP(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	store := filepath.Join(dir, "store")
	startBroker := func() *proc {
		return start("broker", "broker", "--name", "root", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--store", store)
	}
	broker := startBroker()
	startWorker := func(name string) *proc {
		args := []string{"worker", "--broker", url, "--name", name, "--devices", "cpu"}
		if name == "w1" {
			args = append(args, "--data-listen", "127.0.0.1:0")
		}
		return start("worker "+name, args...)
	}
	workers := map[string]*proc{}
	waitWorkers := func() {
		t.Helper()
		for i := 0; ; i++ {
			out, _, _ := runCmd(bin, "devices", "--broker", url)
			if strings.Contains(out, "w1") && strings.Contains(out, "w2") && strings.Contains(out, "w3") {
				return
			}
			if i > 200 {
				t.Fatalf("workers not all seen after 20 s:\n%s", out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := 0; ; i++ { // the broker listens
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			t.Fatal("broker not up after 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, w := range []string{"w1", "w2", "w3"} {
		workers[w] = startWorker(w)
	}
	waitWorkers()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	// ridThrough reports whether a run that ended (err) after kill n
	// without the recoveries before it rode through the kills instead:
	// only where a kill need not lose anything (the broker back on its
	// store before a heartbeat was missed), and only with no error and
	// the local run's output whole.
	ridThrough := func(name string, mustRecover bool, err error, n int, out, log string) bool {
		if mustRecover || err != nil {
			return false
		}
		got, rerr := os.ReadFile(out)
		if rerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: the run ended after kill %d without recovering and with %d bytes of output (%v): expected the local run's %d bytes\n%s", name, n, len(got), rerr, len(want), log)
		}
		t.Logf("%s: the run rode through kill %d without a recovery and wrote the local run's output whole", name, n)
		return true
	}
	chaos := func(name string, mustRecover bool, kill func(n int) string) {
		t.Helper()
		out := filepath.Join(dir, name+".f32")
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, bin, "run", writeGraph(out), "--progress", "off", "--stats", "--mapping", mapping, "--broker", url,
			"--checkpoint-dir", "nats:"+name, "--checkpoint-interval", "200ms")
		var e lockedBuf
		c.Stderr = &e
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		for n := 1; n <= 3; n++ {
			// A random moment, at least one checkpoint after the last
			// recovery.
			for strings.Count(e.String(), "recovered from the loss") < n-1 {
				select {
				case err := <-done:
					if ridThrough(name, mustRecover, err, n-1, out, e.String()) {
						return
					}
					t.Fatalf("%s: the run ended (%v) before kill %d\n%s", name, err, n, e.String())
				case <-time.After(20 * time.Millisecond):
				}
			}
			select {
			case err := <-done:
				if n > 1 && ridThrough(name, mustRecover, err, n-1, out, e.String()) {
					return
				}
				t.Fatalf("%s: the run ended (%v) before kill %d: a kill would land after it\n%s", name, err, n, e.String())
			case <-time.After(time.Duration(300+rng.IntN(1500)) * time.Millisecond):
			}
			what := kill(n)
			t.Logf("%s: kill %d: %s", name, n, what)
			select {
			case err := <-done:
				if strings.Count(e.String(), "recovered from the loss") < n {
					if ridThrough(name, mustRecover, err, n, out, e.String()) {
						return
					}
					t.Fatalf("%s: the run ended (%v) without recovering from kill %d (did the kill land after its end?)\n%s", name, err, n, e.String())
				}
				if n < 3 {
					t.Fatalf("%s: the run ended after kill %d of 3: make it longer\n%s", name, n, e.String())
				}
				done <- err
			default:
			}
		}
		// Once the third recovery is in and the output holds chaosPast
		// iterations beyond its checkpoint, the run is stopped
		// with SIGINT (what it writes after that proves nothing more, and
		// the rest of a long run would take most of the test's time).
		for strings.Count(e.String(), "recovered from the loss") < 3 {
			select {
			case err := <-done:
				if ridThrough(name, mustRecover, err, 3, out, e.String()) {
					return
				}
				t.Fatalf("%s: the run ended (%v) without recovering from kill 3\n%s", name, err, e.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		resumed := lastResumed(t, e.String())
		least := min(resumed+chaosPast, count) * chaosRecord
		if err := waitOutput(c, done, out, least); err != nil {
			t.Fatalf("%s: run: %v\n%s", name, err, e.String())
		}
		if got := strings.Count(e.String(), "recovered from the loss"); got != 3 {
			t.Fatalf("%s: %d recoveries: expected 3\n%s", name, got, e.String())
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got)%chaosRecord != 0 || len(got) < least || !bytes.Equal(got, want[:min(len(got), len(want))]) {
			t.Fatalf("%s: output of %d bytes: expected whole records of %d bytes, at least %d bytes (up to %d iterations past the last recovery's checkpoint at iteration %d), and the local run's first bytes\n%s",
				name, len(got), chaosRecord, least, chaosPast, resumed, e.String())
		}
		t.Logf("%s: %d iterations written (%d past the last recovery's checkpoint), the same bytes as the local run's", name, len(got)/chaosRecord, len(got)/chaosRecord-resumed)
		for _, l := range strings.Split(e.String(), "\n") {
			if strings.HasPrefix(l, "recovered") || strings.HasPrefix(l, "checkpoints:") {
				t.Logf("%s: %s", name, l)
			}
		}
	}

	chaos("workers", true, func(int) string {
		// A worker that runs an actor of the run now: asked again while
		// the run is between placements (recovering from the last kill,
		// which takes longer on a loaded machine).
		var busy []string
		var out string
		for deadline := time.Now().Add(30 * time.Second); len(busy) == 0; {
			var err error
			out, _, err = runCmd(bin, "devices", "--broker", url, "--json")
			var rep struct {
				Devices []RemoteDevice `json:"devices"`
			}
			if err != nil || json.Unmarshal([]byte(out), &rep) != nil {
				t.Fatalf("devices: %v\n%s", err, out)
			}
			for _, d := range rep.Devices {
				if d.Jobs > 0 {
					busy = append(busy, d.Worker)
				}
			}
			if len(busy) == 0 && time.Now().After(deadline) {
				t.Fatalf("no worker ran a job for 30 s: %s", out)
			}
			if len(busy) == 0 {
				time.Sleep(100 * time.Millisecond)
			}
		}
		w := busy[rng.IntN(len(busy))]
		p := workers[w]
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
		workers[w] = startWorker(w) // the machine comes back
		return "SIGKILL worker " + w + ", restarted"
	})
	waitWorkers()
	chaos("broker", false, func(int) string {
		_ = broker.cmd.Process.Signal(syscall.SIGKILL)
		_ = broker.cmd.Wait()
		broker = startBroker()
		return "SIGKILL broker, restarted on its store"
	})
}

// chaosRecord is the bytes the chaos graph's sink writes an iteration (64
// f32), and chaosPast the iterations the output must hold past the last
// recovery's checkpoint before the run is stopped.
const (
	chaosRecord = 64 * 4
	chaosPast   = 5000
)

// lastResumed returns the iteration of the checkpoint the last recovery
// line of a run's stderr resumed from (0: the start).
func lastResumed(t *testing.T, stderr string) int {
	t.Helper()
	const mark = "recovered from the loss"
	i := strings.LastIndex(stderr, mark)
	if i < 0 {
		t.Fatalf("no recovery in the run's output:\n%s", stderr)
	}
	line, _, _ := strings.Cut(stderr[i:], "\n")
	_, after, ok := strings.Cut(line, "(iteration ")
	if !ok {
		return 0 // resumed from the start
	}
	var it int
	if _, err := fmt.Sscanf(after, "%d)", &it); err != nil {
		t.Fatalf("recovery line %q: expected the checkpoint's iteration: %v", line, err)
	}
	return it
}

// waitOutput waits until the run c (done reports its end) has written at
// least size bytes to out, then stops it with SIGINT and returns nil once
// it has ended; a run that ends by itself first returns how it ended.
func waitOutput(c *exec.Cmd, done chan error, out string, size int) error {
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(50 * time.Millisecond):
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() < int64(size) {
			continue
		}
		_ = c.Process.Signal(syscall.SIGINT)
		<-done // stopped: its exit status says it was interrupted
		return nil
	}
}

// runCmd runs the binary with a time limit.
func runCmd(bin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	return o.String(), e.String(), err
}

// TestRecoverToneFilter: examples/cluster/tone-filter.yaml, made long
// with -n, runs with examples/cluster/map-two-workers.yaml and a third
// worker; w1 is killed with SIGKILL mid-run. The run ends with exit 0 and
// prints exactly what the local run prints (stdout written once: the
// recovered run skips what it had printed past the checkpoint).
func TestRecoverToneFilter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sluice binary and starts processes")
	}
	dir := t.TempDir()
	bin := sluiceBin(t)
	repo, _ := filepath.Abs("..")
	long := filepath.Join(dir, "tone-filter.yaml")
	g, err := os.ReadFile(filepath.Join(repo, "examples/cluster/tone-filter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, bytes.ReplaceAll(g, []byte("count: 16"), []byte("count: 0")), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = "40000" // iterations: 40 000 spectra, 2 560 000 lines
	local, err := exec.Command(bin, "run", long, "-n", n, "--progress", "off").Output()
	if err != nil {
		t.Fatalf("local run: %v", err)
	}
	start := procStarter(t, bin, "", false)
	port := freeTCP(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	start("broker", "broker", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if i > 100 {
			t.Fatal("broker not up after 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	w1 := start("worker w1", "worker", "--broker", url, "--name", "w1", "--devices", "cpu", "--data-listen", "127.0.0.1:0")
	start("worker w2", "worker", "--broker", url, "--name", "w2", "--devices", "cpu")
	start("worker w3", "worker", "--broker", url, "--name", "w3", "--devices", "cpu")
	for i := 0; ; i++ {
		out, _, _ := runCmd(bin, "devices", "--broker", url)
		if strings.Contains(out, "w1") && strings.Contains(out, "w2") && strings.Contains(out, "w3") {
			break
		}
		if i > 200 {
			t.Fatalf("workers not all seen after 20 s:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "run", long, "-n", n, "--progress", "off", "--stats", "--mapping", filepath.Join(repo, "examples/cluster/map-two-workers.yaml"),
		"--broker", url, "--checkpoint-dir", filepath.Join(dir, "ckpt"), "--checkpoint-interval", "50ms")
	var o bytes.Buffer
	var e lockedBuf
	c.Stdout, c.Stderr = &o, &e
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	for dirEmpty(filepath.Join(dir, "ckpt")) {
		select {
		case err := <-done:
			t.Fatalf("the run ended (%v) before a checkpoint: make it longer\n%s", err, e.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	_ = w1.cmd.Process.Signal(syscall.SIGKILL)
	_ = w1.cmd.Wait()
	if err := <-done; err != nil {
		t.Fatalf("run after killing w1: %v\n%s", err, e.String())
	}
	if !strings.Contains(e.String(), "recovered from the loss of worker w1") {
		t.Fatalf("the run did not recover from w1's loss (did the kill land after its end?)\n%s", e.String())
	}
	if !bytes.Equal(o.Bytes(), local) {
		t.Fatalf("printed %d bytes after w1's loss, the local run %d: outputs differ\n%s", o.Len(), len(local), e.String())
	}
	for _, l := range strings.Split(e.String(), "\n") {
		if strings.HasPrefix(l, "recovered") || strings.HasPrefix(l, "checkpoints:") {
			t.Log(l)
		}
	}
}

func dirEmpty(dir string) bool {
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), "checkpoint-") {
			return false
		}
	}
	return true
}
