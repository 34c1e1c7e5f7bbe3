package spec

import (
	"os/exec"
	"strings"
	"testing"
)

// TestParseOnlyDeps holds spec to reading: it must not link a device
// backend, NATS or an HTTP client (flow-models are resolved by a resolver
// the caller injects, devices by the driver's placement).
func TestParseOnlyDeps(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		deps[l] = true
	}
	if !deps["github.com/sluicehq/sluice/spec"] {
		t.Fatalf("go list -deps .: expected spec among %d packages", len(deps))
	}
	for _, bad := range []string{
		"github.com/sluicehq/sluice/device/cuda",
		"github.com/sluicehq/sluice/device/opencl",
		"github.com/sluicehq/sluice/device/all",
		"github.com/sluicehq/sluice/flowmodel",
		"github.com/nats-io/nats.go",
		"net/http",
	} {
		if deps[bad] {
			t.Errorf("spec depends on %s: expected a parse-only package (resolvers are injected through Options)", bad)
		}
	}
}
