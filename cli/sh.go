package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/shell"
)

func newSh() *cobra.Command {
	var (
		command string
		dev     string
	)
	cmd := &cobra.Command{
		Use:   "sh [FILE]",
		Short: "Run flow-model executables and batches over virtual buffers, interactively or from a script",
		Long: `sh is sluice's shell. Without arguments it reads commands interactively, with
line editing and history (~/.sluice_history); with FILE it runs that script;
with -c it runs the given commands (separated by newlines or ';'). Virtual
buffers stay resident on --device (default: the first OpenCL device, "host"
for host memory) between commands. Type help for the commands; see
docs/shell.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sh := shell.New(shell.Options{Out: cmd.OutOrStdout(), Device: dev})
			var err error
			switch {
			case command != "":
				err = sh.RunScript(ctx, "-c", strings.NewReader(strings.ReplaceAll(command, ";", "\n")))
			case len(args) == 1:
				var f *os.File
				if f, err = os.Open(args[0]); err != nil {
					return err
				}
				defer f.Close()
				err = sh.RunScript(ctx, args[0], f)
			case !isTerminal(cmd.InOrStdin()):
				// A script piped in: run it as a file, failing on its first error.
				err = sh.RunScript(ctx, "stdin", cmd.InOrStdin())
			default:
				err = interactive(cmd, sh)
			}
			return errors.Join(err, sh.Close())
		},
	}
	cmd.Flags().StringVarP(&command, "command", "c", "", "commands to run (newline- or ';'-separated)")
	cmd.Flags().StringVar(&dev, "device", "", `device holding virtual buffers (default: first OpenCL device; "host": host memory)`)
	return cmd
}

// interactive reads commands with line editing until EOF or exit.
func interactive(cmd *cobra.Command, sh *shell.Shell) error {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	hist := ""
	if home, err := os.UserHomeDir(); err == nil {
		hist = filepath.Join(home, ".sluice_history")
		if f, err := os.Open(hist); err == nil {
			ln.ReadHistory(f)
			f.Close()
		}
	}
	defer func() {
		if hist == "" {
			return
		}
		if f, err := os.Create(hist); err == nil {
			ln.WriteHistory(f)
			f.Close()
		}
	}()
	ctx := cmd.Context()
	for {
		line, err := ln.Prompt("sluice> ")
		if errors.Is(err, io.EOF) || errors.Is(err, liner.ErrPromptAborted) {
			fmt.Fprintln(cmd.OutOrStdout())
			return sh.Sync(ctx)
		}
		if err != nil {
			return err
		}
		if t := strings.TrimSpace(line); t == "exit" || t == "quit" {
			return sh.Sync(ctx)
		} else if t != "" {
			ln.AppendHistory(line)
		}
		if err := sh.Exec(ctx, line); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "error:", err)
		}
	}
}
