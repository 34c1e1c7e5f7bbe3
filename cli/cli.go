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
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/spec"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "sluice",
		Short: "Program heterogeneous computers as graphs of actors joined by streams",
		Long: `sluice describes dataflow graphs (SDF, CSDF and Kahn process networks) in YAML,
checks them before running (rate consistency, deadlock, buffer sizes, throughput),
draws them, maps them onto CPU cores, GPUs and workers, and runs them.

Exit status: 0 success; 1 the input is wrong or the run failed (findings,
deadlock, a runtime error, a remote failure); 2 a usage error (an unknown
command or flag, a wrong number of arguments).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return usageError{errors.New("expected a command (see the list above)")}
		},
	}
	root.AddCommand(newCheck(), newDot(), newRun(), newBuiltins(), newDevices(), newSimulate(), newMap())
	root.AddCommand(newBroker(), newWorker())
	root.AddCommand(newSh())
	root.AddCommand(newUI(), newGen())
	root.AddCommand(newCalibrate(), newVersion())
	root.PersistentFlags().Duration(timeUnitFlag, spec.DefaultSDF3TimeUnit, "the duration of one time unit of an SDF3 graph's execution times (e.g. 1ns for times in nanoseconds)")
	root.Version = buildVersion().Version
	root.SetVersionTemplate(versionTemplate(buildVersion()))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	markUsage(root)
	return root
}

// markUsage makes the argument-count errors of every command in the tree
// usage errors (exit status 2).
func markUsage(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsage(sub)
	}
}

// exitCode is the exit status for an error a command returned: the status
// an exitError carries, 2 for usage errors (ours and cobra's), 1 otherwise.
func exitCode(err error) int {
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var mt *maxTimeError
	if errors.As(err, &mt) {
		return maxTimeExit
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "required flag", "accepts ", "requires at least", "invalid argument"} {
		if strings.HasPrefix(msg, p) {
			return 2
		}
	}
	return 1
}

// Main runs the sluice command line with os.Args and exits with its status:
// 0 success, 1 the input is wrong or the run failed, 2 a usage error, 124
// a run that --max-time stopped.
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
		code := exitCode(err)
		var ee exitError
		if !errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "sluice:", err)
		}
		os.Exit(code)
	}
}

// exitError carries an exit status without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake in how a command was called (a flag, an argument
// count, an unknown command): the command exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }
