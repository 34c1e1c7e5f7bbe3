package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sluicehq/sluice/device"
)

// GPU is what the microbenchmarks measured on one GPU. Times are in
// nanoseconds, bandwidths in bytes/s.
type GPU struct {
	// ID and Name identify the device ("cuda:0", the driver's name).
	ID   string `json:"id"`
	Name string `json:"name"`
	// LaunchNs is the round trip of one empty kernel (launch, then wait for
	// its event), median; LaunchGapNs the time per launch of 1000 empty
	// kernels enqueued back to back on one queue.
	LaunchNs    float64 `json:"launch_ns"`
	LaunchGapNs float64 `json:"launch_gap_ns"`
	// Copy latencies of 4 bytes (enqueue to completion, median) and
	// bandwidths of 64 MiB (best of 3), host to device (H2D) and device to
	// host (D2H), from pinned and from pageable host memory.
	H2DPinnedNs, D2HPinnedNs     float64 `json:"-"`
	H2DPageableNs, D2HPageableNs float64 `json:"-"`
	H2DPinnedBW, D2HPinnedBW     float64 `json:"-"`
	H2DPageableBW, D2HPageableBW float64 `json:"-"`
	// CopyEngines is 2 when a host-to-device and a device-to-host copy on
	// two queues overlap (they take less than 0.75 of their sum), else 1.
	CopyEngines int `json:"copy_engines"`
	// Overlap is the concurrent copies' time over the sum of their times
	// alone.
	Overlap float64 `json:"overlap"`
	// ComputeUnits (SMs) and ThreadsPerUnit (resident threads per SM) are
	// what the device reports (device.Info), 0 when unknown: their product
	// is the threads the GPU runs at once (machine.Processor.Threads).
	ComputeUnits   int `json:"compute_units,omitempty"`
	ThreadsPerUnit int `json:"threads_per_unit,omitempty"`
	// IssueNs and CopyIssueNs are what one kernel invocation and one copy
	// between host and device cost the runtime's device manager, the one
	// thread that issues the device's work (measureIssue), 0 when not
	// measured.
	IssueNs     float64 `json:"issue_ns,omitempty"`
	CopyIssueNs float64 `json:"copy_issue_ns,omitempty"`
}

// Threads is the number of threads the GPU keeps resident at once
// (ComputeUnits × ThreadsPerUnit), 0 when either is unknown.
func (g *GPU) Threads() int64 {
	if g.ComputeUnits <= 0 || g.ThreadsPerUnit <= 0 {
		return 0
	}
	return int64(g.ComputeUnits) * int64(g.ThreadsPerUnit)
}

