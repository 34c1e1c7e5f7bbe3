package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/metrics"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/ui"
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
	stop = serveBackground(ln, mux)
	fmt.Fprintf(out, "metrics on http://%s/metrics\n", ln.Addr())
	return stop, nil
}

// serveRunUI serves the ui API for a run on addr while it lasts: the graph
// file, GET /api/run with the latest progress and GET /metrics. A listener
// not on loopback gets a generated token, printed with the address.
func serveRunUI(addr, file string, opts *runtime.Options, out io.Writer) (stop func(), err error) {
	token, err := uiToken(addr, "")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--ui %s: %w", addr, err)
	}
	live, rec := &ui.Live{}, metrics.NewRecorder()
	prev := opts.Progress
	opts.Progress = func(s runtime.Snapshot) {
		if prev != nil {
			prev(s)
		}
		live.Observe(s)
		rec.Observe(s)
	}
	srv := &ui.Server{File: file, Token: token, Live: live, Metrics: rec.Handler()}
	stop = serveBackground(ln, srv.Handler())
	url := "http://" + ln.Addr().String() + "/api/run"
	if token != "" {
		url += "?token=" + token
	}
	fmt.Fprintln(out, "ui on", url)
	return stop, nil
}

// serveBackground serves h on ln until the returned stop is called, which
// waits up to 2 s for requests to end, then closes what is left open (event
// streams do not end by themselves).
func serveBackground(ln net.Listener, h http.Handler) (stop func()) {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			hs.Close()
		}
	}
}
