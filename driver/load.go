package driver

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/filekind"
	"github.com/sluicehq/sluice/internal/fsroot"
	"github.com/sluicehq/sluice/spec"
)

// maxFile is the largest file Load reads.
const maxFile = 16 << 20

// Options tune Load and Parse.
type Options struct {
	// Root confines every path a graph names (composite graph files,
	// kernel sources, flow-model files, Go package directories); nil
	// confines nothing. The workbench passes the served file's directory.
	Root *fsroot.Root
	// FlowModels resolves actors' flowmodel: references; nil:
	// FlowModels(Root, nil), which reads files (through Root) and fetches
	// http(s) URLs.
	FlowModels spec.FlowModelResolver
	// TimeUnit is the duration of one time unit of an SDF3 graph's
	// execution times (0: spec.DefaultSDF3TimeUnit).
	TimeUnit time.Duration
}

func (o Options) spec() spec.Options {
	fm := o.FlowModels
	if fm == nil {
		fm = FlowModels(o.Root, nil)
	}
	return spec.Options{Root: o.Root, FlowModels: fm}
}

// FlowModels returns the resolver of flowmodel: references that reads a
// model file through root (nil: unconfined) or fetches an http(s) URL with
// client (nil: http.DefaultClient), and makes the actor from it.
func FlowModels(root *fsroot.Root, client *http.Client) spec.FlowModelResolver {
	return func(ctx context.Context, a *graph.Actor, ref spec.FlowModelRef) error {
		src := ref.Src
		if !ref.IsURL() {
			p, err := root.HostPath(ref.Dir, ref.Src)
			if err != nil {
				return err
			}
			src = p
		}
		m, err := flowmodel.Load(ctx, src, flowmodel.LoadOptions{SHA256: ref.SHA256, MaxBytes: ref.MaxBytes,
			Timeout: ref.Timeout, Client: client, Root: root})
		if err != nil {
			return err
		}
		return m.Define(a, flowmodel.ActorOptions{Iterations: a.Iterations, Origin: a.Origin, Params: ref.Params})
	}
}

// Loaded is a graph file read: its graph and, for a pipeline-model, its
// roles.
type Loaded struct {
	// Path is the file (or the name given to Parse).
	Path string
	// Graph is the graph, flow-models resolved.
	Graph *graph.Graph
	// Pipeline is the pipeline-model when the file has a pipeline:
	// section, else nil.
	Pipeline *graph.Pipeline
}

// Analysed is the graph the analyses check: a pipeline-model's (its
// initonce channels hold the application's initial tokens), else Graph.
func (l *Loaded) Analysed() *graph.Graph {
	if l.Pipeline != nil {
		return l.Pipeline.Graph
	}
	return l.Graph
}

// Load reads a graph file: YAML (.yaml, .yml), SDF3's XML (.xml with an
// <sdf3> root, its times in units of o.TimeUnit) or ETH XML (.xml). A file
// that cannot be read, is a directory, is binary or is of another kind
// (a mapping, a machine model, ...) is refused with one sentence at the
// file; problems in the graph come as a spec.ErrorList, each at its
// file:line:col.
func Load(ctx context.Context, path string, o Options) (*Loaded, error) {
	// The kind of a YAML file is checked by its parse (parseGraphYAML).
	data, err := readInput(path, filekind.Graph, false)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(path), ".xml") {
		var g *graph.Graph
		if spec.IsSDF3(data) {
			g, err = spec.ImportSDF3Graph(path, data, o.TimeUnit)
		} else {
			g, err = spec.ImportETHGraphWith(path, data, o.spec())
		}
		if err != nil {
			return nil, err
		}
		return &Loaded{Path: path, Graph: g}, nil
	}
	// readInput has refused a binary file.
	return parseGraphYAML(ctx, path, data, o)
}

// Parse reads data as the YAML graph file name (the workbench's editor
// sends its text): relative paths are resolved against name's directory.
func Parse(ctx context.Context, name string, data []byte, o Options) (*Loaded, error) {
	if err := binary(name, data); err != nil {
		return nil, err
	}
	return parseGraphYAML(ctx, name, data, o)
}

// parseGraphYAML is Parse once the data is known to be text: one parse of
// the document tells its kind (another kind's file is refused with one
// sentence at the file) and reads the graph and its pipeline.
func parseGraphYAML(ctx context.Context, name string, data []byte, o Options) (*Loaded, error) {
	g, pl, err := spec.ParseGraphFile(ctx, name, data, o.spec())
	if wk, ok := errors.AsType[*filekind.WrongKind](err); ok {
		return nil, wrongKind(name, filekind.Graph, wk.Got)
	}
	if err != nil {
		return nil, err
	}
	return &Loaded{Path: name, Graph: g, Pipeline: pl}, nil
}

