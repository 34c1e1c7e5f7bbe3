package actors

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// checkpointYAML is a stateful chain: a file source mixed with noise, a
// FIR filter, a decimator with anti-alias taps, a file sink.
const checkpointYAML = `kind: graph
name: ckpt-chain
actors:
  src:   {use: file.read, with: {path: %q}, out: {y: {type: f32, rate: 256}}, stateful: true}
  noise: {use: gen.random, with: {seed: 3, min: -0.1, max: 0.1}, out: {y: {type: f32, rate: 256}}}
  mix:   {use: add, in: {x: {type: f32, rate: 256}, n: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 256}}}
  lowpass: {use: fir, with: {cutoff: 0.1, ntaps: 31}, in: {x: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 256}}, stateful: true}
  down:  {use: decimate, with: {factor: 4, cutoff: 0.1, ntaps: 15}, in: {x: {type: f32, rate: 256}}, out: {y: {type: f32, rate: 64}}, stateful: true}
  sink:  {use: file.write, with: {path: %q}, in: {x: {type: f32, rate: 64}}, stateful: true}
channels:
  - {from: src.y, to: mix.x}
  - {from: noise.y, to: mix.n}
  - {from: mix.y, to: lowpass.x}
  - {from: lowpass.y, to: down.x}
  - {from: down.y, to: sink.x}
`

