package actors

import (
	"context"
	"io"
)

// cancelReader reads r in a goroutine of its own, one read at a time, so
// that a firing waiting for input returns when the run's context is done.
// Standard input (a terminal, a pipe nobody writes) can block a read
// forever and no deadline reaches it: without this, a run stopped by
// --max-time, a signal or the workbench waited for its next line. The
// goroutine of a read under way stays blocked until the input gives
// something or the process ends; a later Read takes what it got.
type cancelReader struct {
	ctx     context.Context
	r       io.Reader
	buf     []byte          // what the read under way reads into
	pending chan readResult // the read under way; nil when none
	left    []byte          // bytes read and not yet returned
	err     error           // the input's error, returned once left is empty
}

type readResult struct {
	n   int
	err error
}

// newCancelReader returns a reader of r that gives up when ctx is done.
func newCancelReader(ctx context.Context, r io.Reader) *cancelReader {
	return &cancelReader{ctx: ctx, r: r, buf: make([]byte, 64<<10)}
}

// Read returns bytes already read, else waits for the read under way (one
// is started when none is) or for the context, whichever comes first.
func (c *cancelReader) Read(p []byte) (int, error) {
	if len(c.left) == 0 && c.err == nil {
		if c.pending == nil {
			ch := make(chan readResult, 1)
			c.pending = ch
			go func(buf []byte) {
				n, err := c.r.Read(buf)
				ch <- readResult{n, err}
			}(c.buf)
		}
		select {
		case res := <-c.pending:
			c.pending = nil
			c.left, c.err = c.buf[:res.n], res.err
		case <-c.ctx.Done():
			return 0, context.Cause(c.ctx)
		}
	}
	if len(c.left) == 0 {
		return 0, c.err
	}
	n := copy(p, c.left)
	c.left = c.left[n:]
	return n, nil
}
