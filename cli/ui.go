package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/spec"
	"github.com/sluicehq/sluice/ui"
)

func newUI() *cobra.Command {
	var listen, token, broker, mapping, runStats, runTrace, rootDir string
	var allowHosts []string
	var traceLimit int64
	var cred credFlags
	cmd := &cobra.Command{
		Use:   "ui [FILE]",
		Short: "Serve the workbench: the page and its API (graph, check, save, runs, cluster)",
		Long: `ui serves, on --listen, the workbench page and the JSON API described in
docs/ui.md: FILE's graph laid out with check's findings and edited on the
drawing (actors, ports, channels, undo/redo) or as YAML checked as you type,
composites expanded in place, save, Generate Go, runs with live firings,
predicted vs measured throughput and a timeline, and with --broker the
cluster's tree. --mapping places the actors: the graph shows each actor's
device and replicas, and runs from the page use it. --run-stats (and
--run-trace) show a run recorded elsewhere, e.g. on a GPU machine, with
` + "`sluice run FILE --stats-json S --trace T`" + `: its figures on the drawing and
its timeline.
A graph whose Go actors live in a package it names with go: is served by the
program sluice run builds for it (with those actors), so runs from the page work.
Every API request needs the server's token: a random one made at start (or the
one given by --token), printed in the address to open, http://HOST:PORT/?token=…;
the page trades it for a cookie. Scripts send "Authorization: Bearer TOKEN".
Requests from pages of other origins, and requests whose Host header names
another host (DNS rebinding), are refused. Every path a graph names (composite
graph files, kernels, flow models, the files actors read and write in runs
from the page) must lie inside the file root: FILE's directory, or --root DIR.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv := &ui.Server{}
			if len(args) == 1 {
				if err := expectKind(args[0], filekind.Graph); err != nil {
					return err
				}
				// A graph whose Go actors this binary lacks is served by the
				// program sluice run builds for it, so runs from the page work.
				if g, err := spec.Load(args[0]); err == nil {
					if done, err := runElsewhere(cmd, g); done || err != nil {
						return err
					}
				}
				srv.File = args[0]
			}
			t, err := uiToken(listen, token)
			if err != nil {
				return err
			}
			srv.Token, srv.AllowHosts = t, allowHosts
			if rootDir != "" {
				if srv.Root, err = fsroot.Open(rootDir); err != nil {
					return fmt.Errorf("--root: %w", err)
				}
				defer srv.Root.Close()
			}
			if mapping != "" {
				if srv.Mapping, err = loadMapping(mapping); err != nil {
					return err
				}
			}
			if srv.Saved, err = savedRun(runStats, runTrace); err != nil {
				return err
			}
			if srv.TraceLimit, err = traceLimitOption(traceLimit, "events"); err != nil {
				return err
			}
			if broker != "" {
				c, err := cluster.Connect(cmd.Context(), broker, cred.creds())
				if err != nil {
					return fmt.Errorf("--broker %s: %w", broker, err)
				}
				defer c.Close()
				srv.Cluster = c
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen %s: %w", listen, err)
			}
			return serveUI(cmd.Context(), ln, srv, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to serve on (host:port)")
	cmd.Flags().StringVar(&token, "token", "", "token every API request must send (default: a random one, printed in the address to open)")
	cmd.Flags().StringVar(&rootDir, "root", "", "directory every path a graph names must lie in (default: FILE's directory, or the working directory)")
	cmd.Flags().StringSliceVar(&allowHosts, "allow-host", nil, "a host name the workbench may be opened by (besides 127.0.0.1, localhost, [::1] and the listening address)")
	cmd.Flags().StringVar(&mapping, "mapping", "", "mapping file placing the actors: shown on the graph, used by runs from the page")
	cmd.Flags().StringVar(&runStats, "run-stats", "", "show the run statistics in `FILE` (written by sluice run --stats-json) as the last run")
	cmd.Flags().StringVar(&runTrace, "run-trace", "", "with --run-stats: the run's trace in `FILE` (written by sluice run --trace), shown as its timeline")
	cmd.Flags().StringVar(&broker, "broker", "", "broker URL (nats://host:port): serve its tree, workers and devices on GET /api/cluster")
	cmd.Flags().Int64Var(&traceLimit, "trace-limit", ui.RunTraceLimit, "the most events the trace of a run from the page keeps, the run's first; the server holds the last run's (0: no limit)")
	addBrokerCreds(cmd.Flags(), &cred)
	return cmd
}

// addBrokerCreds adds the broker credential flags to fl, the broker's token
// as --broker-token since --token is the ui's own.
func addBrokerCreds(fl *pflag.FlagSet, cred *credFlags) {
	fs := pflag.NewFlagSet("broker", pflag.ContinueOnError)
	cred.add(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "token" {
			f.Name = "broker-token"
		}
		fl.AddFlag(f)
	})
}

// savedRun loads the run given by --run-stats and --run-trace (nil when
// neither is given).
func savedRun(stats, trace string) (*ui.SavedRun, error) {
	switch {
	case stats != "":
		r, err := ui.LoadSavedRun(stats, trace)
		if err != nil {
			return nil, fmt.Errorf("--run-stats: %w", err)
		}
		return r, nil
	case trace != "":
		return nil, errors.New("--run-trace: expected --run-stats with it (the run's statistics), found none")
	}
	return nil, nil
}

// uiToken returns the given token, or a new random one when none is given,
// whatever the listening address addr: a page of any site the user visits
// can reach a loopback listener too.
func uiToken(addr, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	return ui.NewToken(), nil
}

// uiAddr is the address to print for a listener: a wildcard host
// (0.0.0.0, ::) is shown as 127.0.0.1, which a browser on this machine
// opens.
func uiAddr(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok && t.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(t.Port))
	}
	return a.String()
}

// serveUI serves srv on ln until ctx ends, after printing the address to
// open, with the token, to out.
func serveUI(ctx context.Context, ln net.Listener, srv *ui.Server, out io.Writer) error {
	h := srv.Handler() // makes the token when srv has none
	fmt.Fprintln(out, "serving", "http://"+uiAddr(ln.Addr())+"/?token="+srv.Token)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close() // open event streams do not end by themselves
		}
		if e := <-done; !errors.Is(e, http.ErrServerClosed) {
			return e
		}
		return nil
	}
}
