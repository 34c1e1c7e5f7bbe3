package cuda_test

import (
	"errors"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
	"github.com/sluicehq/sluice/internal/cu"
)

// A batch of 10 order-dependent launches, run 6 times: the first launches
// directly, the second captures a CUDA Graph, later ones replay it; a
// batch of the same launches with other argument values replays it too,
// with the arguments set in the graph first (or, where the driver cannot
// set them, launches directly). Every run's result equals launching one by
// one.
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
	steps := func(buf device.Buffer, scale float32) { launchSteps(t, q, k, buf, n, 10, scale) }
	// One by one, at scales 1 and 2.
	seq := map[float32]string{}
	for _, scale := range []float32{1, 2} {
		wait(t, must(q.Write(a, 0, f32bytes(init))))
		steps(a, scale)
		got := make([]byte, 4*n)
		wait(t, must(q.Read(got, a, 0)))
		seq[scale] = string(got)
	}
	if seq[1] == seq[2] {
		t.Fatal("scales 1 and 2 give the same result: the test cannot tell them apart")
	}
	for round, scale := range []float32{1, 1, 1, 1, 2, 1} {
		wait(t, must(q.Write(a, 0, f32bytes(init))))
		q.BeginBatch(true)
		steps(a, scale)
		ev, err := q.EndBatch()
		if err != nil {
			t.Fatal(err)
		}
		wait(t, ev)
		got := make([]byte, 4*n)
		wait(t, must(q.Read(got, a, 0)))
		if string(got) != seq[scale] {
			t.Fatalf("round %d (scale %g): the batch's result differs from launching one by one", round, scale)
		}
	}
	st := q.BatchStats()
	want := device.BatchStats{Batches: 6, Launches: 60, Replayed: 5, Updated: 2, Captured: 1}
	if !cu.CanUpdateKernels() {
		t.Log("this driver cannot set a graph's kernel arguments: graphs are keyed by argument values")
		want.Replayed, want.Updated = 3, 0
	}
	if q.Graphs() != 1 || st != want {
		t.Fatalf("%d graphs, counts %+v: expected 1 graph and %+v", q.Graphs(), st, want)
	}
	// Without replay, and empty: no graph, no event.
	q.BeginBatch(false)
	steps(a, 1)
	wait(t, must(q.EndBatch()))
	q.BeginBatch(true)
	if ev, err := q.EndBatch(); ev != nil || err != nil {
		t.Fatalf("empty batch: %v, %v", ev, err)
	}
	if q.Graphs() != 1 {
		t.Fatalf("%d graphs", q.Graphs())
	}
}

// Replays of one cached graph over 8 buffers, enqueued back to back
// without waiting: setting a replay's arguments does not change the
// replays still queued or running (each buffer ends as launching one by
// one over it would leave it).
func TestBatchArgsInFlight(t *testing.T) {
	d, q := open(t)
	k, init := stepKernel(t, d)
	const n = stepN
	steps := func(buf device.Buffer, scale float32) { launchSteps(t, q, k, buf, n, 6, scale) }
	bufs := make([]device.Buffer, 8)
	for i := range bufs {
		bufs[i] = must(d.Alloc(4*n, device.ReadWrite))
		defer bufs[i].Release()
		wait(t, must(q.Write(bufs[i], 0, f32bytes(init))))
	}
	ref := must(d.Alloc(4*n, device.ReadWrite))
	defer ref.Release()
	for i, b := range bufs {
		q.BeginBatch(true)
		steps(b, float32(i+1))
		must(q.EndBatch())
	}
	for i, b := range bufs {
		got := make([]byte, 4*n)
		wait(t, must(q.Read(got, b, 0)))
		wait(t, must(q.Write(ref, 0, f32bytes(init))))
		steps(ref, float32(i+1))
		want := make([]byte, 4*n)
		wait(t, must(q.Read(want, ref, 0)))
		if string(got) != string(want) {
			t.Fatalf("buffer %d differs from launching one by one over it", i)
		}
	}
	if st := q.BatchStats(); cu.CanUpdateKernels() && (st.Captured != 1 || st.Updated != 6) {
		t.Fatalf("counts %+v: expected 1 capture and 6 replays with arguments set", st)
	}
}

// launchSteps launches the step kernel count times over the n floats of
// buf, step i adding scale·(i+1): recorded when q is in a batch.
func launchSteps(t *testing.T, q *cuda.Queue, k device.Kernel, buf device.Buffer, n, count int, scale float32) {
	t.Helper()
	for i := range count {
		if err := errors.Join(k.SetArg(0, buf), k.SetArg(1, scale*float32(i+1)), k.SetArg(2, int32(n))); err != nil {
			t.Fatal(err)
		}
		if err := q.LaunchQuiet(k, device.Groups(n/256, 256)); err != nil {
			t.Fatal(err)
		}
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
	if st := q.BatchStats(); q.Graphs() != 1 || st.Replayed != 3 || st.Captured != 1 {
		t.Fatalf("%d graphs, counts %+v: expected the batch captured once and launched as a graph 3 times", q.Graphs(), st)
	}
}
