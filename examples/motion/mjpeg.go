package motion

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"os"
	"strconv"
	"strings"
)

// FrameReader yields the compressed frames of a Motion-JPEG stream, one
// JPEG image per call, and io.EOF after the last.
type FrameReader interface {
	Next() ([]byte, error)
}

// OpenStream opens a Motion-JPEG file and returns a FrameReader for it and
// the file to close. The format is found from the first bytes: "RIFF…AVI "
// is an AVI (frames in the 'movi' list's 00dc/00db chunks), a first line
// starting with "--" or an HTTP-style "Content-Type: multipart/…" header
// is a multipart JPEG stream (multipart/x-mixed-replace, as IP cameras
// serve), and FF D8 is a raw stream of concatenated JPEG images (ffmpeg's
// "-f mjpeg").
func OpenStream(path string) (FrameReader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := NewStream(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, f, nil
}

// NewStream returns a FrameReader over r, detecting the format as
// OpenStream does; name is used in errors.
func NewStream(r io.Reader, name string) (FrameReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(12)
	if err != nil && len(head) < 2 {
		return nil, fmt.Errorf("%s: expected a Motion-JPEG stream (AVI, multipart or raw JPEG), found %d bytes", name, len(head))
	}
	switch {
	case len(head) >= 12 && string(head[0:4]) == "RIFF" && string(head[8:12]) == "AVI ":
		return &aviReader{r: br, name: name}, nil
	case head[0] == 0xFF && head[1] == 0xD8:
		return &rawReader{r: br, name: name}, nil
	}
	return newMultipartReader(br, name)
}

// aviReader walks the RIFF chunks of an AVI file (and the RIFF AVIX chunks
// of an OpenDML one) and returns the data of the video stream 0's chunks
// ("00dc", compressed, or "00db"; "01dc" when an audio stream comes
// first) inside the 'movi' lists.
type aviReader struct {
	r    *bufio.Reader
	name string
	off  int64
	// depth holds, for each open list, the offset where it ends.
	ends []int64
}

func (a *aviReader) read(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(a.r, b)
	a.off += int64(n)
	return b, err
}

func (a *aviReader) skip(n int64) error {
	k, err := a.r.Discard(int(n))
	a.off += int64(k)
	return err
}

// Next returns the next video frame.
func (a *aviReader) Next() ([]byte, error) {
	for {
		for len(a.ends) > 0 && a.off >= a.ends[len(a.ends)-1] {
			a.ends = a.ends[:len(a.ends)-1]
		}
		hdr, err := a.read(8)
		if err == io.EOF && len(a.ends) == 0 {
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("%s: offset %d: expected an AVI chunk header: %w", a.name, a.off-8, unexpected(err))
		}
		id := string(hdr[:4])
		size := int64(binary.LittleEndian.Uint32(hdr[4:]))
		switch id {
		case "RIFF", "LIST":
			typ, err := a.read(4)
			if err != nil {
				return nil, fmt.Errorf("%s: offset %d: expected the type of %s chunk: %w", a.name, a.off-4, id, unexpected(err))
			}
			t := string(typ)
			if id == "RIFF" && t != "AVI " && t != "AVIX" {
				return nil, fmt.Errorf("%s: offset %d: expected a RIFF 'AVI ' or 'AVIX' chunk, found %q", a.name, a.off-12, t)
			}
			if id == "RIFF" || t == "movi" || t == "rec " {
				a.ends = append(a.ends, a.off-4+size+size&1)
				continue
			}
			if err := a.skip(size - 4 + size&1); err != nil { // hdrl, INFO, …
				return nil, fmt.Errorf("%s: LIST %q: %w", a.name, t, unexpected(err))
			}
		case "00dc", "00db", "01dc", "01db": // the video stream (0, or 1 after an audio stream)
			if size > MaxJPEG {
				return nil, fmt.Errorf("%s: offset %d: frame of %d bytes: expected at most %d (the graph's token holds %d)", a.name, a.off-8, size, MaxJPEG, MaxJPEG)
			}
			b, err := a.read(int(size))
			if err != nil {
				return nil, fmt.Errorf("%s: offset %d: frame chunk of %d bytes: %w", a.name, a.off-8, size, unexpected(err))
			}
			if size&1 == 1 {
				if err := a.skip(1); err != nil && err != io.EOF {
					return nil, err
				}
			}
			if size == 0 { // a dropped frame
				continue
			}
			return b, nil
		default: // idx1, JUNK, other streams
			if err := a.skip(size + size&1); err != nil && !(err == io.EOF && len(a.ends) == 0) {
				return nil, fmt.Errorf("%s: chunk %q: %w", a.name, id, unexpected(err))
			}
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// rawReader splits concatenated JPEG images at their EOI markers (FF D9;
// inside entropy-coded data a 0xFF byte is always followed by 00 or a
// restart marker, so EOI cannot occur there).
type rawReader struct {
	r    *bufio.Reader
	name string
	n    int
}

func (r *rawReader) Next() ([]byte, error) {
	var buf bytes.Buffer
	for {
		c, err := r.r.ReadByte()
		if err == io.EOF {
			if buf.Len() == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%s: frame %d: expected an EOI marker (FF D9), found the end of the file after %d bytes", r.name, r.n, buf.Len())
		}
		if err != nil {
			return nil, err
		}
		if buf.Len() == 0 && c != 0xFF {
			continue // padding between images
		}
		buf.WriteByte(c)
		if buf.Len() > MaxJPEG {
			return nil, fmt.Errorf("%s: frame %d: expected at most %d bytes per JPEG image", r.name, r.n, MaxJPEG)
		}
		b := buf.Bytes()
		if n := len(b); n >= 4 && b[n-2] == 0xFF && b[n-1] == 0xD9 {
			r.n++
			return append([]byte(nil), b...), nil
		}
	}
}

// multipartReader reads a multipart/x-mixed-replace JPEG stream: parts
// separated by "--boundary" lines, each with headers (Content-Type,
// usually Content-Length) and one JPEG image. The stream may begin with
// the HTTP response's headers, which name the boundary.
type multipartReader struct {
	mr   *multipart.Reader
	name string
	n    int
}

func newMultipartReader(br *bufio.Reader, name string) (FrameReader, error) {
	boundary := ""
	tp := textproto.NewReader(br)
	for boundary == "" {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, fmt.Errorf("%s: expected an AVI (RIFF), a raw JPEG stream (FF D8) or a multipart stream (a --boundary line or a Content-Type: multipart header): %w", name, unexpected(err))
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "HTTP/"):
		case strings.HasPrefix(line, "--"):
			boundary = line[2:]
		case strings.HasPrefix(strings.ToLower(line), "content-type:"):
			if i := strings.Index(strings.ToLower(line), "boundary="); i >= 0 {
				boundary = strings.Trim(strings.TrimSpace(line[i+len("boundary="):]), `"`)
				boundary = strings.TrimPrefix(boundary, "--")
				// the first boundary line follows; multipart.Reader finds it
				return &multipartReader{mr: multipart.NewReader(br, boundary), name: name}, nil
			}
		case strings.Contains(line, ":"): // another header before the body
		default:
			return nil, fmt.Errorf("%s: expected an AVI (RIFF), a raw JPEG stream (FF D8) or a multipart stream, found the line %q", name, truncate(line))
		}
	}
	// The boundary line has been read: put it back for multipart.Reader.
	r := io.MultiReader(strings.NewReader("--"+boundary+"\r\n"), br)
	return &multipartReader{mr: multipart.NewReader(r, boundary), name: name}, nil
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func (m *multipartReader) Next() ([]byte, error) {
	for {
		p, err := m.mr.NextPart()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err != nil {
			// A stream cut off mid-part (a camera capture stopped) ends it.
			if errors.Is(err, io.ErrUnexpectedEOF) && m.n > 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%s: part %d: %w", m.name, m.n, err)
		}
		if ct := p.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "image/jpeg") {
			continue
		}
		limit := int64(MaxJPEG) + 1
		if cl := p.Header.Get("Content-Length"); cl != "" {
			if n, err := strconv.ParseInt(strings.TrimSpace(cl), 10, 64); err == nil && n > MaxJPEG {
				return nil, fmt.Errorf("%s: part %d: Content-Length %d: expected at most %d bytes per JPEG image", m.name, m.n, n, MaxJPEG)
			}
		}
		b, err := io.ReadAll(io.LimitReader(p, limit))
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && m.n > 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%s: part %d: %w", m.name, m.n, err)
		}
		if len(b) > MaxJPEG {
			return nil, fmt.Errorf("%s: part %d: expected at most %d bytes per JPEG image", m.name, m.n, MaxJPEG)
		}
		m.n++
		if len(b) == 0 {
			continue
		}
		return b, nil
	}
}

// AVIWriter writes a Motion-JPEG AVI file: one video stream of JPEG
// frames ('MJPG'), 00dc chunks in the 'movi' list and an idx1 index, as
// ffmpeg and cameras write them. Close patches the frame counts and sizes.
type AVIWriter struct {
	w       io.WriteSeeker
	width   int
	height  int
	fps     int
	frames  int
	maxSize int
	moviPos int64 // offset of the 'movi' list's size field
	pos     int64
	index   []byte
	err     error
}

// Offsets of the header fields that Close patches.
const (
	aviTotalFramesOff = 48  // avih.dwTotalFrames
	aviMaxBytesOff    = 36  // avih.dwMaxBytesPerSec
	aviSuggestedOff   = 60  // avih.dwSuggestedBufferSize
	aviStrhLengthOff  = 140 // strh.dwLength
	aviStrhBufferOff  = 144 // strh.dwSuggestedBufferSize
	aviHeaderEnd      = 212 // bytes before the 'movi' list
)

// NewAVIWriter starts an AVI file of width×height frames at fps frames
// per second.
func NewAVIWriter(w io.WriteSeeker, width, height, fps int) (*AVIWriter, error) {
	a := &AVIWriter{w: w, width: width, height: height, fps: fps}
	h := make([]byte, 0, aviHeaderEnd+12)
	u32 := func(v uint32) { h = binary.LittleEndian.AppendUint32(h, v) }
	u16 := func(v uint16) { h = binary.LittleEndian.AppendUint16(h, v) }
	tag := func(s string) { h = append(h, s...) }
	tag("RIFF")
	u32(0) // patched
	tag("AVI ")
	tag("LIST")
	u32(aviHeaderEnd - 20) // hdrl list size: up to the movi list
	tag("hdrl")
	tag("avih")
	u32(56)
	u32(uint32(1000000 / fps)) // µs per frame
	u32(0)                     // max bytes per second (patched)
	u32(0)                     // padding granularity
	u32(0x10)                  // AVIF_HASINDEX
	u32(0)                     // total frames (patched)
	u32(0)                     // initial frames
	u32(1)                     // streams
	u32(0)                     // suggested buffer size (patched)
	u32(uint32(width))
	u32(uint32(height))
	u32(0)
	u32(0)
	u32(0)
	u32(0)
	tag("LIST")
	u32(4 + 8 + 56 + 8 + 40)
	tag("strl")
	tag("strh")
	u32(56)
	tag("vids")
	tag("MJPG")
	u32(0) // flags
	u16(0) // priority
	u16(0) // language
	u32(0) // initial frames
	u32(1) // scale
	u32(uint32(fps))
	u32(0) // start
	u32(0) // length (patched)
	u32(0) // suggested buffer size (patched)
	u32(0xFFFFFFFF)
	u32(0) // sample size
	u16(0)
	u16(0)
	u16(uint16(width))
	u16(uint16(height))
	tag("strf")
	u32(40) // BITMAPINFOHEADER
	u32(40)
	u32(uint32(width))
	u32(uint32(height))
	u16(1)  // planes
	u16(24) // bit count
	tag("MJPG")
	u32(uint32(width * height * 3))
	u32(0)
	u32(0)
	u32(0)
	u32(0)
	if len(h) != aviHeaderEnd {
		return nil, fmt.Errorf("avi header is %d bytes, expected %d", len(h), aviHeaderEnd)
	}
	tag("LIST")
	u32(0) // movi size (patched)
	tag("movi")
	if _, err := w.Write(h); err != nil {
		return nil, err
	}
	a.moviPos = aviHeaderEnd + 4
	a.pos = int64(len(h))
	return a, nil
}

// WriteFrame appends one JPEG image.
func (a *AVIWriter) WriteFrame(jpg []byte) error {
	if a.err != nil {
		return a.err
	}
	h := make([]byte, 8, 8+len(jpg)+1)
	copy(h, "00dc")
	binary.LittleEndian.PutUint32(h[4:], uint32(len(jpg)))
	h = append(h, jpg...)
	if len(jpg)&1 == 1 {
		h = append(h, 0)
	}
	a.index = append(a.index, "00dc"...)
	a.index = binary.LittleEndian.AppendUint32(a.index, 0x10) // AVIIF_KEYFRAME
	a.index = binary.LittleEndian.AppendUint32(a.index, uint32(a.pos-a.moviPos-4))
	a.index = binary.LittleEndian.AppendUint32(a.index, uint32(len(jpg)))
	_, a.err = a.w.Write(h)
	a.pos += int64(len(h))
	a.frames++
	a.maxSize = max(a.maxSize, len(jpg))
	return a.err
}

// Close writes the index and patches the header; it does not close the
// underlying writer.
func (a *AVIWriter) Close() error {
	if a.err != nil {
		return a.err
	}
	moviSize := a.pos - a.moviPos - 4
	idx := append([]byte("idx1"), binary.LittleEndian.AppendUint32(nil, uint32(len(a.index)))...)
	idx = append(idx, a.index...)
	if _, err := a.w.Write(idx); err != nil {
		return err
	}
	total := a.pos + int64(len(idx))
	patch := func(off int64, v uint32) {
		if a.err != nil {
			return
		}
		if _, a.err = a.w.Seek(off, io.SeekStart); a.err == nil {
			_, a.err = a.w.Write(binary.LittleEndian.AppendUint32(nil, v))
		}
	}
	patch(4, uint32(total-8))
	patch(aviMaxBytesOff, uint32(a.maxSize*a.fps))
	patch(aviTotalFramesOff, uint32(a.frames))
	patch(aviSuggestedOff, uint32(a.maxSize))
	patch(aviStrhLengthOff, uint32(a.frames))
	patch(aviStrhBufferOff, uint32(a.maxSize))
	patch(a.moviPos, uint32(moviSize))
	if a.err == nil {
		_, a.err = a.w.Seek(total, io.SeekStart)
	}
	return a.err
}
