package shell_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/shell"
)

// workdir copies testdata to a temporary directory and returns it.
func workdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runScript runs testdata/script.sh with RUN replaced by exe and compares
// the dumped buffers and written files with testdata/expected.
func runScript(t *testing.T, dev, exe string) string {
	dir := workdir(t)
	script, err := os.ReadFile(filepath.Join(dir, "script.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sh := shell.New(shell.Options{Out: &out, Dir: dir, Device: dev})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = sh.RunScript(ctx, "script.sh", strings.NewReader(strings.ReplaceAll(string(script), "RUN", exe)))
	if err := errorsJoin(err, sh.Close()); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, out.String())
	}
	for _, f := range []string{"y.csv", "y0.csv", "y-file.csv"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata/expected", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s with %s:\n%s\nexpected:\n%s", f, exe, got, want)
		}
	}
	return out.String()
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func TestScriptHostMemory(t *testing.T) {
	out := runScript(t, "host", "run-go")
	if !strings.Contains(out, "x\tf32\t8\t32 B\thost memory") {
		t.Errorf("virtbuf list output:\n%s", out)
	}
}

func TestScriptResidentOpenCL(t *testing.T) {
	var cl string
	for _, d := range device.Devices(context.Background()) {
		if d.Backend == "opencl" && cl == "" {
			cl = d.ID
		}
	}
	if cl == "" {
		if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
			t.Fatal("no OpenCL device")
		}
		t.Skip("no OpenCL device on this machine (scripts/install-pocl.sh installs PoCL)")
	}
	out := runScript(t, "", "run-cl")
	if !strings.Contains(out, "\t"+cl) {
		t.Errorf("virtual buffers not on %s:\n%s", cl, out)
	}
}

func TestErrorsNameLines(t *testing.T) {
	dir := workdir(t)
	ctx := context.Background()
	for _, c := range []struct{ script, want string }{
		{"virtbuf create x f32 8\n\nvirtbuf fill nope x.csv\n", `s.sh:3: no virtual buffer "nope"`},
		{"help\nfrobnicate\n", `s.sh:2: unknown command "frobnicate"`},
		{"virtbuf create x f32 8\nvirtbuf create x f32 8\n", "s.sh:2: virtual buffer \"x\" exists"},
		{"virtbuf create x f33 8\n", `s.sh:1: type "f33"`},
		{"virtbuf create x f32 3\nvirtbuf fill x x.csv\n", "s.sh:2: " + filepath.Join(dir, "x.csv") + ": 32 bytes of f32: expected 12 bytes"},
		{"files-go.yaml\nrun-go.yaml\n", `s.sh:2: ` + filepath.Join(dir, "run-go.yaml") + `: bind x: no virtual buffer "x"`},
		{"bad-batch.yaml\n", "bad-batch.yaml:3: unknown command"},
		{"loop.yaml\n", "nested deeper"},
		{"repeat x help\n", "usage: repeat"},
	} {
		os.WriteFile(filepath.Join(dir, "bad-batch.yaml"), []byte("batch:\n  - virtbuf list\n  - nonsense here\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte("batch:\n  - loop.yaml\n"), 0o644)
		sh := shell.New(shell.Options{Dir: dir, Device: "host"})
		err := sh.RunScript(ctx, "s.sh", strings.NewReader(c.script))
		sh.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, expected %q", c.script, err, c.want)
		}
	}
}

func TestBackgroundErrorAtSync(t *testing.T) {
	dir := workdir(t)
	sh := shell.New(shell.Options{Dir: dir, Device: "host"})
	defer sh.Close()
	ctx := context.Background()
	if err := sh.Exec(ctx, "run-go.yaml &"); err != nil {
		t.Fatal(err)
	}
	if err := sh.Exec(ctx, "sync"); err == nil || !strings.Contains(err.Error(), "job [1]") {
		t.Fatalf("sync: %v, expected the background job's error", err)
	}
}
