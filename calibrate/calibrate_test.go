package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
	_ "github.com/sluicehq/sluice/device/cuda"
	_ "github.com/sluicehq/sluice/device/opencl"
	"github.com/sluicehq/sluice/machine"
)

func positive(t *testing.T, what string, v float64) {
	t.Helper()
	if !(v > 0) || math.IsInf(v, 0) {
		t.Errorf("%s = %g: expected a positive finite number", what, v)
	}
}

// TestHostModel calibrates the host and checks the figures and the model:
// a pool processor with the measured costs, which machine.Parse reads back
// from the YAML written, calibration record included.
func TestHostModel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs microbenchmarks for seconds: skipped with -short")
	}
	r, err := Run(context.Background(), Options{Workers: 2, NoGPU: true, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	h := r.Host
	positive(t, "parallelism", h.Parallelism)
	positive(t, "empty firing", h.EmptyFiringNs)
	positive(t, "wake latency", h.WakeNs)
	positive(t, "pool wake-up", h.PoolWakeNs)
	if h.WakeCostNs < 0 {
		t.Errorf("wake cost %g ns: expected at least 0", h.WakeCostNs)
	}
	positive(t, "FIFO hand-off", h.HandoffNs)
	positive(t, "clock read", h.ClockNs)
	positive(t, "memory bandwidth", h.MemBandwidth)
	if h.Parallelism > 2 {
		t.Errorf("parallelism %g of 2 workers: expected at most 2", h.Parallelism)
	}
	m, err := machine.Parse("calibrated.yaml", r.YAML())
	if err != nil {
		t.Fatalf("the model written does not parse: %v\n%s", err, r.YAML())
	}
	cpu := m.Processor("cpu")
	if want := PoolUnits(2, h.Parallelism); cpu == nil || !cpu.Pool || cpu.Units != want || cpu.SpinTime != spinTimeNs || cpu.TimeSlice != timeSliceNs || cpu.WakeLatency <= 0 {
		t.Fatalf("cpu processor %+v: expected a pool of %d units (2 workers, parallelism %.2f) with the runtime's spin time and slice and a wake latency", cpu, want, h.Parallelism)
	}
	if cpu.WakeLatency != int64(math.Round(h.PoolWakeNs)) || cpu.WakeCost != int64(math.Round(h.WakeCostNs)) {
		t.Errorf("cpu processor: wake latency %d and wake cost %d cycles: expected the pool's own wake-up %.0f ns and its cost %.0f ns (a bare goroutine's wake-up: %.0f ns)",
			cpu.WakeLatency, cpu.WakeCost, h.PoolWakeNs, h.WakeCostNs, h.WakeNs)
	}
	if m.Calibration["pool_wake_ns"] == "" || m.Calibration["wake_cost_ns"] == "" {
		t.Errorf("calibration record %v: expected pool_wake_ns and wake_cost_ns", m.Calibration)
	}
	if m.Calibration["key"] != Key() || m.Calibration["cpu_model"] != h.CPUModel {
		t.Errorf("calibration record %v: expected key %s and the CPU model", m.Calibration, Key())
	}
}

// TestDeviceFigures measures an OpenCL device as an accelerator (PoCL's
// CPU device where no GPU is present: the same code path as a GPU's) and
// checks the figures and the model's processor and link.
func TestDeviceFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("copies hundreds of MiB: skipped with -short")
	}
	ctx := context.Background()
	var id string
	for _, d := range device.Devices(ctx) {
		if d.Backend == "opencl" || d.Backend == "cuda" {
			id = d.ID
			if d.Kind == device.GPU {
				break
			}
		}
	}
	if id == "" {
		t.Skip("no OpenCL or CUDA device (install PoCL with scripts/install-pocl.sh, or run on a GPU host)")
	}
	var info device.Info
	for _, d := range device.Devices(ctx) {
		if d.ID == id {
			info = d
		}
	}
	g, err := measureGPU(ctx, info, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]float64{"launch": g.LaunchNs, "launch gap": g.LaunchGapNs,
		"H2D pinned latency": g.H2DPinnedNs, "D2H pinned latency": g.D2HPinnedNs,
		"H2D pageable latency": g.H2DPageableNs, "D2H pageable latency": g.D2HPageableNs,
		"H2D pinned bandwidth": g.H2DPinnedBW, "D2H pinned bandwidth": g.D2HPinnedBW,
		"H2D pageable bandwidth": g.H2DPageableBW, "D2H pageable bandwidth": g.D2HPageableBW} {
		positive(t, what, v)
	}
	if g.CopyEngines < 1 || g.CopyEngines > 2 {
		t.Errorf("%d copy engines: expected 1 or 2", g.CopyEngines)
	}
	if err := measureIssue(ctx, g, info, 2); err != nil {
		t.Fatal(err)
	}
	t.Logf("issue: %.1f µs an invocation, %.1f µs a host copy", g.IssueNs/1e3, g.CopyIssueNs/1e3)
	if g.IssueNs+g.CopyIssueNs <= 0 {
		t.Errorf("issue costs %g and %g ns: expected the runtime's device manager to take some time", g.IssueNs, g.CopyIssueNs)
	}
	r := &Result{Host: &Host{Workers: 1, CPUModel: "test"}, GPUs: []*GPU{g}}
	m, err := machine.Parse("with-gpu.yaml", r.YAML())
	if err != nil {
		t.Fatalf("the model written does not parse: %v\n%s", err, r.YAML())
	}
	name := strings.ReplaceAll(info.ID, ":", "")
	gpu := m.Resolve(info.ID)
	if gpu == nil || gpu.Name != name || gpu.Kind != "gpu" || gpu.FiringCost <= 0 {
		t.Fatalf("processor for %s: %+v: expected a gpu processor %s whose firing cost is the launch time", info.ID, gpu, name)
	}
	if gpu.IssueCost != int64(math.Round(g.IssueNs)) || gpu.CopyIssueCost != int64(math.Round(g.CopyIssueNs)) {
		t.Errorf("processor %s: issue costs %d and %d cycles: expected the measured %.0f and %.0f ns", name, gpu.IssueCost, gpu.CopyIssueCost, g.IssueNs, g.CopyIssueNs)
	}
	if _, err := m.Route("cpu", name); err != nil {
		t.Errorf("no route from cpu to %s: %v", name, err)
	}
	if m.Calibration[name+"_name"] != info.Name || m.Calibration[name+"_h2d_pinned_gb_s"] == "" {
		t.Errorf("calibration record %v: expected %s's name and copy figures", m.Calibration, name)
	}
}

