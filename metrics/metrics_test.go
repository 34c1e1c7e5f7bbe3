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

func TestObserveChannelsAndDevices(t *testing.T) {
	r := NewRecorder()
	r.Observe(runtime.Snapshot{
		Actors:   []runtime.ActorProgress{{Name: "k", Firings: 4, Busy: 1500 * time.Millisecond, Blocked: 250 * time.Millisecond}},
		Channels: []runtime.ChannelProgress{{Name: "a.o->k.i", Capacity: 1024, Fill: 512, CopiedBytes: 4096}, {Name: "k.o->k2.i", Capacity: 64, Fill: -1}},
		Devices:  []runtime.DeviceProgress{{ID: "opencl:0:0", InFlight: 3}},
	})
	body := scrape(t, r)
	for _, want := range []string{
		`sluice_actor_busy_seconds_total{actor="k"} 1.5`,
		`sluice_actor_blocked_seconds_total{actor="k"} 0.25`,
		`sluice_channel_fill_tokens{channel="a.o->k.i"} 512`,
		`sluice_channel_capacity_tokens{channel="k.o->k2.i"} 64`,
		`sluice_channel_copied_bytes_total{channel="a.o->k.i"} 4096`,
		`sluice_device_inflight_invocations{device="opencl:0:0"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("expected %q in the scrape, found:\n%s", want, body)
		}
	}
	if strings.Contains(body, `sluice_channel_fill_tokens{channel="k.o->k2.i"}`) {
		t.Errorf("a device ring's unknown fill (-1) was exported:\n%s", body)
	}
}
