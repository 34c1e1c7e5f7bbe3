package mpi

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/flowmodel"
)

// Endpoint ties a flow-model stream to a peer: a receive fills Stream with
// the message from Rank (or AnySource) carrying Tag; a send sends Stream to
// Rank with Tag.
type Endpoint struct {
	Rank   int
	Tag    int
	Stream string
}

// Op is one Recv-Calculate-Send operation on a flow-model instance.
type Op struct {
	// Model is the flow-model mapped on a device (flowmodel.Host.Map),
	// local or remote. Its swap pairs apply between iterations.
	Model flowmodel.Instance
	// Recv lists the input streams filled by messages.
	Recv []Endpoint
	// Inputs are input streams the caller provides (Calculate-Send).
	Inputs map[string][]byte
	// Iterations is how many times the flow-model fires (default 1).
	Iterations int
	// Send lists the output streams sent to peers.
	Send []Endpoint
	// Results names output streams returned to the caller in
	// Request.Results (Recv-Calculate).
	Results []string
}

// Request is an operation under way. Wait and Test complete it.
type Request struct {
	c       *Comm
	op      Op
	got     []bool
	fired   bool
	sent    int
	done    bool
	err     error
	results map[string][]byte
}

// Results returns the streams named in Op.Results, once the request is done.
func (r *Request) Results() map[string][]byte { return r.results }

// Done reports whether the request has completed (successfully or not).
func (r *Request) Done() bool { return r.done }

// start validates op and queues it.
func (c *Comm) start(op Op) (*Request, error) {
	if op.Model == nil {
		return nil, fmt.Errorf("mpi: rank %d: expected a flow-model instance", c.rank)
	}
	for _, e := range append(append([]Endpoint(nil), op.Recv...), op.Send...) {
		if e.Rank != AnySource && (e.Rank < 0 || e.Rank >= c.size) {
			return nil, fmt.Errorf("mpi: rank %d: peer rank %d for stream %s: expected 0..%d", c.rank, e.Rank, e.Stream, c.size-1)
		}
	}
	r := &Request{c: c, op: op, got: make([]bool, len(op.Recv)), results: map[string][]byte{}}
	c.pending = append(c.pending, r)
	return r, nil
}

// IRecvSend starts receive → fire → send and returns at once.
func (c *Comm) IRecvSend(op Op) (*Request, error) {
	if len(op.Recv) == 0 || len(op.Send) == 0 {
		return nil, fmt.Errorf("mpi: rank %d: IRecvSend: expected streams to receive and to send", c.rank)
	}
	return c.start(op)
}

// IRecv starts receive → fire; the streams named in op.Results come back
// in Request.Results.
func (c *Comm) IRecv(op Op) (*Request, error) {
	if len(op.Recv) == 0 || len(op.Results) == 0 {
		return nil, fmt.Errorf("mpi: rank %d: IRecv: expected streams to receive and results to return", c.rank)
	}
	return c.start(op)
}

// ISend starts fire (on op.Inputs) → send.
func (c *Comm) ISend(op Op) (*Request, error) {
	if len(op.Send) == 0 {
		return nil, fmt.Errorf("mpi: rank %d: ISend: expected streams to send", c.rank)
	}
	return c.start(op)
}

// RecvSend is IRecvSend then Wait.
func (c *Comm) RecvSend(ctx context.Context, op Op) error {
	r, err := c.IRecvSend(op)
	if err != nil {
		return err
	}
	return c.Wait(ctx, r)
}

// Recv is IRecv then Wait; it returns the result streams.
func (c *Comm) Recv(ctx context.Context, op Op) (map[string][]byte, error) {
	r, err := c.IRecv(op)
	if err != nil {
		return nil, err
	}
	return r.results, c.Wait(ctx, r)
}

// Send is ISend then Wait.
func (c *Comm) Send(ctx context.Context, op Op) error {
	r, err := c.ISend(op)
	if err != nil {
		return err
	}
	return c.Wait(ctx, r)
}

// Test advances every pending request as far as it can go without waiting
// for messages and reports whether r is done (with its error).
func (c *Comm) Test(ctx context.Context, r *Request) (bool, error) {
	c.progress(ctx)
	return r.done, r.err
}

// Wait advances pending requests until r is done and returns its error.
// Other requests progress meanwhile: a request whose messages have all
// come fires and sends even while Wait waits for another.
func (c *Comm) Wait(ctx context.Context, r *Request) error {
	for {
		c.progress(ctx)
		if r.done {
			return r.err
		}
		select {
		case <-c.notify:
		case <-ctx.Done():
			return fmt.Errorf("mpi: rank %d: wait: %w", c.rank, ctx.Err())
		}
	}
}

// WaitAll waits for every request and returns the first error.
func (c *Comm) WaitAll(ctx context.Context, rs ...*Request) error {
	var first error
	for _, r := range rs {
		if err := c.Wait(ctx, r); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// progress is the engine: it advances every pending request in order and
// drops those done.
func (c *Comm) progress(ctx context.Context) {
	keep := c.pending[:0]
	for _, r := range c.pending {
		if !r.done {
			if err := r.advance(ctx); err != nil {
				r.err, r.done = err, true
			}
		}
		if !r.done {
			keep = append(keep, r)
		}
	}
	clear(c.pending[len(keep):])
	c.pending = keep
}

// advance moves r on: take the messages that have come, fire once all
// have, then send and collect results.
func (r *Request) advance(ctx context.Context) error {
	op := r.op
	all := true
	for i, e := range op.Recv {
		if r.got[i] {
			continue
		}
		d, ok, err := r.c.take(e.Rank, e.Tag)
		if err != nil {
			return err
		}
		if !ok {
			all = false
			continue
		}
		if err := op.Model.Write(ctx, e.Stream, d); err != nil {
			return fmt.Errorf("mpi: rank %d: message from %d tag %d into %s: %w", r.c.rank, e.Rank, e.Tag, e.Stream, err)
		}
		r.got[i] = true
	}
	if !all {
		return nil
	}
	if !r.fired {
		for s, d := range op.Inputs {
			if err := op.Model.Write(ctx, s, d); err != nil {
				return err
			}
		}
		if err := op.Model.Fire(ctx, op.Iterations); err != nil {
			return fmt.Errorf("mpi: rank %d: %w", r.c.rank, err)
		}
		r.fired = true
	}
	for ; r.sent < len(op.Send); r.sent++ {
		e := op.Send[r.sent]
		d, err := op.Model.Read(ctx, e.Stream)
		if err != nil {
			return err
		}
		if err := r.c.SendData(ctx, e.Rank, e.Tag, d); err != nil {
			return err
		}
	}
	for _, s := range op.Results {
		d, err := op.Model.Read(ctx, s)
		if err != nil {
			return err
		}
		r.results[s] = d
	}
	r.done = true
	return nil
}