// ReadInput reads a file a command was given, expecting kind want: a
// missing file, a directory, a file too large, a binary file or a file of
// another kind is refused with one sentence at the file (as a
// spec.ErrorList of one, so that every front end prints it alike).
func ReadInput(path string, want filekind.Kind) ([]byte, error) {
	return readInput(path, want, true)
}

// readInput is ReadInput; without checkKind a YAML file's kind is left to
// its parse (Load's, which parses the document once for both).
func readInput(path string, want filekind.Kind, checkKind bool) ([]byte, error) {
	fail := func(format string, args ...any) error {
		return spec.ErrorList{{File: path, Msg: fmt.Sprintf(format, args...)}}
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail("no such file: expected %s", want.What())
	case errors.Is(err, fs.ErrPermission):
		return nil, fail("permission denied: expected a file this user may read")
	case err != nil:
		return nil, fail("cannot read the file (%v): expected %s", unwrapPath(err), want.What())
	case fi.IsDir():
		return nil, fail("is a directory: expected %s", want.What())
	case !fi.Mode().IsRegular():
		return nil, fail("is not a regular file: expected %s", want.What())
	case fi.Size() > maxFile:
		return nil, fail("file too large: %d bytes, expected at most %d", fi.Size(), maxFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail("cannot read the file (%v): expected %s", unwrapPath(err), want.What())
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".xml":
		if got := xmlKind(data); got != want {
			return nil, wrongKind(path, want, got)
		}
		return data, nil
	case ".yaml", ".yml":
	default:
		if want == filekind.Graph {
			return nil, fail("unknown graph file format %q: expected a .yaml, .yml or .xml file", ext)
		}
	}
	if err := binary(path, data); err != nil {
		return nil, err
	}
	if !checkKind {
		return data, nil
	}
	if err := filekind.Expect(path, data, want); err != nil {
		var wk *filekind.WrongKind
		if errors.As(err, &wk) {
			return nil, wrongKind(path, want, wk.Got)
		}
	}
	return data, nil
}

// wrongKind is filekind's sentence, as one error at the file.
func wrongKind(path string, want, got filekind.Kind) error {
	msg := (&filekind.WrongKind{File: path, Want: want, Got: got}).Error()
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, path+": "), path+" is ")
	return spec.ErrorList{{File: path, Msg: msg}}
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// binary refuses data that is not text: a NUL byte, or bytes that are not
// UTF-8, at the line and column where they start.
func binary(name string, data []byte) error {
	at := bytes.IndexByte(data, 0)
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				if at < 0 || i < at {
					at = i
				}
				break
			}
			i += n
		}
	}
	if at < 0 {
		return nil
	}
	line := 1 + bytes.Count(data[:at], []byte("\n"))
	col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:at], '\n')+1:at])
	return spec.ErrorList{{File: name, Line: line, Col: col, Msg: "binary data (not UTF-8 text): expected a YAML text file"}}
}

// xmlKind tells the ETH XML files apart by their root element: <graph> is
// a graph, <binding> or <mapping> a mapping.
func xmlKind(data []byte) filekind.Kind {
	d := xml.NewDecoder(io.LimitReader(bytes.NewReader(data), 1<<20))
	for {
		t, err := d.Token()
		if err != nil {
			return filekind.Graph // the importer reports it
		}
		if se, ok := t.(xml.StartElement); ok {
			switch se.Name.Local {
			case "binding", "mapping":
				return filekind.Mapping
			}
			return filekind.Graph
		}
	}
}

// Kind returns the kind of a file sluice reads: Graph for ETH XML (a
// mapping for <binding> or <mapping>), the detected kind for YAML, Unknown
// when it cannot tell (an unreadable file is left to the reader).
func Kind(path string) (filekind.Kind, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".xml", ".yaml", ".yml":
	default:
		return filekind.Unknown, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return filekind.Unknown, nil
	}
	if strings.EqualFold(filepath.Ext(path), ".xml") {
		return xmlKind(data), nil
	}
	if binary(path, data) != nil {
		return filekind.Unknown, nil
	}
	k, err := filekind.Detect(path, data)
	if _, ok := errors.AsType[*filekind.SyntaxError](err); ok {
		return filekind.Unknown, nil // the reader reports it, with its position
	}
	return k, err
}

// LoadGraph is Load for callers that need only the graph (a benchmark
// program, a test).
func LoadGraph(ctx context.Context, path string, o Options) (*graph.Graph, error) {
	l, err := Load(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return l.Graph, nil
}
