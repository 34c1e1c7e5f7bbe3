package stitch_test

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
// module's root (sluice run builds the graph's Go package there), and
// removes the mosaic they write. The OpenCL one is skipped without an
// OpenCL device. (The seed-scale command, minutes long, is in an indented
// block, not run.)
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
	mosaic := filepath.Join(root, "stitch-mosaic.png")
	if _, err := os.Stat(mosaic); err == nil {
		t.Skipf("%s exists: the README's runs would overwrite it", mosaic)
	}
	defer os.Remove(mosaic)
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "sluice"), "./cmd/sluice")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sluice: %v\n%s", err, out)
	}
	cmds := readmeCommands(t)
	if len(cmds) < 5 {
		t.Fatalf("README.md: %d commands in sh blocks, expected at least 5", len(cmds))
	}
	for i, line := range cmds {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if strings.Contains(line, "opencl.yaml") && !hasOpenCL() {
				t.Skipf("%s: no OpenCL device", line)
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
