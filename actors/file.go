package actors

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/runtime"
)

// Byte-stream sources and sinks (file.read, file.write, stdin, stdout in
// binary format) move raw tokens: the bytes of each window as they lie in
// memory (machine byte order). They accept any token type and any fixed or
// cyclo-static rate, and keep state (a file position), so they need
// stateful: true.

// pathParam returns the required "path" parameter.
func pathParam(p runtime.Params) (string, error) {
	if !p.Has("path") {
		return "", fmt.Errorf("parameter \"path\" is missing: expected a file name")
	}
	path, err := p.String("path", "")
	if err != nil {
		return "", err
	}
	if path == "" {
		return "", fmt.Errorf("parameter \"path\" is empty: expected a file name")
	}
	return path, nil
}

// filePath returns the "path" parameter and the root it resolves in (the
// run's runtime.FileAccess, given to the factory in p): nil for an
// unconfined run. A run that refuses files (a worker without --data-dir)
// refuses the actor with its sentence; a path that would leave the root
// (absolute, ".." above it) is refused here, before anything runs, and a
// symbolic link out of it when the file is opened.
func filePath(p runtime.Params) (string, *fsroot.Root, error) {
	fa := p.Files()
	if fa.Refused != "" {
		return "", nil, errors.New(fa.Refused)
	}
	path, err := pathParam(p)
	if err != nil {
		return "", nil, err
	}
	if _, err := fa.Root.Rel("", path); err != nil {
		return "", nil, err
	}
	return path, fa.Root, nil
}

// byteSource reads raw tokens from a file (or stdin).
type byteSource struct {
	fileSource
	loop bool
	r    io.Reader
}

// fileSource is the file handling that byte and text sources share: the
// file (or stdin), the count limit and the end of stream after a padded
// window.
type fileSource struct {
	path  string       // "" for stdin
	root  *fsroot.Root // where path resolves (nil: unconfined)
	name  string       // for messages: the path or "stdin"
	actor string       // the actor's name (its stdin spill's)
	stdin *stdinReader // stdin with a spill (checkpoints), else nil
	// snapAt is the stream offset of the last snapshot (its commit
	// drops the spill before it).
	snapAt int64
	count  int64
	file   *os.File
	done   bool // the last (padded) window was produced
	fired  int64
	// resume, when set, is the position to seek to at Start (a run
	// resumed from a checkpoint, see checkpoint.go).
	resume *sourcePos
}

// open opens the file, or returns stdin when there is no path: spilled
// when the run has checkpoints and a directory for the spill, and then
// starting at a resumed run's offset.
func (s *fileSource) open(ctx context.Context, run *runtime.Handle) (io.Reader, error) {
	if s.path == "" {
		in := newCancelReader(ctx, os.Stdin) // a stopped run stops waiting for it
		dir := run.SpillDir()
		if dir == "" {
			return in, nil
		}
		at := int64(-1)
		if s.resume != nil {
			at = s.resume.offset
		}
		sp, replay, err := openSpill(dir, s.actor, at)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		s.stdin = &stdinReader{replay: replay, in: in, sp: sp, consumed: max(at, 0)}
		return s.stdin, nil
	}
	f, err := s.root.Open("", s.path)
	if err != nil {
		return nil, err // *PathError or *fsroot.EscapeError names the path
	}
	s.file = f
	return f, nil
}

// ended reports whether the source has produced its last window.
func (s *fileSource) ended() bool {
	return s.done || s.count > 0 && s.fired >= s.count
}

// pad zeroes b from n on and marks the window as the last one.
func (s *fileSource) pad(b []byte, n int) {
	clear(b[n:])
	s.done = true
}

// Stop closes the file.
func (s *fileSource) Stop() error {
	if s.stdin != nil {
		return s.stdin.sp.close()
	}
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	s.file = nil
	return err
}

