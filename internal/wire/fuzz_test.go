package wire

import (
	"encoding/binary"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the stream decoder (as a TCP byte
// stream of frames and as whole NATS messages), to the credit counter and
// to the part reassembler. None may panic, accept a frame outside its
// limits, or let the sequence skip.
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 60s ./internal/wire
func FuzzDecode(f *testing.F) {
	var e Encoder
	seed := frame(e.Header(8, false), make([]byte, 8))
	seed = append(seed, frame(e.Header(0, true), nil)...)
	f.Add(seed, uint8(4), uint16(8))
	f.Add(frame(Header{Len: 1 << 31}, nil), uint8(1), uint16(1))
	f.Add([]byte{}, uint8(0), uint16(0))
	f.Add(AppendCredit(AppendCredit(nil, 3), 1<<40), uint8(4), uint16(100))
	f.Fuzz(func(t *testing.T, b []byte, ts uint8, window uint16) {
		lim := Limits{TokenSize: int(ts), Window: int(window)}
		// A byte stream of frames.
		d := NewDecoder(lim)
		rest := b
		for len(rest) >= HeaderLen {
			h, err := d.Header(rest)
			if err != nil {
				break
			}
			if h.Len < 0 || h.Len > lim.MaxPayload() || h.Seq != d.next-1 {
				t.Fatalf("accepted %+v under %+v (next %d)", h, lim, d.next)
			}
			if !h.End() && h.Len%max(lim.TokenSize, 1) != 0 {
				t.Fatalf("accepted %d bytes of %d-byte tokens", h.Len, lim.TokenSize)
			}
			if h.Len > len(rest)-HeaderLen {
				break
			}
			rest = rest[HeaderLen+h.Len:]
		}
		// One whole message.
		if h, p, err := NewDecoder(lim).Message(b); err == nil && (len(p) != h.Len || h.Seq != 0) {
			t.Fatalf("message %+v with %d payload bytes", h, len(p))
		}
		// Credits, in two pieces.
		c := NewCredits(int(window))
		c.Sent(int(window) / 2)
		half := len(b) / 2
		if err := c.Add(b[:half]); err == nil {
			_ = c.Add(b[half:])
		}
		if c.N < 0 || c.N > int64(window) {
			t.Fatalf("credits %d outside 0..%d", c.N, window)
		}
		// Parts: offset and total from the first 16 bytes.
		if len(b) >= 16 {
			var a Assembly
			off := int(int64(binary.LittleEndian.Uint64(b)))
			total := int(int64(binary.LittleEndian.Uint64(b[8:])))
			if m, done, err := a.Add(off, total, b[16:], 1<<16); err == nil && done && len(m) != total {
				t.Fatalf("reassembled %d bytes of a %d-byte message", len(m), total)
			}
		}
	})
}
