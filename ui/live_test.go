package ui

import (
	"encoding/json"
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
