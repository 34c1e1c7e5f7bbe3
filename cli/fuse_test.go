package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
)

// needOpenCL skips a test without an OpenCL device.
func needOpenCL(t *testing.T) {
	t.Helper()
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "opencl" && r.Available() {
			return
		}
	}
	if os.Getenv("SLUICE_REQUIRE_OPENCL") == "1" {
		t.Fatal("SLUICE_REQUIRE_OPENCL=1 but no OpenCL device")
	}
	t.Skip("no OpenCL device")
}

// sluice run --fuse merges the example's element-wise chain into one
// kernel actor, says so, and runs it.
func TestRunFuse(t *testing.T) {
	needOpenCL(t)
	stats := filepath.Join(t.TempDir(), "stats.json")
	_, errs, code := sluice(t, "", "run", "examples/flowmodel-chain/chain.yaml", "--mapping", "examples/flowmodel-chain/opencl-map.yaml",
		"--fuse", "--progress", "off", "--stats-json", stats)
	if code != 0 || !strings.Contains(errs, "fused scale+square+damp+quarter on opencl") || !strings.Contains(errs, "a scenario of 6 steps") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Actors []struct {
			Name    string `json:"name"`
			Kind    string `json:"kind"`
			Firings int64  `json:"firings"`
		} `json:"actors"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range st.Actors {
		names = append(names, a.Name)
		if a.Name == "scale+square+damp+quarter" && (a.Kind != "kernel" || a.Firings != 4) {
			t.Fatalf("merged actor %+v: expected a kernel actor fired 4 times", a)
		}
	}
	if strings.Join(names, " ") != "ramp scale+square+damp+quarter print" {
		t.Fatalf("actors %v: expected ramp, the merged chain, print", names)
	}
}

// sluice run refuses a flow-model actor mapped onto a device that misses
// one of the model's requirements, naming the actor, the requirement and
// the device.
func TestRunFlowModelRequirements(t *testing.T) {
	mp := filepath.Join(t.TempDir(), "map.yaml")
	if err := os.WriteFile(mp, []byte("mapping:\n  axpy: {device: cpu}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := sluice(t, "", "run", "examples/flowmodel/graph.yaml", "--mapping", mp, "--progress", "off")
	if code == 0 || !strings.Contains(errs, "actor axpy: flow-model saxpy is mapped to a device that does not meet its requirements: cpu: backend cpu: the flow-model has code for opencl, cuda") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// The device flags reach the runtime: the unfused chain gives the same
// output at depth 2, one invocation a round, one stream, as by default; a
// negative count is refused.
func TestRunDeviceFlags(t *testing.T) {
	needOpenCL(t)
	args := []string{"run", "examples/flowmodel-chain/chain.yaml", "--mapping", "examples/flowmodel-chain/opencl-map.yaml", "--progress", "off"}
	want, errs, code := sluice(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, errs, code := sluice(t, "", append(args, "--device-depth", "2", "--device-round", "1", "--device-lanes", "1")...)
	if code != 0 || got != want {
		t.Fatalf("exit %d, output %q, want %q: %s", code, got, want, errs)
	}
	if _, errs, code := sluice(t, "", append(args, "--device-depth", "-1")...); code == 0 || !strings.Contains(errs, "--device-depth -1: expected a count ≥ 0") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