func newFileRead(a *graph.Actor, p runtime.Params) (any, error) {
	if err := sourceParams(a, p, "path", "loop", "count"); err != nil {
		return nil, err
	}
	path, root, err := filePath(p)
	if err != nil {
		return nil, err
	}
	loop, err := p.Bool("loop", false)
	if err != nil {
		return nil, err
	}
	count, err := countParam(p, 0)
	if err != nil {
		return nil, err
	}
	return &byteSource{fileSource: fileSource{path: path, root: root, name: path, actor: a.Name, count: count}, loop: loop}, nil
}

// sourcePorts checks for no input and one output with a static rate.
func sourcePorts(a *graph.Actor) error {
	if err := checkPorts(a, 0, 0, 1); err != nil {
		return err
	}
	return staticRate(a.Outputs[0])
}

// sourceParams checks a source's parameter names, then its ports.
func sourceParams(a *graph.Actor, p runtime.Params, names ...string) error {
	if err := p.Only(names...); err != nil {
		return err
	}
	return sourcePorts(a)
}

// sinkParams checks a sink's parameter names, then its ports.
func sinkParams(a *graph.Actor, p runtime.Params, names ...string) error {
	if err := p.Only(names...); err != nil {
		return err
	}
	return sinkPorts(a)
}

// sinkPorts checks for one input with a static rate and no output.
func sinkPorts(a *graph.Actor) error {
	if err := checkPorts(a, 1, 1, 0); err != nil {
		return err
	}
	return staticRate(a.Inputs[0])
}

// Start opens the file (stdin not spilled).
func (s *byteSource) Start(ctx context.Context) error { return s.StartRun(ctx, nil) }

// StartRun opens the file; stdin is spilled into the run's spill
// directory, if it has one (runtime.Handle.SpillDir).
func (s *byteSource) StartRun(ctx context.Context, run *runtime.Handle) error {
	r, err := s.open(ctx, run)
	if err != nil {
		return err
	}
	s.r = r
	return s.seekResumed()
}

// Fire fills the output window with the next bytes of the file. The last
// window, when the file ends inside it, is padded with zero bytes; the next
// firing returns end of stream. With loop, the file restarts from its
// beginning instead (the window continues with the file's first bytes).
func (s *byteSource) Fire(f *runtime.Firing) error {
	if err := solo(f); err != nil {
		return err
	}
	if s.ended() {
		return runtime.ErrEndOfStream
	}
	b := f.Out(0)
	n := 0
	rewound := false
	for n < len(b) {
		m, err := io.ReadFull(s.r, b[n:])
		n += m
		if err == nil {
			break
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("read %s: %w", s.name, err)
		}
		if s.loop && s.file != nil {
			if m == 0 && rewound {
				return fmt.Errorf("read %s: file is empty: loop needs at least one byte", s.name)
			}
			if _, err := s.file.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("read %s: rewind for loop: %w", s.name, err)
			}
			rewound = true
			continue
		}
		if n == 0 {
			return runtime.ErrEndOfStream
		}
		s.pad(b, n)
		break
	}
	s.fired++
	return nil
}

// byteSink writes raw tokens to a file (or stdout).
type byteSink struct {
	fileSink
	append bool
}

// fileSink is the file handling that byte and text sinks share: the file
// (or stdout) behind a 64 KiB buffer, flushed after every firing on stdout
// and at Stop.
type fileSink struct {
	path  string       // "" for stdout
	root  *fsroot.Root // where path resolves (nil: unconfined)
	name  string       // for messages: the path or "stdout"
	file  *os.File
	w     *bufio.Writer
	flush bool // flush after every firing (stdout)
	// resumeAt, when resumed, is the file's length at the checkpoint the
	// run resumes from: open truncates the file to it (checkpoint.go).
	resumed  bool
	resumeAt int64
	// On stdout (checkpoint.go): actor names the sink, written counts the
	// bytes it wrote, skip those not to write again after a recovery in
	// this process.
	actor   string
	written int64
	skip    int64
}

