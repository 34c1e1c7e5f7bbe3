// Package cli is sluice's command-line interface: the command tree of the
// sluice binary (check, dot, run, simulate, map, broker, worker, sh, ui,
// gen …). Command sluice calls Main; so does the program that `sluice run`
// builds for a graph whose Go actors live in a package of the user's, after
// importing that package to register them. See docs/cli.md.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// exitError carries an exit status without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "sluice",
		Short: "Program heterogeneous computers as graphs of actors joined by streams",
		Long: `sluice describes dataflow graphs (SDF, CSDF and Kahn process networks) in YAML,
checks them before running (rate consistency, deadlock, buffer sizes, throughput),
draws them, and runs them.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newCheck(), newDot(), newRun(), newBuiltins(), newDevices(), newSimulate(), newMap())
	root.AddCommand(newBroker(), newWorker())
	root.AddCommand(newSh())
	root.AddCommand(newUI(), newGen())
	return root
}

// Main runs the sluice command line with os.Args and exits with its status:
// 0 success, 1 the input is wrong or the run failed, 2 a usage error.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal cancels the context: runs stop cleanly. A
		// command that does not return soon after (a long analysis) is
		// ended, and a second signal ends it at once.
		<-ctx.Done()
		stop()
		time.Sleep(3 * time.Second)
		fmt.Fprintln(os.Stderr, "sluice: interrupted")
		os.Exit(130)
	}()
	err := newRoot().ExecuteContext(ctx)
	stop()
	if err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(2)
	}
}
