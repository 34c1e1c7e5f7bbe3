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
)

// joinTag is the tag of Join's barrier (user tags are >= 0).
const joinTag = -1

// AnySource matches a message from any rank in a receive.
const AnySource = -1

// chunk is the largest payload of one NATS message (below the default
// 1 MiB limit); longer messages travel in pieces, reassembled in order.
const chunk = 512 << 10

// maxPieces bounds the pieces of one message (2 GiB in all).
const maxPieces = 4096

// Comm is one rank's membership in a job of Size ranks. A Comm is used by
// one goroutine (its rank); messages arrive in the background.
type Comm struct {
	nc         *nats.Conn
	job        string
	rank, size int
	sub        *nats.Subscription

	mu      sync.Mutex
	box     map[key][][]byte // complete messages by source and tag
	partial map[string]*partialMsg
	notify  chan struct{} // signalled when a message completes
	nextID  uint64
	pending []*Request
	closed  bool
}

type key struct{ src, tag int }

type partialMsg struct {
	tag  int
	n    int
	data []byte
	got  int
}

// subject is where rank r receives in job.
func subject(job string, r int) string { return "sluice.mpi." + job + "." + strconv.Itoa(r) }

// Join makes this process (or goroutine) rank of a job of size ranks over
// nc. It returns once every other rank of the job has joined too, so that
// no message is sent before its receiver listens.
func Join(ctx context.Context, nc *nats.Conn, job string, rank, size int) (*Comm, error) {
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("mpi: rank %d of %d: expected 0 <= rank < size", rank, size)
	}
	c := &Comm{nc: nc, job: job, rank: rank, size: size, box: map[key][][]byte{}, partial: map[string]*partialMsg{}, notify: make(chan struct{}, 1)}
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
	src, _ := strconv.Atoi(m.Header.Get("Src"))
	tag, _ := strconv.Atoi(m.Header.Get("Tag"))
	seq, _ := strconv.Atoi(m.Header.Get("Seq"))
	n, _ := strconv.Atoi(m.Header.Get("N"))
	total, _ := strconv.Atoi(m.Header.Get("Total"))
	id := m.Header.Get("Src") + "/" + m.Header.Get("Id")
	c.mu.Lock()
	defer c.mu.Unlock()
	if n <= 1 {
		c.file(src, tag, m.Data)
		return
	}
	if total < 0 || total > n*chunk || n > maxPieces {
		return // not a message this package sends: drop it
	}
	p := c.partial[id]
	if p == nil {
		p = &partialMsg{tag: tag, n: n, data: make([]byte, 0, total)}
		c.partial[id] = p
	}
	if seq != p.got {
		return // out of order: cannot happen on one NATS connection
	}
	p.data = append(p.data, m.Data...)
	p.got++
	if p.got == p.n {
		delete(c.partial, id)
		c.file(src, tag, p.data)
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

// take removes the oldest message from src (or AnySource) with tag.
func (c *Comm) take(src, tag int) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if src == AnySource {
		for k, q := range c.box {
			if k.tag == tag && len(q) > 0 {
				return c.pop(k), true
			}
		}
		return nil, false
	}
	k := key{src, tag}
	if len(c.box[k]) == 0 {
		return nil, false
	}
	return c.pop(k), true
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
	n := max(1, (len(data)+chunk-1)/chunk)
	for i := 0; i < n; i++ {
		m := nats.NewMsg(subject(c.job, dst))
		m.Header.Set("Src", strconv.Itoa(c.rank))
		m.Header.Set("Tag", strconv.Itoa(tag))
		m.Header.Set("Id", id)
		m.Header.Set("Seq", strconv.Itoa(i))
		m.Header.Set("N", strconv.Itoa(n))
		m.Header.Set("Total", strconv.Itoa(len(data)))
		m.Data = data[i*chunk : min((i+1)*chunk, len(data))]
		if err := c.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("mpi: rank %d: send to %d: %w", c.rank, dst, err)
		}
	}
	return ctx.Err()
}

// RecvData waits for a message from src (or AnySource) with tag.
func (c *Comm) RecvData(ctx context.Context, src, tag int) ([]byte, error) {
	for {
		if d, ok := c.take(src, tag); ok {
			return d, nil
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
