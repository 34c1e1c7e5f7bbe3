package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/metrics"
	"github.com/sluicehq/sluice/runtime"
)

// serveMetrics serves a run's Prometheus metrics on addr (/metrics) while
// the run lasts: it chains a metrics.Recorder after opts.Progress (keeping
// the display) and returns a function that stops the server.
func serveMetrics(addr string, opts *runtime.Options, out io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics %s: %w", addr, err)
	}
	rec := metrics.NewRecorder()
	prev := opts.Progress
	opts.Progress = func(s runtime.Snapshot) {
		if prev != nil {
			prev(s)
		}
		rec.Observe(s)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", rec.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	fmt.Fprintf(out, "metrics on http://%s/metrics\n", ln.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}
