package stitch_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/examples/stitch"
	"github.com/sluicehq/sluice/internal/doccmd"
)

// TestREADMECommands runs every command of README.md's sh blocks in the
// module's root (sluice run builds the graph's Go package there), and
// removes the mosaic they write. The OpenCL one is skipped without an
// OpenCL device, the CUDA one (stitch-gpu.yaml) without a CUDA GPU. (The seed-scale command, minutes long, is in an indented
// block, not run.)
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sluice command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(root, "stitch-mosaic.png")) // the runs' output
	bin := doccmd.Sluice(t, root)
	cmds, err := doccmd.ShellBlockLines("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 5 {
		t.Fatalf("README.md: %d commands in sh blocks, expected at least 5", len(cmds))
	}
	for i, line := range cmds {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if strings.Contains(line, "opencl.yaml") && !hasOpenCL() {
				t.Skipf("%s: no OpenCL device", line)
			}
			if strings.Contains(line, "-gpu.yaml") {
				if _, err := stitch.GPUFor(128, 128); err != nil {
					if os.Getenv("SLUICE_REQUIRE_CUDA") == "1" || !errors.Is(err, stitch.ErrNoGPU) {
						t.Fatal(err)
					}
					t.Skipf("%s: no CUDA GPU with cuFFT and NVRTC: %v", line, err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			out, err := doccmd.Run(ctx, root, bin, line)
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			switch {
			case strings.Contains(line, "sluice run"):
				if !strings.Contains(string(out), "64 of 64 positions equal the known ones") {
					t.Errorf("%s: want every position right:\n%s", line, out)
				}
			case strings.Contains(line, "sluice check"):
				if !strings.Contains(string(out), "no deadlock") {
					t.Errorf("%s: want the deadlock check passed:\n%s", line, out)
				}
			case strings.Contains(line, "bench"):
				if !strings.Contains(string(out), `"mismatches":0`) {
					t.Errorf("%s: want no mismatches:\n%s", line, out)
				}
			}
			t.Logf("%s:\n%s", line, out)
		})
	}
}
