package actors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"sync"
	"unsafe"
)

// Checkpoints (runtime.Checkpointer, docs/recovery.md): file.read records
// its offset and replays from it; file.write and csv.write record the
// file's length and truncate the file to it when the run resumes, so the
// output is written exactly once; stdout cannot be truncated: a run
// recovered in the same process skips what it already wrote, a run
// resumed in a new process writes what followed the checkpoint again;
// stdin cannot rewind: with a spill directory (runtime.SpillDir) what it
// reads is spilled (spill.go) and its offset in the stream recorded,
// without one it refuses checkpoints; csv.read and stdin in text format
// record the offset after their last line; fir and decimate with taps
// record their delay line.

// sourcePos is a file source's position at a checkpoint.
type sourcePos struct {
	offset, fired int64
	done          bool
}

// Snapshot records the file offset, the firings done and whether the last
// window was produced.
func (s *byteSource) Snapshot() ([]byte, error) {
	off, err := s.position()
	if err != nil {
		return nil, err
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(off))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.fired))
	done := byte(0)
	if s.done {
		done = 1
	}
	return append(b, done), nil
}

// Restore sets the position that Start seeks to.
func (s *byteSource) Restore(b []byte) error {
	if len(b) != 17 {
		return fmt.Errorf("file source %s: checkpoint of %d bytes: expected 17", s.name, len(b))
	}
	s.resume = &sourcePos{offset: int64(binary.LittleEndian.Uint64(b)), fired: int64(binary.LittleEndian.Uint64(b[8:])), done: b[16] == 1}
	return nil
}

// errStdinNoSpill is a stdin source's checkpoint error without a spill.
var errStdinNoSpill = errors.New("stdin cannot be replayed from a checkpoint without a directory to spill what it reads to (sluice run --checkpoint-dir DIR)")

// position returns the byte source's offset in its file or stream,
// recorded as the spill's commit point.
func (s *byteSource) position() (int64, error) {
	if s.path == "" {
		if s.stdin == nil {
			return 0, errStdinNoSpill
		}
		s.snapAt = s.stdin.consumed
		return s.snapAt, nil
	}
	if s.file == nil {
		return 0, nil
	}
	off, err := s.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, fmt.Errorf("read %s: position for checkpoint: %w", s.name, err)
	}
	return off, nil
}

// CommitCheckpoint makes a stdin spill durable and drops what precedes
// the checkpoint.
func (s *fileSource) CommitCheckpoint(int64) error {
	if s.stdin == nil {
		return nil
	}
	return s.stdin.sp.commit(s.snapAt)
}

// seekResumed moves the opened file to the restored position, if any.
func (s *fileSource) seekResumed() error {
	p := s.resume
	if p == nil {
		return nil
	}
	if s.file == nil {
		if s.stdin == nil {
			return errStdinNoSpill
		}
		s.fired, s.done = p.fired, p.done // the spill replays from the offset
		return nil
	}
	if _, err := s.file.Seek(p.offset, io.SeekStart); err != nil {
		return fmt.Errorf("read %s: seek to the checkpoint's offset %d: %w", s.name, p.offset, err)
	}
	s.fired, s.done = p.fired, p.done
	return nil
}

// stdoutWritten holds, per stdout sink (by actor name), the bytes it
// wrote in this process: a run recovered in the same process (a lost
// worker) skips what the earlier run wrote after the checkpoint, so stdout
// gets it once; a run resumed in a new process cannot know, and writes it
// again.
var stdoutWritten = struct {
	sync.Mutex
	m map[string]int64
}{m: map[string]int64{}}

func noteStdout(actor string, n int64) {
	stdoutWritten.Lock()
	stdoutWritten.m[actor] = n
	stdoutWritten.Unlock()
}

// Snapshot flushes the buffered output and records the file's length
// (synced by CommitCheckpoint), or on stdout the bytes written.
func (s *fileSink) Snapshot() ([]byte, error) {
	if s.w == nil {
		return nil, fmt.Errorf("write %s: checkpoint before the sink started", s.name)
	}
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("write %s: %w", s.name, err)
	}
	if s.file == nil {
		return binary.LittleEndian.AppendUint64(nil, uint64(s.written)), nil
	}
	off, err := s.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("write %s: position for checkpoint: %w", s.name, err)
	}
	return binary.LittleEndian.AppendUint64(nil, uint64(off)), nil
}

// CommitCheckpoint syncs the file when a checkpoint completes, so that
// the length it recorded is on disk before the checkpoint is stored.
func (s *fileSink) CommitCheckpoint(int64) error {
	if s.file == nil {
		return nil
	}
	if err := s.file.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", s.name, err)
	}
	return nil
}

