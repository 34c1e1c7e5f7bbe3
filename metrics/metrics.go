// Package metrics exposes a run's live progress as Prometheus metrics:
// per actor sluice_actor_firings_total, sluice_actor_busy_seconds_total,
// sluice_actor_blocked_seconds_total and sluice_actor_done; per channel
// sluice_channel_fill_tokens, sluice_channel_capacity_tokens and
// sluice_channel_copied_bytes_total; per device
// sluice_device_inflight_invocations (its queue depth); and
// sluice_run_elapsed_seconds. A Recorder takes runtime.Snapshot values
// (runtime.Options.Progress) and serves them on /metrics.
package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicehq/sluice/runtime"
)

// Recorder holds the latest snapshot of one run as Prometheus metrics on
// its own registry. It is safe for concurrent use.
type Recorder struct {
	reg     *prometheus.Registry
	firings *prometheus.CounterVec
	busy    *prometheus.CounterVec
	blocked *prometheus.CounterVec
	done    *prometheus.GaugeVec
	fill    *prometheus.GaugeVec
	capac   *prometheus.GaugeVec
	copied  *prometheus.CounterVec
	queue   *prometheus.GaugeVec
	elapsed prometheus.Gauge

	mu   sync.Mutex
	last map[string]float64 // last value seen of each counter, by metric and label
}

// NewRecorder returns a Recorder with its metrics registered.
func NewRecorder() *Recorder {
	r := &Recorder{
		reg: prometheus.NewRegistry(),
		firings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_actor_firings_total", Help: "Firings of the actor so far.",
		}, []string{"actor"}),
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_actor_busy_seconds_total", Help: "Time the actor's firings, process or kernel invocations have taken.",
		}, []string{"actor"}),
		blocked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_actor_blocked_seconds_total", Help: "Time the actor waited for input or room (CPU actors).",
		}, []string{"actor"}),
		done: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_actor_done", Help: "1 once the actor has finished, else 0.",
		}, []string{"actor"}),
		fill: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_channel_fill_tokens", Help: "Tokens the channel holds (not reported for rings in device memory).",
		}, []string{"channel"}),
		capac: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_channel_capacity_tokens", Help: "The channel's capacity.",
		}, []string{"channel"}),
		copied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_channel_copied_bytes_total", Help: "Bytes copied between the channel's host FIFO and a device.",
		}, []string{"channel"}),
		queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_device_inflight_invocations", Help: "Kernel-actor invocations enqueued on the device and not yet completed.",
		}, []string{"device"}),
		elapsed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_run_elapsed_seconds", Help: "Time since the run started.",
		}),
		last: map[string]float64{},
	}
	r.reg.MustRegister(r.firings, r.busy, r.blocked, r.done, r.fill, r.capac, r.copied, r.queue, r.elapsed)
	return r
}

// Observe records a snapshot; pass it as runtime.Options.Progress. Firing
// counts only grow: a snapshot with fewer firings than the last one seen
// for an actor leaves its counter as it is.
func (r *Recorder) Observe(s runtime.Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.elapsed.Set(s.Elapsed.Seconds())
	for _, a := range s.Actors {
		r.grow(r.firings, "firings", a.Name, float64(a.Firings))
		r.grow(r.busy, "busy", a.Name, a.Busy.Seconds())
		r.grow(r.blocked, "blocked", a.Name, a.Blocked.Seconds())
		v := 0.0
		if a.Done {
			v = 1
		}
		r.done.WithLabelValues(a.Name).Set(v)
	}
	for _, c := range s.Channels {
		if c.Fill >= 0 {
			r.fill.WithLabelValues(c.Name).Set(float64(c.Fill))
		}
		r.capac.WithLabelValues(c.Name).Set(float64(c.Capacity))
		r.grow(r.copied, "copied", c.Name, float64(c.CopiedBytes))
	}
	for _, d := range s.Devices {
		r.queue.WithLabelValues(d.ID).Set(float64(d.InFlight))
	}
}

// grow moves counter v's label to value, which only grows: a value below
// the last one seen (a late snapshot) leaves the counter as it is.
func (r *Recorder) grow(v *prometheus.CounterVec, metric, label string, value float64) {
	k := metric + "\x00" + label
	c := v.WithLabelValues(label)
	if d := value - r.last[k]; d > 0 {
		c.Add(d)
		r.last[k] = value
	}
}

// Handler serves the metrics in Prometheus' text format.
func (r *Recorder) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}
