package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/http"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
)

func frame(h Header, payload []byte) []byte {
	b := make([]byte, HeaderLen+len(payload))
	h.Put(b)
	copy(b[HeaderLen:], payload)
	return b
}

// TestDecoderHeader checks every refusal of the header decoder and that
// sequence numbers must follow.
func TestDecoderHeader(t *testing.T) {
	t.Parallel()
	lim := Limits{TokenSize: 4, Window: 8}
	for _, tc := range []struct {
		name string
		h    Header
		seq  uint64 // the decoder's expected sequence number
		want string // "" = accepted
	}{
		{"one token", Header{Len: 4}, 0, ""},
		{"the window", Header{Len: 32, Seq: 3}, 3, ""},
		{"end", Header{Flags: FlagEnd, Seq: 1}, 1, ""},
		{"empty data frame", Header{Len: 0}, 0, "data frame of 0 bytes: expected 1 to 8 whole 4-byte tokens"},
		{"not whole tokens", Header{Len: 6}, 0, "data frame of 6 bytes"},
		{"over the window", Header{Len: 36}, 0, "data frame of 36 bytes: expected 1 to 8"},
		{"huge", Header{Len: 1<<32 - 4}, 0, "data frame of 4294967292 bytes"},
		{"end with payload", Header{Len: 4, Flags: FlagEnd}, 0, "end-of-stream frame 0 with 4 bytes: expected none"},
		{"unknown flags", Header{Len: 4, Flags: 6}, 0, "flags 0x6: expected 0 or 0x1"},
		{"gap", Header{Len: 4, Seq: 2}, 1, "frame 2, expected frame 1"},
		{"repeat", Header{Len: 4, Seq: 0}, 1, "frame 0, expected frame 1"},
	} {
		d := &Decoder{lim: lim, next: tc.seq}
		b := make([]byte, HeaderLen)
		tc.h.Put(b)
		h, err := d.Header(b)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, expected it accepted", tc.name, err)
		case tc.want == "" && (h != tc.h || d.next != tc.seq+1):
			t.Errorf("%s: decoded %+v (next %d), expected %+v (next %d)", tc.name, h, d.next, tc.h, tc.seq+1)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, expected an error with %q", tc.name, err, tc.want)
		case tc.want != "" && d.next != tc.seq:
			t.Errorf("%s: a refused frame moved the sequence to %d", tc.name, d.next)
		}
	}
	if _, err := NewDecoder(lim).Header(make([]byte, HeaderLen-1)); err == nil || !strings.Contains(err.Error(), "frame header of 12 bytes: expected 13") {
		t.Errorf("short header: %v", err)
	}
	d := &Decoder{lim: lim, next: 1}
	b := make([]byte, HeaderLen)
	Header{Len: 4}.Put(b)
	if _, err := d.Header(b); !errors.Is(err, ErrTransit) {
		t.Errorf("a repeated frame: %v, expected ErrTransit", err)
	}
}

// TestDecoderMessage checks whole-message frames and the length check.
func TestDecoderMessage(t *testing.T) {
	t.Parallel()
	var e Encoder
	d := NewDecoder(Limits{TokenSize: 2, Window: 4})
	for i, p := range [][]byte{{1, 2}, {3, 4, 5, 6, 7, 8}} {
		h, got, err := d.Message(frame(e.Header(len(p), false), p))
		if err != nil || !bytes.Equal(got, p) || h.Seq != uint64(i) {
			t.Fatalf("message %d: %+v %v %v, expected %v", i, h, got, err, p)
		}
	}
	if h, _, err := d.Message(frame(e.Header(0, true), nil)); err != nil || !h.End() {
		t.Fatalf("end: %+v %v", h, err)
	}
	d = NewDecoder(Limits{TokenSize: 2, Window: 4})
	b := frame(Header{Len: 4}, []byte{1, 2})
	if _, _, err := d.Message(b); err == nil || !strings.Contains(err.Error(), "frame 0 of 2 bytes: its header says 4") {
		t.Errorf("short payload: %v", err)
	}
}

// TestMaxPayload: frames are bounded by MaxFrame whatever the window.
func TestMaxPayload(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lim  Limits
		want int
	}{
		{Limits{TokenSize: 4, Window: 8}, 32},
		{Limits{TokenSize: 4, Window: 1 << 30}, MaxFrame},
		{Limits{TokenSize: 0, Window: 3}, 3},
	} {
		if got := tc.lim.MaxPayload(); got != tc.want {
			t.Errorf("%+v: %d, expected %d", tc.lim, got, tc.want)
		}
	}
}

