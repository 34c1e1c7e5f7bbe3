package imagepipe

import (
	"math/rand/v2"
	"testing"
)

// namedSums is one implementation of frameSums, named for test failures.
type namedSums struct {
	name string
	sums func([]uint8) (uint64, uint64)
}

// plainSums is the definition frameSums must match: a byte at a time.
func plainSums(b []uint8) (sum, moving uint64) {
	for _, v := range b {
		sum += uint64(v)
		if v >= MovingLevel {
			moving++
		}
	}
	return sum, moving
}

// checkSums compares frameSums, and every implementation this CPU runs,
// with plainSums on b.
func checkSums(t *testing.T, what string, b []uint8) {
	t.Helper()
	ws, wm := plainSums(b)
	impls := append(sumsImpls(), namedSums{"frameSums", frameSums})
	for _, f := range impls {
		if gs, gm := f.sums(b); gs != ws || gm != wm {
			t.Fatalf("%s, %d bytes: %s = (%d, %d), want (%d, %d)", what, len(b), f.name, gs, gm, ws, wm)
		}
	}
}

func TestFrameSums(t *testing.T) {
	for _, f := range sumsImpls() {
		t.Logf("checking %s", f.name)
	}
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]uint8, 3000+64)
	for n := 0; n <= 3000; n++ {
		off := r.IntN(64) // unaligned starts too
		b := buf[off : off+n]
		for i := range b {
			b[i] = uint8(r.Uint32())
		}
		checkSums(t, "random", b)
	}
	frame := make([]uint8, Pixels)
	for i := range frame {
		frame[i] = uint8(r.Uint32())
	}
	checkSums(t, "random frame", frame)
	// Values at and around the level, and all-maximal bytes (the largest
	// sums and counts per lane, where a counter would wrap first).
	for _, fill := range []uint8{0, MovingLevel - 1, MovingLevel, MovingLevel + 1, 127, 128, 255} {
		for i := range frame {
			frame[i] = fill
		}
		checkSums(t, "constant frame", frame)
		checkSums(t, "constant frame, odd length", frame[:Pixels-37])
	}
	for i := range frame { // a frame of real motion values
		frame[i] = uint8(i % 256)
	}
	checkSums(t, "ramp frame", frame)
}

func TestFrameSumsOfMotion(t *testing.T) {
	a, b := make([]uint8, Pixels), make([]uint8, Pixels)
	s0, s1, m := make([]uint8, Pixels), make([]uint8, Pixels), make([]uint8, Pixels)
	Draw(3, a)
	Draw(4, b)
	Sobel(a, s0)
	Sobel(b, s1)
	Motion(s1, s0, m)
	checkSums(t, "motion frame", m)
	if _, mv := plainSums(m); mv == 0 || mv == Pixels {
		t.Fatalf("motion frame: %d of %d pixels moving, want some but not all", mv, Pixels)
	}
}

func BenchmarkFrameSums(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	frame := make([]uint8, Pixels)
	for i := range frame {
		frame[i] = uint8(r.Uint32())
	}
	b.SetBytes(Pixels)
	var sink uint64
	for b.Loop() {
		s, m := frameSums(frame)
		sink += s + m
	}
	if sink == 0 {
		b.Fatal("no sums")
	}
}

func BenchmarkFrameSumsImpls(b *testing.B) {
	frame := make([]uint8, Pixels)
	Draw(0, frame)
	for _, f := range sumsImpls() {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(Pixels)
			var sink uint64
			for b.Loop() {
				s, m := f.sums(frame)
				sink += s + m
			}
			if sink == 0 {
				b.Fatal("no sums")
			}
		})
	}
}
