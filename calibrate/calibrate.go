// Package calibrate measures this host and its GPUs with microbenchmarks
// and writes the machine model (`kind: machine`, package machine) that the
// simulator and the mapper read: the CPU runtime's pool as one pool
// processor (its units, per-firing, per-round and per-port costs, its own
// wake-up latency and what a wake-up costs the waker, spin time and time
// slice), the host's memory bandwidth, and
// per GPU its kernel launch cost and its copy link (latency, bandwidth,
// copy engines). Results are cached per machine under the user's cache
// directory and reused (like StarPU's calibration): Cached finds the model
// for this host, ForHost measures it when there is none.
//
// It uses the runtime, the fifo and the device packages and is used by the
// command line (`sluice calibrate`), never the other way round.
package calibrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/machine"
)

// Options adjust a calibration.
type Options struct {
	// Workers is the CPU pool size the model is for (0: GOMAXPROCS, the
	// runtime's default).
	Workers int
	// NoGPU skips the GPUs.
	NoGPU bool
	// Devices, when set, names the devices to measure as accelerators
	// (IDs such as "cuda:1" or "opencl:0:0", whatever their kind) instead
	// of every GPU found.
	Devices []string
	// Log receives one line per measurement (nil: none).
	Log func(format string, args ...any)
}

// Result is a calibration: what was measured and when.
type Result struct {
	Host *Host
	GPUs []*GPU
	// Skipped says why GPUs were not measured (none found, or errors).
	Skipped []string
	// Aliases maps a GPU's other device IDs to the one measured (the
	// same GPU through another backend: opencl:1:0 → cuda:0).
	Aliases map[string]string
	// Links are the workers of a broker tree measured by Cluster (none
	// without it).
	Links []*Link
	// At is when the calibration ran; Took how long it took.
	At   time.Time
	Took time.Duration
}

// The runtime's scheduling constants the model repeats (runtime/sched.go
// spinTime, runtime/unit.go sliceNs and roundTargetNs).
const (
	spinTimeNs  = 30_000
	timeSliceNs = 1_000_000
	roundTimeNs = 200_000
)

// Run measures the host and, unless opt.NoGPU, every GPU the registered
// device backends find (import package device/all, or the backends, for
// them to be found).
func Run(ctx context.Context, opt Options) (*Result, error) {
	logf := opt.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = goruntime.GOMAXPROCS(0)
	}
	r := &Result{At: time.Now().UTC()}
	h, err := measureHost(ctx, workers, logf)
	if err != nil {
		return nil, err
	}
	r.Host = h
	if !opt.NoGPU {
		infos, aliases := sameGPUs(device.Devices(ctx), opt.Devices)
		for id, of := range aliases {
			r.Aliases = setAlias(r.Aliases, id, of)
			logf("%s: the GPU of %s (same PCI address), measured as %s", id, of, of)
		}
		for _, info := range infos {
			if len(opt.Devices) > 0 && !slices.Contains(opt.Devices, info.ID) || len(opt.Devices) == 0 && info.Kind != device.GPU {
				continue
			}
			g, err := measureGPU(ctx, info, logf)
			if err != nil {
				r.Skipped = append(r.Skipped, fmt.Sprintf("%s: %v", info.ID, err))
				logf("%s: skipped: %v", info.ID, err)
				continue
			}
			if err := measureIssue(ctx, g, info, workers); err != nil {
				r.Skipped = append(r.Skipped, fmt.Sprintf("%s: issue costs: %v", info.ID, err))
				logf("%s: issue costs not measured: %v", info.ID, err)
			} else {
				logf("%s: the runtime's device manager issues an invocation in %.1f µs and a host copy in %.1f µs", info.ID, g.IssueNs/1e3, g.CopyIssueNs/1e3)
			}
			r.GPUs = append(r.GPUs, g)
		}
	}
	r.Took = time.Since(r.At)
	return r, nil
}

