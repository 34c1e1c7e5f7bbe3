package vca_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/doccmd"
)

// TestREADMECommands runs every command of README.md's sh blocks in the
// module's root with a freshly built sluice on the PATH (sluice run builds
// the graph's Go package there). The OpenCL and CUDA ones are skipped
// without such a device; the go test line runs with -short, where this
// test skips. (The seed-scale and device commands, minutes long, are in
// indented blocks, not run.)
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sluice command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := doccmd.Sluice(t, root)
	cmds, err := doccmd.ShellBlockLines("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 8 {
		t.Fatalf("README.md: %d commands in sh blocks, expected at least 8", len(cmds))
	}
	for i, line := range cmds {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			switch {
			case strings.Contains(line, "opencl.yaml") && !device.Available(ctx, "opencl"):
				t.Skipf("%s: no OpenCL device", line)
			case strings.Contains(line, "cuda.yaml") && !device.Available(ctx, "cuda"):
				t.Skipf("%s: no CUDA device", line)
			}
			out, err := doccmd.Run(ctx, root, bin, line)
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			if strings.HasPrefix(line, "sluice run") && strings.Count(string(out), "cube ") != 8 {
				t.Errorf("%s: expected 8 cube lines, got:\n%s", line, out)
			}
		})
	}
}