// open opens the file with flags, or stdout when there is no path.
func (s *fileSink) open(flags int) error {
	if s.path == "" {
		s.w = bufio.NewWriterSize(os.Stdout, 1<<16)
		return nil
	}
	if s.resumed {
		flags &^= os.O_TRUNC
	}
	f, err := s.root.OpenFile("", s.path, flags, 0o666)
	if err != nil {
		return err
	}
	if s.resumed {
		if err := s.rewind(f); err != nil {
			_ = f.Close()
			return err
		}
	}
	s.file, s.w = f, bufio.NewWriterSize(f, 1<<16)
	return nil
}

// write writes b to the buffer.
func (s *fileSink) write(b []byte) error {
	s.written += int64(len(b))
	if s.skip > 0 {
		n := min(s.skip, int64(len(b)))
		s.skip -= n
		b = b[n:]
	}
	if s.path == "" {
		noteStdout(s.actor, s.written)
	}
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", s.name, err)
	}
	return nil
}

// endFiring flushes the buffer when the sink flushes after every firing.
func (s *fileSink) endFiring() error {
	if s.flush {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", s.name, err)
		}
	}
	return nil
}

// Stop flushes and closes the file.
func (s *fileSink) Stop() error {
	if s.w == nil {
		return nil
	}
	err := s.w.Flush()
	if err != nil {
		err = fmt.Errorf("write %s: %w", s.name, err)
	}
	s.w = nil
	if s.file != nil {
		if cerr := s.file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", s.name, cerr)
		}
		s.file = nil
	}
	return err
}

func newFileWrite(a *graph.Actor, p runtime.Params) (any, error) {
	if err := sinkParams(a, p, "path", "append"); err != nil {
		return nil, err
	}
	path, root, err := filePath(p)
	if err != nil {
		return nil, err
	}
	app, err := p.Bool("append", false)
	if err != nil {
		return nil, err
	}
	return &byteSink{fileSink: fileSink{path: path, root: root, name: path}, append: app}, nil
}

// Start creates (or truncates, or opens for append) the file.
func (s *byteSink) Start(context.Context) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if s.append {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	return s.open(flags)
}

// Fire writes the input window.
func (s *byteSink) Fire(f *runtime.Firing) error {
	if err := solo(f); err != nil {
		return err
	}
	if err := s.write(f.In(0)); err != nil {
		return err
	}
	return s.endFiring()
}

// formatParam reads "format": text (the default) or binary.
func formatParam(p runtime.Params) (bool, error) {
	f, err := p.String("format", "text")
	if err != nil {
		return false, err
	}
	switch f {
	case "text", "csv":
		return false, nil
	case "binary", "raw":
		return true, nil
	}
	return false, fmt.Errorf("parameter \"format\": expected text or binary, found %q", f)
}

func newStdin(a *graph.Actor, p runtime.Params) (any, error) {
	if why := p.Files().NoStdin; why != "" {
		return nil, errors.New(why)
	}
	if err := sourceParams(a, p, "format", "count", "header"); err != nil {
		return nil, err
	}
	binary, err := formatParam(p)
	if err != nil {
		return nil, err
	}
	count, err := countParam(p, 0)
	if err != nil {
		return nil, err
	}
	if binary {
		if p.Has("header") {
			return nil, fmt.Errorf("parameter \"header\" applies to format text only")
		}
		return &byteSource{fileSource: fileSource{name: "stdin", actor: a.Name, count: count}}, nil
	}
	return newTextSource(a, p, "", count)
}

func newStdout(a *graph.Actor, p runtime.Params) (any, error) {
	if err := sinkParams(a, p, "format", "header"); err != nil {
		return nil, err
	}
	binary, err := formatParam(p)
	if err != nil {
		return nil, err
	}
	if binary {
		if p.Has("header") {
			return nil, fmt.Errorf("parameter \"header\" applies to format text only")
		}
		return &byteSink{fileSink: fileSink{name: "stdout", flush: true, actor: a.Name}}, nil
	}
	ts, err := newTextSink(a, p, "")
	if t, ok := ts.(*textSink); ok {
		t.actor = a.Name
	}
	return ts, err
}
