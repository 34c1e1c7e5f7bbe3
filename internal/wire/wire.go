// Package wire is the one wire format of sluice's messages between
// processes: the frames of a cross-machine stream (over NATS or a direct
// TCP connection) and the credits that bound it, the parts of a long
// message split into chunks (flow-model remote calls, MPI), the limits a
// decoder checks before it allocates, the policy that batches a stream's
// small firings into chunks, and the names of stream subjects.
//
// A stream frame is a 13-byte header (payload length, 4 bytes little
// endian; a flags byte; a sequence number, 8 bytes little endian) and a
// payload of whole tokens. A credit is 8 bytes little endian: the number
// of tokens the receiver took in since its last credit. Over NATS one
// message is one frame (or one credit); over TCP frames and credits are
// back to back on the two directions of one connection.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

const (
	// Chunk is the largest payload of one frame or message part, in bytes:
	// below NATS's default 1 MiB message limit with room for headers.
	Chunk = 256 << 10
	// MaxFrame bounds a frame's payload whatever chunk size a sender was
	// configured with; a decoder refuses a larger one before allocating.
	MaxFrame = 16 << 20
	// MaxMessage bounds a message reassembled from parts (an MPI message,
	// a flow-model stream); checked before allocating.
	MaxMessage = 1 << 30
	// HeaderLen is a frame header's length in bytes.
	HeaderLen = 13
	// CreditLen is a credit's length in bytes.
	CreditLen = 8
	// FlagEnd marks the frame that ends a stream (no payload).
	FlagEnd = 1
)

// ErrTransit is a stream's frames lost or duplicated on the way (a broker
// restarted under it, say): the sequence numbers do not follow.
var ErrTransit = errors.New("chunks were lost or duplicated in transit")

// Header is a frame's header.
type Header struct {
	// Len is the payload's length in bytes.
	Len int
	// Flags holds FlagEnd or nothing.
	Flags byte
	// Seq numbers the stream's frames from 0.
	Seq uint64
}

// Put writes h into b, which has at least HeaderLen bytes.
func (h Header) Put(b []byte) {
	_ = b[HeaderLen-1]
	binary.LittleEndian.PutUint32(b, uint32(h.Len))
	b[4] = h.Flags
	binary.LittleEndian.PutUint64(b[5:], h.Seq)
}

// End reports whether h ends its stream.
func (h Header) End() bool { return h.Flags&FlagEnd != 0 }

// Limits bound the frames a decoder accepts.
type Limits struct {
	// TokenSize is the stream's token size in bytes (at least 1).
	TokenSize int
	// Window is the most tokens one frame may carry (the stream's credit
	// window); frames are also bounded by MaxFrame.
	Window int
}

// MaxPayload is the largest payload in bytes a frame may carry under l.
func (l Limits) MaxPayload() int {
	return int(min(int64(l.Window)*int64(max(l.TokenSize, 1)), MaxFrame))
}

// Decoder checks a stream's frame headers in order: their bounds, and that
// their sequence numbers follow from 0.
type Decoder struct {
	lim  Limits
	next uint64
}

// NewDecoder returns a decoder of a stream's headers under lim.
func NewDecoder(lim Limits) *Decoder { return &Decoder{lim: lim} }

// Header decodes and checks the next frame's header from b (at least
// HeaderLen bytes). It fails, naming what it expected, when the flags are
// unknown, an end frame has a payload, a data frame's payload is empty,
// not whole tokens or over the limits, or the sequence number does not
// follow (wrapping ErrTransit).
func (d *Decoder) Header(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, fmt.Errorf("frame header of %d bytes: expected %d", len(b), HeaderLen)
	}
	h := Header{Len: int(binary.LittleEndian.Uint32(b)), Flags: b[4], Seq: binary.LittleEndian.Uint64(b[5:])}
	if h.Flags&^FlagEnd != 0 {
		return h, fmt.Errorf("frame %d: flags %#x: expected 0 or %#x (end of stream)", h.Seq, h.Flags, FlagEnd)
	}
	if h.Seq != d.next {
		return h, fmt.Errorf("frame %d, expected frame %d: %w", h.Seq, d.next, ErrTransit)
	}
	ts := max(d.lim.TokenSize, 1)
	switch {
	case h.End() && h.Len != 0:
		return h, fmt.Errorf("end-of-stream frame %d with %d bytes: expected none", h.Seq, h.Len)
	case !h.End() && (h.Len == 0 || h.Len%ts != 0 || h.Len > d.lim.MaxPayload()):
		return h, fmt.Errorf("data frame of %d bytes: expected 1 to %d whole %d-byte tokens", h.Len, d.lim.MaxPayload()/ts, ts)
	}
	d.next++
	return h, nil
}

