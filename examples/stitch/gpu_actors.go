package stitch

import (
	"fmt"

	"github.com/sluicehq/sluice/runtime"
)

// The actors of stitch-gpu.yaml: PCIAM on the first CUDA GPU (gpu.go),
// the tiles' transforms and the tiles themselves kept there under u64
// handles, so the channels between the FFT and the aligners carry one
// token a tile instead of an 8-byte-a-pixel transform and a tile:
//
//   - stitch.gpu.fft: tile i up to the GPU, its phase spectrum there; the
//     handle out on every output (the graph delays the copies). A handle
//     is read by west and north firing i, west firing i+1 and north
//     firing i+Cols (those that exist), and the last of them frees it.
//     Stateless.
//   - stitch.gpu.west, stitch.gpu.north: inputs (handle B, handle A), B
//     the current tile and A its neighbour; the pair aligned on the GPU
//     (GPU.Align), a [4]f64 translation out as stitch.west's. Stateless.
func init() {
	runtime.RegisterFunc("stitch.gpu.fft", runtime.FireFunc(fireGPUFFT))
	runtime.RegisterFunc("stitch.gpu.west", runtime.FireFunc(func(f *runtime.Firing) error { return fireGPUAlign(f, false) }))
	runtime.RegisterFunc("stitch.gpu.north", runtime.FireFunc(func(f *runtime.Firing) error { return fireGPUAlign(f, true) }))
}

// gpuReads is how many aligner firings read tile i's handle: west and
// north i, west i+1 and north i+Cols where they exist.
func gpuReads(c Config, i int) int {
	n := 2
	if i+1 < c.Tiles() {
		n++
	}
	if i+c.Cols < c.Tiles() {
		n++
	}
	return n
}

func fireGPUFFT(f *runtime.Firing) error {
	c, err := ActorConfig(f.Actor())
	if err != nil {
		return err
	}
	e, err := GPUFor(c.Width, c.Height)
	if err != nil {
		return fmt.Errorf("actor %s: %w", f.Actor().Name, err)
	}
	var t *GPUTimes
	if f.Tracing() {
		t = &GPUTimes{}
	}
	tile := runtime.Input[uint16](f, 0)
	h, err := e.UploadTimed(tile, gpuReads(c, int(f.Index())), t)
	if err != nil {
		return fmt.Errorf("actor %s: firing %d: %w", f.Actor().Name, f.Index(), err)
	}
	traceGPU(f, t, true, int64(c.Width*c.Height*2))
	for o := 0; o < f.NumOut(); o++ {
		runtime.Output[uint64](f, o)[0] = h
	}
	return nil
}

func fireGPUAlign(f *runtime.Firing, north bool) error {
	c, err := ActorConfig(f.Actor())
	if err != nil {
		return err
	}
	e, err := GPUFor(c.Width, c.Height)
	if err != nil {
		return fmt.Errorf("actor %s: %w", f.Actor().Name, err)
	}
	hb, ha := runtime.Input[uint64](f, 0)[0], runtime.Input[uint64](f, 1)[0]
	defer e.Release(ha)
	defer e.Release(hb)
	i := int(f.Index())
	var t Translation
	if (north && i >= c.Cols) || (!north && i%c.Cols > 0) {
		if ha == 0 || hb == 0 {
			return fmt.Errorf("actor %s: firing %d: handles %d and %d: expected both tiles of the pair on the GPU", f.Actor().Name, i, hb, ha)
		}
		var gt *GPUTimes
		if f.Tracing() {
			gt = &GPUTimes{}
		}
		if t, err = e.AlignTimed(ha, hb, c.Peaks, gt); err != nil {
			return fmt.Errorf("actor %s: firing %d: %w", f.Actor().Name, i, err)
		}
		traceGPU(f, gt, false, e.ResultBytes())
	}
	t.Encode(&runtime.Output[[4]float64](f, 0)[0])
	return nil
}

// traceGPU shows a firing's GPU work in a traced run: its kernels on the
// lane "device cuda:0", its copy on the link's lane (toDevice: the tile
// up; else the pair's results down). t is nil when not traced.
func traceGPU(f *runtime.Firing, t *GPUTimes, toDevice bool, bytes int64) {
	if t == nil {
		return
	}
	f.TraceDevice(
		runtime.DeviceSpan{Device: gpuDevice, Copy: true, ToDevice: toDevice, Bytes: bytes, Start: t.CopyStart, End: t.CopyEnd},
		runtime.DeviceSpan{Device: gpuDevice, Start: t.ComputeStart, End: t.ComputeEnd})
}

// gpuDevice is the device the GPU engine uses (GPU 0), as the trace names it.
const gpuDevice = "cuda:0"