// Model turns a calibration into a machine model: processor "cpu" (a pool
// of Workers units, clock 1 GHz so that a cycle is a nanosecond) and
// memory "ram" on bus "membus"; per GPU a processor named by its device ID
// without colons ("cuda0" for cuda:0, which machine.Resolve finds from the
// ID; kind gpu, its firing cost the back-to-back launch time) joined to
// "cpu" by "pcie-cuda0"
// (start latency: the pinned host-to-device copy latency; bandwidth: the
// pinned host-to-device bandwidth; one channel per copy engine). The
// calibration record keeps every figure measured.
//
// The pool's firing cost is the runtime's whole cost per firing (outside
// and inside the timed region), so that declared costs are charged what a
// firing really takes; a profile's mean already holds the inside part
// (Calibration "empty_firing_ns"), which a prediction from a profile thus
// counts twice — tens of nanoseconds per firing.
//
// The pool's wake latency is the pool's own wake-up of a parked worker,
// and its wake cost what that costs the worker that commits (PoolWake;
// with one worker the latency is a bare goroutine's, WakeLatency, and the
// cost 0).
//
// The pool's units are the workers' effective parallelism, rounded
// (PoolUnits): a pool whose every worker is busy gets that many cores'
// worth of work done, not one per worker, on a host whose cores are
// partly taken by other jobs, the device driver's threads or SMT siblings.
func (r *Result) Model() *machine.Machine {
	h := r.Host
	ns := func(v float64) int64 { return int64(math.Round(v)) }
	half := ns(h.PortNs / 2)
	cpu := &machine.Processor{Name: "cpu", Kind: "cpu", ClockHz: 1e9, Units: PoolUnits(h.Workers, h.Parallelism), HasIO: true,
		AddressSpace: []machine.AddressRange{{Memory: "ram"}},
		PushAcq:      half, PushSend: machine.Staircase{Fixed: ns(h.PortNs) - half},
		PopAcq: machine.Staircase{Fixed: half}, PopDisc: ns(h.PortNs) - half,
		WakeLatency: ns(h.PoolWake()), WakeCost: ns(h.WakeCostNs), Pool: true, FiringCost: ns(h.FiringNs + h.EmptyFiringNs), RoundCost: ns(h.RoundNs),
		SpinTime: spinTimeNs, TimeSlice: timeSliceNs, RoundTime: roundTimeNs}
	m := &machine.Machine{Name: modelName(h.Hostname), Processors: []*machine.Processor{cpu},
		Memories: []*machine.Memory{{Name: "ram", ClockHz: 1e9, Bandwidth: max(1, ns(h.MemBandwidth/1e9))}},
		Interconnects: []*machine.Interconnect{{Name: "membus", ClockHz: 1e9, Elements: []string{"cpu", "ram"},
			Channels: 1, Multiplexable: true}}}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	c := map[string]string{
		"key": Key(), "at": r.At.Format(time.RFC3339), "took_s": f(r.Took.Seconds()),
		"hostname": h.Hostname, "cpu_model": h.CPUModel, "num_cpu": strconv.Itoa(h.NumCPU), "workers": strconv.Itoa(h.Workers),
		"parallelism": f(h.Parallelism), "availability": f(h.Availability), "firing_ns": f(h.FiringNs), "empty_firing_ns": f(h.EmptyFiringNs),
		"round_ns": f(h.RoundNs), "port_ns": f(h.PortNs), "wake_ns": f(h.WakeNs), "fifo_handoff_ns": f(h.HandoffNs),
		"pool_wake_ns": f(h.PoolWakeNs), "wake_cost_ns": f(h.WakeCostNs),
		"mem_bandwidth_gb_s": f(h.MemBandwidth / 1e9),
		"clock_ns":           f(h.ClockNs), "burn_extra_ns": f(h.BurnExtraNs), "burn_stretch": f(h.BurnStretch), "go": goruntime.Version(),
	}
	for i, s := range r.Skipped {
		c[fmt.Sprintf("skipped_%d", i)] = s
	}
	for _, g := range r.GPUs {
		name := strings.ReplaceAll(g.ID, ":", "")
		m.Processors = append(m.Processors, &machine.Processor{Name: name, Kind: "gpu", ClockHz: 1e9, Units: 1,
			FiringCost: ns(g.LaunchGapNs), Threads: g.Threads(), IssueCost: ns(g.IssueNs), CopyIssueCost: ns(g.CopyIssueNs)})
		m.Interconnects = append(m.Interconnects, &machine.Interconnect{Name: "pcie-" + name, ClockHz: 1e9,
			Elements: []string{"cpu", name}, StartLatency: ns(g.H2DPinnedNs), Bandwidth: max(1, ns(g.H2DPinnedBW/1e9)),
			Channels: g.CopyEngines, Multiplexable: true, Duplex: map[string]bool{"cpu": g.CopyEngines > 1, name: g.CopyEngines > 1},
			// Copies between two GPUs go through the host (staged).
			Routing: map[string]machine.Routing{"cpu": machine.StoreAndForward, name: machine.NoRouting}})
		p := name + "_"
		c[p+"name"], c[p+"id"] = g.Name, g.ID
		c[p+"launch_ns"], c[p+"launch_gap_ns"] = f(g.LaunchNs), f(g.LaunchGapNs)
		c[p+"h2d_pinned_ns"], c[p+"d2h_pinned_ns"] = f(g.H2DPinnedNs), f(g.D2HPinnedNs)
		c[p+"h2d_pageable_ns"], c[p+"d2h_pageable_ns"] = f(g.H2DPageableNs), f(g.D2HPageableNs)
		c[p+"h2d_pinned_gb_s"], c[p+"d2h_pinned_gb_s"] = f(g.H2DPinnedBW/1e9), f(g.D2HPinnedBW/1e9)
		c[p+"h2d_pageable_gb_s"], c[p+"d2h_pageable_gb_s"] = f(g.H2DPageableBW/1e9), f(g.D2HPageableBW/1e9)
		c[p+"copy_engines"], c[p+"copy_overlap"] = strconv.Itoa(g.CopyEngines), f(g.Overlap)
		if g.IssueNs > 0 || g.CopyIssueNs > 0 {
			c[p+"issue_ns"], c[p+"copy_issue_ns"] = f(g.IssueNs), f(g.CopyIssueNs)
		}
		if g.Threads() > 0 {
			c[p+"sms"], c[p+"threads_per_sm"] = strconv.Itoa(g.ComputeUnits), strconv.Itoa(g.ThreadsPerUnit)
		}
	}
	for id, of := range r.Aliases {
		if m.Processor(strings.ReplaceAll(of, ":", "")) != nil {
			m.Aliases = setAlias(m.Aliases, id, strings.ReplaceAll(of, ":", ""))
		}
	}
	addLinks(m, r.Links, c)
	m.Calibration = c
	return m
}

