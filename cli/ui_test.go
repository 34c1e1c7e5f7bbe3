package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/ui"
)

// syncBuf is a bytes.Buffer safe for one writer and one reader.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestUIServesAndStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuf
	errc := make(chan error, 1)
	go func() {
		errc <- serveUI(ctx, ln, &ui.Server{File: "../examples/cd2dat.yaml", Token: "tok"}, &out)
	}()
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/api/graph?token=tok")
	if err != nil {
		t.Fatal(err)
	}
	var res ui.CheckResult
	err = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || res.Report.Repetitions["A"] != 147 {
		t.Fatalf("GET /api/graph: status %d, %v, %+v", resp.StatusCode, err, res.Report)
	}
	resp, err = http.Get(base + "/api/graph")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("without the token: expected 401, found %d", resp.StatusCode)
	}
	if !strings.Contains(out.String(), "?token=tok") {
		t.Fatalf("expected the address with its token printed, found %q", out.String())
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("serveUI after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serveUI did not return after its context ended")
	}
}

// TestUITokenAlways: a token is made for every listener, loopback too (a
// page of any site the user visits can reach a loopback listener), unless
// --token gives one.
func TestUITokenAlways(t *testing.T) {
	a, _ := uiToken("127.0.0.1:8080", "")
	b, _ := uiToken("127.0.0.1:8080", "")
	if len(a) != 32 || a == b {
		t.Fatalf("loopback: expected a new 32-hex-digit token each time, found %q and %q", a, b)
	}
	if tok, _ := uiToken("0.0.0.0:8080", ""); len(tok) != 32 {
		t.Fatalf("0.0.0.0: expected a generated 32-hex-digit token, found %q", tok)
	}
	if tok, _ := uiToken("0.0.0.0:8080", "mine"); tok != "mine" {
		t.Fatalf("given token: expected mine, found %q", tok)
	}
}

// TestUIBrokerFlag runs `sluice ui --broker URL` against an in-process
// loopback broker without workers and reads GET /api/cluster: the broker
// and an empty list of workers.
func TestUIBrokerFlag(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	var out syncBuf
	root := newRoot()
	root.SetArgs([]string{"ui", "--listen", "127.0.0.1:0", "--broker", b.ClientURL()})
	root.SetOut(&out)
	root.SetErr(&syncBuf{})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	addr := regexp.MustCompile(`(http://[^/\s]+)/\?token=(\w+)`)
	for addr.FindString(out.String()) == "" && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	m := addr.FindStringSubmatch(out.String())
	resp, err := http.Get(m[1] + "/api/cluster?token=" + m[2])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var c ui.ClusterJSON
	err = json.Unmarshal(body, &c)
	if err != nil || resp.StatusCode != 200 || len(c.Brokers) != 1 || c.Brokers[0].Name != "root" {
		t.Fatalf("GET /api/cluster: status %d, %v, %+v: %s", resp.StatusCode, err, c, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("sluice ui after cancel: %v", err)
	}
}

// TestUIRunStatsErrors: --run-trace needs --run-stats, and --run-stats must
// name statistics written by `sluice run --stats-json`; each error says so
// before the server starts.
func TestUIRunStatsErrors(t *testing.T) {
	_, errOut, code := sluice(t, "", "ui", "examples/cd2dat.yaml", "--listen", "127.0.0.1:0", "--run-trace", "x.json")
	if code == 0 || !strings.Contains(errOut, "--run-trace: expected --run-stats") {
		t.Fatalf("--run-trace alone: expected an error naming --run-stats, found %d %q", code, errOut)
	}
	_, errOut, code = sluice(t, "", "ui", "examples/cd2dat.yaml", "--listen", "127.0.0.1:0", "--run-stats", "examples/cd2dat.yaml")
	if code == 0 || !strings.Contains(errOut, "expected the statistics JSON of `sluice run --stats-json`") {
		t.Fatalf("--run-stats of a graph file: expected an error naming --stats-json, found %d %q", code, errOut)
	}
}

// startUI runs `sluice ui ARGS… --listen 127.0.0.1:0` until the test ends
// and returns the address it printed (http://127.0.0.1:PORT/?token=…).
func startUI(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuf
	root := newRoot()
	root.SetArgs(append(append([]string{"ui"}, args...), "--listen", "127.0.0.1:0"))
	root.SetOut(&out)
	root.SetErr(&syncBuf{})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32})\n`)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("expected `serving http://127.0.0.1:PORT/?token=…` printed, found %q", out.String())
	return ""
}