// TestCache: the model saved at CachePath is what Cached returns, and
// ForHost returns it without measuring again.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	t.Setenv("HOME", dir)
	if _, _, err := Cached(); !os.IsNotExist(err) {
		t.Fatalf("Cached in an empty cache: %v, want a not-exist error", err)
	}
	r := &Result{Host: &Host{Hostname: "h", CPUModel: "test", Workers: 3, WakeNs: 1000, FiringNs: 5, PortNs: 10}}
	path, err := CachePath()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, dir) || filepath.Ext(path) != ".yaml" {
		t.Errorf("cache path %s: expected a .yaml file under %s", path, dir)
	}
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	m, got, err := ForHost(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != path || m.Processor("cpu").Units != 3 || m.Processor("cpu").WakeLatency != 1000 {
		t.Errorf("ForHost returned %s with cpu %+v: expected the cached model of 3 units at %s", got, m.Processor("cpu"), path)
	}
	// A model cached by a build whose runtime had other scheduling
	// constants comes back with this build's.
	old := strings.Replace(string(r.YAML()), fmt.Sprintf("time_slice: %d, round_time: %d", timeSliceNs, roundTimeNs), "time_slice: 50000", 1)
	if old == string(r.YAML()) {
		t.Fatalf("the model has no time_slice and round_time to replace:\n%s", r.YAML())
	}
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, _, err = Cached(); err != nil {
		t.Fatal(err)
	}
	if cpu := m.Processor("cpu"); cpu.TimeSlice != timeSliceNs || cpu.RoundTime != roundTimeNs || cpu.SpinTime != spinTimeNs {
		t.Errorf("cached model of an older build: time slice %d, round time %d, spin time %d: expected this build's %d, %d, %d",
			cpu.TimeSlice, cpu.RoundTime, cpu.SpinTime, timeSliceNs, roundTimeNs, spinTimeNs)
	}
}

