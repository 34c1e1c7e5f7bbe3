package actors

import (
	"encoding/binary"
	"errors"
	"fmt"
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
// stdin and csv.read cannot rewind and refuse checkpoints; fir and
// decimate with taps record their delay line.

// sourcePos is a file source's position at a checkpoint.
type sourcePos struct {
	offset, fired int64
	done          bool
}

// Snapshot records the file offset, the firings done and whether the last
// window was produced.
func (s *byteSource) Snapshot() ([]byte, error) {
	if s.path == "" {
		return nil, errors.New("stdin cannot be replayed from a checkpoint: read a file (file.read) instead")
	}
	var off int64
	if s.file != nil {
		var err error
		if off, err = s.file.Seek(0, io.SeekCurrent); err != nil {
			return nil, fmt.Errorf("read %s: position for checkpoint: %w", s.name, err)
		}
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

// seekResumed moves the opened file to the restored position, if any.
func (s *fileSource) seekResumed() error {
	p := s.resume
	if p == nil {
		return nil
	}
	if s.file == nil {
		return errors.New("stdin cannot be replayed from a checkpoint")
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