// Message decodes one frame that came whole (a NATS message): its header
// and payload, checking that the header's length is the payload's.
func (d *Decoder) Message(msg []byte) (Header, []byte, error) {
	h, err := d.Header(msg)
	if err != nil {
		return h, nil, err
	}
	if p := msg[HeaderLen:]; len(p) != h.Len {
		return h, nil, fmt.Errorf("frame %d of %d bytes: its header says %d", h.Seq, len(p), h.Len)
	}
	return h, msg[HeaderLen:], nil
}

// Encoder numbers a stream's frames.
type Encoder struct{ next uint64 }

// Header returns the next frame's header for a payload of n bytes (n = 0
// and end set: the end of the stream) and counts it.
func (e *Encoder) Header(n int, end bool) Header {
	h := Header{Len: n, Seq: e.next}
	if end {
		h.Flags = FlagEnd
	}
	e.next++
	return h
}

// AppendCredit appends a credit for n tokens to b.
func AppendCredit(b []byte, n int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(n)) }

// Credits counts the tokens a sender may still send: its window, less what
// it sent, plus the credits it read back.
type Credits struct {
	// N is the number of tokens the sender may send now.
	N      int64
	window int64
	part   [CreditLen]byte // an incomplete credit read so far
	have   int
}

// NewCredits returns a full window of window tokens.
func NewCredits(window int) *Credits { return &Credits{N: int64(window), window: int64(window)} }

// Sent takes n tokens off the credits.
func (c *Credits) Sent(n int) { c.N -= int64(n) }

// Add takes the credits in p, bytes read from a connection in any
// pieces: whole credits count, a partial one waits for its rest. It fails
// when the outstanding credits leave 0..window.
func (c *Credits) Add(p []byte) error {
	for len(p) > 0 {
		k := copy(c.part[c.have:], p)
		c.have += k
		p = p[k:]
		if c.have < CreditLen {
			break
		}
		c.have = 0
		if err := c.take(binary.LittleEndian.Uint64(c.part[:])); err != nil {
			return err
		}
	}
	return nil
}

// Message takes one credit that came whole (a NATS message).
func (c *Credits) Message(b []byte) error {
	if len(b) != CreditLen {
		return fmt.Errorf("credit message of %d bytes: expected %d", len(b), CreditLen)
	}
	return c.take(binary.LittleEndian.Uint64(b))
}

func (c *Credits) take(v uint64) error {
	if v > uint64(c.window) || c.N+int64(v) > c.window {
		return fmt.Errorf("credits for %d more tokens with %d outstanding: expected at most the window of %d in all", v, c.N, c.window)
	}
	c.N += int64(v)
	return nil
}

// CreditBatch is how many tokens a receiver takes in before it returns
// them as one credit: a quarter of the window, at most a chunk, so that
// credits go back in chunks and never hold the sender up for long.
func CreditBatch(window, tokenSize int) int {
	return max(1, min(window/4, Chunk/max(tokenSize, 1)))
}

// DefaultFlush is how long a sender waits for a batch to fill a chunk
// before it sends what it has: a bound on the latency batching adds.
const DefaultFlush = 500 * time.Microsecond

// MaxFlush bounds the flush timeout a sender accepts.
const MaxFlush = time.Second

// Batch is a sender's batching policy: it sends when Tokens tokens are
// ready, or when Flush passed since the first of them was (Flush 0: it
// sends what is ready at once). Most is the largest batch it sends in one
// write (in frames of at most ChunkTokens).
type Batch struct {
	Tokens, Most, ChunkTokens int
	Flush                     time.Duration
}

// NewBatch returns the batching of a stream of tokenSize-byte tokens with
// window tokens of credit, frames of at most chunk bytes (0: Chunk), and
// the flush timeout flush (0: DefaultFlush; < 0: none). A batch is at most
// half the window, so a producer that can fill its FIFO never waits for
// the timeout, and the window keeps two batches in flight.
func NewBatch(tokenSize, window, chunk int, flush time.Duration) Batch {
	if chunk <= 0 {
		chunk = Chunk
	}
	chunk = min(chunk, MaxFrame)
	ts := max(tokenSize, 1)
	ct := max(1, chunk/ts)
	switch {
	case flush == 0:
		flush = DefaultFlush
	case flush < 0:
		flush = 0
	case flush > MaxFlush:
		flush = MaxFlush
	}
	return Batch{Tokens: max(1, min(ct, window/2)), Most: max(1, min(window, max(ct, window/4))), ChunkTokens: ct, Flush: flush}
}