// YAML is the model as a machine file, with a header that says what it
// is.
func (r *Result) YAML() []byte {
	return machine.Format(r.Model(),
		"Machine model of this host, measured by `sluice calibrate` (docs/simulate.md).",
		"One processor \"cpu\" is the CPU runtime's pool (pool: true; clock 1 GHz, so costs are ns);",
		"each GPU is a processor named by its device ID without colons (cuda0), joined to cpu by pcie-cuda0.",
		"Workers measured with --broker are processors named after them, joined to cpu by credit links net-NAME.",
		"aliases: a GPU's other device IDs (the same GPU through another backend), resolved to its processor.",
		"The calibration section keeps the raw figures.")
}

// Key identifies this machine for the cache: host name, CPU model, the
// CPUs this process may use and GOMAXPROCS, and the GPUs' names (without
// opening them). Two hosts of the same make share nothing: the host name
// is part of the key.
func Key() string {
	host, _ := os.Hostname()
	parts := []string{host, CPUModel(), strconv.Itoa(goruntime.NumCPU()), strconv.Itoa(goruntime.GOMAXPROCS(0))}
	for _, d := range device.Devices(context.Background()) {
		if d.Kind == device.GPU {
			parts = append(parts, d.ID+"="+d.Name)
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return sanitize(host) + "-" + hex.EncodeToString(sum[:6])
}

// CachePath is where this machine's model is cached:
// os.UserCacheDir()/sluice/machines/KEY.yaml.
func CachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("calibrate: no cache directory: %w", err)
	}
	return filepath.Join(dir, "sluice", "machines", Key()+".yaml"), nil
}

