package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runtime"
)

func TestRunProgress(t *testing.T) {
	if rec, _ := do(t, (&Server{}).Handler(), "GET", "/api/run", ""); rec.Code != 404 {
		t.Fatalf("without a run: expected 404, found %d", rec.Code)
	}
	live := &Live{}
	h := (&Server{Live: live}).Handler()
	rec, _ := do(t, h, "GET", "/api/run", "")
	var r RunJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || rec.Code != 200 || len(r.Actors) != 0 {
		t.Fatalf("before the first snapshot: status %d, %v, %+v", rec.Code, err, r)
	}
	live.Observe(runtime.Snapshot{Elapsed: time.Millisecond, Actors: []runtime.ActorProgress{{Name: "A", Firings: 7, Target: 147}}})
	rec, _ = do(t, h, "GET", "/api/run", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.ElapsedNS != 1e6 || len(r.Actors) != 1 || r.Actors[0] != (ActorRunJSON{Name: "A", Firings: 7, Target: 147}) {
		t.Fatalf("expected A at 7 of 147 firings after 1ms, found %+v", r)
	}
}

func TestRunEvents(t *testing.T) {
	live := &Live{}
	srv := &Server{Live: live}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/run/events?token="+srv.Token, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("expected text/event-stream, found %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	for i := int64(1); i <= 2; i++ {
		live.Observe(runtime.Snapshot{Actors: []runtime.ActorProgress{{Name: "A", Firings: i}}})
		var ev RunJSON
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		if len(ev.Actors) != 1 || ev.Actors[0].Firings != i {
			t.Fatalf("event %d: expected A at %d firings, found %+v (%v)", i, i, ev, sc.Err())
		}
	}
}
