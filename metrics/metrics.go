// Package metrics exposes a run's live progress as Prometheus metrics:
// sluice_actor_firings_total and sluice_actor_done per actor, and
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
	done    *prometheus.GaugeVec
	elapsed prometheus.Gauge

	mu   sync.Mutex
	last map[string]int64
}

// NewRecorder returns a Recorder with its metrics registered.
func NewRecorder() *Recorder {
	r := &Recorder{
		reg: prometheus.NewRegistry(),
		firings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_actor_firings_total", Help: "Firings of the actor so far.",
		}, []string{"actor"}),
		done: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_actor_done", Help: "1 once the actor has finished, else 0.",
		}, []string{"actor"}),
		elapsed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_run_elapsed_seconds", Help: "Time since the run started.",
		}),
		last: map[string]int64{},
	}
	r.reg.MustRegister(r.firings, r.done, r.elapsed)
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
		if d := a.Firings - r.last[a.Name]; d > 0 {
			r.firings.WithLabelValues(a.Name).Add(float64(d))
			r.last[a.Name] = a.Firings
		} else {
			r.firings.WithLabelValues(a.Name).Add(0)
		}
		v := 0.0
		if a.Done {
			v = 1
		}
		r.done.WithLabelValues(a.Name).Set(v)
	}
}

// Handler serves the metrics in Prometheus' text format.
func (r *Recorder) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}
