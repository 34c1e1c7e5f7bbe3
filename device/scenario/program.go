package scenario

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluicehq/sluice/device"
)

// Program is the merged kernel of a chain of stages built for one device.
type Program struct {
	dev    device.Device
	lang   Lang
	stages []Stage
	slots  int
	prog   device.Program
	kernel device.Kernel
}

// LangOf returns the kernel language for device d's backend.
func LangOf(d device.Device) (Lang, error) {
	switch b := d.Info().Backend; b {
	case "opencl":
		return OpenCL, nil
	case "cuda":
		return CUDA, nil
	default:
		return 0, fmt.Errorf("scenario on %s: backend %q: expected opencl or cuda: %w", d.Info(), b, device.ErrUnsupported)
	}
}

// Build generates the merged kernel of stages over slots buffers and
// builds it for d.
func Build(ctx context.Context, d device.Device, stages []Stage, slots int) (*Program, error) {
	lang, err := LangOf(d)
	if err != nil {
		return nil, err
	}
	src, err := Generate(lang, stages, slots)
	if err != nil {
		return nil, err
	}
	name := "scenario.cl"
	if lang == CUDA {
		name = "scenario.cu"
	}
	prog, err := d.Build(ctx, device.Source{Name: name, Text: src}, "")
	if err != nil {
		return nil, fmt.Errorf("scenario: building the merged kernel of %d stages: %w", len(stages), err)
	}
	k, err := prog.Kernel(KernelName)
	if err != nil {
		prog.Release()
		return nil, err
	}
	return &Program{dev: d, lang: lang, stages: append([]Stage(nil), stages...), slots: slots, prog: prog, kernel: k}, nil
}

// Lang returns the language the kernel was generated in.
func (p *Program) Lang() Lang { return p.lang }

// Release frees the kernel and the program.
func (p *Program) Release() error {
	p.kernel.Release()
	return p.prog.Release()
}

// Stream is a scenario uploaded to device memory.
type Stream struct {
	sc  Scenario
	buf device.Buffer
}

// Len returns the number of steps.
func (s *Stream) Len() int { return len(s.sc.Steps) }

// Release frees the stream's device memory.
func (s *Stream) Release() error { return s.buf.Release() }

// Encode returns the scenario stream's words: StepWords little-endian
// 32-bit words per step.
func Encode(sc Scenario) []byte {
	out := make([]byte, 0, len(sc.Steps)*StepWords*4)
	for _, st := range sc.Steps {
		out = binary.LittleEndian.AppendUint32(out, uint32(st.Stage))
		out = binary.LittleEndian.AppendUint32(out, uint32(st.In))
		out = binary.LittleEndian.AppendUint32(out, uint32(st.Out))
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(st.Param))
	}
	return out
}

// Upload validates sc against the program and copies it to the device on
// q, waiting for the copy.
func (p *Program) Upload(ctx context.Context, q device.Queue, sc Scenario) (*Stream, error) {
	if sc.Slots != p.slots {
		return nil, fmt.Errorf("scenario: %d slots: the program was built for %d", sc.Slots, p.slots)
	}
	if err := sc.Validate(p.stages); err != nil {
		return nil, err
	}
	if len(sc.Steps) == 0 {
		return nil, fmt.Errorf("scenario: expected at least one step, found none")
	}
	words := Encode(sc)
	buf, err := p.dev.Alloc(int64(len(words)), device.ReadOnly)
	if err != nil {
		return nil, fmt.Errorf("scenario: stream of %d steps: %w", len(sc.Steps), err)
	}
	ev, err := q.Write(buf, 0, words)
	if err == nil {
		err = ev.Wait(ctx)
		ev.Release()
	}
	if err != nil {
		buf.Release()
		return nil, fmt.Errorf("scenario: uploading %d steps: %w", len(sc.Steps), err)
	}
	return &Stream{sc: sc, buf: buf}, nil
}

// Launch is the shape of a scenario launch: Groups work-groups of Local
// work-items (the grid-stride loop covers any number of elements).
type Launch struct {
	Groups, Local int
}

// DefaultLaunch covers n elements with work-groups of 64 work-items, at
// most 1024 groups.
func DefaultLaunch(n int) Launch {
	g := (n + 63) / 64
	return Launch{Groups: max(1, min(g, 1024)), Local: 64}
}

// Run enqueues steps [start, start+count) of s over bufs (one per slot, n
// float32 elements each) on q: one launch per batch (see
// Scenario.Batches; a single launch when no step after the first is a
// global stage). It returns the event of the last launch.
func (p *Program) Run(q device.Queue, s *Stream, start, count int, bufs []device.Buffer, n int, l Launch) (device.Event, error) {
	if start < 0 || count < 1 || start+count > s.Len() {
		return nil, fmt.Errorf("scenario: steps [%d, %d): expected a non-empty range within the stream's %d steps", start, start+count, s.Len())
	}
	if len(bufs) != p.slots {
		return nil, fmt.Errorf("scenario: %d buffers: expected one per slot (%d)", len(bufs), p.slots)
	}
	for k, b := range bufs {
		if b.Size() < int64(4*n) {
			return nil, fmt.Errorf("scenario: slot %d: buffer of %s holds fewer than n=%d floats", k, device.Size(b.Size()), n)
		}
	}
	if l.Groups < 1 || l.Local < 1 {
		return nil, fmt.Errorf("scenario: launch of %d groups × %d items: expected both ≥ 1", l.Groups, l.Local)
	}
	if err := p.setArgs(s, bufs, n); err != nil {
		return nil, err
	}
	var last device.Event
	for _, bt := range s.sc.Batches(p.stages, start, count) {
		if err := p.kernel.SetArg(1, int32(bt[0])); err != nil {
			return nil, err
		}
		if err := p.kernel.SetArg(2, int32(bt[1]-bt[0])); err != nil {
			return nil, err
		}
		ev, err := q.Launch(p.kernel, device.Groups(l.Groups, l.Local))
		if last != nil {
			last.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("scenario: launching steps [%d, %d): %w", bt[0], bt[1], err)
		}
		last = ev
	}
	return last, nil
}

func (p *Program) setArgs(s *Stream, bufs []device.Buffer, n int) error {
	args := []any{s.buf, int32(0), int32(0), int32(n)}
	for _, b := range bufs {
		args = append(args, b)
	}
	for i, a := range args {
		if err := p.kernel.SetArg(i, a); err != nil {
			return fmt.Errorf("scenario: argument %d: %w", i, err)
		}
	}
	return nil
}

// Reference computes the scenario on the host with f, the stages' Go
// equivalents (f[k](in, out, i, p) writes out[i]): the result a device run
// must match.
func Reference(sc Scenario, f []func(in, out []float32, i int, p float32), bufs [][]float32) {
	for _, st := range sc.Steps {
		in, out := bufs[st.In], bufs[st.Out]
		for i := range out {
			f[st.Stage](in, out, i, st.Param)
		}
	}
}
