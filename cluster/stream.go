package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/internal/wire"
)

// A cross-machine channel over NATS is two subjects: data frames from the
// producer's side to the consumer's, and credits back (internal/wire's
// format: one frame or one credit per message; subjects named by
// wire.DataName and wire.CreditName under the job's subject). The producer
// sends at most window tokens that were not credited yet, so at most one
// window is ever in flight, and the consumer's FIFO (of window tokens)
// absorbs it. The producer batches small firings into chunks (wire.Batch):
// it sends when a batch is ready or its flush timeout passed.

// DefaultChunk is the largest data message's payload.
const DefaultChunk = wire.Chunk

// streamLimit bounds the bytes a stream may carry; what makes the error.
type streamLimit struct {
	max  int64 // bytes; 0 = no limit
	what func(n int64) error
	gate *sendGate // senders: a checkpoint's barrier (checkpoint.go)
}

// errTransit is a data stream's chunks lost or duplicated on the way (a
// broker restarted under it, say): the job's data path was cut, which a
// run with checkpoints recovers from as from a lost worker.
var errTransit = wire.ErrTransit

// sendStream reads r until end of stream and publishes its tokens on subj
// in chunks of at most chunk bytes, never more than window tokens ahead of
// the credits that arrive on credits, batching small firings for at most
// flush (0: wire.DefaultFlush; < 0: none). It publishes an end-of-stream
// message last. moved is called after tokens were released.
func sendStream(ctx context.Context, nc *nats.Conn, subj string, credits *nats.Subscription, r *fifo.Reader, tsize, window, chunk int, flush time.Duration, moved func(), lim streamLimit) error {
	cr := wire.NewCredits(window)
	b := wire.NewBatch(tsize, window, chunk, flush)
	var enc wire.Encoder
	var sent, sentTok int64
	take := func(m *nats.Msg) error {
		if err := cr.Message(m.Data); err != nil {
			return fmt.Errorf("on %s: %w", m.Subject, err)
		}
		return nil
	}
	for {
		for cr.N <= 0 {
			m, err := credits.NextMsgWithContext(ctx)
			if err != nil {
				return cause(ctx, err)
			}
			if err := take(m); err != nil {
				return err
			}
		}
		for { // take credits that already arrived
			m, err := credits.NextMsg(0)
			if err != nil {
				break
			}
			if err := take(m); err != nil {
				return err
			}
		}
		want, err := lim.gate.allow(ctx, sentTok, int(min(int64(b.ChunkTokens), cr.N)))
		if err != nil {
			return cause(ctx, err)
		}
		n, err := ready(ctx, r, want, b)
		if errors.Is(err, fifo.ErrClosed) {
			msg := make([]byte, wire.HeaderLen)
			enc.Header(0, true).Put(msg)
			if err := nc.Publish(subj, msg); err != nil {
				return fmt.Errorf("sending end of stream on %s: %w", subj, err)
			}
			return nil
		}
		if err != nil {
			return cause(ctx, err)
		}
		k := lim.gate.clamp(sentTok, n)
		if k == 0 {
			continue // a barrier closed the gate meanwhile
		}
		win := r.TryAcquire(k)
		sent += int64(len(win))
		sentTok += int64(k)
		if lim.max > 0 && sent > lim.max {
			return lim.what(sent)
		}
		msg := make([]byte, wire.HeaderLen+len(win))
		enc.Header(len(win), false).Put(msg)
		copy(msg[wire.HeaderLen:], win)
		if err := nc.Publish(subj, msg); err != nil {
			return fmt.Errorf("sending %d tokens on %s: %w", k, subj, err)
		}
		r.Release(k)
		cr.Sent(k)
		if moved != nil {
			moved()
		}
	}
}

// ready returns how many tokens of r to send now, 1 to want: it waits for
// the first token, then for a batch (b.Tokens, at most want) for at most
// b.Flush, and takes what is there then. It fails with fifo.ErrClosed at
// the end of the stream.
func ready(ctx context.Context, r *fifo.Reader, want int, b wire.Batch) (int, error) {
	lo := min(b.Tokens, want)
	n := r.Available()
	if n == 0 {
		if _, err := r.Acquire(ctx, 1); err != nil {
			return 0, err
		}
		n = r.Available()
	}
	if n < lo && b.Flush > 0 {
		fctx, stop := context.WithTimeout(ctx, b.Flush)
		_, err := r.Acquire(fctx, lo)
		stop()
		if err != nil && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		// The batch is ready, the flush timeout passed or the stream
		// ended: what is there goes.
		n = r.Available()
	}
	return min(n, want), nil
}

// recvStream writes the chunks arriving on data into w until end of
// stream, and publishes credits on credSubj as the tokens enter w. It
// fails on a sequence gap or repeat (lost or duplicated data). It does not
// close w.
func recvStream(ctx context.Context, nc *nats.Conn, data *nats.Subscription, credSubj string, w *fifo.Writer, tsize, window int, moved func(), lim streamLimit) error {
	dec := wire.NewDecoder(wire.Limits{TokenSize: tsize, Window: window})
	var pending, got int64
	thr := int64(wire.CreditBatch(window, tsize))
	credit := func() error {
		if pending == 0 {
			return nil
		}
		b := wire.AppendCredit(make([]byte, 0, wire.CreditLen), pending)
		pending = 0
		return nc.Publish(credSubj, b)
	}
	for {
		m, err := data.NextMsgWithContext(ctx)
		if err != nil {
			return cause(ctx, err)
		}
		h, p, err := dec.Message(m.Data)
		if err != nil {
			return fmt.Errorf("on %s: %w", m.Subject, err)
		}
		if h.End() {
			return nil
		}
		got += int64(len(p))
		if lim.max > 0 && got > lim.max {
			return lim.what(got)
		}
		if err := w.Write(ctx, p); err != nil {
			return cause(ctx, err)
		}
		if moved != nil {
			moved()
		}
		pending += int64(len(p) / tsize)
		if pending >= thr {
			if err := credit(); err != nil {
				return fmt.Errorf("sending credits on %s: %w", credSubj, err)
			}
		}
		// Nothing more queued: return credits now rather than sit on them.
		if n, _, _ := data.Pending(); n == 0 {
			if err := credit(); err != nil {
				return fmt.Errorf("sending credits on %s: %w", credSubj, err)
			}
		}
	}
}

// cause returns ctx's cause when ctx ended, else err.
func cause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		if c := context.Cause(ctx); c != nil {
			return c
		}
	}
	return err
}