// TestCredits checks credits read in pieces and their bounds.
func TestCredits(t *testing.T) {
	t.Parallel()
	c := NewCredits(10)
	c.Sent(7)
	b := AppendCredit(AppendCredit(nil, 3), 2)
	// In pieces of 3 bytes: the credits count only once whole.
	for i := 0; i < len(b); i += 3 {
		if err := c.Add(b[i:min(i+3, len(b))]); err != nil {
			t.Fatal(err)
		}
		if i == 3 && c.N != 3 {
			t.Errorf("after 6 bytes: %d tokens, expected 3 (no credit whole yet)", c.N)
		}
	}
	if c.N != 8 {
		t.Errorf("after credits of 3 and 2: %d tokens, expected 8", c.N)
	}
	if err := c.Add(AppendCredit(nil, 3)); err == nil || !strings.Contains(err.Error(), "credits for 3 more tokens with 8 outstanding: expected at most the window of 10") {
		t.Errorf("credits past the window: %v", err)
	}
	if err := c.Message(binary.LittleEndian.AppendUint64(nil, 1<<63)); err == nil {
		t.Error("a credit of 2^63 tokens was accepted")
	}
	if err := c.Message([]byte{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "credit message of 3 bytes: expected 8") {
		t.Errorf("short credit message: %v", err)
	}
	if err := c.Message(AppendCredit(nil, 2)); err != nil || c.N != 10 {
		t.Errorf("credit message: %v, %d tokens, expected 10", err, c.N)
	}
}

// TestBatchPolicy checks the batch threshold, the write size and the
// flush timeout's defaults and bounds.
func TestBatchPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ts, window, chunk int
		flush             time.Duration
		want              Batch
	}{
		// 1 KB firings of f32, a 16 Ki-token window: half the window.
		{4, 16384, 0, 0, Batch{Tokens: 8192, Most: 16384, ChunkTokens: 65536, Flush: DefaultFlush}},
		// A large window: a chunk per batch, a quarter of the window per write.
		{4, 1 << 20, 0, time.Millisecond, Batch{Tokens: 65536, Most: 1 << 18, ChunkTokens: 65536, Flush: time.Millisecond}},
		// A window of 1: every token goes at once.
		{4, 1, 64, -1, Batch{Tokens: 1, Most: 1, ChunkTokens: 16, Flush: 0}},
		// Tokens larger than the chunk: one per frame.
		{1 << 20, 8, 0, time.Hour, Batch{Tokens: 1, Most: 2, ChunkTokens: 1, Flush: MaxFlush}},
		// A chunk over MaxFrame is cut to it.
		{1, 1 << 30, 1 << 30, 0, Batch{Tokens: MaxFrame, Most: 1 << 28, ChunkTokens: MaxFrame, Flush: DefaultFlush}},
	} {
		if got := NewBatch(tc.ts, tc.window, tc.chunk, tc.flush); got != tc.want {
			t.Errorf("NewBatch(%d, %d, %d, %v) = %+v, expected %+v", tc.ts, tc.window, tc.chunk, tc.flush, got, tc.want)
		}
	}
	for _, tc := range []struct{ window, ts, want int }{{16384, 4, 4096}, {1 << 24, 4, Chunk / 4}, {2, 4, 1}, {1, 1 << 20, 1}} {
		if got := CreditBatch(tc.window, tc.ts); got != tc.want {
			t.Errorf("CreditBatch(%d, %d) = %d, expected %d", tc.window, tc.ts, got, tc.want)
		}
	}
}

// TestParts splits messages into parts and reassembles them.
func TestParts(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, Chunk - 1, Chunk, Chunk + 1, 3*Chunk + 7} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		var a Assembly
		var got []byte
		done := false
		for i := range Parts(n) {
			if done {
				t.Fatalf("%d bytes: complete before part %d", n, i)
			}
			h := http.Header{}
			SetPart(h, i*Chunk, n)
			off, total, err := PartOf(h)
			if err != nil {
				t.Fatal(err)
			}
			got, done, err = a.Add(off, total, Part(data, i), 0)
			if err != nil {
				t.Fatalf("%d bytes, part %d: %v", n, i, err)
			}
		}
		if !done || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: done %v, %d bytes reassembled", n, done, len(got))
		}
	}
}

// TestAssemblyRefuses checks the bounds, before any allocation (a
// 64 MiB message over its limit allocates nothing of its size).
// (Not parallel: it reads the allocation counters.)
func TestAssemblyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name             string
		first            bool // send a first part of 4 bytes of 12 before
		off, total, plen int
		most             int
		want             string
	}{
		{"over the limit", false, 0, 64 << 20, 4, 100, "message of 67108864 bytes: expected 0 to 100"},
		{"negative total", false, 0, -1, 0, 0, "message of -1 bytes"},
		{"part too long", false, 0, 2 * Chunk, Chunk + 1, 0, "message part of 262145 bytes: expected at most 262144"},
		{"past the end", false, 8, 10, 4, 0, "message part of 4 bytes at offset 8: expected it within the message's 10 bytes"},
		{"no start", false, 4, 12, 4, 0, "message part at offset 4 of 12 bytes: expected the part at offset 0"},
		{"a gap", true, 8, 12, 4, 0, "message part at offset 8 of 12 bytes: expected the part at offset 4"},
		{"another total", true, 4, 16, 4, 0, "expected the part at offset 4"},
	} {
		var a Assembly
		if tc.first {
			if _, _, err := a.Add(0, 12, make([]byte, 4), 0); err != nil {
				t.Fatal(err)
			}
		}
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		_, _, err := a.Add(tc.off, tc.total, make([]byte, tc.plen), tc.most)
		goruntime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, expected %q", tc.name, err, tc.want)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20+uint64(tc.plen) {
			t.Errorf("%s: %d bytes allocated: the total was not checked before allocating", tc.name, grew)
		}
	}
	h := http.Header{}
	h.Set(PartOffset, "x")
	if _, _, err := PartOf(h); err == nil || !strings.Contains(err.Error(), `offset "x" and total ""`) {
		t.Errorf("PartOf without numbers: %v", err)
	}
}

// TestNames checks the stream names and subject tokens.
func TestNames(t *testing.T) {
	t.Parallel()
	if got := []string{DataName(In, 0), CreditName(In, 1), DataName(Out, 2), CreditName(Out, 3)}; strings.Join(got, " ") != "in.0 inc.1 out.2 outc.3" {
		t.Errorf("stream names: %v", got)
	}
	if s, err := Subject("sluice", "mpi", "job-1", "3"); err != nil || s != "sluice.mpi.job-1.3" {
		t.Errorf("Subject: %q %v", s, err)
	}
	for _, bad := range []string{"", "a.b", "*", ">", "a b"} {
		if _, err := Subject("sluice", bad); err == nil || !strings.Contains(err.Error(), "expected a non-empty name") {
			t.Errorf("Subject token %q: %v, expected a refusal", bad, err)
		}
	}
}