// TestUIPrintedAddressOpens opens the address `sluice ui` prints as a
// browser does (docs/ui.md): the page at / without the token in its
// address, then the API with the cookie alone; a script's bearer token
// works too, no token answers 401 with a sentence.
func TestUIPrintedAddressOpens(t *testing.T) {
	t.Parallel()
	addr := startUI(t, "../examples/cd2dat.yaml")
	base, token, _ := strings.Cut(addr, "/?token=")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(c *http.Client, url string, hdr ...string) (int, string, *http.Response) {
		req, _ := http.NewRequest("GET", url, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), resp
	}
	code, body, resp := get(c, addr)
	if code != 200 || !strings.Contains(body, `id="yaml"`) || resp.Request.URL.String() != base+"/" {
		t.Fatalf("the printed address: expected the page at %s/, found %d at %s", base, code, resp.Request.URL)
	}
	if code, body, _ := get(c, base+"/api/graph"); code != 200 || !strings.Contains(body, `"A":147`) {
		t.Fatalf("GET /api/graph with the cookie: expected 200, found %d %s", code, body)
	}
	if code, _, _ := get(http.DefaultClient, base+"/api/graph", "Authorization", "Bearer "+token); code != 200 {
		t.Fatalf("GET /api/graph with the bearer token: expected 200, found %d", code)
	}
	if code, body, _ := get(http.DefaultClient, base+"/api/graph"); code != 401 || !strings.Contains(body, "open the address `sluice ui` printed") {
		t.Fatalf("GET /api/graph without the token: expected 401 with a sentence, found %d %s", code, body)
	}
}

// TestUIRootAndAllowHost: --root widens the file root to hold a composite
// beside the graph's directory; --allow-host lets a request whose Host is
// that name in, another name still gets 403; --token sets the token.
func TestUIRootAndAllowHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "g"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := "name: sub\nactors:\n  a: {out: {y: {type: f32, rate: 1}}, cost: 1us}\n  b: {in: {x: {type: f32, rate: 1}}, cost: 1us}\nchannels:\n  - {from: a.y, to: b.x}\n"
	main := "name: main\nactors:\n  c: {graph: ../sub.yaml}\n"
	if err := os.WriteFile(filepath.Join(dir, "sub.yaml"), []byte(sub), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "g", "main.yaml")
	if err := os.WriteFile(file, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	graph := func(addr, host string) (int, string) {
		base, token, _ := strings.Cut(addr, "/?token=")
		req, _ := http.NewRequest("GET", base+"/api/graph", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if host != "" {
			req.Host = host + base[strings.LastIndex(base, ":"):]
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, body := graph(startUI(t, file), ""); code != 422 || !strings.Contains(body, "is outside the file root") {
		t.Fatalf("without --root: expected 422 for ../sub.yaml, found %d %s", code, body)
	}
	addr := startUI(t, file, "--root", dir, "--allow-host", "workbench.lan", "--token", strings.Repeat("ab", 16))
	if !strings.HasSuffix(addr, "?token="+strings.Repeat("ab", 16)) {
		t.Fatalf("--token: expected it in the printed address, found %s", addr)
	}
	if code, body := graph(addr, ""); code != 200 {
		t.Fatalf("--root %s: expected 200, found %d %s", dir, code, body)
	}
	if code, body := graph(addr, "workbench.lan"); code != 200 {
		t.Fatalf("--allow-host workbench.lan: expected 200, found %d %s", code, body)
	}
	if code, body := graph(addr, "evil.example"); code != 403 || !strings.Contains(body, "--allow-host") {
		t.Fatalf("Host evil.example: expected 403 with a sentence, found %d %s", code, body)
	}
}

// TestUIAddrOfWildcard: a listener on every address is printed as
// 127.0.0.1, which a browser here opens (and the Host check lets in).
func TestUIAddrOfWildcard(t *testing.T) {
	t.Parallel()
	for in, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.IPv4zero, Port: 8080}:            "127.0.0.1:8080",
		&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}:     "127.0.0.1:8080",
		&net.TCPAddr{IP: net.ParseIP("192.168.1.2"), Port: 1}: "192.168.1.2:1",
	} {
		if got := uiAddr(in); got != want {
			t.Errorf("uiAddr(%v) = %q, expected %q", in, got, want)
		}
	}
}
