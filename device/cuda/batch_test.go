package cuda_test

import (
	"errors"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
)

// A batch of 10 order-dependent launches, run 4 times: the first two
// launch directly, the second captures a CUDA Graph, later ones replay it;
// a batch with other argument values is another graph. Every run's result
// equals launching one by one.
func TestBatchReplaysGraphs(t *testing.T) {
	d, q := open(t)
	p := build(t, d, device.Source{Name: "step.cu", Text: graphKernel})
	const n = 4096
	init := make([]float32, n)
	for i := range init {
		init[i] = float32(i%89) * 0.5
	}
	k := must(p.Kernel("step"))
	a := must(d.Alloc(4*n, device.ReadWrite))
	defer a.Release()
	// One by one.
	wait(t, must(q.Write(a, 0, f32bytes(init))))
	steps := func(scale float32) {
		for i := range 10 {
			if err := errors.Join(k.SetArg(0, a), k.SetArg(1, scale*float32(i+1)), k.SetArg(2, int32(n))); err != nil {
				t.Fatal(err)
			}
			if err := q.LaunchQuiet(k, device.Groups(n/256, 256)); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps(1)
	seq := make([]byte, 4*n)
	wait(t, must(q.Read(seq, a, 0)))
	for round := range 5 {
		scale := float32(1)
		if round == 4 {
			scale = 2 // another pattern: launched directly
		}
		wait(t, must(q.Write(a, 0, f32bytes(init))))
		q.BeginBatch(true)
		steps(scale)
		ev, err := q.EndBatch()
		if err != nil {
			t.Fatal(err)
		}
		wait(t, ev)
		got := make([]byte, 4*n)
		wait(t, must(q.Read(got, a, 0)))
		if (string(got) == string(seq)) != (scale == 1) {
			t.Fatalf("round %d: the batch's result differs from launching one by one", round)
		}
	}
	if q.Graphs() != 1 || q.GraphHits != 2 {
		t.Fatalf("%d graphs, %d replays: expected 1 graph replayed twice", q.Graphs(), q.GraphHits)
	}
	// Without replay, and empty: no graph, no event.
	q.BeginBatch(false)
	steps(1)
	wait(t, must(q.EndBatch()))
	q.BeginBatch(true)
	if ev, err := q.EndBatch(); ev != nil || err != nil {
		t.Fatalf("empty batch: %v, %v", ev, err)
	}
	if q.Graphs() != 1 {
		t.Fatalf("%d graphs", q.Graphs())
	}
}

// Copies of 64 MiB between a buffer that fills the whole pool and one
// outside it, at every offset of the two (the on-device channel
// benchmark's raw copy).
func TestCopyLargeChunks(t *testing.T) {
	d, q := open(t)
	const chunk = 64 << 20
	src, err := d.Alloc(4*chunk, device.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Release()
	dst, err := d.Alloc(4*chunk, device.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Release()
	t.Logf("pool %+v", d.Pool())
	for i := range int64(4) {
		wait(t, must(q.Fill(src, i*chunk, chunk, byte(i+1))))
	}
	for i := range int64(8) {
		ev, err := q.Copy(dst, i%4*chunk, src, i%4*chunk, chunk)
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		ev.Release()
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4096)
	for i := range int64(4) {
		wait(t, must(q.Read(got, dst, i*chunk+chunk-4096)))
		for _, b := range got {
			if b != byte(i+1) {
				t.Fatalf("chunk %d: byte %d, expected %d", i, b, i+1)
			}
		}
	}
}

// Allocations outside the pool, made at many stack depths (so that the
// goroutine's stack grows during some driver calls), return valid device
// pointers: an out-parameter left on a moving stack once gave 0.
func TestAllocAtStackDepths(t *testing.T) {
	d, q := open(t)
	var rec func(n int)
	rec = func(n int) {
		var pad [64]byte
		if n > 0 {
			rec(n - 1)
			_ = pad
			return
		}
		b, err := d.Alloc(1<<30, device.ReadWrite) // beyond the pool: cuMemAlloc
		if err != nil {
			t.Fatal(err)
		}
		defer b.Release()
		if p := b.(*cuda.Buffer).Ptr(); p == 0 {
			t.Fatal("cuMemAlloc gave a device pointer of 0")
		}
		wait(t, must(q.Fill(b, 0, 4096, 1)))
	}
	for n := 0; n < 400; n += 7 {
		rec(n)
	}
}

// stepN is the length of the buffers of the batch tests' step kernel.
const stepN = 1 << 16

// stepKernel builds graphKernel's step (x = 2x + v over n floats) and
// returns it with the buffers' initial contents.
func stepKernel(t *testing.T, d *cuda.Device) (device.Kernel, []float32) {
	p := build(t, d, device.Source{Name: "step.cu", Text: graphKernel})
	init := make([]float32, stepN)
	for i := range init {
		init[i] = float32(i%89) * 0.5
	}
	return must(p.Kernel("step")), init
}

// A batch whose second chain is forked (Fork: a second stream, joined
// before the next unmarked launch and at the batch's end) gives the same
// result as launching one by one: directly, captured and replayed.
func TestBatchFork(t *testing.T) {
	d, q := open(t)
	k, init := stepKernel(t, d)
	const n = stepN
	a := must(d.Alloc(4*n, device.ReadWrite))
	defer a.Release()
	b := must(d.Alloc(4*n, device.ReadWrite))
	defer b.Release()
	step := func(buf device.Buffer, v float32, fork bool) {
		if err := errors.Join(k.SetArg(0, buf), k.SetArg(1, v), k.SetArg(2, int32(n))); err != nil {
			t.Fatal(err)
		}
		if fork {
			q.Fork()
		}
		if err := q.LaunchQuiet(k, device.Groups(n/256, 256)); err != nil {
			t.Fatal(err)
		}
	}
	steps := func(fork bool) {
		for i := range 4 {
			step(a, float32(i), false)
		}
		step(b, 1, fork) // independent of the launches on a
		step(b, 2, false)
		step(a, 5, false)
	}
	reset := func() {
		wait(t, must(q.Write(a, 0, f32bytes(init))))
		wait(t, must(q.Write(b, 0, f32bytes(init))))
	}
	reset()
	steps(false)
	wantA, wantB := make([]byte, 4*n), make([]byte, 4*n)
	wait(t, must(q.Read(wantA, a, 0)))
	wait(t, must(q.Read(wantB, b, 0)))
	for round := range 4 {
		reset()
		q.BeginBatch(true)
		steps(true)
		wait(t, must(q.EndBatch()))
		gotA, gotB := make([]byte, 4*n), make([]byte, 4*n)
		wait(t, must(q.Read(gotA, a, 0)))
		wait(t, must(q.Read(gotB, b, 0)))
		if string(gotA) != string(wantA) || string(gotB) != string(wantB) {
			t.Fatalf("round %d: the forked batch's result differs from launching one by one", round)
		}
	}
	if q.Graphs() != 1 {
		t.Fatalf("%d graphs: expected the forked batch captured", q.Graphs())
	}
}

// Three independent chains on lanes 0, 1 and 3 (Lane: side streams joined
// at the batch's end), their launches interleaved, give the same result as
// launching one by one: directly, captured and replayed.
func TestBatchLanes(t *testing.T) {
	d, q := open(t)
	k, init := stepKernel(t, d)
	const n = stepN
	bufs := []device.Buffer{must(d.Alloc(4*n, device.ReadWrite)), must(d.Alloc(4*n, device.ReadWrite)), must(d.Alloc(4*n, device.ReadWrite))}
	for _, b := range bufs {
		defer b.Release()
	}
	lanes := []int{0, 1, cuda.MaxLanes - 1}
	steps := func(batch bool) {
		for i := range 5 {
			for c, b := range bufs {
				if err := errors.Join(k.SetArg(0, b), k.SetArg(1, float32(i+c)), k.SetArg(2, int32(n))); err != nil {
					t.Fatal(err)
				}
				if batch {
					q.Lane(lanes[c])
				}
				if err := q.LaunchQuiet(k, device.Groups(n/256, 256)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	reset := func() {
		for _, b := range bufs {
			wait(t, must(q.Write(b, 0, f32bytes(init))))
		}
	}
	read := func() []string {
		var out []string
		for _, b := range bufs {
			got := make([]byte, 4*n)
			wait(t, must(q.Read(got, b, 0)))
			out = append(out, string(got))
		}
		return out
	}
	reset()
	steps(false)
	want := read()
	for round := range 4 {
		reset()
		q.BeginBatch(true)
		steps(true)
		wait(t, must(q.EndBatch()))
		for c, got := range read() {
			if got != want[c] {
				t.Fatalf("round %d: chain %d (lane %d) differs from launching one by one", round, c, lanes[c])
			}
		}
	}
	if q.Graphs() != 1 || q.GraphHits != 2 {
		t.Fatalf("%d graphs, %d replays: expected the batch captured once and replayed twice", q.Graphs(), q.GraphHits)
	}
}