func checkpointGraph(t testing.TB, in, out string) *graph.Graph {
	t.Helper()
	g, err := spec.ParseGraph("ckpt-chain.yaml", fmt.Appendf(nil, checkpointYAML, in, out))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestCheckpointChild is the process that TestCheckpointKillResume kills;
// it runs only when that test starts it.
func TestCheckpointChild(t *testing.T) {
	dir := os.Getenv("SLUICE_CHECKPOINT_CHILD")
	if dir == "" {
		t.Skip("started by TestCheckpointKillResume only")
	}
	g := checkpointGraph(t, filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin"))
	_, err := runtime.Run(context.Background(), g, runtime.Options{Workers: 2, Checkpoint: &runtime.CheckpointOptions{
		Interval: 20 * time.Millisecond, Store: &runtime.DirStore{Dir: filepath.Join(dir, "ckpt")}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "finished"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointKillResume kills a run with SIGKILL once it has stored two
// checkpoints, resumes it from the last one, and compares the output file
// byte for byte with an uninterrupted run's. It fails if the run had
// finished before the kill.
func TestCheckpointKillResume(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.bin")
	samples := make([]byte, 4*(1<<21))
	for i := 0; i < len(samples)/4; i++ {
		binary.LittleEndian.PutUint32(samples[4*i:], math.Float32bits(float32(math.Sin(float64(i)*0.01))))
	}
	if err := os.WriteFile(in, samples, 0o644); err != nil {
		t.Fatal(err)
	}
	refOut := filepath.Join(dir, "ref.bin")
	if _, err := runtime.Run(context.Background(), checkpointGraph(t, in, refOut), runtime.Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	ref, err := os.ReadFile(refOut)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckpointChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SLUICE_CHECKPOINT_CHILD="+dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	store := &runtime.DirStore{Dir: filepath.Join(dir, "ckpt")}
	deadline := time.Now().Add(60 * time.Second)
	for {
		cp, _ := store.Latest(context.Background())
		if cp != nil && cp.ID >= 2 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no second checkpoint within 60 s; child output:\n%s", stderr.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "finished")); err == nil {
		t.Fatalf("the run finished before the kill (a vacuous test): make the input longer; child: %v\n%s", werr, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, not by SIGKILL:\n%s", werr, stderr.String())
	}

	cp, err := store.Latest(context.Background())
	if err != nil || cp == nil {
		t.Fatalf("latest checkpoint after the kill: %v, %v", cp, err)
	}
	out := filepath.Join(dir, "out.bin")
	before, _ := os.Stat(out)
	st, err := runtime.Run(context.Background(), checkpointGraph(t, in, out), runtime.Options{Workers: 2,
		Checkpoint: &runtime.CheckpointOptions{Interval: time.Second, Store: store, Resume: cp}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed with %d output bytes written; resumed from checkpoint %d (iteration %d, %d bytes of state), %d more firings of the sink",
		before.Size(), cp.ID, cp.Iteration, cp.Size(), st.Actor("sink").Firings)
	if !bytes.Equal(got, ref) {
		t.Fatalf("resumed output (%d bytes) differs from the uninterrupted run's (%d bytes)", len(got), len(ref))
	}
}

// TestCheckpointStdinRefused: without a directory to spill it to, a run
// reading stdin cannot take checkpoints, and says so at the first one.
func TestCheckpointStdinRefused(t *testing.T) {
	g := stdinGraph(t, "binary", filepath.Join(t.TempDir(), "o.bin"))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	go func() {
		for range 200 {
			if _, err := w.Write(make([]byte, 4096)); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		w.Close()
	}()
	_, err = runtime.Run(context.Background(), g, runtime.Options{Checkpoint: &runtime.CheckpointOptions{
		Interval: 5 * time.Millisecond, Store: &runtime.DirStore{Dir: t.TempDir()}}})
	if err == nil || !strings.Contains(err.Error(), "stdin cannot be replayed from a checkpoint without a directory") {
		t.Fatalf("run: %v", err)
	}
}

// stdinGraph reads stdin (format binary: f32 tokens; text: one number a
// line; or "csv:PATH", csv.read of PATH) through a FIR filter with taps
// into file out.
func stdinGraph(t *testing.T, format, out string) *graph.Graph {
	t.Helper()
	src := "{use: stdin, with: {format: " + format + "}"
	if path, ok := strings.CutPrefix(format, "csv:"); ok {
		src = "{use: csv.read, with: {path: " + path + "}"
	}
	g, err := spec.ParseGraph("stdin.yaml", []byte(`kind: graph
name: stdin-ckpt
actors:
  src:  `+src+`, out: {y: {type: f32, rate: 4}}, stateful: true}
  fir:  {use: fir, with: {taps: [0.5, 0.25, 0.125]}, in: {x: {type: f32, rate: 4}}, out: {y: {type: f32, rate: 4}}, stateful: true}
  sink: {use: file.write, with: {path: `+out+`}, in: {x: {type: f32, rate: 4}}, stateful: true}
channels:
  - {from: src.y, to: fir.x}
  - {from: fir.y, to: sink.x}
`))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestCheckpointStdinSpill: a run reading stdin spills what it reads; it
// is stopped after three checkpoints and resumed, its stdin going on where
// the stopped run's reading ended: the output equals an uninterrupted
// run's. Binary and text formats; the spill's segments before the last
// checkpoint are removed. And csv.read of a file, which seeks to the
// checkpoint's offset.
func TestCheckpointStdinSpill(t *testing.T) {
	for _, format := range []string{"binary", "text", "csv"} {
		t.Run(format, func(t *testing.T) { testStdinSpill(t, format) })
	}
}

// stopAfter is the iteration (4 values of the input each) past which
// the interrupted run of testStdinSpill stops: 192 KB or more of the
// input, about an eighth.
const stopAfter = 12_000

func testStdinSpill(t *testing.T, format string) {
	defer func(n int64) { spillSegment = n }(spillSegment)
	spillSegment = 4 << 10 // many segments
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	var data []byte
	for i := range 400_000 {
		v := float32(i%977) * 0.25
		if format == "binary" {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		} else {
			data = fmt.Appendf(data, "%g\n", v)
		}
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	withStdin := func(off int64, f func()) {
		file, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		if _, err := file.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = file
		defer func() { os.Stdin = old }()
		f()
	}
	if format == "csv" {
		format = "csv:" + in // stdin is not read
	}
	ref, out := filepath.Join(dir, "ref.f32"), filepath.Join(dir, "out.f32")
	withStdin(0, func() {
		if _, err := runtime.Run(context.Background(), stdinGraph(t, format, ref), runtime.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	ck, spillDir := filepath.Join(dir, "ck"), filepath.Join(dir, "spill")
	store := &runtime.DirStore{Dir: ck}
	withStdin(0, func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		n := 0
		_, err := runtime.Run(ctx, stdinGraph(t, format, out), runtime.Options{Checkpoint: &runtime.CheckpointOptions{
			Interval: 3 * time.Millisecond, Store: store, SpillDir: spillDir, Completed: func(cp *runtime.Checkpoint) {
				// At least 3 checkpoints, the last past the first
				// segments (the source reads stdin 64 KiB at a time): a
				// loaded machine takes 3 before the source has used one.
				if n++; n >= 3 && cp.Iteration >= stopAfter {
					cancel()
				}
			}}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run: %v: expected it stopped after 3 checkpoints (%d taken)", err, n)
		}
	})
	cp, err := store.Latest(context.Background())
	if err != nil || cp == nil {
		t.Fatalf("latest checkpoint: %v, %v", cp, err)
	}
	end := int64(0)
	if format == "binary" || format == "text" {
		end = spilledEnd(t, spillDir)
	}
	t.Logf("stopped at checkpoint %d (iteration %d); read up to byte %d of %d", cp.ID, cp.Iteration, end, len(data))
	if end >= int64(len(data)) {
		t.Fatalf("the stopped run had read all of stdin: make the input longer")
	}
	withStdin(end, func() {
		if _, err := runtime.Run(context.Background(), stdinGraph(t, format, out), runtime.Options{Checkpoint: &runtime.CheckpointOptions{
			Interval: time.Hour, Store: store, SpillDir: spillDir, Resume: cp}}); err != nil {
			t.Fatal(err)
		}
	})
	want, _ := os.ReadFile(ref)
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatalf("resumed output: %d bytes, expected %d equal to the uninterrupted run's", len(got), len(want))
	}
}

// spilledEnd returns the stream offset where src's stdin spill in dir
// ends (what the stopped run had read), checking that the segments
// before the last checkpoint were removed.
func spilledEnd(t *testing.T, dir string) int64 {
	t.Helper()
	sp := &spill{dir: dir, actor: "src"}
	segs, err := sp.list()
	if err != nil || len(segs) == 0 {
		t.Fatalf("spill segments %v, %v", segs, err)
	}
	last, err := os.Stat(sp.path(segs[len(segs)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if segs[0] == 0 && len(segs) > 1 {
		t.Errorf("spill segments %v: expected those before the last checkpoint removed", segs)
	}
	return segs[len(segs)-1] + last.Size()
}
