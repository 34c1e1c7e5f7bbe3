package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/fsroot"
)

// The file root: every path a graph names — a composite's graph file, a
// kernel source, a flow-model file and the kernel files it names, a Go
// package directory, the path of a built-in actor's "with:" (file.read,
// file.write, csv.*, image.*) — must
// lie inside the server's root (Server.Root: the served file's directory
// unless --root gives another). The paths are checked in the YAML before
// package spec reads any of them, and the paths the actors open are checked
// before a run from the page starts; a refusal names the path as written,
// its position and the rule, and quotes nothing from any file.

// Limits of the walk through composite graph and flow-model files.
const (
	maxRootFiles = 256 // composite files read per check
	maxRootDepth = 16  // composites nested in files
	maxRefusals  = 20  // refusals reported per answer
)

// pathKeys are the keys whose scalar values name a file or directory
// relative to the directory of the file they are written in, wherever they
// appear: spec reads composite files (graph), kernel sources (opencl,
// cuda), flow models (flowmodel, src) and Go package directories (go); a
// flow model names its kernel sources (opencl_file, cuda_file).
var pathKeys = map[string]bool{"graph": true, "opencl": true, "cuda": true, "flowmodel": true, "src": true, "go": true,
	"opencl_file": true, "cuda_file": true}

// followKeys name files that are themselves YAML naming more files:
// composite graphs and flow models, walked in turn.
var followKeys = map[string]bool{"graph": true, "flowmodel": true, "src": true}

// confiner checks the paths of a graph against a root. Actor paths
// ("with: {path: …}") are relative to the working directory, as the actors
// open them.
type confiner struct {
	root  *fsroot.Root
	cwd   string
	files int
	seen  map[string]bool // composite files walked
	errs  []string
}

// confiner returns a confiner for s's root (confineYAML refuses every
// graph when the root could not be opened).
func (s *Server) confiner() *confiner {
	return &confiner{root: s.root, cwd: s.cwd, seen: map[string]bool{}}
}

// loadForPage parses the YAML graph data, named name (relative paths in it
// resolve against name's directory), after checking every path it names
// against the server's root (the driver confines the files spec reads to
// it as well; this check adds the paths actors open when they run). The
// answers of the graph, check and edit load through it; save, gogen, the
// composites edits add and run start, whose handlers parse by themselves,
// are checked first by confined.
func (s *Server) loadForPage(name string, data []byte) (*graph.Graph, error) {
	if err := s.confineYAML(name, data); err != nil {
		return nil, err
	}
	return s.parse(name, data)
}

// refusedError lists the paths of a graph that leave the root, one line
// each ("file:line:col: path … is outside the file root …").
type refusedError struct{ Lines []string }

func (e *refusedError) Error() string { return strings.Join(e.Lines, "\n") }

// confineYAML checks every path the YAML graph data names (as file name)
// against the root: the files spec reads and the paths actors open.
func (s *Server) confineYAML(name string, data []byte) error {
	if s.rootErr != nil {
		return &refusedError{Lines: []string{s.rootErr.Error()}}
	}
	c := s.confiner()
	c.graph(name, data, 0)
	return c.err()
}

func (c *confiner) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &refusedError{Lines: c.errs}
}

func (c *confiner) refuse(file string, n *yaml.Node, err error) {
	if len(c.errs) >= maxRefusals {
		return
	}
	msg := err.Error()
	var ee *fsroot.EscapeError
	if errors.As(err, &ee) {
		msg = ee.Error() + "; to allow it, start `sluice ui` with --root DIR holding it"
	}
	if n != nil {
		msg = fmt.Sprintf("%s:%d:%d: %s", file, n.Line, n.Column, msg)
	}
	c.errs = append(c.errs, msg)
}

// graph walks the YAML of the graph file name (its text data) at nesting
// depth; YAML that does not parse is left to spec to report.
func (c *confiner) graph(name string, data []byte, depth int) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return
	}
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, k := range n.Content {
				walk(k)
			}
		case yaml.AliasNode:
			walk(n.Alias)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := deref(n.Content[i]), deref(n.Content[i+1])
				if k != nil && k.Kind == yaml.ScalarNode && v != nil {
					c.key(name, k.Value, v, depth)
				}
				walk(n.Content[i+1])
			}
		}
	}
	walk(&doc)
}

// deref follows a bounded chain of aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i <= 64; i++ {
		n = n.Alias
	}
	return n
}

// key checks the value v of the key k in the graph file name.
func (c *confiner) key(name, k string, v *yaml.Node, depth int) {
	base := filepath.Dir(name)
	switch {
	case k == "path":
		if s, ok := str(v); ok {
			if err := c.actorPath(s); err != nil {
				c.refuse(name, v, err)
			}
		}
	case k == "go":
		vals := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			vals = v.Content
		}
		for _, it := range vals {
			if s, ok := str(deref(it)); ok && (s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || filepath.IsAbs(s)) {
				if err := c.file(base, s); err != nil {
					c.refuse(name, it, err)
				}
			}
		}
	case pathKeys[k]:
		s, ok := str(v)
		if !ok || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
			return
		}
		if err := c.file(base, s); err != nil {
			c.refuse(name, v, err)
			return
		}
		if followKeys[k] {
			c.follow(name, v, base, s, depth)
		}
	}
}

