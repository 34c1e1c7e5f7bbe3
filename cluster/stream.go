package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/fifo"
)

// A cross-machine channel is two NATS subjects: data chunks from the
// producer's side to the consumer's, and credits back. A data message is a
// 9-byte header (sequence number, little endian, and a flags byte) and a
// whole number of tokens; a credit message is the number of tokens the
// consumer's side has taken into its FIFO (8 bytes). The producer sends at
// most window tokens that were not credited yet, so at most one window is
// ever in flight, and the consumer's FIFO (of window tokens) absorbs it.

const (
	hdrLen  = 9
	flagEOS = 1
	// DefaultChunk is the largest data message's payload.
	DefaultChunk = 256 << 10
)

// streamLimit bounds the bytes a stream may carry; what makes the error.
type streamLimit struct {
	max  int64 // bytes; 0 = no limit
	what func(n int64) error
	gate *sendGate // senders: a checkpoint's barrier (checkpoint.go)
}

// sendStream reads r until end of stream and publishes its tokens on subj
// in chunks of at most chunk bytes, never more than window tokens ahead of
// the credits that arrive on credits. It publishes an end-of-stream message
// last. moved is called after tokens were released.
// errTransit is a data stream's chunks lost or duplicated on the way (a
// broker restarted under it, say): the job's data path was cut, which a
// run with checkpoints recovers from as from a lost worker.
var errTransit = errors.New("chunks were lost or duplicated in transit")

func sendStream(ctx context.Context, nc *nats.Conn, subj string, credits *nats.Subscription, r *fifo.Reader, tsize, window, chunk int, moved func(), lim streamLimit) error {
	credit := int64(window)
	chunkTok := max(1, chunk/tsize)
	var seq uint64
	var sent, sentTok int64
	take := func(m *nats.Msg) error {
		if len(m.Data) != 8 {
			return fmt.Errorf("credit message of %d bytes on %s: expected 8", len(m.Data), m.Subject)
		}
		credit += int64(binary.LittleEndian.Uint64(m.Data))
		return nil
	}
	for {
		for credit <= 0 {
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
		want, err := lim.gate.allow(ctx, sentTok, int(min(int64(chunkTok), credit)))
		if err != nil {
			return cause(ctx, err)
		}
		win := r.TryAcquire(want)
		if len(win) == 0 {
			if _, err := r.Acquire(ctx, 1); err != nil {
				if errors.Is(err, fifo.ErrClosed) {
					msg := make([]byte, hdrLen)
					binary.LittleEndian.PutUint64(msg, seq)
					msg[8] = flagEOS
					if err := nc.Publish(subj, msg); err != nil {
						return fmt.Errorf("sending end of stream on %s: %w", subj, err)
					}
					return nil
				}
				return cause(ctx, err)
			}
			continue
		}
		k := lim.gate.clamp(sentTok, len(win)/tsize)
		if k == 0 {
			continue // a barrier closed the gate meanwhile
		}
		win = win[:k*tsize]
		sent += int64(len(win))
		sentTok += int64(k)
		if lim.max > 0 && sent > lim.max {
			return lim.what(sent)
		}
		msg := make([]byte, hdrLen+len(win))
		binary.LittleEndian.PutUint64(msg, seq)
		copy(msg[hdrLen:], win)
		if err := nc.Publish(subj, msg); err != nil {
			return fmt.Errorf("sending %d tokens on %s: %w", k, subj, err)
		}
		seq++
		r.Release(k)
		credit -= int64(k)
		if moved != nil {
			moved()
		}
	}
}

// recvStream writes the chunks arriving on data into w until end of
// stream, and publishes credits on credSubj as the tokens enter w. It
// fails on a sequence gap or repeat (lost or duplicated data). It does not
// close w.
func recvStream(ctx context.Context, nc *nats.Conn, data *nats.Subscription, credSubj string, w *fifo.Writer, tsize, window int, moved func(), lim streamLimit) error {
	var seq uint64
	var pending, got int64
	thr := int64(max(1, window/4))
	credit := func() error {
		if pending == 0 {
			return nil
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(pending))
		pending = 0
		return nc.Publish(credSubj, b[:])
	}
	for {
		m, err := data.NextMsgWithContext(ctx)
		if err != nil {
			return cause(ctx, err)
		}
		if len(m.Data) < hdrLen || (len(m.Data)-hdrLen)%tsize != 0 {
			return fmt.Errorf("data message of %d bytes on %s: expected a %d-byte header and whole %d-byte tokens", len(m.Data), m.Subject, hdrLen, tsize)
		}
		if s := binary.LittleEndian.Uint64(m.Data); s != seq {
			return fmt.Errorf("data chunk %d on %s, expected chunk %d: %w", s, m.Subject, seq, errTransit)
		}
		seq++
		if m.Data[8]&flagEOS != 0 {
			return nil
		}
		p := m.Data[hdrLen:]
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