// TestModelTwoGPUs: a calibration with two GPUs gives a processor per GPU
// named by its device ID, which machine.Resolve finds from the ID, each
// joined to the host by a link of its copy figures, and a route between
// the GPUs through the host; a GPU that reports its SMs and resident
// threads per SM gets threads (their product).
func TestModelTwoGPUs(t *testing.T) {
	gpu := func(id string, engines int) *GPU {
		return &GPU{ID: id, Name: "test GPU", LaunchNs: 5000, LaunchGapNs: 2000, H2DPinnedNs: 8000,
			H2DPinnedBW: 25e9, D2HPinnedBW: 26e9, CopyEngines: engines}
	}
	r := &Result{Host: &Host{Workers: 16, CPUModel: "test"}, GPUs: []*GPU{gpu("cuda:0", 2), gpu("cuda:1", 1)}}
	r.GPUs[0].ComputeUnits, r.GPUs[0].ThreadsPerUnit = 132, 2048 // cuda:1 does not tell (OpenCL)
	m, err := machine.Parse("two.yaml", r.YAML())
	if err != nil {
		t.Fatalf("%v\n%s", err, r.YAML())
	}
	if p0, p1 := m.Resolve("cuda:0"), m.Resolve("cuda:1"); p0.Threads != 132*2048 || p1.Threads != 0 ||
		m.Calibration["cuda0_sms"] != "132" || m.Calibration["cuda0_threads_per_sm"] != "2048" || m.Calibration["cuda1_sms"] != "" {
		t.Errorf("threads %d and %d, calibration %v: expected 132 × 2048 resident threads on cuda0 and none known on cuda1", p0.Threads, p1.Threads, m.Calibration)
	}
	for id, name := range map[string]string{"cuda:0": "cuda0", "cuda:1": "cuda1", "cuda": "cuda0"} {
		if p := m.Resolve(id); p == nil || p.Name != name || p.FiringCost != 2000 {
			t.Errorf("Resolve(%q) = %+v, want %s with firing cost 2000", id, p, name)
		}
	}
	ic := m.Interconnect("pcie-cuda0")
	if ic == nil || ic.StartLatency != 8000 || ic.Bandwidth != 25 || ic.Channels != 2 || !ic.IsDuplex("cuda0") {
		t.Errorf("pcie-cuda0 %+v: expected latency 8000 ns, 25 B/ns, 2 duplex channels", ic)
	}
	if ic := m.Interconnect("pcie-cuda1"); ic == nil || ic.Channels != 1 || ic.IsDuplex("cuda1") {
		t.Errorf("pcie-cuda1 %+v: expected one channel, not duplex", ic)
	}
	hops, err := m.Route("cuda0", "cuda1")
	if err != nil || len(hops) != 2 {
		t.Errorf("route cuda0 → cuda1: %v hops, %v: expected two hops through cpu", len(hops), err)
	}
}

// TestSameGPUs: a GPU seen through CUDA and through an OpenCL platform
// (same PCI address) is measured once, the other ID an alias of it, which
// the model resolves to the one processor; a GPU asked for by ID is kept.
func TestSameGPUs(t *testing.T) {
	infos := []device.Info{
		{ID: "cpu", Kind: device.CPU},
		{ID: "cuda:0", Kind: device.GPU, PCIBus: "0000:1b:00"},
		{ID: "cuda:1", Kind: device.GPU, PCIBus: "0000:3d:00"},
		{ID: "opencl:0:0", Kind: device.CPU},
		{ID: "opencl:1:0", Kind: device.GPU, PCIBus: "0000:1b:00"},
		{ID: "opencl:1:1", Kind: device.GPU, PCIBus: "0000:3d:00"},
		{ID: "opencl:2:0", Kind: device.GPU}, // no address: kept
	}
	kept, aliases := sameGPUs(infos, nil)
	var ids []string
	for _, in := range kept {
		ids = append(ids, in.ID)
	}
	if want := []string{"cpu", "cuda:0", "cuda:1", "opencl:0:0", "opencl:2:0"}; !slices.Equal(ids, want) {
		t.Errorf("kept %v: expected %v", ids, want)
	}
	if len(aliases) != 2 || aliases["opencl:1:0"] != "cuda:0" || aliases["opencl:1:1"] != "cuda:1" {
		t.Errorf("aliases %v: expected opencl:1:0 → cuda:0, opencl:1:1 → cuda:1", aliases)
	}
	if kept, aliases = sameGPUs(infos, []string{"opencl:1:0"}); len(aliases) != 1 || len(kept) != 6 {
		t.Errorf("asked for opencl:1:0: kept %d, aliases %v: expected it kept", len(kept), aliases)
	}
	r := &Result{Host: &Host{Workers: 2}, GPUs: []*GPU{{ID: "cuda:0", Name: "gpu", CopyEngines: 1}, {ID: "cuda:1", Name: "gpu", CopyEngines: 1}},
		Aliases: map[string]string{"opencl:1:0": "cuda:0", "opencl:1:1": "cuda:1"}}
	m, err := machine.Parse("m.yaml", r.YAML())
	if err != nil {
		t.Fatalf("model: %v\n%s", err, r.YAML())
	}
	for id, want := range map[string]string{"opencl:1:0": "cuda0", "opencl:1:1": "cuda1", "cuda:1": "cuda1"} {
		if p := m.Resolve(id); p == nil || p.Name != want {
			t.Errorf("Resolve(%s) = %v: expected processor %s", id, p, want)
		}
	}
}

// TestPoolUnits checks the pool's units: the effective parallelism
// rounded, at least 1 and at most the workers; the workers when the
// parallelism is unknown.
func TestPoolUnits(t *testing.T) {
	for _, c := range []struct {
		workers int
		p       float64
		want    int
	}{{16, 13.32, 13}, {16, 15.6, 16}, {16, 16, 16}, {2, 1.99, 2}, {2, 1.4, 1}, {2, 0.3, 1}, {4, 0, 4}, {0, 0, 1}, {8, 9, 8}} {
		if got := PoolUnits(c.workers, c.p); got != c.want {
			t.Errorf("PoolUnits(%d, %g) = %d: expected %d", c.workers, c.p, got, c.want)
		}
	}
}
