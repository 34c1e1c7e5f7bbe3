package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runtime"
)

func scrape(t *testing.T, r *Recorder) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestObserve(t *testing.T) {
	r := NewRecorder()
	r.Observe(runtime.Snapshot{Elapsed: time.Second, Actors: []runtime.ActorProgress{{Name: "A", Firings: 5}, {Name: "B"}}})
	r.Observe(runtime.Snapshot{Elapsed: 2 * time.Second, Actors: []runtime.ActorProgress{{Name: "A", Firings: 12, Done: true}, {Name: "B", Firings: 3}}})
	r.Observe(runtime.Snapshot{Elapsed: 3 * time.Second, Actors: []runtime.ActorProgress{{Name: "A", Firings: 10, Done: true}, {Name: "B", Firings: 3}}})
	body := scrape(t, r)
	for _, want := range []string{
		`sluice_actor_firings_total{actor="A"} 12`,
		`sluice_actor_firings_total{actor="B"} 3`,
		`sluice_actor_done{actor="A"} 1`,
		`sluice_actor_done{actor="B"} 0`,
		`sluice_run_elapsed_seconds 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("expected %q in the scrape, found:\n%s", want, body)
		}
	}
}
