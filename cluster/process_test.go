package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/doccmd"
)

// proc is a sluice process started by a test.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *lockedBuf
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freeTCP(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestProcesses builds the sluice binary, starts a root and a child broker
// and workers as processes on loopback, and runs the cluster example across
// them: same output as the local run; then wrong credentials, a limit, a
// killed worker and a killed broker.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sluice binary and starts processes")
	}
	dir := t.TempDir()
	bin := sluiceBin(t)
	repo, _ := filepath.Abs("..")
	auth := filepath.Join(dir, "auth.yaml")
	// The walkthrough's auth file (docs/cluster.md): a client, the
	// workers' user and the child broker's.
	if err := os.WriteFile(auth, []byte("users:\n  - {user: alice, password: pw, role: client}\n  - {user: worker, password: wpw, role: worker}\n  - {user: child, password: cpw, role: broker}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsDir := filepath.Join(dir, "tls")
	ca := filepath.Join(tlsDir, "ca.pem")
	// The root serves TLS (--tls auto), the child does not.
	cred := []string{"--user", "alice", "--password", "pw", "--tls-ca", ca}
	childCred := []string{"--user", "alice", "--password", "pw"}
	wcred := []string{"--user", "worker", "--password", "wpw", "--tls-ca", ca}
	wChildCred := []string{"--user", "worker", "--password", "wpw"}
	start := procStarter(t, bin, repo, true)
	run := func(stdin string, args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, bin, args...)
		c.Dir = repo
		var o, e bytes.Buffer
		c.Stdout, c.Stderr = &o, &e
		err := c.Run()
		return o.String(), e.String(), err
	}
	pRoot, pLeaf, pChild := freeTCP(t), freeTCP(t), freeTCP(t)
	rootURL := fmt.Sprintf("nats://127.0.0.1:%d", pRoot)
	childURL := fmt.Sprintf("nats://127.0.0.1:%d", pChild)
	root := start("broker root", "broker", "--name", "root", "--listen", fmt.Sprintf("127.0.0.1:%d", pRoot), "--leaf-listen", fmt.Sprintf("127.0.0.1:%d", pLeaf), "--auth", auth,
		"--tls", "auto", "--tls-dir", tlsDir)
	// The root prints how workers, clients and child brokers trust its CA.
	for i := 0; !strings.Contains(root.out.String(), "--parent-tls-ca "+ca); i++ {
		if i > 500 {
			t.Fatalf("the root broker did not print --tls-ca %s within 10 s:\n%s", ca, root.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if want := fmt.Sprintf("sluice worker --broker tls://127.0.0.1:%d --tls-ca %s", pRoot, ca); !strings.Contains(root.out.String(), want) {
		t.Fatalf("the root broker's output lacks %q:\n%s", want, root.out.String())
	}
	child := start("broker child", "broker", "--name", "child", "--listen", fmt.Sprintf("127.0.0.1:%d", pChild), "--auth", auth,
		"--parent", fmt.Sprintf("nats-leaf://127.0.0.1:%d", pLeaf), "--parent-user", "child", "--parent-password", "cpw", "--parent-tls-ca", ca)
	waitPort := func(port int) {
		for i := 0; ; i++ {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err == nil {
				c.Close()
				return
			}
			if i > 500 {
				t.Fatalf("nothing listens on port %d after 10 s", port)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitPort(pRoot)
	waitPort(pChild)
	w1 := start("worker w1", append([]string{"worker", "--broker", rootURL, "--name", "w1", "--devices", "cpu", "--data-listen", "127.0.0.1:0"}, wcred...)...)
	start("worker w2", append([]string{"worker", "--broker", childURL, "--name", "w2", "--devices", "cpu"}, wChildCred...)...)
	start("worker w3", append([]string{"worker", "--broker", childURL, "--name", "w3", "--devices", "cpu", "--max-stream", "1KiB"}, wChildCred...)...)

	// Wait until the root sees the three workers, the child's through it.
	var paths map[string]string
	for i := 0; ; i++ {
		out, _, err := run("", append([]string{"devices", "--broker", rootURL, "--json"}, cred...)...)
		var rep struct {
			Devices []RemoteDevice `json:"devices"`
		}
		paths = map[string]string{}
		if err == nil && json.Unmarshal([]byte(out), &rep) == nil {
			for _, d := range rep.Devices {
				paths[d.Worker] = d.Path
			}
		}
		if len(paths) == 3 {
			break
		}
		if i > 40 {
			t.Fatalf("workers seen from the root: %v (err %v), want w1, w2, w3", paths, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if paths["w1"] != "root" || paths["w2"] != "root/child" {
		t.Fatalf("broker paths %v: want w1 at root and w2 at root/child", paths)
	}

	// The example across the client and two workers prints what the local run does.
	local, errs, err := run("", "run", "examples/cluster/tone-filter.yaml", "--progress", "off")
	if err != nil {
		t.Fatalf("local run: %v\n%s", err, errs)
	}
	remote, errs, err := run("", append([]string{"run", "examples/cluster/tone-filter.yaml", "--progress", "off", "--stats",
		"--mapping", "examples/cluster/map-two-workers.yaml", "--broker", childURL}, childCred...)...)
	if err != nil {
		t.Fatalf("run across workers: %v\n%s", err, errs)
	}
	if remote != local || len(local) == 0 {
		t.Fatalf("run across workers printed %d bytes, the local run %d: outputs differ", len(remote), len(local))
	}
	if !strings.Contains(errs, "lowpass") || !strings.Contains(errs, "fft") {
		t.Errorf("--stats of the remote run do not list the remote actors:\n%s", errs)
	}

	// Without the CA the client does not trust the root, and says what to give.
	if _, errs, err := run("", "devices", "--broker", rootURL, "--user", "alice", "--password", "pw"); err == nil || !strings.Contains(errs, "--tls-ca") {
		t.Fatalf("devices without --tls-ca: %v %s: expected a refusal naming --tls-ca", err, errs)
	}
	// Wrong or missing credentials are refused.
	for _, c := range [][]string{{"--tls-ca", ca}, {"--user", "alice", "--password", "nope", "--tls-ca", ca}} {
		_, errs, err := run("", append([]string{"devices", "--broker", rootURL}, c...)...)
		if err == nil || !strings.Contains(strings.ToLower(errs), "authorization") {
			t.Fatalf("devices with credentials %v: %v %s: expected an authorization failure", c, err, errs)
		}
	}

	// A worker refuses an actor whose stream exceeds its --max-stream.
	mapW3 := filepath.Join(dir, "map-w3.yaml")
	if err := os.WriteFile(mapW3, []byte("mapping:\n  lowpass: {device: worker:w3/cpu}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, err = run("", append([]string{"run", "examples/cluster/tone-filter.yaml", "-n", "4", "--progress", "off", "--mapping", mapW3, "--broker", rootURL}, cred...)...)
	if err == nil || !strings.Contains(errs, "--max-stream") || !strings.Contains(errs, "w3") {
		t.Fatalf("run over w3's limit: %v: %s", err, errs)
	}

	// A worker killed mid-run: the run fails within seconds naming it and its actor.
	endless := filepath.Join(dir, "endless.yaml")
	g, _ := os.ReadFile(filepath.Join(repo, "examples/cluster/tone-filter.yaml"))
	g = bytes.ReplaceAll(g, []byte("count: 16"), []byte("count: 0"))
	g = bytes.ReplaceAll(g, []byte("use: stdout,"), []byte("use: file.write, with: {path: /dev/null},"))
	if err := os.WriteFile(endless, g, 0o600); err != nil {
		t.Fatal(err)
	}
	killDuring := func(p *proc, mapping string, want ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, bin, append([]string{"run", endless, "--progress", "off", "--mapping", mapping, "--broker", rootURL}, cred...)...)
		c.Dir = repo
		var e lockedBuf
		c.Stderr = &e
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		t0 := time.Now()
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		err := c.Wait()
		d := time.Since(t0)
		if ctx.Err() != nil || err == nil {
			t.Fatalf("run after killing %s: %v (after %s): expected a failure within seconds\n%s", p.name, err, d, e.String())
		}
		for _, w := range want {
			if !strings.Contains(e.String(), w) {
				t.Fatalf("run after killing %s: error %q does not name %q", p.name, e.String(), w)
			}
		}
		if d > 8*time.Second {
			t.Fatalf("killing %s noticed after %s", p.name, d)
		}
		t.Logf("killed %s: run failed after %s: %s", p.name, d.Round(time.Millisecond), strings.TrimSpace(e.String()))
	}
	mapW1 := filepath.Join(dir, "map-w1.yaml")
	mapW2 := filepath.Join(dir, "map-w2.yaml")
	_ = os.WriteFile(mapW1, []byte("mapping:\n  fft: {device: worker:w1/cpu}\n"), 0o600)
	_ = os.WriteFile(mapW2, []byte("mapping:\n  fft: {device: worker:w2/cpu}\n"), 0o600)
	killDuring(w1, mapW1, "w1", "fft")
	// The child broker killed: w2 behind it is lost.
	killDuring(child, mapW2, "w2", "fft")
}

// sluiceBin builds the sluice command once per test binary (doccmd.Sluice)
// and returns its path.
func sluiceBin(t *testing.T) string {
	repo, _ := filepath.Abs("..")
	return filepath.Join(doccmd.Sluice(t, repo), "sluice")
}

// procStarter returns a function that starts sluice processes (in dir
// when it is not empty) and stops them when the test ends: with SIGINT
// and up to 5 s to exit when graceful, else with SIGKILL. Their output is
// logged when the test failed.
func procStarter(t *testing.T, bin, dir string, graceful bool) func(name string, args ...string) *proc {
	var mu sync.Mutex
	var procs []*proc
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range procs {
			if p.cmd.ProcessState == nil {
				stopProc(p, graceful)
			}
			if t.Failed() {
				t.Logf("%s:\n%s", p.name, p.out.String())
			}
		}
	})
	return func(name string, args ...string) *proc {
		p := &proc{name: name, cmd: exec.Command(bin, args...), out: &lockedBuf{}}
		p.cmd.Dir = dir
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		procs = append(procs, p)
		mu.Unlock()
		return p
	}
}

// stopProc ends a started process: SIGINT with 5 s to exit, then SIGKILL,
// when graceful; SIGKILL at once otherwise.
func stopProc(p *proc, graceful bool) {
	if !graceful {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}
