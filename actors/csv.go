package actors

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// Text (CSV) sources and sinks: one token per line, one column per element
// of the token (f32: 1 column, [3]f32: 3, c64: 2 — real and imaginary part).
// csv.read and stdin (format text) accept fields separated by commas,
// semicolons, tabs or spaces, skip blank lines and lines starting with '#',
// and optionally a header line; csv.write and stdout (format text) write
// comma-separated shortest round-trip decimals.

// textPorts checks that a port carries numeric tokens and returns their layout.
func textToken(p *graph.Port) (tokenInfo, error) {
	ti, ok := parseToken(p.Type)
	if !ok {
		return tokenInfo{}, fmt.Errorf("port %s: token type %s has no text form: expected a numeric type (u8 … f64, c64, c128 or a vector of them)", p.FullName(), p.Type)
	}
	return ti, nil
}

// textSource reads tokens from CSV lines.
type textSource struct {
	fileSource
	header bool
	ti     tokenInfo
	tname  string
	sc     *bufio.Scanner
	line   int
	fields [][]byte // reused
	// off is the offset after the last line scanned (a checkpoint's
	// position); headerRead, whether the header line was.
	off        int64
	headerRead bool
}

func newCSVRead(a *graph.Actor, p runtime.Params) (any, error) {
	if err := sourceParams(a, p, "path", "header", "count"); err != nil {
		return nil, err
	}
	path, root, err := filePath(p)
	if err != nil {
		return nil, err
	}
	count, err := countParam(p, 0)
	if err != nil {
		return nil, err
	}
	ts, err := newTextSource(a, p, path, count)
	if t, ok := ts.(*textSource); ok {
		t.root = root
	}
	return ts, err
}

func newTextSource(a *graph.Actor, p runtime.Params, path string, count int64) (any, error) {
	ti, err := textToken(a.Outputs[0])
	if err != nil {
		return nil, err
	}
	header, err := p.Bool("header", false)
	if err != nil {
		return nil, err
	}
	name := path
	if path == "" {
		name = "stdin"
	}
	return &textSource{fileSource: fileSource{path: path, name: name, actor: a.Name, count: count}, header: header, ti: ti, tname: a.Outputs[0].Type.Name,
		fields: make([][]byte, 0, ti.width+1)}, nil
}

// Start opens the file, at a resumed run's offset (stdin not spilled).
func (s *textSource) Start(ctx context.Context) error { return s.StartRun(ctx, nil) }

// StartRun opens the file, at a resumed run's offset; stdin is spilled
// into the run's spill directory, if it has one.
func (s *textSource) StartRun(ctx context.Context, run *runtime.Handle) error {
	r, err := s.open(ctx, run)
	if err != nil {
		return err
	}
	if err := s.seekResumed(); err != nil {
		return err
	}
	s.sc = bufio.NewScanner(r)
	s.sc.Buffer(make([]byte, 64<<10), 16<<20)
	s.sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		s.off += int64(adv)
		return adv, tok, err
	})
	return nil
}

// Fire parses one line per token. When the input ends inside a window, the
// rest of the window is zero tokens and the next firing returns end of stream.
func (s *textSource) Fire(f *runtime.Firing) error {
	if err := solo(f); err != nil {
		return err
	}
	if s.ended() {
		return runtime.ErrEndOfStream
	}
	out := f.Out(0)
	ts := s.ti.size * s.ti.width
	for t := 0; (t+1)*ts <= len(out); t++ {
		ok, err := s.next()
		if err != nil {
			return err
		}
		if !ok {
			if t == 0 {
				return runtime.ErrEndOfStream
			}
			s.pad(out, t*ts)
			break
		}
		if len(s.fields) != s.ti.width {
			return fmt.Errorf("%s:%d: expected %d column%s (token type %s), found %d", s.name, s.line, s.ti.width, plural(s.ti.width), s.tname, len(s.fields))
		}
		tok := out[t*ts : (t+1)*ts]
		for i, fld := range s.fields {
			if err := parseElem(tok[i*s.ti.size:], fld, s.ti.elem); err != nil {
				return fmt.Errorf("%s:%d: column %d: %w", s.name, s.line, i+1, err)
			}
		}
	}
	s.fired++
	return nil
}

// next reads the next data line into s.fields; false at end of input.
func (s *textSource) next() (bool, error) {
	for s.sc.Scan() {
		s.line++
		b := s.sc.Bytes()
		s.fields = splitFields(s.fields[:0], b)
		if len(s.fields) == 0 || s.fields[0][0] == '#' {
			continue
		}
		if s.header {
			s.header, s.headerRead = false, true
			continue
		}
		return true, nil
	}
	if err := s.sc.Err(); err != nil {
		return false, fmt.Errorf("read %s: %w", s.name, err)
	}
	return false, nil
}

// splitFields appends the non-empty fields of line, separated by commas,
// semicolons, tabs, spaces or carriage returns.
func splitFields(dst [][]byte, line []byte) [][]byte {
	start := -1
	for i, c := range line {
		sep := c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\r'
		switch {
		case sep && start >= 0:
			dst = append(dst, line[start:i])
			start = -1
		case !sep && start < 0:
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, line[start:])
	}
	return dst
}

// textSink writes tokens as CSV lines.
type textSink struct {
	fileSink
	header string
	ti     tokenInfo
	buf    []byte // one line, reused
}

func newCSVWrite(a *graph.Actor, p runtime.Params) (any, error) {
	if err := sinkParams(a, p, "path", "header"); err != nil {
		return nil, err
	}
	path, root, err := filePath(p)
	if err != nil {
		return nil, err
	}
	ts, err := newTextSink(a, p, path)
	if t, ok := ts.(*textSink); ok {
		t.root = root
	}
	return ts, err
}

func newTextSink(a *graph.Actor, p runtime.Params, path string) (any, error) {
	ti, err := textToken(a.Inputs[0])
	if err != nil {
		return nil, err
	}
	header, err := p.String("header", "")
	if err != nil {
		return nil, err
	}
	name := path
	if path == "" {
		name = "stdout"
	}
	return &textSink{fileSink: fileSink{path: path, name: name, flush: path == ""}, header: header, ti: ti,
		buf: make([]byte, 0, 32*ti.width)}, nil
}

// Start creates the file and writes the header line, if any.
func (s *textSink) Start(context.Context) error {
	if err := s.open(os.O_RDWR | os.O_CREATE | os.O_TRUNC); err != nil { // as os.Create
		return err
	}
	if s.header != "" && !s.resumed {
		if _, err := s.w.WriteString(s.header + "\n"); err != nil {
			return fmt.Errorf("write %s: %w", s.name, err)
		}
	}
	return nil
}

// Fire writes one line per token.
func (s *textSink) Fire(f *runtime.Firing) error {
	if err := solo(f); err != nil {
		return err
	}
	in := f.In(0)
	es, w := s.ti.size, s.ti.width
	ts := es * w
	for t := 0; (t+1)*ts <= len(in); t++ {
		tok := in[t*ts : (t+1)*ts]
		b := s.buf[:0]
		for i := 0; i < w; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendElem(b, tok[i*es:], s.ti.elem)
		}
		b = append(b, '\n')
		s.buf = b
		if err := s.write(b); err != nil {
			return err
		}
	}
	return s.endFiring()
}