// Restore makes Start keep the file and truncate it to the recorded
// length, dropping what was written after the checkpoint.
func (s *fileSink) Restore(b []byte) error {
	if len(b) != 8 {
		return fmt.Errorf("file sink %s: checkpoint of %d bytes: expected 8", s.name, len(b))
	}
	s.resumed, s.resumeAt = true, int64(binary.LittleEndian.Uint64(b))
	if s.path == "" {
		// stdout: skip what an earlier run of this process wrote past
		// the checkpoint.
		s.written = s.resumeAt
		stdoutWritten.Lock()
		s.skip = max(0, stdoutWritten.m[s.actor]-s.resumeAt)
		stdoutWritten.Unlock()
	}
	return nil
}

// rewind truncates the reopened file f to the checkpoint's length and
// moves to its end.
func (s *fileSink) rewind(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < s.resumeAt {
		return fmt.Errorf("resume %s: the file has %d bytes: expected at least the checkpoint's %d (was it changed?)", s.name, fi.Size(), s.resumeAt)
	}
	if err := f.Truncate(s.resumeAt); err != nil {
		return fmt.Errorf("resume %s: truncate to %d bytes: %w", s.name, s.resumeAt, err)
	}
	if _, err := f.Seek(s.resumeAt, io.SeekStart); err != nil {
		return fmt.Errorf("resume %s: %w", s.name, err)
	}
	return nil
}

// Snapshot records the filter's delay line (the last len(taps)-1 inputs).
func (a *firActor[T]) Snapshot() ([]byte, error) {
	h := a.s.buf[:len(a.s.hr)-1]
	if len(h) == 0 {
		return nil, nil
	}
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), len(h)*int(unsafe.Sizeof(h[0])))...), nil
}

// Restore sets the delay line from a Snapshot.
func (a *firActor[T]) Restore(b []byte) error {
	h := a.s.buf[:len(a.s.hr)-1]
	if len(h) == 0 {
		return nil
	}
	n := len(h) * int(unsafe.Sizeof(h[0]))
	if len(b) != n {
		return fmt.Errorf("fir: checkpoint of %d bytes: expected %d (%d taps)", len(b), n, len(a.s.hr))
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), n), b)
	return nil
}

// textPos is a text source's position at a checkpoint.
type textPos struct {
	Offset, Line, Fired int64
	Done, HeaderRead    bool
}

// Snapshot records the offset after the last line read, the line number,
// the firings done, whether the last window was produced and whether the
// header line was read.
func (s *textSource) Snapshot() ([]byte, error) {
	if s.path == "" {
		if s.stdin == nil {
			return nil, errStdinNoSpill
		}
		s.snapAt = s.off
	}
	p := textPos{Offset: s.off, Line: int64(s.line), Fired: s.fired, Done: s.done, HeaderRead: s.headerRead}
	b := binary.LittleEndian.AppendUint64(nil, uint64(p.Offset))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.Line))
	b = binary.LittleEndian.AppendUint64(b, uint64(p.Fired))
	return append(b, boolByte(p.Done), boolByte(p.HeaderRead)), nil
}

// Restore sets the position Start moves to.
func (s *textSource) Restore(b []byte) error {
	if len(b) != 26 {
		return fmt.Errorf("text source %s: checkpoint of %d bytes: expected 26", s.name, len(b))
	}
	u := func(i int) int64 { return int64(binary.LittleEndian.Uint64(b[8*i:])) }
	s.resume = &sourcePos{offset: u(0), fired: u(2), done: b[24] == 1}
	s.line, s.off = int(u(1)), u(0)
	if b[25] == 1 {
		s.header = false
		s.headerRead = true
	}
	return nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// Snapshot records the last frame received (with a firing-number verb in
// the path, nothing: each frame's file is named by its firing, so a resumed
// run rewrites the same files with the same bytes).
func (s *imageSink) Snapshot() ([]byte, error) {
	if s.perFiring || !s.got {
		return nil, nil
	}
	return append([]byte(nil), imageBytes(s.img)...), nil
}

// Restore sets the last frame from a snapshot (Stop writes it).
func (s *imageSink) Restore(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	pix := imageBytes(s.img)
	if len(b) != len(pix) {
		return fmt.Errorf("image sink %s: checkpoint of %d bytes: expected %d (a %d×%d frame)", s.path, len(b), len(pix), s.w, s.h)
	}
	copy(pix, b)
	s.got = true
	return nil
}

// imageBytes returns the pixels of an image the sink made.
func imageBytes(img image.Image) []byte {
	switch m := img.(type) {
	case *image.Gray:
		return m.Pix
	case *image.NRGBA:
		return m.Pix
	}
	return nil
}
