package vca_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeCommands returns the command lines of README.md's ```sh blocks.
func readmeCommands(t *testing.T) []string {
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```sh":
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && line != "":
			cmds = append(cmds, line)
		}
	}
	return cmds
}

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
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "sluice"), "./cmd/sluice")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sluice: %v\n%s", err, out)
	}
	cmds := readmeCommands(t)
	if len(cmds) < 8 {
		t.Fatalf("README.md: %d commands in sh blocks, expected at least 8", len(cmds))
	}
	for i, line := range cmds {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			switch {
			case strings.Contains(line, "opencl.yaml") && !hasDevices("opencl"):
				t.Skipf("%s: no OpenCL device", line)
			case strings.Contains(line, "cuda.yaml") && !hasDevices("cuda"):
				t.Skipf("%s: no CUDA device", line)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", line)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			if strings.HasPrefix(line, "sluice run") && strings.Count(string(out), "cube ") != 8 {
				t.Errorf("%s: expected 8 cube lines, got:\n%s", line, out)
			}
		})
	}
}