// Parts is the number of Chunk-sized parts a message of n bytes travels
// in (at least 1: an empty message is one empty part).
func Parts(n int) int { return max(1, (n+Chunk-1)/Chunk) }

// Part returns part i of data.
func Part(data []byte, i int) []byte {
	return data[min(i*Chunk, len(data)):min((i+1)*Chunk, len(data))]
}

// Assembly reassembles a message from its parts, sent in order.
type Assembly struct {
	buf   []byte
	total int
}

// Add takes the part at byte offset off of a message of total bytes, at
// most max bytes (0: MaxMessage), and returns the message once complete.
// A part at offset 0 starts a new message. It checks the bounds before it
// allocates, and that parts follow one another.
func (a *Assembly) Add(off, total int, p []byte, most int) ([]byte, bool, error) {
	if most <= 0 {
		most = MaxMessage
	}
	switch {
	case total < 0 || total > most:
		return nil, false, fmt.Errorf("message of %d bytes: expected 0 to %d", total, most)
	case len(p) > Chunk:
		return nil, false, fmt.Errorf("message part of %d bytes: expected at most %d", len(p), Chunk)
	case off < 0 || off+len(p) > total:
		return nil, false, fmt.Errorf("message part of %d bytes at offset %d: expected it within the message's %d bytes", len(p), off, total)
	}
	if off == 0 {
		if len(p) == total {
			a.buf, a.total = nil, 0
			return p, true, nil
		}
		a.buf, a.total = make([]byte, 0, total), total
	} else if a.buf == nil || total != a.total || off != len(a.buf) {
		have := 0
		if a.buf != nil {
			have = len(a.buf)
		}
		return nil, false, fmt.Errorf("message part at offset %d of %d bytes: expected the part at offset %d", off, total, have)
	}
	a.buf = append(a.buf, p...)
	if len(a.buf) < total {
		return nil, false, nil
	}
	m := a.buf
	a.buf, a.total = nil, 0
	return m, true, nil
}

// PartOffset and PartTotal are the header fields of a message that
// carries a part: the part's byte offset and the whole message's length.
const (
	PartOffset = "Off"
	PartTotal  = "Total"
)

// HeaderFields is what a part's header fields are read from and written
// to (nats.Header has these methods).
type HeaderFields interface {
	Get(key string) string
	Set(key, value string)
}

// SetPart records part off of a message of total bytes in h.
func SetPart(h HeaderFields, off, total int) {
	h.Set(PartOffset, strconv.Itoa(off))
	h.Set(PartTotal, strconv.Itoa(total))
}

// PartOf reads a part's offset and the message's total length from h.
func PartOf(h HeaderFields) (off, total int, err error) {
	off, err1 := strconv.Atoi(h.Get(PartOffset))
	total, err2 := strconv.Atoi(h.Get(PartTotal))
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("message part: offset %q and total %q: expected byte counts", h.Get(PartOffset), h.Get(PartTotal))
	}
	return off, total, nil
}

// Dir is a stream's direction, seen from the client that runs the graph.
type Dir int

const (
	// In streams go from the client to a worker's actor.
	In Dir = iota
	// Out streams go from a worker's actor to the client.
	Out
)

// DataName names stream i's data ("in.N" or "out.N"): the last tokens of
// its NATS subject, and the stream a direct TCP connection is for.
func DataName(d Dir, i int) string {
	if d == In {
		return "in." + strconv.Itoa(i)
	}
	return "out." + strconv.Itoa(i)
}

// CreditName names stream i's credits over NATS ("inc.N" or "outc.N").
func CreditName(d Dir, i int) string {
	if d == In {
		return "inc." + strconv.Itoa(i)
	}
	return "outc." + strconv.Itoa(i)
}

// Subject joins tokens into a NATS subject. Each token must be non-empty
// and free of '.', wildcards and white space; a token that is not fails
// with what it found.
func Subject(tokens ...string) (string, error) {
	for _, t := range tokens {
		if t == "" || strings.ContainsAny(t, ".*> \t\r\n") {
			return "", fmt.Errorf("subject token %q: expected a non-empty name without '.', '*', '>' or white space", t)
		}
	}
	return strings.Join(tokens, "."), nil
}
