// Package fsroot confines the files a graph, a mapping or a request names to
// one directory tree.
//
// The workbench confines a graph to its root (the served file's directory or
// --root DIR) and a worker to its --data-dir: a path that is absolute, climbs
// above the root with "..", or passes through a symbolic link that leads
// outside it is refused with an *EscapeError that names the rule and quotes
// nothing from any file. The confinement is enforced by os.Root, so a link
// swapped in between a check and an open cannot lead out either.
//
// A nil *Root confines nothing: `sluice run` on one's own machine reads and
// writes wherever the user can, and code that takes a *Root works the same
// way in both settings.
package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A Root is a directory tree that paths must stay inside. The zero of
// *Root (nil) is unconfined.
type Root struct {
	dir  string // absolute, cleaned
	base string // where names given without a base resolve from ("": dir)
	r    *os.Root
}

// Open returns a Root for the directory dir, which must exist.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("file root %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("file root %s: expected an existing directory: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("file root %s: expected a directory, found a file", dir)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("file root %s: %w", dir, err)
	}
	return &Root{dir: abs, r: r}, nil
}

// At returns the root r with names given without a base (base "")
// resolved from dir rather than from the root's own directory, still
// confined to the root: the workbench's runs open actors' paths from the
// working directory, as `sluice run` does. It shares r's directory handle
// (close r, not the copy). At of a nil root is nil.
func (r *Root) At(dir string) *Root {
	if r == nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return r
	}
	c := *r
	c.base = abs
	return &c
}

// Dir is the root's directory (absolute), or "" for an unconfined root.
func (r *Root) Dir() string {
	if r == nil {
		return ""
	}
	return r.dir
}

// Close releases the root's directory handle.
func (r *Root) Close() error {
	if r == nil {
		return nil
	}
	return r.r.Close()
}

// The rules an EscapeError names.
const (
	RuleAbsolute = "an absolute path must lie inside the file root; name the file relative to it"
	RuleDotDot   = `".." may not climb above the file root`
	RuleSymlink  = "a symbolic link may not lead outside the file root"
)

// An EscapeError is a path refused because it would leave the root. Its
// message names the path as written, the root and the rule; it never
// quotes the contents of any file.
type EscapeError struct {
	Path string // as the graph or request wrote it
	Root string // the root's directory
	Rule string // one of the Rule constants
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("path %q is outside the file root %s: %s", e.Path, e.Root, e.Rule)
}

// Rel resolves name, as written in a file whose directory is base, to a
// path relative to the root, or refuses it. base may be absolute or
// relative to the working directory; name may be absolute only inside the
// root and may not climb out of it. For a nil root Rel returns the host path
// (name joined to base unless name is absolute).
func (r *Root) Rel(base, name string) (string, error) {
	if name == "" {
		return "", errors.New("empty path: expected a file name")
	}
	if r == nil {
		if filepath.IsAbs(name) || base == "" {
			return name, nil
		}
		return filepath.Join(base, name), nil
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || filepath.VolumeName(name) != "" {
		rel, err := filepath.Rel(r.dir, filepath.Clean(name))
		if err != nil || !filepath.IsAbs(name) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", &EscapeError{Path: name, Root: r.dir, Rule: RuleAbsolute}
		}
		return rel, nil
	}
	absBase := r.dir
	if r.base != "" {
		absBase = r.base
	}
	if base != "" {
		b, err := filepath.Abs(base)
		if err != nil {
			return "", fmt.Errorf("path %q: %w", name, err)
		}
		absBase = b
	}
	full := filepath.Join(absBase, name)
	rel, err := filepath.Rel(r.dir, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &EscapeError{Path: name, Root: r.dir, Rule: RuleDotDot}
	}
	return rel, nil
}

// HostPath is the path on the host of name as written in a file in base,
// after the same checks as Rel; it is what messages show.
func (r *Root) HostPath(base, name string) (string, error) {
	rel, err := r.Rel(base, name)
	if err != nil || r == nil {
		return rel, err
	}
	return filepath.Join(r.dir, rel), nil
}

// wrap turns os.Root's escape errors into EscapeErrors.
func (r *Root) wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "path escapes from parent") {
		return &EscapeError{Path: name, Root: r.dir, Rule: RuleSymlink}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// Show the path as written, not the root-relative one.
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

// ReadFile reads name (as written in a file in base).
func (r *Root) ReadFile(base, name string) ([]byte, error) {
	rel, err := r.Rel(base, name)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return os.ReadFile(rel)
	}
	b, err := r.r.ReadFile(rel)
	return b, r.wrap(name, err)
}

// Open opens name (as written in a file in base) for reading.
func (r *Root) Open(base, name string) (*os.File, error) {
	rel, err := r.Rel(base, name)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return os.Open(rel)
	}
	f, err := r.r.Open(rel)
	return f, r.wrap(name, err)
}

// Create creates or truncates name (as written in a file in base) for
// writing.
func (r *Root) Create(base, name string) (*os.File, error) {
	rel, err := r.Rel(base, name)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return os.Create(rel)
	}
	f, err := r.r.Create(rel)
	return f, r.wrap(name, err)
}

// Stat describes name (as written in a file in base), following links that
// stay inside the root.
func (r *Root) Stat(base, name string) (fs.FileInfo, error) {
	rel, err := r.Rel(base, name)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return os.Stat(rel)
	}
	st, err := r.r.Stat(rel)
	return st, r.wrap(name, err)
}

// OpenFile opens name (as written in a file in base) with flag and perm,
// as os.OpenFile does (appending, or writing without truncating).
func (r *Root) OpenFile(base, name string, flag int, perm fs.FileMode) (*os.File, error) {
	rel, err := r.Rel(base, name)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return os.OpenFile(rel, flag, perm)
	}
	f, err := r.r.OpenFile(rel, flag, perm)
	return f, r.wrap(name, err)
}
