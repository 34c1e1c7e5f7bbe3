package stitch

import (
	"errors"
	"fmt"
	"math"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sluicehq/sluice/internal/cu"
)

// The GPU engine runs PCIAM on the first CUDA GPU and keeps its data
// there: a tile goes up once (2 bytes a pixel), its periodic spectrum's
// phase and the tile itself stay in device memory under a handle (a u64
// token of the graph stitch-gpu.yaml), and a pair's cross-power spectrum,
// inverse FFT, peak search and the cross-correlations of every peak's four
// translations run there; only the peaks and the correlations' integer
// sums come back (a few hundred bytes a pair). cuFFT (R2C and C2R, the
// Hermitian half) does the transforms; the other steps are CUDA C
// (gpu_kernels.go), compiled with NVRTC on first use.
//
// A spectrum lives as long as its handle is in the graph's channels: each
// handle is created with the number of times it will be read (its tile's
// pairs) and the last reader frees it, so the GPU holds what the channels'
// capacities allow, like the host FIFOs of stitch.yaml. A run that fails
// halfway leaves its handles' buffers allocated until the process ends.

// ErrNoGPU is returned (wrapped) when the CUDA driver, NVRTC or cuFFT
// cannot be loaded or there is no CUDA GPU.
var ErrNoGPU = errors.New("CUDA GPU unavailable")

const (
	cufftR2C    = 0x2a
	cufftC2R    = 0x2c
	peakBlocks  = 256 // first pass of the peak search
	peakThreads = 256 // PEAK_THREADS in gpu_kernels.go
	maxPeaks    = 16  // KMAX in gpu_kernels.go; Config.Validate allows 1 to 16
	nccBlocks   = 32  // blocks per translation in the ncc kernel
)

// gpuSpectrum is one tile on the device: its phase spectrum (h rows of
// w/2+1 complex64) and its pixels (u16).
type gpuSpectrum struct {
	spec, tile cu.DevicePtr
	reads      atomic.Int32 // reads left before the buffers go back to the pool
}

// gpuSlot is what one firing uses: a stream, the two plans bound to it,
// scratch on the device and pinned staging on the host.
type gpuSlot struct {
	stream     cu.Stream
	r2c, c2r   int32
	real       cu.DevicePtr // w×h float32: R2C input, C2R output
	q          cu.DevicePtr // the cross-power half spectrum
	tl         cu.DevicePtr // (w+h) float2: T and L of the smooth component
	partV      cu.DevicePtr // peakBlocks·maxPeaks float32
	partI      cu.DevicePtr // peakBlocks·maxPeaks int32
	res        cu.DevicePtr // maxPeaks f32 + maxPeaks i32 + 4·maxPeaks·5 u64, contiguous
	hostTile   unsafe.Pointer
	hostRes    unsafe.Pointer // pinned copy of res
	resBytes   int64
	peaksBytes int64
	marks      [3]cu.Event // timing marks around a timed call's copy and kernels
}

// GPUTimes are one call's times on the device (UploadTimed, AlignTimed):
// its copy between host and device and its kernels, as wall-clock
// intervals (the device's own durations, ending when the host saw the
// call's stream finish).
type GPUTimes struct {
	CopyStart, CopyEnd       time.Time
	ComputeStart, ComputeEnd time.Time
}

// times fills t, when non-nil, from the marks 0, 1 and 2 a timed call
// recorded on s's stream, which the host has just seen finish: the span
// from mark 0 to 1 comes first, from 1 to 2 second, the second ending now.
// copyFirst says which of them is the copy.
func (s *gpuSlot) times(t *GPUTimes, copyFirst bool) error {
	if t == nil {
		return nil
	}
	end := time.Now()
	a, err := cu.Elapsed(s.marks[0], s.marks[1])
	if err != nil {
		return err
	}
	b, err := cu.Elapsed(s.marks[1], s.marks[2])
	if err != nil {
		return err
	}
	da, db := time.Duration(float64(a)*1e6), time.Duration(float64(b)*1e6)
	first, mid := end.Add(-da-db), end.Add(-db)
	if copyFirst {
		*t = GPUTimes{CopyStart: first, CopyEnd: mid, ComputeStart: mid, ComputeEnd: end}
	} else {
		*t = GPUTimes{ComputeStart: first, ComputeEnd: mid, CopyStart: mid, CopyEnd: end}
	}
	return nil
}

// mark records timing mark i on s's stream when timed.
func (s *gpuSlot) mark(timed bool, i int) error {
	if !timed {
		return nil
	}
	return s.marks[i].Record(s.stream)
}

