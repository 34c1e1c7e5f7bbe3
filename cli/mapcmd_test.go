package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
)

// TestMapThenRun: sluice map writes a mapping that sluice run runs. On a
// model with the CPU pool and the first OpenCL device (named as sluice
// calibrate names it), with costs that make mixed.yaml's four kernels
// cheap on the device, the mapping places them on the device ID with impl
// opencl, work-groups and work-items, and sluice run accepts it. Needs an
// OpenCL device (PoCL: scripts/install-pocl.sh).
func TestMapThenRun(t *testing.T) {
	needOpenCL(t)
	var id string
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "opencl" && len(r.Devices) > 0 {
			id = r.Devices[0].ID
			break
		}
	}
	proc := strings.ReplaceAll(id, ":", "")
	dir := t.TempDir()
	mach, costs, out := filepath.Join(dir, "machine.yaml"), filepath.Join(dir, "costs.yaml"), filepath.Join(dir, "m.yaml")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(mach, fmt.Sprintf(`name: cpu-and-opencl
processors:
  cpu: {kind: cpu, units: 2, io: true, pool: true, firing_cost: 100}
  %s: {kind: gpu, firing_cost: 2000}
interconnects:
  pcie: {elements: [cpu, %s], start_latency: 10000, bandwidth: 10}
`, proc, proc))
	write(costs, `unit: us
costs:
  sine: 5
  noise: 5
  lowpass: 20
  sink: 1
  mix: {cpu: 2000, gpu: 1}
  gain: {cpu: 2000, gpu: 1}
  rect: {cpu: 2000, gpu: 1}
  smooth: {cpu: 2000, gpu: 1}
`)
	_, errs, code := sluice(t, "", "map", "examples/predict/mixed.yaml", "--machine", mach, "--costs", costs,
		"--strategy", "heft", "--work-groups", "4,8", "-o", out)
	if code != 0 {
		t.Fatalf("sluice map: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`"mix": {device: "%s", impl: opencl, work-groups: 8, work-items: 64}`, id)
	if !strings.Contains(string(b), want) {
		t.Fatalf("mapping:\n%s\nexpected the line %s", b, want)
	}
	_, errs, code = sluice(t, "", "run", "examples/predict/mixed.yaml", "--mapping", out, "-n", "32", "--progress", "off")
	if code != 0 {
		t.Fatalf("sluice run with the mapping of sluice map: exit %d: %s\nmapping:\n%s", code, errs, b)
	}
}
