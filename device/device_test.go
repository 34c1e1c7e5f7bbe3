package device_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
)

func TestAssembleAndMapLog(t *testing.T) {
	src := device.Source{Name: "blur.cl", Prelude: "#define A 1\n#define B 2", Text: "__kernel void k() {\n  oops;\n}\n"}
	text, pre := device.Assemble(src)
	if pre != 3 || !strings.Contains(text, "#line 1 \"blur.cl\"\n__kernel") {
		t.Fatalf("Assemble: %d prelude lines, text %q", pre, text)
	}
	if text, pre := device.Assemble(device.Source{Text: "x"}); text != "x" || pre != 0 {
		t.Fatalf("no name and no prelude must leave the text alone: %q %d", text, pre)
	}
	tests := []struct {
		name, log string
		want      device.Diagnostic
		wantLine  string
	}{
		{"honoured #line (clang)", "blur.cl:2:3: error: use of undeclared identifier 'oops'",
			device.Diagnostic{File: "blur.cl", Line: 2, Col: 3, Severity: "error", Message: "use of undeclared identifier 'oops'"},
			"blur.cl:2:3: error: use of undeclared identifier 'oops'"},
		{"honoured #line (PoCL style)", "error: blur.cl:2:3: use of undeclared identifier 'oops'",
			device.Diagnostic{File: "blur.cl", Line: 2, Col: 3, Severity: "error", Message: "use of undeclared identifier 'oops'"},
			"blur.cl:2:3: error: use of undeclared identifier 'oops'"},
		{"ignored #line (NVIDIA style)", "<kernel>:5:3: error: use of undeclared identifier 'oops'",
			device.Diagnostic{File: "blur.cl", Line: 2, Col: 3, Severity: "error", Message: "use of undeclared identifier 'oops'"},
			"blur.cl:2:3: error: use of undeclared identifier 'oops'"},
		{"ignored #line, temp path", "/tmp/comgr-1234/input/CompileSource:5:3: warning: unused",
			device.Diagnostic{File: "blur.cl", Line: 2, Col: 3, Severity: "warning", Message: "unused"},
			"blur.cl:2:3: warning: unused"},
		{"inside the prelude", "<source>:2:9: error: redefinition of 'B'",
			device.Diagnostic{File: device.PreludeName, Line: 2, Col: 9, Severity: "error", Message: "redefinition of 'B'"},
			"<prelude>:2:9: error: redefinition of 'B'"},
		{"no column", "<kernel>:6: fatal error: too many errors",
			device.Diagnostic{File: "blur.cl", Line: 3, Severity: "fatal error", Message: "too many errors"},
			"blur.cl:3: fatal error: too many errors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log, diags := device.MapLog(tc.log+"\n  oops;\n  ^\nnot a diagnostic: at all\n", "blur.cl", pre)
			if len(diags) != 1 || diags[0] != tc.want {
				t.Fatalf("diagnostics %+v, want %+v", diags, tc.want)
			}
			if first, _, _ := strings.Cut(log, "\n"); first != tc.wantLine {
				t.Fatalf("rewritten line %q, want %q", first, tc.wantLine)
			}
			if !strings.Contains(log, "  oops;\n  ^") {
				t.Fatal("other log lines must be kept")
			}
		})
	}
	be := &device.BuildError{Device: device.Info{ID: "x:0", Name: "X"}, File: "blur.cl", Err: errors.New("boom"),
		Diagnostics: []device.Diagnostic{{File: "blur.cl", Line: 2, Col: 3, Severity: "warning", Message: "w"}, {File: "blur.cl", Line: 4, Col: 1, Severity: "error", Message: "e"}}}
	if got := be.Error(); got != "building blur.cl for x:0 (X): blur.cl:4:1: error: e" {
		t.Fatalf("BuildError = %q", got)
	}
	if !errors.Is(be, device.ErrBuild) {
		t.Fatal("a BuildError must match ErrBuild")
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 1 << 40: "1 TiB", 3 << 29: "1.5 GiB"} {
		if got := device.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
	err := device.OutOfMemory(device.Info{ID: "gpu:0", Name: "G", GlobalMem: 8 << 30, MaxAlloc: 2 << 30}, "buffer", 1<<40, errors.New("cause"))
	if !errors.Is(err, device.ErrOutOfMemory) || err.Error() != "buffer of 1 TiB on gpu:0 (G): out of device memory (device memory 8 GiB, largest buffer 2 GiB): cause" {
		t.Fatalf("OutOfMemory = %v", err)
	}
}

// fake is a backend with fixed answers, for the registry's tests.
type fake struct {
	name string
	devs []device.Info
	err  error
}

func (f fake) Name() string                                    { return f.name }
func (f fake) Discover(context.Context) ([]device.Info, error) { return f.devs, f.err }
func (f fake) Open(context.Context, string) (device.Device, error) {
	return nil, errors.New("fake " + f.name)
}

// The fakes are registered as backends register: once, at init; this test
// binary links no real backend, so a fake stands for the CPU, registered
// last to show that it comes first all the same.
func init() {
	device.Register(fake{name: "zz-fake", devs: []device.Info{{ID: "zz-fake:0", Backend: "zz-fake", Name: "Fake Accelerator 9000"}}})
	device.Register(fake{name: "zz-broken", err: errors.New("libbroken.so not found")})
	device.Register(fake{name: "zz-empty"})
	device.Register(fake{name: "cpu", devs: []device.Info{{ID: "cpu", Backend: "cpu", Name: "Fake CPU"}}})
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	var reasons []string
	for _, r := range device.Discover(context.Background()) {
		reasons = append(reasons, r.Backend+"="+r.Reason)
	}
	if strings.Join(reasons, ",") != "cpu=,zz-broken=libbroken.so not found,zz-empty=no device,zz-fake=" {
		t.Fatalf("reports (the CPU first, then by name): %v", reasons)
	}
	_, err := device.Open(context.Background(), "nope:1")
	if !device.IsNotFound(err) || !strings.Contains(err.Error(), "zz-fake:0 (Fake Accelerator 9000)") || !strings.Contains(err.Error(), "zz-broken (libbroken.so not found)") {
		t.Fatalf("Open of a missing device: %v", err)
	}
	for _, id := range []string{"zz-fake:0", "zz-fake", "accelerator 9000"} {
		if _, err := device.Open(context.Background(), id); err == nil || err.Error() != "fake zz-fake" {
			t.Fatalf("Open(%q) did not reach the fake backend: %v", id, err)
		}
	}
}

// TestRegisterTwicePanics: a second backend of a taken name is refused
// with a panic naming both registrations (internal/registry's rule), and
// the first stays.
func TestRegisterTwicePanics(t *testing.T) {
	t.Parallel()
	var msg string
	func() {
		defer func() { msg = fmt.Sprint(recover()) }()
		device.Register(fake{name: "zz-fake"})
	}()
	re := regexp.MustCompile(`^device backend "zz-fake" registered twice: first at device/device_test\.go:\d+, again at device/device_test\.go:\d+: expected one registration per name$`)
	if !re.MatchString(msg) {
		t.Errorf("registering zz-fake twice: panic %q: expected it to match %s", msg, re)
	}
	if _, err := device.Open(context.Background(), "zz-fake:0"); err == nil || err.Error() != "fake zz-fake" {
		t.Errorf("after the refused duplicate, zz-fake:0 no longer reaches the first backend: %v", err)
	}
}
