// Package scenario runs a chain of kernel stages resident on one device as
// ONE generated kernel driven by a scenario: the host issues one launch for
// many stage executions instead of one launch per stage.
//
// A Program merges the bodies of its Stages into a single kernel (OpenCL C
// or CUDA C, chosen by the device's backend) that walks a scenario stream
// held in device memory. Each Step of the stream names a stage, the buffer
// slots it reads and writes and a scalar parameter. A launch is given a
// scenario index — the first step and the number of steps — so one uploaded
// stream serves many launches (a whole run, one iteration, a batch).
//
// Buffers are addressed through slots. A Builder records steps against
// logical buffers and swap pairs (Swap exchanges the physical buffers behind
// two logical names, as when a stage's output becomes the next iteration's
// input), and compiles them into physical slots.
//
// Work is spread over any number of work-groups with a grid-stride loop.
// An elementwise stage reads only the element its work-item writes, so
// consecutive elementwise steps need no synchronisation between work-groups
// and run inside one launch. A stage that reads other elements (Stage.Global)
// needs the previous step complete on the whole grid: the Program cuts the
// scenario into batches there, one launch per batch, each batch walked inside
// the kernel. See docs/scenario.md.
package scenario

import (
	"fmt"
	"regexp"
)

// Stage is one kernel actor of the chain: a body in the C subset common to
// OpenCL C and CUDA C that computes element i of its output.
//
// The body sees: `in` (const float pointer, the input slot), `out` (float
// pointer, the output slot), `i` (int, the element), `n` (int, the number
// of elements) and `p` (float, the step's parameter). It must write
// out[i]. An elementwise body reads only in[i]; a body that reads other
// elements of in must set Global.
type Stage struct {
	// Name identifies the stage (a C identifier).
	Name string
	// Body is the code, e.g. "out[i] = 2.0f * in[i] + p;".
	Body string
	// Global is true when the body reads elements of in other than in[i].
	Global bool
}

// Step is one stage execution of a scenario: stage Stage reads slot In and
// writes slot Out with parameter Param.
type Step struct {
	Stage   int
	In, Out int
	Param   float32
}

// Scenario is the compiled list of steps over Slots physical buffers.
type Scenario struct {
	Steps []Step
	// Slots is the number of buffers the steps address.
	Slots int
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkStages validates stage names and bodies.
func checkStages(stages []Stage) error {
	if len(stages) == 0 {
		return fmt.Errorf("scenario: expected at least one stage, found none")
	}
	seen := map[string]int{}
	for i, s := range stages {
		if !ident.MatchString(s.Name) {
			return fmt.Errorf("scenario: stage %d: name %q: expected a C identifier", i, s.Name)
		}
		if j, ok := seen[s.Name]; ok {
			return fmt.Errorf("scenario: stage %d: name %q already used by stage %d", i, s.Name, j)
		}
		seen[s.Name] = i
		if s.Body == "" {
			return fmt.Errorf("scenario: stage %d (%s): empty body: expected code writing out[i]", i, s.Name)
		}
	}
	return nil
}

// Validate checks every step against nstages stages (global tells which
// read other elements) and the scenario's slots.
func (sc Scenario) Validate(stages []Stage) error {
	if sc.Slots < 1 {
		return fmt.Errorf("scenario: expected at least one buffer slot, found %d", sc.Slots)
	}
	for k, st := range sc.Steps {
		if st.Stage < 0 || st.Stage >= len(stages) {
			return fmt.Errorf("scenario: step %d: stage %d: expected 0..%d", k, st.Stage, len(stages)-1)
		}
		for _, s := range []int{st.In, st.Out} {
			if s < 0 || s >= sc.Slots {
				return fmt.Errorf("scenario: step %d (%s): slot %d: expected 0..%d", k, stages[st.Stage].Name, s, sc.Slots-1)
			}
		}
		if stages[st.Stage].Global && st.In == st.Out {
			return fmt.Errorf("scenario: step %d (%s): a global stage reads other elements, so it cannot read and write the same slot %d", k, stages[st.Stage].Name, st.In)
		}
	}
	return nil
}

// Batches cuts steps [start, start+count) into launches, returned as
// [first, end). Within a launch work-groups are not synchronised, so a new
// batch begins
//   - at every global stage (it reads elements that other work-items wrote
//     in earlier steps), and
//   - at a step that writes a slot a global stage of the current batch
//     read (other work-items may still be reading it).
func (sc Scenario) Batches(stages []Stage, start, count int) [][2]int {
	var out [][2]int
	b := start
	read := map[int]bool{} // slots read by global stages of the batch
	for k := start; k < start+count; k++ {
		st := sc.Steps[k]
		g := stages[st.Stage].Global
		if k > b && (g || read[st.Out]) {
			out = append(out, [2]int{b, k})
			b = k
			clear(read)
		}
		if g {
			read[st.In] = true
		}
	}
	if count > 0 {
		out = append(out, [2]int{b, start + count})
	}
	return out
}

// Builder records steps against logical buffers with swap pairs.
type Builder struct {
	phys  []int // logical → physical slot
	steps []Step
}

// NewBuilder starts a scenario over slots buffers; logical buffer j is
// physical slot j until a Swap.
func NewBuilder(slots int) *Builder {
	b := &Builder{phys: make([]int, slots)}
	for i := range b.phys {
		b.phys[i] = i
	}
	return b
}

// Step appends stage reading logical buffer in and writing logical buffer
// out with parameter p.
func (b *Builder) Step(stage, in, out int, p float32) *Builder {
	b.steps = append(b.steps, Step{Stage: stage, In: b.slot(in), Out: b.slot(out), Param: p})
	return b
}

// slot maps a logical buffer to its physical slot; an out-of-range buffer
// is kept as is so that Validate reports it.
func (b *Builder) slot(l int) int {
	if l < 0 || l >= len(b.phys) {
		return l
	}
	return b.phys[l]
}

// Swap exchanges the physical buffers behind logical buffers a and b (a
// swap pair): later steps that name a use what b named, and the reverse.
func (b *Builder) Swap(x, y int) *Builder {
	if x >= 0 && y >= 0 && x < len(b.phys) && y < len(b.phys) {
		b.phys[x], b.phys[y] = b.phys[y], b.phys[x]
	}
	return b
}

// Where returns the physical slot that logical buffer l names now.
func (b *Builder) Where(l int) int { return b.slot(l) }

// Scenario returns the compiled steps.
func (b *Builder) Scenario() Scenario {
	return Scenario{Steps: append([]Step(nil), b.steps...), Slots: len(b.phys)}
}

// Chain builds the scenario of a chain of stages applied iterations times
// to logical buffer 0 through a swap pair (0, 1): every step reads buffer 0
// and writes buffer 1, then the pair swaps. params[k] is stage k's
// parameter (0 when params is short). The result ends in Where(0).
func Chain(stages []int, params []float32, iterations int) *Builder {
	b := NewBuilder(2)
	for range iterations {
		for k, s := range stages {
			var p float32
			if k < len(params) {
				p = params[k]
			}
			b.Step(s, 0, 1, p).Swap(0, 1)
		}
	}
	return b
}
