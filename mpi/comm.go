// Package mpi is a message-passing API for ranks that combine receiving
// data, firing a flow-model on a device and sending the results (the
// Recv-Calculate-Send model): synchronous RecvSend, Recv and Send,
// asynchronous IRecvSend, IRecv and ISend, and Wait and Test, whose
// progress engine advances every pending request of the rank, not only the
// one waited for. Ranks are goroutines or processes, on one host or on
// several, joined by a NATS connection (a cluster's broker tree, or any
// NATS server).
package mpi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/internal/wire"
)

// joinTag is the tag of Join's barrier (user tags are >= 0).
const joinTag = -1

// AnySource matches a message from any rank in a receive.
const AnySource = -1

// Messages longer than internal/wire's chunk travel in parts (each names
// its offset and the message's length, wire.SetPart), reassembled in order
// with the bounds checked before anything is allocated (wire.Assembly).

// Comm is one rank's membership in a job of Size ranks. A Comm is used by
// one goroutine (its rank); messages arrive in the background.
type Comm struct {
	nc         *nats.Conn
	job        string
	rank, size int
	sub        *nats.Subscription

	mu      sync.Mutex
	box     map[key][][]byte          // complete messages by source and tag
	partial map[string]*wire.Assembly // messages arriving in parts, by source/id
	bad     error                     // the first malformed message that arrived
	notify  chan struct{}             // signalled when a message completes
	nextID  uint64
	pending []*Request
	closed  bool
}

type key struct{ src, tag int }

// subject is where rank r receives in job.
func subject(job string, r int) string { return "sluice.mpi." + job + "." + strconv.Itoa(r) }

// Join makes this process (or goroutine) rank of a job of size ranks over
// nc. It returns once every other rank of the job has joined too, so that
// no message is sent before its receiver listens.
func Join(ctx context.Context, nc *nats.Conn, job string, rank, size int) (*Comm, error) {
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("mpi: rank %d of %d: expected 0 <= rank < size", rank, size)
	}
	if _, err := wire.Subject("sluice", "mpi", job); err != nil {
		return nil, fmt.Errorf("mpi: job %q: %w", job, err)
	}
	c := &Comm{nc: nc, job: job, rank: rank, size: size, box: map[key][][]byte{}, partial: map[string]*wire.Assembly{}, notify: make(chan struct{}, 1)}
	sub, err := nc.Subscribe(subject(job, rank), c.deliver)
	if err != nil {
		return nil, fmt.Errorf("mpi: rank %d: %w", rank, err)
	}
	_ = sub.SetPendingLimits(-1, -1)
	c.sub = sub
	if err := nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	for r := 0; r < size; r++ {
		if r != rank {
			if err := c.ping(ctx, r); err != nil {
				sub.Unsubscribe()
				return nil, err
			}
		}
	}
	// Every rank now listens, but a fast rank could finish and leave
	// before a slow one has pinged it: a barrier keeps all until all know.
	if err := c.Barrier(ctx, joinTag); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	return c, nil
}

