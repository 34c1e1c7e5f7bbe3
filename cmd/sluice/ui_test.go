package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

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
		errc <- serveUI(ctx, ln, &ui.Server{File: "../../examples/cd2dat.yaml", Token: "tok"}, &out)
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

func TestUITokenForNonLoopback(t *testing.T) {
	if tok, _ := uiToken("127.0.0.1:8080", ""); tok != "" {
		t.Fatalf("loopback: expected no token, found %q", tok)
	}
	if tok, _ := uiToken("0.0.0.0:8080", ""); len(tok) != 32 {
		t.Fatalf("0.0.0.0: expected a generated 32-hex-digit token, found %q", tok)
	}
	if tok, _ := uiToken("0.0.0.0:8080", "mine"); tok != "mine" {
		t.Fatalf("given token: expected mine, found %q", tok)
	}
}
