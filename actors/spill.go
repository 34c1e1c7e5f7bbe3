package actors

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A spill keeps what a source read from standard input, which cannot be
// rewound, in files of the run's checkpoint directory (runtime.SpillDir),
// so that a run resumed from a checkpoint reads again what followed it.
// The stream is kept in segments named ACTOR.OFFSET.spill, OFFSET being
// the stream offset of the segment's first byte; a checkpoint's commit
// starts a new segment once the current one holds spillSegment bytes and
// removes the segments wholly before the checkpoint's offset.
type spill struct {
	mu         sync.Mutex // Write (the firing) against commit (the checkpoints' goroutine)
	dir, actor string
	w          *os.File // the segment being appended
	wStart     int64    // its first byte's stream offset
	wpos       int64    // the stream offset after the last byte spilled
	segs       []int64  // every segment's start, ascending
}

// spillSegment is the size from which a commit starts a new segment (a
// variable for tests).
var spillSegment int64 = 16 << 20

// openSpill opens actor's spill in dir. A fresh run (resumeAt < 0) starts
// an empty one; a resumed run keeps it and returns, besides it, a reader
// of what was spilled from stream offset resumeAt on.
func openSpill(dir, actor string, resumeAt int64) (*spill, io.Reader, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	sp := &spill{dir: dir, actor: actor}
	segs, err := sp.list()
	if err != nil {
		return nil, nil, err
	}
	if resumeAt < 0 {
		for _, s := range segs {
			if err := os.Remove(sp.path(s)); err != nil {
				return nil, nil, err
			}
		}
		return sp, eofReader{}, sp.start(0)
	}
	sp.segs = segs
	replay, end, err := sp.replay(resumeAt)
	if err != nil {
		return nil, nil, err
	}
	return sp, replay, sp.start(end)
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// replay returns a reader of the spilled stream from offset at, and the
// stream offset where the spill ends.
func (sp *spill) replay(at int64) (io.Reader, int64, error) {
	i := len(sp.segs) - 1
	for i >= 0 && sp.segs[i] > at {
		i--
	}
	if i < 0 {
		return nil, 0, fmt.Errorf("stdin spill of %s in %s: no segment holds stream offset %d (segments start at %v)", sp.actor, sp.dir, at, sp.segs)
	}
	var rs []io.Reader
	end := sp.segs[i]
	for j, s := range sp.segs[i:] {
		b, err := os.ReadFile(sp.path(s))
		if err != nil {
			return nil, 0, err
		}
		if s != end {
			return nil, 0, fmt.Errorf("stdin spill of %s in %s: segment %d starts at %d: expected %d (a segment is missing)", sp.actor, sp.dir, j, s, end)
		}
		end += int64(len(b))
		if j == 0 {
			if at > end {
				return nil, 0, fmt.Errorf("stdin spill of %s in %s: it ends at stream offset %d, before the checkpoint's %d", sp.actor, sp.dir, end, at)
			}
			b = b[at-s:]
		}
		rs = append(rs, bytes.NewReader(b))
	}
	return io.MultiReader(rs...), end, nil
}

// start begins a new segment at stream offset off.
func (sp *spill) start(off int64) error {
	f, err := os.OpenFile(sp.path(off), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if sp.w != nil {
		if err := sp.w.Close(); err != nil {
			f.Close()
			return err
		}
	}
	sp.w, sp.wStart, sp.wpos = f, off, off
	if len(sp.segs) == 0 || sp.segs[len(sp.segs)-1] != off {
		sp.segs = append(sp.segs, off)
	}
	return nil
}

// Write appends what the source read.
func (sp *spill) Write(b []byte) (int, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	n, err := sp.w.Write(b)
	sp.wpos += int64(n)
	if err != nil {
		return n, fmt.Errorf("stdin spill of %s: %w", sp.actor, err)
	}
	return n, nil
}

// commit makes the spill durable up to now and drops the segments wholly
// before stream offset at (a completed checkpoint's), starting a new
// segment when the current one is large.
func (sp *spill) commit(at int64) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err := sp.w.Sync(); err != nil {
		return fmt.Errorf("stdin spill of %s: %w", sp.actor, err)
	}
	if sp.wpos-sp.wStart >= spillSegment {
		if err := sp.start(sp.wpos); err != nil {
			return err
		}
	}
	for len(sp.segs) > 1 && sp.segs[1] <= at {
		if err := os.Remove(sp.path(sp.segs[0])); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		sp.segs = sp.segs[1:]
	}
	return nil
}

// close closes the current segment.
func (sp *spill) close() error {
	if sp == nil {
		return nil
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.w == nil {
		return nil
	}
	err := sp.w.Close()
	sp.w = nil
	return err
}

func (sp *spill) path(off int64) string {
	return filepath.Join(sp.dir, sp.actor+"."+strconv.FormatInt(off, 10)+".spill")
}

// list returns the starts of the actor's segments in the directory.
func (sp *spill) list() ([]int64, error) {
	es, err := os.ReadDir(sp.dir)
	if err != nil {
		return nil, err
	}
	var segs []int64
	for _, e := range es {
		rest, ok := strings.CutPrefix(e.Name(), sp.actor+".")
		if off, ok2 := strings.CutSuffix(rest, ".spill"); ok && ok2 {
			if n, err := strconv.ParseInt(off, 10, 64); err == nil {
				segs = append(segs, n)
			}
		}
	}
	slices.Sort(segs)
	return segs, nil
}

// stdinReader is what a stdin source reads: the spill's replay, then
// standard input, every byte of which is spilled before the source sees
// it; consumed counts the bytes the source took (its stream offset).
type stdinReader struct {
	replay   io.Reader
	in       io.Reader
	sp       *spill
	consumed int64
}

func (r *stdinReader) Read(b []byte) (int, error) {
	if r.replay != nil {
		n, err := r.replay.Read(b)
		if n > 0 || (err != nil && err != io.EOF) {
			r.consumed += int64(n)
			return n, err
		}
		r.replay = nil
	}
	n, err := r.in.Read(b)
	if n > 0 {
		if _, werr := r.sp.Write(b[:n]); werr != nil {
			return 0, werr
		}
	}
	r.consumed += int64(n)
	return n, err
}
