package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// The boolean-dataflow Switch and Select built-ins, for conditional graphs
// wired by hand (processes mode; the fused pattern is graph.Conditional).
func init() {
	RegisterBuiltin("switch", "routes each block of its data input to the output chosen by one control token; in: ctl (integer: u8 for a boolean, i32 for n-way), then data; out: one port per control value, the data's type; params: block=1 (tokens per control token); a process: ports have dynamic rates", newSwitch)
	RegisterBuiltin("select", "forwards each block from the input chosen by one control token to its output, in control order; in: ctl (integer), then one data input per control value; out: one port, the data's type; params: block=1; a process: ports have dynamic rates", newSelect)
}

// routeShape checks a switch's or select's ports: the first input is an
// integer control, and the data ports (many on one side, one on the other)
// all have the same token type.
func routeShape(a *graph.Actor, p Params, many []*graph.Port, one *graph.Port, side string) (int, error) {
	if err := p.Only("block"); err != nil {
		return 0, err
	}
	block, err := p.Int("block", 1)
	if err != nil {
		return 0, err
	}
	if block < 1 {
		return 0, fmt.Errorf("block %d: expected at least 1 token per control token", block)
	}
	if len(a.Inputs) == 0 || !graph.IsIntegerType(a.Inputs[0].Type) {
		return 0, fmt.Errorf("expected the first input to be the control port of an integer type (u8, i32, ...)")
	}
	if one == nil || len(many) == 0 {
		return 0, fmt.Errorf("expected one data port and at least one %s (one per control value)", side)
	}
	for _, q := range many {
		if q.Type != one.Type {
			return 0, fmt.Errorf("port %s has type %s but %s has %s: expected one data type", q.FullName(), q.Type, one.FullName(), one.Type)
		}
	}
	return block, nil
}

func newSwitch(a *graph.Actor, p Params) (any, error) {
	var data *graph.Port
	if len(a.Inputs) == 2 {
		data = a.Inputs[1]
	}
	block, err := routeShape(a, p, a.Outputs, data, "output")
	if err != nil {
		return nil, err
	}
	ct := a.Inputs[0].Type
	return ProcessFunc(func(pr *Process) error {
		return routeLoop(pr, ct, len(a.Outputs), func(v int64) (*fifo.Reader, *fifo.Writer) {
			return pr.In(1), pr.Out(int(v))
		}, block)
	}), nil
}

func newSelect(a *graph.Actor, p Params) (any, error) {
	var out *graph.Port
	if len(a.Outputs) == 1 {
		out = a.Outputs[0]
	}
	var ins []*graph.Port
	if len(a.Inputs) > 1 {
		ins = a.Inputs[1:]
	}
	block, err := routeShape(a, p, ins, out, "input")
	if err != nil {
		return nil, err
	}
	ct := a.Inputs[0].Type
	return ProcessFunc(func(pr *Process) error {
		return routeLoop(pr, ct, len(ins), func(v int64) (*fifo.Reader, *fifo.Writer) {
			return pr.In(1 + int(v)), pr.Out(0)
		}, block)
	}), nil
}

// routeLoop reads control tokens until the control stream ends; for each,
// it moves one block from the reader to the writer that pick chooses.
func routeLoop(pr *Process, ct graph.TokenType, n int, pick func(int64) (*fifo.Reader, *fifo.Writer), block int) error {
	ctx := pr.Context()
	ctl := pr.In(0)
	for k := int64(0); ; k++ {
		cb, err := ctl.Acquire(ctx, 1)
		if errors.Is(err, fifo.ErrClosed) {
			return nil
		} else if err != nil {
			return err
		}
		v, err := controlValue(cb, ct)
		ctl.Release(1)
		if err != nil {
			return err
		}
		if v < 0 || v >= int64(n) {
			return fmt.Errorf("%s: control token %d has value %d: expected 0..%d", pr.Actor().Name, k, v, n-1)
		}
		r, w := pick(v)
		if err := moveBlock(ctx, r, w, block); err != nil {
			return fmt.Errorf("%s: control token %d: %w", pr.Actor().Name, k, err)
		}
	}
}

// moveBlock copies block tokens from r to w through their windows.
func moveBlock(ctx context.Context, r *fifo.Reader, w *fifo.Writer, block int) error {
	src, err := r.Acquire(ctx, block)
	if err != nil {
		return err
	}
	dst, err := w.Acquire(ctx, block)
	if err != nil {
		return err
	}
	copy(dst, src)
	w.Commit(block)
	r.Release(block)
	return nil
}
