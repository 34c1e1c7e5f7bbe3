// Command reference is the fallback build of the hand-written reference
// program, for machines without nvcc: it compiles the kernels of
// imagepipe.cu with NVRTC (for the device's sm_XY) and runs the same host
// loop as imagepipe.cu's main on the CUDA driver API (one stream, pinned
// frame table, the same copies and launches, timed with CUDA events), with
// no sluice runtime or device layer in between. Its JSON line says
// "builder":"nvrtc" — an NVRTC-built reference, nvcc not available.
//
//	CGO_ENABLED=0 go build -o imagepipe-nvrtc ./bench/imagepipe/reference
//	./imagepipe-nvrtc [-frames N] [-batch B] [-threads T] [-layout grid|actor] [-warm W] [-check C]
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"unsafe"

	"github.com/sluicehq/sluice/examples/imagepipe"
	"github.com/sluicehq/sluice/internal/cu"
)

//go:embed imagepipe.cu
var source string

const npix = imagepipe.Pixels

type kernel struct {
	f    cu.Function
	args []uint64 // argument values (pointers, ints widened: each slot read at its size)
	ptrs []unsafe.Pointer
}

func newKernel(ctx cu.Context, m cu.Module, name string, nargs int) *kernel {
	f, err := ctx.Function(m, name)
	check(err)
	k := &kernel{f: f, args: make([]uint64, nargs), ptrs: make([]unsafe.Pointer, nargs)}
	for i := range k.args {
		k.ptrs[i] = unsafe.Pointer(&k.args[i])
	}
	return k
}

func (k *kernel) launch(s cu.Stream, grid cu.Dim3, threads int) {
	check(k.f.Launch(s, grid, cu.Dim3{X: uint32(threads), Y: 1, Z: 1}, 0, unsafe.Pointer(&k.ptrs[0])))
}

type pipe struct {
	B, T, actor          int
	table, hout          unsafe.Pointer // pinned
	din, dblur, ring, do cu.DevicePtr
	s                    cu.Stream
	blur, sobel, motion  *kernel
	t, k                 int64
}

func (p *pipe) batch() {
	B := int64(p.B)
	for j := int64(0); j < B; {
		slot := (p.t + j) % imagepipe.Period
		n := min(B-j, imagepipe.Period-slot)
		check(p.s.CopyHtoD(p.din+cu.DevicePtr(j*npix), unsafe.Add(p.table, slot*npix), n*npix))
		j += n
	}
	grid := cu.Dim3{X: uint32((npix + p.T - 1) / p.T), Y: uint32(p.B), Z: 1}
	if p.actor != 0 {
		grid = cu.Dim3{X: uint32(p.B), Y: 1, Z: 1}
	}
	s0, R := uint64((p.k%2)*B), uint64(2*B)
	p.blur.args[0], p.blur.args[1], p.blur.args[2] = uint64(p.din), uint64(p.dblur), uint64(p.actor)
	p.blur.launch(p.s, grid, p.T)
	p.sobel.args[0], p.sobel.args[1], p.sobel.args[2], p.sobel.args[3], p.sobel.args[4] = uint64(p.dblur), uint64(p.ring), s0, R, uint64(p.actor)
	p.sobel.launch(p.s, grid, p.T)
	p.motion.args[0], p.motion.args[1], p.motion.args[2], p.motion.args[3], p.motion.args[4] = uint64(p.ring), uint64(p.do), s0, R, uint64(p.actor)
	p.motion.launch(p.s, grid, p.T)
	check(p.s.CopyDtoH(p.hout, p.do, B*npix))
	p.t += B
	p.k++
}

func (p *pipe) reset() {
	check(p.s.MemsetD8(p.ring, 0, int64(2*p.B)*npix))
	p.t, p.k = 0, 0
}

func main() {
	frames := flag.Int64("frames", 20000, "frames timed")
	B := flag.Int("batch", 1, "frames per launch and per copy")
	T := flag.Int("threads", 256, "threads per block")
	layout := flag.String("layout", "grid", "grid (a frame over all SMs) or actor (one block per frame, like sluice's kernel actors)")
	warm := flag.Int64("warm", -1, "frames before the timed ones (default frames/10)")
	nCheck := flag.Int64("check", 400, "frames checksummed (untimed)")
	flag.Parse()
	if *warm < 0 {
		*warm = *frames / 10
	}
	goruntime.LockOSThread()
	check(cu.Load())
	dev, err := cu.GetDevice(0)
	check(err)
	info, err := dev.Info()
	check(err)
	major, err := dev.Attribute(cu.AttrComputeCapabilityMajor)
	check(err)
	minor, err := dev.Attribute(cu.AttrComputeCapabilityMinor)
	check(err)
	ctx, err := dev.RetainPrimary()
	check(err)
	check(ctx.SetCurrent())
	comp, err := cu.Compile(source, "imagepipe.cu", []string{fmt.Sprintf("--gpu-architecture=sm_%d%d", major, minor), "-O3"})
	check(err)
	mod, err := ctx.ModuleLoadData(comp.Image)
	check(err)
	p := &pipe{B: *B, T: *T}
	if *layout == "actor" {
		p.actor = 1
	}
	p.blur, p.sobel, p.motion = newKernel(ctx, mod, "blur", 3), newKernel(ctx, mod, "sobel", 5), newKernel(ctx, mod, "motion", 5)
	p.s, err = ctx.StreamCreate(cu.StreamNonBlocking)
	check(err)
	p.table, err = ctx.MemHostAlloc(imagepipe.Period*npix, cu.HostAllocPortable)
	check(err)
	copy(unsafe.Slice((*byte)(p.table), imagepipe.Period*npix), imagepipe.Frames())
	p.hout, err = ctx.MemHostAlloc(int64(p.B)*npix, cu.HostAllocPortable)
	check(err)
	for _, d := range []*cu.DevicePtr{&p.din, &p.dblur, &p.do} {
		*d, err = ctx.MemAlloc(int64(p.B) * npix)
		check(err)
	}
	p.ring, err = ctx.MemAlloc(int64(2*p.B) * npix)
	check(err)

	var sum imagepipe.Checksum
	p.reset()
	out := unsafe.Slice((*byte)(p.hout), p.B*npix)
	for sum.Frames < *nCheck {
		p.batch()
		check(p.s.Synchronize())
		for j := 0; j < p.B && sum.Frames < *nCheck; j++ {
			sum.Add(out[j*npix : (j+1)*npix])
		}
	}

	e0, err := ctx.EventCreate(cu.EventDefault)
	check(err)
	e1, err := ctx.EventCreate(cu.EventDefault)
	check(err)
	p.reset()
	for n := int64(0); n < *warm; n += int64(p.B) {
		p.batch()
	}
	check(e0.Record(p.s))
	n := int64(0)
	for ; n < *frames; n += int64(p.B) {
		p.batch()
	}
	check(e1.Record(p.s))
	check(e1.Synchronize())
	ms, err := cu.Elapsed(e0, e1)
	check(err)
	b, _ := json.Marshal(map[string]any{
		"builder": "nvrtc", "note": "NVRTC-built reference, nvcc not available",
		"device": info.Name, "fps": float64(n) / (float64(ms) / 1e3), "frames": n, "batch": p.B, "threads": p.T,
		"layout": *layout, "checksum": sum,
	})
	fmt.Println(string(b))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(1)
	}
}
