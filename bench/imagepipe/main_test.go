package main

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/examples/imagepipe"
)

// Direct (unoptimised) forms of the three filters, as the kernels write
// them: the Go versions must equal them exactly.
func naiveBlur(in []uint8, x, y int) uint8 {
	w := [5]int{1, 4, 6, 4, 1}
	s := 0
	for dy := -2; dy <= 2; dy++ {
		for dx := -2; dx <= 2; dx++ {
			yy := min(max(y+dy, 0), imagepipe.H-1)
			xx := min(max(x+dx, 0), imagepipe.W-1)
			s += w[dy+2] * w[dx+2] * int(in[yy*imagepipe.W+xx])
		}
	}
	return uint8((s + 128) >> 8)
}

func naiveSobel(in []uint8, x, y int) uint8 {
	at := func(dx, dy int) int {
		return int(in[min(max(y+dy, 0), imagepipe.H-1)*imagepipe.W+min(max(x+dx, 0), imagepipe.W-1)])
	}
	gx := at(1, -1) + 2*at(1, 0) + at(1, 1) - at(-1, -1) - 2*at(-1, 0) - at(-1, 1)
	gy := at(-1, 1) + 2*at(0, 1) + at(1, 1) - at(-1, -1) - 2*at(0, -1) - at(1, -1)
	r := 0
	for (r+1)*(r+1) <= gx*gx+gy*gy {
		r++
	}
	return uint8(min(r>>2, 255))
}

func naiveMotion(cur, prev []uint8, x, y int) uint8 {
	s := 0
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			k := min(max(y+dy, 0), imagepipe.H-1)*imagepipe.W + min(max(x+dx, 0), imagepipe.W-1)
			d := int(cur[k]) - int(prev[k])
			s += max(d, -d)
		}
	}
	return uint8(min(s>>3, 255))
}

func TestGoFiltersEqualDirectForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]uint8, imagepipe.Pixels)
	b := make([]uint8, imagepipe.Pixels)
	for _, frame := range []int{0, 1, 37} {
		imagepipe.Draw(frame, a)
		if frame == 37 { // noise: every value, sharp edges everywhere
			for i := range a {
				a[i] = uint8(rng.UintN(256))
			}
		}
		imagepipe.Draw(frame+1, b)
		bl, so, so2, mo := make([]uint8, len(a)), make([]uint8, len(a)), make([]uint8, len(a)), make([]uint8, len(a))
		imagepipe.Blur(a, bl)
		imagepipe.Sobel(a, so)
		imagepipe.Sobel(b, so2)
		imagepipe.Motion(so2, so, mo)
		for y := 0; y < imagepipe.H; y++ {
			for x := 0; x < imagepipe.W; x++ {
				i := y*imagepipe.W + x
				if g, w := bl[i], naiveBlur(a, x, y); g != w {
					t.Fatalf("frame %d blur (%d,%d) = %d, want %d", frame, x, y, g, w)
				}
				if g, w := so[i], naiveSobel(a, x, y); g != w {
					t.Fatalf("frame %d sobel (%d,%d) = %d, want %d", frame, x, y, g, w)
				}
				if g, w := mo[i], naiveMotion(so2, so, x, y); g != w {
					t.Fatalf("frame %d motion (%d,%d) = %d, want %d", frame, x, y, g, w)
				}
			}
		}
	}
}

func TestISqrt(t *testing.T) {
	r := int32(0)
	for s := int32(0); s <= 2*1020*1020; s++ {
		if (r+1)*(r+1) <= s {
			r++
		}
		if g := imagepipe.ISqrt(s); g != r {
			t.Fatalf("ISqrt(%d) = %d, want %d", s, g, r)
		}
	}
}

func TestChecksumSWAR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := make([]uint8, imagepipe.Pixels+13)
	for i := range f {
		f[i] = uint8(rng.UintN(256))
	}
	var c imagepipe.Checksum
	c.Add(f)
	var sum, mv uint64
	for _, v := range f {
		sum += uint64(v)
		if v >= imagepipe.MovingLevel {
			mv++
		}
	}
	if c.Sum != sum || c.Moving != mv {
		t.Fatalf("checksum %+v, want sum %d moving %d", c, sum, mv)
	}
}

const testFrames = 13

func cpuFrames(t *testing.T) *Result {
	t.Helper()
	r, err := Run(context.Background(), Config{Backend: "cpu", Frames: testFrames, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	// the scene moves: motion is found, and not everywhere
	if r.Checksum.Moving == 0 || r.Checksum.Moving > testFrames*imagepipe.Pixels/4 {
		t.Fatalf("moving pixels %d over %d frames: expected some, not most", r.Checksum.Moving, testFrames)
	}
	return r
}

// The OpenCL and CUDA kernels give exactly the Go filters' frames, for
// several G (frames per invocation, including ones that do not divide the
// frame count or the rings) and I, and depths whose rounds are spread over
// 4 and 8 CUDA streams (runtime.Options.DeviceLanes).
func TestDevicesEqualGo(t *testing.T) {
	want := cpuFrames(t)
	for _, backend := range []string{"opencl", "cuda"} {
		t.Run(backend, func(t *testing.T) {
			if ok, why := Available(backend); !ok {
				env := "SLUICE_REQUIRE_" + strings.ToUpper(backend)
				if os.Getenv(env) == "1" {
					t.Fatalf("%s=1 but no %s device: %s", env, backend, why)
				}
				t.Skipf("no %s device: %s", backend, why)
			}
			for _, gi := range [][3]int{{1, 64, 0}, {3, 128, 0}, {4, 256, 0}, {2, 128, 16}, {5, 64, 8}} {
				r, err := Run(context.Background(), Config{Backend: backend, Frames: testFrames, G: gi[0], I: gi[1], Depth: gi[2], Keep: true, OpenCLDevice: "auto"})
				if err != nil {
					t.Fatalf("G=%d I=%d: %v", gi[0], gi[1], err)
				}
				if r.Checksum != want.Checksum {
					t.Errorf("G=%d I=%d: checksum %+v, want %+v", gi[0], gi[1], r.Checksum, want.Checksum)
				}
				for f := range want.Kept {
					for i := range want.Kept[f] {
						if r.Kept[f][i] != want.Kept[f][i] {
							t.Fatalf("G=%d I=%d: frame %d pixel (%d,%d) = %d, want %d", gi[0], gi[1], f,
								i%imagepipe.W, i/imagepipe.W, r.Kept[f][i], want.Kept[f][i])
						}
					}
				}
				if r.CopiedByte != 2*testFrames*imagepipe.Pixels {
					t.Logf("G=%d I=%d: channels copied %d bytes (frames in and out: %d)", gi[0], gi[1], r.CopiedByte, 2*testFrames*imagepipe.Pixels)
				}
			}
		})
	}
}
