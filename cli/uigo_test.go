package cli

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/doccmd"
)

// TestUIRunsGoActors serves a graph whose Go actors the sluice binary
// lacks (examples/conditional, named by its go: key) and runs it from the
// page's API: sluice ui, like sluice run, serves it from the program it
// builds with those actors, so the run completes instead of failing on
// unregistered functions.
func TestUIRunsGoActors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sluice and the graph's program")
	}
	root, _ := filepath.Abs("..")
	bin := doccmd.Sluice(t, root)
	c := exec.Command(filepath.Join(bin, "sluice"), "ui", "examples/conditional/conditional.yaml", "--listen", "127.0.0.1:0")
	c.Dir = root
	// A cache of its own makes the graph's program a first build (announced
	// on stderr), over the shared Go build cache (so that it stays quick).
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	c.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "GOCACHE="+strings.TrimSpace(string(gocache)))
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = c.Stdout
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGKILL, which sluice cannot pass on: the graph's program it
		// started (under cache) must end with it all the same.
		_ = c.Process.Kill()
		_ = c.Wait()
		if goruntime.GOOS != "linux" {
			return
		}
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			left := processesUnder(cache)
			if len(left) == 0 {
				return
			}
			if time.Now().After(end) {
				for _, p := range left {
					_ = p.Kill()
				}
				t.Errorf("the graph's program outlived sluice ui killed with SIGKILL by 10 s (%d processes)", len(left))
				return
			}
		}
	})
	url := make(chan string, 1)
	building := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "buil") {
				building <- sc.Text()
			}
			if m := regexp.MustCompile(`serving (http://\S+)/\?token=(\w+)`).FindStringSubmatch(sc.Text()); m != nil {
				url <- m[1] + "\x00" + m[2]
			}
		}
	}()
	var base string
	select {
	case base = <-url:
	case <-time.After(5 * time.Minute):
		t.Fatal("sluice ui did not start serving within 5 minutes")
	}
	for _, want := range []string{"building Go actors (first time)…", "built Go actors in "} {
		select {
		case line := <-building:
			if !strings.HasPrefix(line, want) {
				t.Errorf("sluice ui said %q, want a line starting %q", line, want)
			}
		default:
			t.Errorf("sluice ui did not say %q before serving", want)
		}
	}
	base, token, _ := strings.Cut(base, "\x00")
	resp, err := http.Post(base+"/api/run/start?iterations=20&token="+token, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /api/run/start: %s", resp.Status)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := http.Get(base + "/api/run/state?token=" + token)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if strings.Contains(string(b), `"running":false`) {
			if strings.Contains(string(b), `"error"`) {
				t.Fatalf("the run from the page failed: %s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run from the page did not end within a minute: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r, err := http.Get(base + "/api/run?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !regexp.MustCompile(`"name":"measure","firings":20\b`).Match(b) {
		t.Fatalf("expected measure to have fired 20 times, found %s", b)
	}
}

// processesUnder returns the processes whose program lies under dir (from
// /proc: Linux only).
func processesUnder(dir string) []*os.Process {
	ents, _ := os.ReadDir("/proc")
	var out []*os.Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.HasPrefix(string(cmd), dir+string(filepath.Separator)) {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil {
			out = append(out, p)
		}
	}
	return out
}
