package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/spec"
	"github.com/sluicehq/sluice/ui"
)

func newUI() *cobra.Command {
	var listen, token, broker, mapping, runStats, runTrace string
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
A listener that is not on loopback requires a token: the one given by --token,
or a generated one, printed. Requests send it as "Authorization: Bearer TOKEN"
or ?token=TOKEN.`,
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
			srv.Token = t
			if mapping != "" {
				if srv.Mapping, err = loadMapping(mapping); err != nil {
					return err
				}
			}
			if srv.Saved, err = savedRun(runStats, runTrace); err != nil {
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
	cmd.Flags().StringVar(&token, "token", "", "token every request must send (generated when the listener is not on loopback and none is given)")
	cmd.Flags().StringVar(&mapping, "mapping", "", "mapping file placing the actors: shown on the graph, used by runs from the page")
	cmd.Flags().StringVar(&runStats, "run-stats", "", "show this run's statistics (written by `sluice run --stats-json`) as the last run")
	cmd.Flags().StringVar(&runTrace, "run-trace", "", "with --run-stats: the run's trace (written by `sluice run --trace`), shown as its timeline")
	cmd.Flags().StringVar(&broker, "broker", "", "broker URL (nats://host:port): serve its tree, workers and devices on GET /api/cluster")
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

// uiToken returns the given token, or a new one when addr is reachable from
// other machines and none is given.
func uiToken(addr, given string) (string, error) {
	if given != "" || !ui.NeedsToken(addr) {
		return given, nil
	}
	return ui.NewToken()
}

// serveUI serves srv on ln until ctx ends, after printing the address (and
// the token, if any) to out.
func serveUI(ctx context.Context, ln net.Listener, srv *ui.Server, out io.Writer) error {
	url := "http://" + ln.Addr().String() + "/"
	if srv.Token != "" {
		url += "?token=" + srv.Token
	}
	fmt.Fprintln(out, "serving", url)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
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