// ping waits until rank r answers.
func (c *Comm) ping(ctx context.Context, r int) error {
	for {
		m := nats.NewMsg(subject(c.job, r))
		m.Header.Set("Ping", "1")
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.nc.RequestMsgWithContext(pctx, m)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mpi: rank %d: rank %d of job %s did not join: %w", c.rank, r, c.job, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Rank returns this rank's number; Size the job's number of ranks.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks in the job.
func (c *Comm) Size() int { return c.size }

// Close leaves the job: later messages to this rank are dropped.
func (c *Comm) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.sub.Unsubscribe()
}

// deliver files one incoming piece; complete messages go to the mailbox.
func (c *Comm) deliver(m *nats.Msg) {
	if m.Header.Get("Ping") != "" {
		_ = m.Respond(nil)
		return
	}
	src, err1 := strconv.Atoi(m.Header.Get("Src"))
	tag, err2 := strconv.Atoi(m.Header.Get("Tag"))
	off, total, err3 := wire.PartOf(m.Header)
	id := m.Header.Get("Src") + "/" + m.Header.Get("Id")
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := errors.Join(err1, err2, err3); err != nil || src < 0 || src >= c.size {
		c.refuse(fmt.Errorf("mpi: rank %d: a message with source %q and tag %q: expected a rank below %d and a tag: %v", c.rank, m.Header.Get("Src"), m.Header.Get("Tag"), c.size, err))
		return
	}
	a := c.partial[id]
	if a == nil {
		a = &wire.Assembly{}
	}
	data, done, err := a.Add(off, total, m.Data, 0)
	switch {
	case err != nil:
		delete(c.partial, id)
		c.refuse(fmt.Errorf("mpi: rank %d: a message from rank %d with tag %d: %w", c.rank, src, tag, err))
	case done:
		delete(c.partial, id)
		c.file(src, tag, data)
	default:
		c.partial[id] = a
	}
}

// refuse records the first malformed message (mu held) and wakes a
// waiter, whose receive fails with it.
func (c *Comm) refuse(err error) {
	if c.bad == nil {
		c.bad = err
	}
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// file adds a complete message (mu held) and wakes a waiter.
func (c *Comm) file(src, tag int, data []byte) {
	k := key{src, tag}
	c.box[k] = append(c.box[k], data)
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// take removes the oldest message from src (or AnySource) with tag; it
// fails once a malformed message arrived.
func (c *Comm) take(src, tag int) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bad != nil {
		return nil, false, c.bad
	}
	if src == AnySource {
		for k, q := range c.box {
			if k.tag == tag && len(q) > 0 {
				return c.pop(k), true, nil
			}
		}
		return nil, false, nil
	}
	k := key{src, tag}
	if len(c.box[k]) == 0 {
		return nil, false, nil
	}
	return c.pop(k), true, nil
}

func (c *Comm) pop(k key) []byte {
	q := c.box[k]
	d := q[0]
	if len(q) == 1 {
		delete(c.box, k)
	} else {
		c.box[k] = q[1:]
	}
	return d
}

// SendData sends data to rank dst with tag (plain MPI send, no flow-model).
// It returns once the message is handed to the transport.
func (c *Comm) SendData(ctx context.Context, dst, tag int, data []byte) error {
	if dst < 0 || dst >= c.size {
		return fmt.Errorf("mpi: rank %d: send to rank %d: expected 0..%d", c.rank, dst, c.size-1)
	}
	c.mu.Lock()
	c.nextID++
	id := strconv.FormatUint(c.nextID, 10)
	c.mu.Unlock()
	if len(data) > wire.MaxMessage {
		return fmt.Errorf("mpi: rank %d: send to %d: a message of %d bytes: expected at most %d", c.rank, dst, len(data), wire.MaxMessage)
	}
	for i := range wire.Parts(len(data)) {
		m := nats.NewMsg(subject(c.job, dst))
		m.Header.Set("Src", strconv.Itoa(c.rank))
		m.Header.Set("Tag", strconv.Itoa(tag))
		m.Header.Set("Id", id)
		wire.SetPart(m.Header, i*wire.Chunk, len(data))
		m.Data = wire.Part(data, i)
		if err := c.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("mpi: rank %d: send to %d: %w", c.rank, dst, err)
		}
	}
	return ctx.Err()
}

// RecvData waits for a message from src (or AnySource) with tag.
func (c *Comm) RecvData(ctx context.Context, src, tag int) ([]byte, error) {
	for {
		if d, ok, err := c.take(src, tag); err != nil || ok {
			return d, err
		}
		select {
		case <-c.notify:
		case <-ctx.Done():
			return nil, fmt.Errorf("mpi: rank %d: receive from %d tag %d: %w", c.rank, src, tag, ctx.Err())
		}
	}
}

// Barrier returns once every rank of the job has called Barrier with the
// same tag.
func (c *Comm) Barrier(ctx context.Context, tag int) error {
	var errs []error
	for r := 0; r < c.size; r++ {
		if r != c.rank {
			errs = append(errs, c.SendData(ctx, r, tag, nil))
		}
	}
	for r := 0; r < c.size; r++ {
		if r != c.rank {
			_, err := c.RecvData(ctx, r, tag)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