// GPU is the PCIAM engine for w×h tiles on GPU 0.
type GPU struct {
	ctx   cu.Context
	w, h  int
	fn    struct{ toReal, borders, phase, cross, peaks, ncc cu.Function }
	slots chan *gpuSlot

	slotMu   sync.Mutex
	made     int // slots made (slot)
	maxSlots int

	mu      sync.Mutex
	handles []*gpuSpectrum // handle h is handles[h-1]
	free    []uint64       // released handles, buffers kept for reuse
	live    atomic.Int64   // handles allocated and not released
	peak    atomic.Int64   // the most live at once
}

var (
	gpuMu      sync.Mutex
	gpuEngines = map[[2]int]*GPU{}
)

// GPUFor returns the shared engine for w×h tiles, made on first use: the
// kernels compiled, one slot's cuFFT plans made. Calls that find every
// slot busy make another, up to one per CPU (at most 16), so that the
// slots' set-up (two cuFFT plans each, tens of milliseconds) is spread
// over the firings that need them instead of holding up the first.
func GPUFor(w, h int) (*GPU, error) {
	if _, _, err := CUFFTVersion(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	gpuMu.Lock()
	defer gpuMu.Unlock()
	if e := gpuEngines[[2]int{w, h}]; e != nil {
		return e, nil
	}
	d, err := cu.GetDevice(0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	info, err := d.Info()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	ctx, err := d.RetainPrimary()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	if err := cu.LoadNVRTC(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoGPU, err)
	}
	arch := fmt.Sprintf("--gpu-architecture=sm_%d%d", info.Major, info.Minor)
	c, err := cu.Compile(gpuKernels, "stitch_gpu.cu", []string{arch})
	if errors.Is(err, cu.NVRTCErrInvalidOption) { // NVRTC older than the GPU: PTX for the newest it knows
		a := info.Major*10 + info.Minor
		if as := cu.SupportedArchs(); len(as) > 0 && as[len(as)-1] < a {
			a = as[len(as)-1]
		}
		c, err = cu.Compile(gpuKernels, "stitch_gpu.cu", []string{fmt.Sprintf("--gpu-architecture=compute_%d", a)})
	}
	if err != nil {
		return nil, fmt.Errorf("stitch: compiling the GPU kernels: %w", err)
	}
	e := &GPU{ctx: ctx, w: w, h: h, maxSlots: min(goruntime.NumCPU(), 16), made: 1}
	e.slots = make(chan *gpuSlot, e.maxSlots)
	err = ctx.Do(func() error {
		img := c.Image
		if c.PTX && (len(img) == 0 || img[len(img)-1] != 0) {
			img = append(img, 0)
		}
		m, err := ctx.ModuleLoadData(img)
		if err != nil {
			return err
		}
		for _, f := range []struct {
			p    *cu.Function
			name string
		}{{&e.fn.toReal, "to_real"}, {&e.fn.borders, "borders"}, {&e.fn.phase, "phase"},
			{&e.fn.cross, "cross"}, {&e.fn.peaks, "peaks"}, {&e.fn.ncc, "ncc"}} {
			if *f.p, err = ctx.Function(m, f.name); err != nil {
				return err
			}
		}
		s, err := e.newSlot()
		if err != nil {
			return fmt.Errorf("slot 0: %w", err)
		}
		e.slots <- s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("stitch: GPU engine %d×%d: %w", w, h, err)
	}
	gpuEngines[[2]int{w, h}] = e
	return e, nil
}

// newSlot makes a slot; the context is current.
func (e *GPU) newSlot() (*gpuSlot, error) {
	s := &gpuSlot{}
	var err error
	if s.stream, err = e.ctx.StreamCreate(cu.StreamNonBlocking); err != nil {
		return nil, err
	}
	px := int64(e.w * e.h)
	half := int64((e.w/2 + 1) * e.h * 8)
	s.peaksBytes = maxPeaks * 8
	s.resBytes = s.peaksBytes + 4*maxPeaks*5*8
	for _, b := range []struct {
		p *cu.DevicePtr
		n int64
	}{{&s.real, px * 4}, {&s.q, half}, {&s.tl, int64(e.w+e.h) * 8},
		{&s.partV, peakBlocks * maxPeaks * 4}, {&s.partI, peakBlocks * maxPeaks * 4}, {&s.res, s.resBytes}} {
		if *b.p, err = e.ctx.MemAlloc(b.n); err != nil {
			return nil, err
		}
	}
	if s.hostTile, err = e.ctx.MemAllocHost(px * 2); err != nil {
		return nil, err
	}
	if s.hostRes, err = e.ctx.MemAllocHost(s.resBytes); err != nil {
		return nil, err
	}
	for i := range s.marks {
		if s.marks[i], err = e.ctx.EventCreate(cu.EventDefault); err != nil {
			return nil, err
		}
	}
	// cufftPlan2d(plan, nx = rows, ny = columns, type)
	if err := cufftCall("cufftPlan2d", cufftSym.plan2d, uintptr(unsafe.Pointer(&s.r2c)), uintptr(e.h), uintptr(e.w), cufftR2C); err != nil {
		return nil, err
	}
	if err := cufftCall("cufftPlan2d", cufftSym.plan2d, uintptr(unsafe.Pointer(&s.c2r)), uintptr(e.h), uintptr(e.w), cufftC2R); err != nil {
		return nil, err
	}
	for _, p := range []int32{s.r2c, s.c2r} {
		if err := cufftCall("cufftSetStream", cufftSym.setStream, uintptr(p), uintptr(s.stream)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// slot takes a free slot; when none is free it makes one more, up to
// maxSlots, rather than wait for one.
func (e *GPU) slot() (*gpuSlot, error) {
	select {
	case s := <-e.slots:
		return s, nil
	default:
	}
	e.slotMu.Lock()
	if e.made == e.maxSlots {
		e.slotMu.Unlock()
		return <-e.slots, nil
	}
	e.made++
	e.slotMu.Unlock()
	var s *gpuSlot
	err := e.ctx.Do(func() error {
		var err error
		s, err = e.newSlot()
		return err
	})
	if err != nil {
		e.slotMu.Lock()
		e.made--
		e.slotMu.Unlock()
		return nil, fmt.Errorf("stitch: GPU: a new slot: %w", err)
	}
	return s, nil
}

// launch runs kernel f on s's stream; args are pointers to the values.
func launch(f cu.Function, s *gpuSlot, grid, block cu.Dim3, args ...unsafe.Pointer) error {
	return f.Launch(s.stream, grid, block, 0, unsafe.Pointer(&args[0]))
}

// spectrum returns handle h's buffers, or an error naming it.
func (e *GPU) spectrum(h uint64) (*gpuSpectrum, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if h == 0 || h > uint64(len(e.handles)) {
		return nil, fmt.Errorf("stitch: GPU handle %d: expected 1 to %d", h, len(e.handles))
	}
	return e.handles[h-1], nil
}

// alloc returns a handle whose buffers are free, to be read reads times.
func (e *GPU) alloc(reads int) (uint64, *gpuSpectrum, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var h uint64
	if n := len(e.free); n > 0 {
		h, e.free = e.free[n-1], e.free[:n-1]
	} else {
		sp := &gpuSpectrum{}
		err := e.ctx.Do(func() error {
			var err error
			if sp.spec, err = e.ctx.MemAlloc(int64((e.w/2+1)*e.h) * 8); err != nil {
				return err
			}
			sp.tile, err = e.ctx.MemAlloc(int64(e.w*e.h) * 2)
			return err
		})
		if err != nil {
			return 0, nil, fmt.Errorf("stitch: GPU spectrum %d: %w", len(e.handles)+1, err)
		}
		e.handles = append(e.handles, sp)
		h = uint64(len(e.handles))
	}
	sp := e.handles[h-1]
	sp.reads.Store(int32(reads))
	for l, p := e.live.Add(1), e.peak.Load(); l > p && !e.peak.CompareAndSwap(p, l); p = e.peak.Load() {
	}
	return h, sp, nil
}

// Release counts one read of handle h (0: none); the last read puts its
// buffers back in the pool.
func (e *GPU) Release(h uint64) {
	if h == 0 {
		return
	}
	sp, err := e.spectrum(h)
	if err != nil {
		return
	}
	if sp.reads.Add(-1) == 0 {
		e.live.Add(-1)
		e.mu.Lock()
		e.free = append(e.free, h)
		e.mu.Unlock()
	}
}

// Upload puts tile (w×h u16) on the device and computes its phase
// spectrum there: the R2C transform less the tile's smooth component
// (Moisan's periodic-plus-smooth decomposition) and its mean, divided by
// its magnitude. It returns the handle, to be read reads times (Release).
func (e *GPU) Upload(tile []uint16, reads int) (uint64, error) {
	return e.UploadTimed(tile, reads, nil)
}

// UploadTimed is Upload that, with t non-nil, also measures the tile's
// copy to the device and its kernels into t (a traced run's actor shows
// them, Firing.TraceDevice).
func (e *GPU) UploadTimed(tile []uint16, reads int, t *GPUTimes) (uint64, error) {
	n := e.w * e.h
	if len(tile) < n {
		return 0, fmt.Errorf("stitch: GPU: tile of %d pixels: expected %d×%d", len(tile), e.w, e.h)
	}
	s, err := e.slot()
	if err != nil {
		return 0, err
	}
	h, sp, err := e.alloc(reads)
	if err != nil {
		e.slots <- s
		return 0, err
	}
	defer func() { e.slots <- s }()
	copy(unsafe.Slice((*uint16)(s.hostTile), n), tile[:n])
	w32, h32, n32 := int32(e.w), int32(e.h), int32(n)
	timed := t != nil
	err = e.ctx.Do(func() error {
		if err := s.mark(timed, 0); err != nil {
			return err
		}
		if err := s.stream.CopyHtoD(sp.tile, s.hostTile, int64(n)*2); err != nil {
			return err
		}
		if err := s.mark(timed, 1); err != nil {
			return err
		}
		if err := launch(e.fn.toReal, s, cu.Dim3{X: 1024, Y: 1, Z: 1}, cu.Dim3{X: 256, Y: 1, Z: 1},
			unsafe.Pointer(&sp.tile), unsafe.Pointer(&s.real), unsafe.Pointer(&n32)); err != nil {
			return err
		}
		if err := launch(e.fn.borders, s, cu.Dim3{X: uint32(e.w + e.h), Y: 1, Z: 1}, cu.Dim3{X: 256, Y: 1, Z: 1},
			unsafe.Pointer(&sp.tile), unsafe.Pointer(&w32), unsafe.Pointer(&h32), unsafe.Pointer(&s.tl)); err != nil {
			return err
		}
		if err := cufftCall("cufftExecR2C", cufftSym.execR2C, uintptr(s.r2c), uintptr(s.real), uintptr(sp.spec)); err != nil {
			return err
		}
		if err := launch(e.fn.phase, s, cu.Dim3{X: 1024, Y: 1, Z: 1}, cu.Dim3{X: 256, Y: 1, Z: 1},
			unsafe.Pointer(&sp.spec), unsafe.Pointer(&s.tl), unsafe.Pointer(&w32), unsafe.Pointer(&h32)); err != nil {
			return err
		}
		if err := s.mark(timed, 2); err != nil {
			return err
		}
		if err := s.stream.Synchronize(); err != nil {
			return err
		}
		return s.times(t, true)
	})
	if err != nil {
		for i := 0; i < reads; i++ {
			e.Release(h)
		}
		return 0, fmt.Errorf("stitch: GPU %d×%d tile: %w", e.w, e.h, err)
	}
	return h, nil
}

// Align is PCIAM on the pair of handles a (the neighbour) and b: the
// inverse transform of their normalised cross-power spectrum, its peaks
// largest values, and the cross-correlation of the tiles' overlap at each
// peak's four translations, on the device; the best translation wins, as
// in AlignWith.
func (e *GPU) Align(a, b uint64, peaks int) (Translation, error) {
	return e.AlignTimed(a, b, peaks, nil)
}

// AlignTimed is Align that, with t non-nil, also measures the pair's
// kernels and the copy of their results to the host into t.
func (e *GPU) AlignTimed(a, b uint64, peaks int, t *GPUTimes) (Translation, error) {
	if peaks < 1 || peaks > maxPeaks {
		return Translation{}, fmt.Errorf("stitch: GPU: %d peaks: expected 1 to %d", peaks, maxPeaks)
	}
	sa, err := e.spectrum(a)
	if err != nil {
		return Translation{}, err
	}
	sb, err := e.spectrum(b)
	if err != nil {
		return Translation{}, err
	}
	s, err := e.slot()
	if err != nil {
		return Translation{}, err
	}
	defer func() { e.slots <- s }()
	w32, h32, k32 := int32(e.w), int32(e.h), int32(peaks)
	half32, n32 := int32((e.w/2+1)*e.h), int32(e.w*e.h)
	m32 := int32(peakBlocks * peaks)
	var null cu.DevicePtr
	pkV, pkI := s.res, s.res+maxPeaks*4
	sums := s.res + cu.DevicePtr(s.peaksBytes)
	one, threads := cu.Dim3{X: 1, Y: 1, Z: 1}, cu.Dim3{X: 256, Y: 1, Z: 1}
	timed := t != nil
	err = e.ctx.Do(func() error {
		if err := s.mark(timed, 0); err != nil {
			return err
		}
		if err := launch(e.fn.cross, s, cu.Dim3{X: 1024, Y: 1, Z: 1}, threads,
			unsafe.Pointer(&sa.spec), unsafe.Pointer(&sb.spec), unsafe.Pointer(&s.q), unsafe.Pointer(&half32)); err != nil {
			return err
		}
		if err := cufftCall("cufftExecC2R", cufftSym.execC2R, uintptr(s.c2r), uintptr(s.q), uintptr(s.real)); err != nil {
			return err
		}
		if err := launch(e.fn.peaks, s, cu.Dim3{X: peakBlocks, Y: 1, Z: 1}, cu.Dim3{X: peakThreads, Y: 1, Z: 1},
			unsafe.Pointer(&s.real), unsafe.Pointer(&null), unsafe.Pointer(&n32), unsafe.Pointer(&k32),
			unsafe.Pointer(&s.partV), unsafe.Pointer(&s.partI)); err != nil {
			return err
		}
		if err := launch(e.fn.peaks, s, one, cu.Dim3{X: peakThreads, Y: 1, Z: 1},
			unsafe.Pointer(&s.partV), unsafe.Pointer(&s.partI), unsafe.Pointer(&m32), unsafe.Pointer(&k32),
			unsafe.Pointer(&pkV), unsafe.Pointer(&pkI)); err != nil {
			return err
		}
		if err := s.stream.MemsetD8(sums, 0, s.resBytes-s.peaksBytes); err != nil {
			return err
		}
		if err := launch(e.fn.ncc, s, cu.Dim3{X: nccBlocks, Y: uint32(4 * peaks), Z: 1}, threads,
			unsafe.Pointer(&sa.tile), unsafe.Pointer(&sb.tile), unsafe.Pointer(&w32), unsafe.Pointer(&h32),
			unsafe.Pointer(&pkI), unsafe.Pointer(&sums)); err != nil {
			return err
		}
		if err := s.mark(timed, 1); err != nil {
			return err
		}
		if err := s.stream.CopyDtoH(s.hostRes, s.res, s.resBytes); err != nil {
			return err
		}
		if err := s.mark(timed, 2); err != nil {
			return err
		}
		if err := s.stream.Synchronize(); err != nil {
			return err
		}
		return s.times(t, false)
	})
	if err != nil {
		return Translation{}, fmt.Errorf("stitch: GPU %d×%d pair: %w", e.w, e.h, err)
	}
	idx := unsafe.Slice((*int32)(unsafe.Add(s.hostRes, maxPeaks*4)), maxPeaks)
	sum := unsafe.Slice((*uint64)(unsafe.Add(s.hostRes, s.peaksBytes)), 4*maxPeaks*5)
	best := Translation{NCC: math.Inf(-1), Valid: true}
	for j := 0; j < peaks; j++ {
		i := int(idx[j])
		if i < 0 || i >= e.w*e.h {
			continue // fewer values than peaks
		}
		px, py := i%e.w, i/e.w
		for q, dx := range [2]int{px, px - e.w} {
			for r, dy := range [2]int{py, py - e.h} {
				z := sum[5*(4*j+2*q+r):][:5]
				if c := nccOfSums(e.w, e.h, dx, dy, z); c > best.NCC {
					best.DX, best.DY, best.NCC = dx, dy, c
				}
			}
		}
	}
	return best, nil
}

// nccOfSums is NCC from the overlap's integer sums (Σa, Σb, Σa², Σb², Σab),
// the same value NCC computes from the pixels (every partial sum is exact
// in a float64 for 16-bit tiles of up to 2²⁰ pixels).
func nccOfSums(w, h, dx, dy int, s []uint64) float64 {
	x0, x1 := max(0, dx), min(w, w+dx)
	y0, y1 := max(0, dy), min(h, h+dy)
	if x1-x0 < minOverlap || y1-y0 < minOverlap {
		return -1
	}
	return nccFrom(float64(s[0]), float64(s[1]), float64(s[2]), float64(s[3]), float64(s[4]), float64((x1-x0)*(y1-y0)))
}

// MemUsed returns the GPU's used memory in bytes (total − free).
func (e *GPU) MemUsed() (int64, error) {
	var used int64
	err := e.ctx.Do(func() error {
		free, total, err := e.ctx.MemInfo()
		used = total - free
		return err
	})
	return used, err
}

// PeakHandles returns the most spectra held on the device at once since
// the engine was made, each (w/2+1)·h·8 + w·h·2 bytes.
func (e *GPU) PeakHandles() int64 { return e.peak.Load() }

// Live returns the number of spectra on the device whose handles have
// reads left.
func (e *GPU) Live() int64 { return e.live.Load() }

// ResultBytes is what a pair's alignment copies back to the host: its
// peaks and the correlations' sums.
func (e *GPU) ResultBytes() int64 { return int64(maxPeaks*8 + 4*maxPeaks*5*8) }
