package ui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRecordGPUScript runs ui/record-gpu.sh end to end on this machine:
// build makes sluice with the image pipeline's and the stitching's Go
// actors and the device backends (it must list this host's CPU among its devices), and run
// records the pipeline with MAPPING=opencl.yaml (PoCL counts; skipped
// where there is no OpenCL device), writing the statistics and the trace
// that the workbench loads as a saved run.
func TestRecordGPUScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sluice with the image pipeline's actors")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	t.Parallel()
	dir, out := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, "bash", "record-gpu.sh", "build", dir).CombinedOutput(); err != nil {
		t.Fatalf("record-gpu.sh build: %v\n%s", err, b)
	}
	devs, err := exec.CommandContext(ctx, filepath.Join(dir, "sluice-record"), "devices").CombinedOutput()
	if err != nil || !strings.Contains(string(devs), "\ncpu ") {
		t.Fatalf("the recording program's devices: %v: expected this host's CPU listed (the device backends built in), found:\n%s", err, devs)
	}
	if !strings.Contains(string(devs), "opencl:") {
		t.Skipf("no OpenCL device here to record the pipeline's kernels on:\n%s", devs)
	}
	run := exec.CommandContext(ctx, "bash", "record-gpu.sh", "run", dir, out)
	run.Env = append(os.Environ(), "MAPPING=opencl.yaml", "FRAMES=300")
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("record-gpu.sh run with MAPPING=opencl.yaml: %v\n%s", err, b)
	}
	if _, err := LoadSavedRun(filepath.Join(out, "stats.json"), filepath.Join(out, "trace.json")); err != nil {
		t.Fatalf("the recording does not load as a saved run: %v", err)
	}
}

// TestRecordGPUScriptRefusesUnknownApp: APP names what to record; anything
// else is refused with a sentence, before the binary is looked for.
func TestRecordGPUScriptRefusesUnknownApp(t *testing.T) {
	t.Parallel()
	run := exec.Command("bash", "record-gpu.sh", "run", t.TempDir(), t.TempDir())
	run.Env = append(os.Environ(), "APP=mjpeg")
	b, err := run.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "APP=mjpeg: expected imagepipe or stitch") {
		t.Fatalf("APP=mjpeg: %v, %q: want a refusal naming the choices", err, b)
	}
}
