package actors

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/runtime"
)

// benchFire measures one firing of a built-in over preallocated windows
// (inputs hold normal float32 values, so no denormals slow the kernels down).
func benchFire(b *testing.B, use string, params map[string]any, ports ...string) {
	a, impl := build(b, use, params, ports...)
	var ins, outs [][]byte
	bytes := 0
	for _, p := range a.Inputs {
		w := make([]byte, p.Type.Size*p.Rate.At(0))
		fs := tokensOf[float32](w)
		for i := range fs {
			fs[i] = float32(i%13)*0.1 - 0.6
		}
		ins = append(ins, w)
		bytes += len(w)
	}
	for _, p := range a.Outputs {
		outs = append(outs, make([]byte, p.Type.Size*p.Rate.At(0)))
	}
	if len(a.Inputs) == 0 {
		bytes = len(outs[0])
	}
	// One Firing for every iteration: NewFiring allocates, the actor must not.
	f := runtime.NewFiring(context.Background(), a, 0, ins, outs)
	fn, ok := impl.(runtime.FireFunc)
	if !ok {
		fn = impl.(runtime.Actor).Fire
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := fn(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFIR(b *testing.B) {
	for _, nt := range []int{8, 32, 128} {
		taps := make([]any, nt)
		for i := range taps {
			taps[i] = 1.0 / float64(nt)
		}
		b.Run("f32/taps="+itoa(nt)+"/rate=4096", func(b *testing.B) {
			benchFire(b, "fir", map[string]any{"taps": taps}, "in x f32 4096", "out y f32 4096")
		})
	}
}

func BenchmarkFFT(b *testing.B) {
	for _, n := range []int{256, 1024, 4096, 65536} {
		b.Run("c64/size="+itoa(n), func(b *testing.B) {
			benchFire(b, "fft", nil, "in x c64 "+itoa(n), "out y c64 "+itoa(n))
		})
	}
	b.Run("f32-in/size=1024", func(b *testing.B) {
		benchFire(b, "fft", nil, "in x f32 1024", "out y c64 1024")
	})
	b.Run("ifft/c64-to-f32/size=1024", func(b *testing.B) {
		benchFire(b, "ifft", nil, "in x c64 1024", "out y f32 1024")
	})
}

func BenchmarkSaxpy(b *testing.B) {
	for _, n := range []int{1024, 65536} {
		b.Run("f32/two-inputs/rate="+itoa(n), func(b *testing.B) {
			benchFire(b, "saxpy", map[string]any{"a": 2}, "in x f32 "+itoa(n), "in y f32 "+itoa(n), "out z f32 "+itoa(n))
		})
		b.Run("f32/const-y/rate="+itoa(n), func(b *testing.B) {
			benchFire(b, "saxpy", map[string]any{"a": 2, "y": 1}, "in x f32 "+itoa(n), "out z f32 "+itoa(n))
		})
	}
}

func BenchmarkKernels(b *testing.B) {
	b.Run("scale/f32/rate=65536", func(b *testing.B) {
		benchFire(b, "scale", map[string]any{"gain": 2}, "in x f32 65536", "out y f32 65536")
	})
	b.Run("threshold/u8/rate=65536", func(b *testing.B) {
		benchFire(b, "threshold", map[string]any{"level": 128}, "in x u8 65536", "out y u8 65536")
	})
	b.Run("decimate/f32/factor=4/taps=32/rate=4096", func(b *testing.B) {
		benchFire(b, "decimate", map[string]any{"factor": 4, "cutoff": 0.1, "ntaps": 32}, "in x f32 4096", "out y f32 1024")
	})
	b.Run("magnitude/c64/rate=4096", func(b *testing.B) {
		benchFire(b, "magnitude", nil, "in x c64 4096", "out y f32 4096")
	})
	b.Run("gen.random/f32/rate=4096", func(b *testing.B) {
		benchFire(b, "gen.random", nil, "out y f32 4096")
	})
	b.Run("gen.sine/f32/rate=4096", func(b *testing.B) {
		benchFire(b, "gen.sine", nil, "out y f32 4096")
	})
}