// Save writes the model to path (creating its directory).
func (r *Result) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, r.YAML(), 0o644)
}

// Cached returns this machine's cached model and its path, or
// os.ErrNotExist (wrapped) when it was never calibrated. The workbench
// and the command line call it to predict with the calibrated model when
// one exists. The pool's scheduling constants (spin time, time slice,
// round time) are this build's runtime's, whatever build cached the
// model: they are not measured.
func Cached() (*machine.Machine, string, error) {
	path, err := CachePath()
	if err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, path, err
	}
	m, err := machine.Load(path)
	if err != nil {
		return nil, path, err
	}
	for _, p := range m.Processors {
		if p.Pool {
			p.SpinTime, p.TimeSlice, p.RoundTime = spinTimeNs, timeSliceNs, roundTimeNs
		}
	}
	return m, path, nil
}

// ForHost returns this machine's cached model, calibrating it (and caching
// the result) when there is none.
func ForHost(ctx context.Context, opt Options) (*machine.Machine, string, error) {
	m, path, err := Cached()
	if err == nil {
		return m, path, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, path, err
	}
	r, err := Run(ctx, opt)
	if err != nil {
		return nil, "", err
	}
	if path != "" {
		if err := r.Save(path); err != nil {
			return nil, "", err
		}
	}
	return r.Model(), path, nil
}

// ModelName is the name of this host's calibrated model
// ("calibrated-HOST"): a mapping made for it names it, so that a run on
// another machine can tell.
func ModelName() string {
	host, _ := os.Hostname()
	return modelName(host)
}

func modelName(host string) string { return "calibrated-" + sanitize(host) }

// sanitize keeps letters, digits, '-' and '_' of s (others become '-').
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "host"
	}
	return string(b)
}

// sameGPUs drops from infos the GPUs that another backend already shows
// (the same PCI address: an NVIDIA GPU is cuda:N and also an OpenCL device
// of NVIDIA's platform), keeping the first one listed (CUDA is discovered
// before OpenCL), unless asked for by ID in want; it returns the devices
// kept and, by the IDs dropped, the ID kept for each.
func sameGPUs(infos []device.Info, want []string) ([]device.Info, map[string]string) {
	first := map[string]string{} // PCI address → the ID kept
	var kept []device.Info
	aliases := map[string]string{}
	for _, in := range infos {
		if in.Kind == device.GPU && in.PCIBus != "" && !slices.Contains(want, in.ID) {
			if of, dup := first[in.PCIBus]; dup {
				aliases[in.ID] = of
				continue
			}
			first[in.PCIBus] = in.ID
		}
		kept = append(kept, in)
	}
	return kept, aliases
}

func setAlias(m map[string]string, id, of string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[id] = of
	return m
}

// PoolUnits is the units of the model's pool processor for workers
// workers of measured effective parallelism p (Parallelism): p rounded,
// between 1 and workers; workers when p is unknown (≤ 0). Saturated, the
// runtime's workers get p cores' worth of work done: the CUDA image
// pipeline with 32 replicas on 16 workers (p 13.3) ran at 402k frames/s,
// which a model of 16 units predicted at 549k from the run's own profile
// and one of 13 at 445k; graphs that keep fewer cores busy than p
// predict the same either way.
func PoolUnits(workers int, p float64) int {
	workers = max(1, workers)
	if p <= 0 {
		return workers
	}
	return min(workers, max(1, int(math.Round(p))))
}