// str is the text of a scalar that is not null.
func str(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
		return "", false
	}
	return n.Value, true
}

// file checks a file or directory named in a graph in base: inside the
// root, through no link that leads out. A file that does not exist passes
// (spec says it is missing).
func (c *confiner) file(base, name string) error {
	if _, err := c.root.Rel(base, name); err != nil {
		return err
	}
	if _, err := c.root.Stat(base, name); err != nil {
		var ee *fsroot.EscapeError
		if errors.As(err, &ee) {
			return err
		}
	}
	return nil
}

// follow walks the composite graph or flow-model file s (named at v in
// name) too.
func (c *confiner) follow(name string, v *yaml.Node, base, s string, depth int) {
	host, err := c.root.HostPath(base, s)
	if err != nil || c.seen[host] {
		return
	}
	c.seen[host] = true
	if depth+1 > maxRootDepth || c.files >= maxRootFiles {
		c.refuse(name, v, fmt.Errorf("%q: expected at most %d composite graph and flow-model files, nested at most %d deep, found more", s, maxRootFiles, maxRootDepth))
		return
	}
	st, err := c.root.Stat(base, s)
	if err != nil || !st.Mode().IsRegular() {
		return // spec says what is wrong with it
	}
	c.files++
	data, err := c.root.ReadFile(base, s)
	if err != nil {
		return
	}
	c.graph(host, data, depth+1)
}

// actorPath checks a path a built-in actor opens (relative to the working
// directory): inside the root, through no link that leads out, or the null
// device. A file that does not exist yet passes if its directory is inside.
func (c *confiner) actorPath(p string) error {
	if p == os.DevNull {
		return nil
	}
	check := []string{p}
	if strings.Contains(p, "%") { // image.write: one file per firing
		check = append(check, fmt.Sprintf(p, 0))
	}
	for _, q := range check {
		base := c.cwd
		if filepath.IsAbs(q) && c.root != nil {
			// An absolute path inside the root is as good as a relative one.
			if rel, err := filepath.Rel(c.root.Dir(), filepath.Clean(q)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
				base, q = c.root.Dir(), rel
			}
		}
		if err := c.file(base, q); err != nil {
			var ee *fsroot.EscapeError
			if errors.As(err, &ee) && ee.Rule == fsroot.RuleDotDot {
				ee.Rule += " (an actor's path is relative to the working directory " + c.cwd + ")"
			}
			return err
		}
	}
	return nil
}

// confineRun checks, before a run from the page, the paths of the served
// file's graph and of every actor's parameters against the root.
func (s *Server) confineRun() error {
	data, err := os.ReadFile(s.File)
	if err != nil {
		return nil // postRunStart says what is wrong with it
	}
	return s.confineYAML(s.File, data)
}

// confined wraps the handlers of requests whose body names paths: POST
// /api/check, /api/save and /api/gogen (a YAML graph) and /api/edit (JSON
// with the YAML and the edits), refusing with 422 any that names a path
// outside the root; POST /api/run/start checks the served file.
func (s *Server) confined(kind string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var err error
		switch kind {
		case "run":
			err = s.confineRun()
		default:
			data, rerr := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
			if rerr != nil {
				writeErr(w, http.StatusBadRequest, "body: "+rerr.Error())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(data))
			if kind == "edit" {
				err = s.confineEdit(data)
			} else {
				err = s.confineYAML(s.editorName(), data)
			}
		}
		var re *refusedError
		if errors.As(err, &re) {
			writeJSON(w, http.StatusUnprocessableEntity, errorJSON{Errors: re.Lines})
			return
		}
		next(w, r)
	}
}

// confineEdit checks the paths of POST /api/edit's YAML and of its
// operations (a composite's graph file, a kernel, an actor's path).
func (s *Server) confineEdit(body []byte) error {
	var e EditJSON
	if json.Unmarshal(body, &e) != nil {
		return nil // postEdit says what is wrong with it
	}
	name := s.editorName()
	if err := s.confineYAML(name, []byte(e.YAML)); err != nil {
		return err
	}
	c := s.confiner()
	base := filepath.Dir(name)
	for i, op := range e.Ops {
		at := func(field string, err error) {
			c.errs = append(c.errs, fmt.Sprintf("ops[%d] %s: %s: %v", i, op.Op, field, err))
		}
		if op.Graph != "" {
			if err := c.file(base, op.Graph); err != nil {
				at("graph", err)
			} else {
				c.follow(name, nil, base, op.Graph, 0)
			}
		}
		if op.Kernel != "" {
			if err := c.file(base, op.Kernel); err != nil {
				at("kernel", err)
			}
		}
		if p, ok := op.With["path"].(string); ok && p != "" {
			if err := c.actorPath(p); err != nil {
				at("with.path", err)
			}
		}
	}
	return c.err()
}
