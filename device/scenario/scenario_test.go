package scenario_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/scenario"
)

// testStages are two elementwise stages and two global ones, with their Go
// equivalents.
var testStages = []scenario.Stage{
	{Name: "half", Body: "out[i] = 0.5f * in[i] + p;"},
	{Name: "twice", Body: "out[i] = 2.0f * in[i] - p;"},
	{Name: "reverse", Body: "out[i] = in[n - 1 - i];", Global: true},
	{Name: "neigh", Body: "out[i] = in[i] + in[(i + 1) % n] * p;", Global: true},
}

var testRef = []func(in, out []float32, i int, p float32){
	func(in, out []float32, i int, p float32) { out[i] = 0.5*in[i] + p },
	func(in, out []float32, i int, p float32) { out[i] = 2*in[i] - p },
	func(in, out []float32, i int, p float32) { out[i] = in[len(in)-1-i] },
	func(in, out []float32, i int, p float32) { out[i] = in[i] + in[(i+1)%len(in)]*p },
}

func TestGenerate(t *testing.T) {
	for _, lang := range []scenario.Lang{scenario.OpenCL, scenario.CUDA} {
		src, err := scenario.Generate(lang, testStages, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{scenario.KernelName, "case 3:", "stage_neigh", "bufs[3]"} {
			if !strings.Contains(src, want) {
				t.Errorf("%s source lacks %q:\n%s", lang, want, src)
			}
		}
		if lang == scenario.CUDA && !strings.Contains(src, `extern "C" __global__`) {
			t.Errorf("CUDA source is not a CUDA kernel:\n%s", src)
		}
		if lang == scenario.OpenCL && !strings.Contains(src, "__kernel") {
			t.Errorf("OpenCL source is not an OpenCL kernel:\n%s", src)
		}
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		stages []scenario.Stage
		sc     scenario.Scenario
		want   string
	}{
		{nil, scenario.Scenario{Slots: 1}, "at least one stage"},
		{[]scenario.Stage{{Name: "a b", Body: "x"}}, scenario.Scenario{Slots: 1}, "C identifier"},
		{[]scenario.Stage{{Name: "a", Body: "x"}, {Name: "a", Body: "y"}}, scenario.Scenario{Slots: 1}, "already used"},
		{[]scenario.Stage{{Name: "a"}}, scenario.Scenario{Slots: 1}, "empty body"},
		{testStages, scenario.Scenario{Slots: 2, Steps: []scenario.Step{{Stage: 9}}}, "stage 9: expected 0..3"},
		{testStages, scenario.Scenario{Slots: 2, Steps: []scenario.Step{{Stage: 0, In: 0, Out: 2}}}, "slot 2: expected 0..1"},
		{testStages, scenario.Scenario{Slots: 2, Steps: []scenario.Step{{Stage: 2, In: 1, Out: 1}}}, "cannot read and write the same slot"},
	}
	for _, c := range cases {
		_, err := scenario.Generate(scenario.OpenCL, c.stages, 2)
		if err == nil {
			err = c.sc.Validate(c.stages)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func TestBuilderSwapPairs(t *testing.T) {
	b := scenario.Chain([]int{0, 1, 0}, []float32{1, 2, 3}, 2)
	sc := b.Scenario()
	if len(sc.Steps) != 6 {
		t.Fatalf("%d steps, want 6", len(sc.Steps))
	}
	for k, st := range sc.Steps {
		if st.In != k%2 || st.Out != 1-k%2 {
			t.Errorf("step %d: %d→%d, want %d→%d", k, st.In, st.Out, k%2, 1-k%2)
		}
	}
	if b.Where(0) != 0 {
		t.Errorf("after 6 swaps buffer 0 is slot %d, want 0", b.Where(0))
	}
	if b.Step(0, 0, 1, 0).Swap(0, 1).Where(0) != 1 {
		t.Error("after 7 swaps buffer 0 should be slot 1")
	}
}

func TestBatches(t *testing.T) {
	sc := scenario.NewBuilder(3).Step(0, 0, 0, 0).Step(2, 0, 1, 0).Step(0, 1, 1, 0).Step(3, 1, 2, 0).Step(1, 2, 2, 0).Scenario()
	got := fmt.Sprint(sc.Batches(testStages, 0, 5))
	if got != "[[0 1] [1 3] [3 5]]" {
		t.Errorf("batches %s", got)
	}
	if got := fmt.Sprint(sc.Batches(testStages, 1, 2)); got != "[[1 3]]" {
		t.Errorf("batches from a global first step %s", got)
	}
	// An elementwise step writing the slot a global step of its batch reads.
	sc = scenario.NewBuilder(2).Step(2, 0, 1, 0).Step(0, 1, 1, 0).Step(0, 0, 0, 0).Scenario()
	if got := fmt.Sprint(sc.Batches(testStages, 0, 3)); got != "[[0 2] [2 3]]" {
		t.Errorf("write-after-read batches %s", got)
	}
}

// runAndCompare runs sc on the device over several launch shapes (many
// work-groups, fewer work-items than elements) and compares with the host.
func runAndCompare(t *testing.T, d device.Device, q device.Queue, sc scenario.Scenario, n int) {
	ctx := context.Background()
	p, err := scenario.Build(ctx, d, testStages, sc.Slots)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	s, err := p.Upload(ctx, q, sc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	init := make([][]float32, sc.Slots)
	for k := range init {
		init[k] = make([]float32, n)
		for i := range init[k] {
			init[k][i] = float32((i*7+k*13)%101) - 50
		}
	}
	want := make([][]float32, sc.Slots)
	for k := range want {
		want[k] = append([]float32(nil), init[k]...)
	}
	scenario.Reference(sc, testRef, want)
	for _, l := range []scenario.Launch{{Groups: 1, Local: 1}, {Groups: 4, Local: 16}, {Groups: 7, Local: 32}, scenario.DefaultLaunch(n)} {
		t.Run(fmt.Sprintf("%dx%d", l.Groups, l.Local), func(t *testing.T) {
			bufs := make([]device.Buffer, sc.Slots)
			for k := range bufs {
				b, err := d.Alloc(int64(4*n), device.ReadWrite)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Release()
				bufs[k] = b
				wait(t)(q.Write(b, 0, f32bytes(init[k])))
			}
			// The whole scenario, then again in two halves by scenario index.
			ev, err := p.Run(q, s, 0, len(sc.Steps), bufs, n, l)
			wait(t)(ev, err)
			check(t, q, bufs, want, n)
			for k := range bufs {
				wait(t)(q.Write(bufs[k], 0, f32bytes(init[k])))
			}
			h := len(sc.Steps) / 2
			ev, err = p.Run(q, s, 0, h, bufs, n, l)
			wait(t)(ev, err)
			ev, err = p.Run(q, s, h, len(sc.Steps)-h, bufs, n, l)
			wait(t)(ev, err)
			check(t, q, bufs, want, n)
		})
	}
}

func check(t *testing.T, q device.Queue, bufs []device.Buffer, want [][]float32, n int) {
	t.Helper()
	for k, b := range bufs {
		raw := make([]byte, 4*n)
		wait(t)(q.Read(raw, b, 0))
		got := bytesf32(raw)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[k][i])); d > 1e-3*math.Max(1, math.Abs(float64(want[k][i]))) {
				t.Fatalf("slot %d element %d: got %g, want %g", k, i, got[i], want[k][i])
			}
		}
	}
}

// mixed is a scenario over three slots: elementwise chains through a swap
// pair, global stages cutting it into batches, in-place steps.
func mixed() scenario.Scenario {
	b := scenario.NewBuilder(3)
	for it := range 5 {
		b.Step(0, 0, 1, float32(it)).Swap(0, 1)
		b.Step(1, 0, 0, 1)
		b.Step(2, 0, 2, 0)
		b.Step(3, 2, 1, 0.25).Swap(0, 1)
		b.Step(0, 2, 2, -1)
	}
	return b.Scenario()
}

func TestOpenCL(t *testing.T) {
	d, q := openCL(t)
	t.Run("chain", func(t *testing.T) {
		runAndCompare(t, d, q, scenario.Chain([]int{0, 1, 0, 0, 1}, []float32{1, 2, 3, 4, 5}, 7).Scenario(), 1000)
	})
	t.Run("mixed", func(t *testing.T) { runAndCompare(t, d, q, mixed(), 777) })
}

func TestCUDA(t *testing.T) {
	d, q := openCUDA(t)
	t.Run("chain", func(t *testing.T) {
		runAndCompare(t, d, q, scenario.Chain([]int{0, 1, 0, 0, 1}, []float32{1, 2, 3, 4, 5}, 7).Scenario(), 1000)
	})
	t.Run("mixed", func(t *testing.T) { runAndCompare(t, d, q, mixed(), 100000) })
}

func TestRunBadArgs(t *testing.T) {
	d, q := openCL(t)
	ctx := context.Background()
	p, err := scenario.Build(ctx, d, testStages, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if _, err := p.Upload(ctx, q, scenario.Scenario{Slots: 3, Steps: []scenario.Step{{}}}); err == nil || !strings.Contains(err.Error(), "built for 2") {
		t.Errorf("slots mismatch: %v", err)
	}
	s, err := p.Upload(ctx, q, scenario.Chain([]int{0}, nil, 3).Scenario())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	b, _ := d.Alloc(16, device.ReadWrite)
	defer b.Release()
	if _, err := p.Run(q, s, 2, 5, []device.Buffer{b, b}, 4, scenario.DefaultLaunch(4)); err == nil || !strings.Contains(err.Error(), "within the stream's 3 steps") {
		t.Errorf("range: %v", err)
	}
	if _, err := p.Run(q, s, 0, 3, []device.Buffer{b, b}, 8, scenario.DefaultLaunch(8)); err == nil || !strings.Contains(err.Error(), "fewer than n=8") {
		t.Errorf("size: %v", err)
	}
	if _, err := p.Run(q, s, 0, 3, []device.Buffer{b}, 4, scenario.DefaultLaunch(4)); err == nil || !strings.Contains(err.Error(), "one per slot") {
		t.Errorf("buffers: %v", err)
	}
}

// TestStageKernels runs a chain as one launch per stage with the
// StageKernels form and compares with the host.
func TestStageKernels(t *testing.T) {
	d, q := openCL(t)
	ctx := context.Background()
	src, err := scenario.StageKernels(scenario.OpenCL, testStages)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := d.Build(ctx, device.Source{Name: "stages.cl", Text: src}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	const n = 500
	sc := scenario.Chain([]int{0, 2, 1, 3}, []float32{1, 0, 2, 0.5}, 3).Scenario()
	init := make([]float32, n)
	for i := range init {
		init[i] = float32(i%17) - 8
	}
	want := [][]float32{append([]float32(nil), init...), make([]float32, n)}
	scenario.Reference(sc, testRef, want)
	bufs := make([]device.Buffer, 2)
	for k := range bufs {
		b, err := d.Alloc(4*n, device.ReadWrite)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Release()
		bufs[k] = b
	}
	wait(t)(q.Write(bufs[0], 0, f32bytes(init)))
	wait(t)(q.Write(bufs[1], 0, f32bytes(make([]float32, n))))
	for _, st := range sc.Steps {
		k, err := prog.Kernel(scenario.StageKernelName(testStages[st.Stage].Name))
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range []any{bufs[st.In], bufs[st.Out], int32(n), st.Param} {
			if err := k.SetArg(j, v); err != nil {
				t.Fatal(err)
			}
		}
		wait(t)(q.Launch(k, device.Groups(3, 32)))
		k.Release()
	}
	check(t, q, bufs, want, n)
}
