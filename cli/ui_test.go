package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
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