// pollWait waits for ev by polling its status back to back (ctx checked
// between polls): the completion is seen within one poll of when it
// happens.
func pollWait(ctx context.Context, ev device.Event) error {
	for {
		s, err := ev.Status()
		if err != nil || s == device.Complete {
			return err
		}
		if s == device.Failed {
			return fmt.Errorf("calibrate: the device reports the timed command failed, without an error")
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// emptyKernel is a kernel that does nothing, per backend.
func emptyKernel(backend string) (device.Source, error) {
	switch backend {
	case "cuda":
		return device.Source{Name: "calibrate.cu", Text: "extern \"C\" __global__ void empty() {}\n"}, nil
	case "opencl":
		return device.Source{Name: "calibrate.cl", Text: "__kernel void empty() {}\n"}, nil
	}
	return device.Source{}, fmt.Errorf("calibrate: backend %q: expected cuda or opencl", backend)
}

// measureGPU runs the GPU microbenchmarks on the device info describes.
func measureGPU(ctx context.Context, info device.Info, logf func(string, ...any)) (g *GPU, err error) {
	g = &GPU{ID: info.ID, Name: info.Name, ComputeUnits: info.ComputeUnits, ThreadsPerUnit: info.MaxThreadsPerComputeUnit}
	d, err := device.Open(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	q1, err := d.NewQueue()
	if err != nil {
		return nil, err
	}
	defer q1.Release()
	q2, err := d.NewQueue()
	if err != nil {
		return nil, err
	}
	defer q2.Release()
	pr := &gpuProbe{ctx: ctx, info: info, d: d, q1: q1, q2: q2}
	if err := pr.copies(g); err != nil {
		return nil, fmt.Errorf("calibrate: %s: copies: %w", info.ID, err)
	}
	if err := pr.launches(g); err != nil {
		return nil, fmt.Errorf("calibrate: %s: launches: %w", info.ID, err)
	}
	logf("%s (%s): launch %.1f µs (%.1f µs back to back); H2D %.1f µs / %.1f GB/s pinned, %.1f µs / %.1f GB/s pageable; D2H %.1f µs / %.1f GB/s pinned, %.1f µs / %.1f GB/s pageable; %d copy engine(s) (overlap %.2f)",
		g.ID, g.Name, g.LaunchNs/1e3, g.LaunchGapNs/1e3, g.H2DPinnedNs/1e3, g.H2DPinnedBW/1e9, g.H2DPageableNs/1e3, g.H2DPageableBW/1e9,
		g.D2HPinnedNs/1e3, g.D2HPinnedBW/1e9, g.D2HPageableNs/1e3, g.D2HPageableBW/1e9, g.CopyEngines, g.Overlap)
	return g, nil
}

// gpuProbe is one device open for measuring, with two queues.
type gpuProbe struct {
	ctx    context.Context
	info   device.Info
	d      device.Device
	q1, q2 device.Queue
}

// exactWait waits for ev. On a GPU it polls the event without pausing, as
// the runtime's device manager polls its invocations (Wait's polling backs
// off to 1 ms, which made a 64 MiB copy look up to 50 % slower and a
// launch's round trip µs longer). On a CPU device (PoCL) polling would
// take a core from the device's own threads: Wait blocks instead.
func (pr *gpuProbe) exactWait(ev device.Event) error {
	if pr.info.Kind == device.GPU {
		return pollWait(pr.ctx, ev)
	}
	if err := pr.ctx.Err(); err != nil {
		return err
	}
	return ev.Wait(context.WithoutCancel(pr.ctx))
}

// wait waits for the command an enqueue returned and releases its event.
func (pr *gpuProbe) wait(ev device.Event, err error) error {
	if err != nil {
		return err
	}
	defer ev.Release()
	return pr.exactWait(ev)
}

// latency is the median of 45 runs of f (after 5 not counted), in ns.
func latency(f func() error) (float64, error) {
	var v []float64
	for range 50 {
		t := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		v = append(v, float64(time.Since(t).Nanoseconds()))
	}
	return median(v[5:]), nil
}

// copies measures the copy latencies (4 bytes) and bandwidths (64 MiB, or
// half the largest allocation, best of 3) each way, from pinned and from
// pageable memory, and whether two copies in opposite directions overlap.
func (pr *gpuProbe) copies(g *GPU) error {
	size := int64(64 << 20)
	if pr.info.MaxAlloc > 0 {
		size = min(size, pr.info.MaxAlloc/2)
	}
	var bufs [2]device.Buffer
	var pins [2]device.HostBuffer
	for i := range 2 {
		b, err := pr.d.Alloc(size, device.ReadWrite)
		if err != nil {
			return err
		}
		defer b.Release()
		p, err := pr.d.AllocHost(size)
		if err != nil {
			return err
		}
		defer p.Release()
		bufs[i], pins[i] = b, p
	}
	page := make([]byte, size)
	pb := pins[0].Bytes()[:size]
	h2d := func(src []byte) func() error {
		return func() error { return pr.wait(pr.q1.Write(bufs[0], 0, src)) }
	}
	d2h := func(dst []byte) func() error {
		return func() error { return pr.wait(pr.q1.Read(dst, bufs[0], 0)) }
	}
	bw := func(f func() error) (float64, error) {
		best := time.Duration(math.MaxInt64)
		for range 3 {
			t := time.Now()
			if err := f(); err != nil {
				return 0, err
			}
			best = min(best, time.Since(t))
		}
		return float64(size) / best.Seconds(), nil
	}
	for _, m := range []struct {
		dst *float64
		f   func() (float64, error)
	}{
		{&g.H2DPinnedNs, func() (float64, error) { return latency(h2d(pb[:4])) }},
		{&g.D2HPinnedNs, func() (float64, error) { return latency(d2h(pb[:4])) }},
		{&g.H2DPageableNs, func() (float64, error) { return latency(h2d(page[:4])) }},
		{&g.D2HPageableNs, func() (float64, error) { return latency(d2h(page[:4])) }},
		{&g.H2DPinnedBW, func() (float64, error) { return bw(h2d(pb)) }},
		{&g.D2HPinnedBW, func() (float64, error) { return bw(d2h(pb)) }},
		{&g.H2DPageableBW, func() (float64, error) { return bw(h2d(page)) }},
		{&g.D2HPageableBW, func() (float64, error) { return bw(d2h(page)) }},
	} {
		var err error
		if *m.dst, err = m.f(); err != nil {
			return err
		}
	}
	return pr.overlap(g, size, bufs, pb, pins[1].Bytes()[:size])
}

// overlap sets the copy engines: a host-to-device copy on one queue and a
// device-to-host copy on another, at once, against their times alone (2
// engines below 0.75 of the sum).
func (pr *gpuProbe) overlap(g *GPU, size int64, bufs [2]device.Buffer, src, dst []byte) error {
	alone := float64(size)/g.H2DPinnedBW + float64(size)/g.D2HPinnedBW
	best := math.Inf(1)
	for range 3 {
		t := time.Now()
		e1, err := pr.q1.Write(bufs[0], 0, src)
		if err != nil {
			return err
		}
		e2, err := pr.q2.Read(dst, bufs[1], 0)
		if err != nil {
			e1.Release()
			return err
		}
		err = errors.Join(pr.exactWait(e1), pr.exactWait(e2))
		e1.Release()
		e2.Release()
		if err != nil {
			return err
		}
		best = min(best, time.Since(t).Seconds())
	}
	g.Overlap = best / alone
	g.CopyEngines = 1
	if g.Overlap < 0.75 {
		g.CopyEngines = 2
	}
	return nil
}

// launches measures an empty kernel's launch-and-wait round trip and the
// time per launch of 1000 enqueued back to back.
func (pr *gpuProbe) launches(g *GPU) error {
	src, err := emptyKernel(pr.info.Backend)
	if err != nil {
		return err
	}
	prog, err := pr.d.Build(pr.ctx, src, "")
	if err != nil {
		return err
	}
	defer prog.Release()
	k, err := prog.Kernel("empty")
	if err != nil {
		return err
	}
	defer k.Release()
	r := device.Groups(1, 1)
	if g.LaunchNs, err = latency(func() error { return pr.wait(pr.q1.Launch(k, r)) }); err != nil {
		return err
	}
	const burst = 1000
	t := time.Now()
	for range burst {
		ev, err := pr.q1.Launch(k, r)
		if err != nil {
			return err
		}
		ev.Release()
	}
	if err := pr.q1.Finish(); err != nil {
		return err
	}
	g.LaunchGapNs = float64(time.Since(t).Nanoseconds()) / burst
	return nil
}
