// Package scenario runs a chain of elementwise kernel stages resident on
// one device as ONE generated kernel driven by a scenario (Caravela's
// scenario-based execution, seed §5.3, in modern form): the scenario stream
// is a device buffer of stage indices, a scenario index (first, steps)
// picks the part to run, and each work-item walks it with its element kept
// in a register, so the swap pair of every step (output of step k is the
// input of step k+1) costs nothing and the host issues one launch for many
// stage executions.
//
// Because the stages are elementwise (work-item i reads element i and
// writes element i), no work-item needs another's result between steps: the
// launch may span any number of work-groups with no grid-wide
// synchronisation, and the result equals the per-step launches exactly.
// Stages that read other elements (stencils, reductions) need a grid-wide
// barrier between steps and are not handled here.
//
// The same chain is also built as one kernel per stage, for the per-kernel
// baseline (RunPerKernel: one launch per step, ping-ponging two buffers).
// Sources are generated in OpenCL C or CUDA C from the device's backend.
package scenario

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/device"
)

// Stage is one elementwise float32 stage: Expr is a C expression in x (the
// input element) valid in OpenCL C and CUDA C, e.g. "x * 0.5f + 1.0f".
type Stage struct {
	// Name names the stage in errors.
	Name string
	// Expr computes the output element from x.
	Expr string
}

// Chain is a set of stages compiled for one device: the merged scenario
// kernel and one kernel per stage.
type Chain struct {
	d      device.Device
	prog   device.Program
	walk   device.Kernel
	single []device.Kernel
	n      int
	// Local is the work-group size of launches (default 64).
	Local int
}

// Compile generates and builds the scenario kernel and the per-stage
// kernels of stages for d (an OpenCL or CUDA device).
func Compile(ctx context.Context, d device.Device, stages []Stage) (*Chain, error) {
	if len(stages) == 0 {
		return nil, fmt.Errorf("scenario: no stages: expected at least one")
	}
	for i, s := range stages {
		if strings.TrimSpace(s.Expr) == "" || strings.ContainsAny(s.Expr, ";{}") {
			return nil, fmt.Errorf("scenario: stage %d (%s): expression %q: expected one C expression in x, without ; { }", i, s.Name, s.Expr)
		}
	}
	backend := d.Info().Backend
	src, err := Source(backend, stages)
	if err != nil {
		return nil, err
	}
	name := "scenario.cl"
	if backend == "cuda" {
		name = "scenario.cu"
	}
	prog, err := d.Build(ctx, device.Source{Name: name, Text: src}, "")
	if err != nil {
		return nil, fmt.Errorf("scenario: building the chain for %s: %w", d.Info().ID, err)
	}
	c := &Chain{d: d, prog: prog, n: len(stages), Local: 64}
	if c.walk, err = prog.Kernel("scenario_walk"); err != nil {
		_ = prog.Release()
		return nil, err
	}
	for i := range stages {
		k, err := prog.Kernel(fmt.Sprintf("scenario_stage%d", i))
		if err != nil {
			_ = c.Release()
			return nil, err
		}
		c.single = append(c.single, k)
	}
	return c, nil
}

// Source returns the generated source for a backend ("opencl" or "cuda").
func Source(backend string, stages []Stage) (string, error) {
	var b strings.Builder
	var fn, kern, global, idx string
	switch backend {
	case "opencl":
		fn, kern, global, idx = "static inline float", "__kernel void", "__global ", "get_global_id(0)"
	case "cuda":
		fn, kern, global, idx = "__device__ __forceinline__ float", `extern "C" __global__ void`, "", "blockIdx.x * blockDim.x + threadIdx.x"
	default:
		return "", fmt.Errorf("scenario: backend %q: expected opencl or cuda", backend)
	}
	for i, s := range stages {
		fmt.Fprintf(&b, "%s stage%d(float x) { return (%s); }\n", fn, i, s.Expr)
	}
	fmt.Fprintf(&b, `
%[1]s scenario_walk(%[2]sconst float *in, %[2]sfloat *out, %[2]sconst int *scen, int first, int steps, int n) {
	int i = (int)(%[3]s);
	if (i >= n) return;
	float x = in[i];
	for (int s = first; s < first + steps; s++) {
		switch (scen[s]) {
`, kern, global, idx)
	for i := range stages {
		fmt.Fprintf(&b, "\t\tcase %d: x = stage%d(x); break;\n", i, i)
	}
	b.WriteString("\t\t}\n\t}\n\tout[i] = x;\n}\n")
	for i := range stages {
		fmt.Fprintf(&b, `
%[1]s scenario_stage%[4]d(%[2]sconst float *in, %[2]sfloat *out, int n) {
	int i = (int)(%[3]s);
	if (i < n) out[i] = stage%[4]d(in[i]);
}
`, kern, global, idx, i)
	}
	return b.String(), nil
}

func (c *Chain) rng(n int) device.Range {
	l := c.Local
	if l <= 0 {
		l = 64
	}
	return device.Groups((n+l-1)/l, l)
}

// Run walks the scenario steps [first, first+steps) of scen (a device
// buffer of int32 stage indices) over the n elements of in, writing out:
// ONE launch, over as many work-groups as n needs. in and out may be the
// same buffer.
func (c *Chain) Run(q device.Queue, in, out, scen device.Buffer, first, steps, n int, wait ...device.Event) (device.Event, error) {
	if first < 0 || steps < 0 || int64(4*(first+steps)) > scen.Size() {
		return nil, fmt.Errorf("scenario: steps [%d, %d): expected a range inside the scenario's %d steps", first, first+steps, scen.Size()/4)
	}
	if int64(4*n) > in.Size() || int64(4*n) > out.Size() {
		return nil, fmt.Errorf("scenario: %d elements: expected buffers of at least %d bytes, found %d and %d", n, 4*n, in.Size(), out.Size())
	}
	for i, a := range []any{in, out, scen, int32(first), int32(steps), int32(n)} {
		if err := c.walk.SetArg(i, a); err != nil {
			return nil, err
		}
	}
	return q.Launch(c.walk, c.rng(n), wait...)
}

// RunPerKernel is the baseline: one launch per scenario step, each
// reading one buffer of the swap pair (a, b) and writing the other, the
// pair swapped after every step. It returns the last launch's event and
// the buffer holding the result.
func (c *Chain) RunPerKernel(q device.Queue, a, b device.Buffer, scen []int32, n int, wait ...device.Event) (device.Event, device.Buffer, error) {
	var ev device.Event
	for _, s := range scen {
		if s < 0 || int(s) >= c.n {
			return nil, nil, fmt.Errorf("scenario: stage index %d: expected 0 to %d", s, c.n-1)
		}
		k := c.single[s]
		for i, arg := range []any{a, b, int32(n)} {
			if err := k.SetArg(i, arg); err != nil {
				return nil, nil, err
			}
		}
		e, err := q.Launch(k, c.rng(n), wait...)
		if err != nil {
			return nil, nil, err
		}
		if ev != nil {
			ev.Release()
		}
		ev, wait = e, nil
		a, b = b, a
	}
	return ev, a, nil
}

// Release frees the kernels and the program.
func (c *Chain) Release() error {
	if c.walk != nil {
		_ = c.walk.Release()
	}
	for _, k := range c.single {
		_ = k.Release()
	}
	return c.prog.Release()
}
