package fsroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	sub := filepath.Join(root, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "in.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../secret.txt", filepath.Join(sub, "out-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in.txt", filepath.Join(sub, "in-link")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	for _, name := range []string{"in.txt", "in-link", "./in.txt", "../sub/in.txt", filepath.Join(sub, "in.txt")} {
		b, err := r.ReadFile(sub, name)
		if err != nil || string(b) != "hello" {
			t.Errorf("ReadFile(sub, %q) = %q, %v; want hello", name, b, err)
		}
	}
	for name, rule := range map[string]string{
		"../../secret.txt": RuleDotDot,
		secret:             RuleAbsolute,
		"/etc/passwd":      RuleAbsolute,
		"out-link":         RuleSymlink,
	} {
		_, err := r.ReadFile(sub, name)
		var esc *EscapeError
		if !errors.As(err, &esc) || esc.Rule != rule {
			t.Errorf("ReadFile(sub, %q): got %v, want an EscapeError with rule %q", name, err, rule)
			continue
		}
		if strings.Contains(err.Error(), "TOP-SECRET") {
			t.Errorf("ReadFile(sub, %q): the error quotes the file: %v", name, err)
		}
	}
	// Writes are confined the same way.
	if _, err := r.Create(sub, "../../escaped.txt"); err == nil {
		t.Error("Create climbed out of the root")
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.txt")); err == nil {
		t.Error("a file was created outside the root")
	}
	f, err := r.Create(sub, "out.txt")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := r.Stat(root, "sub/out.txt"); err != nil {
		t.Error(err)
	}
}

func TestNilRootIsUnconfined(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var r *Root
	if b, err := r.ReadFile("/nowhere", p); err != nil || string(b) != "x" {
		t.Fatalf("nil root ReadFile(abs) = %q, %v", b, err)
	}
	if b, err := r.ReadFile(dir, "f"); err != nil || string(b) != "x" {
		t.Fatalf("nil root ReadFile(rel) = %q, %v", b, err)
	}
	if r.Dir() != "" {
		t.Fatal("nil root has a directory")
	}
}

func TestAt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "f"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(sub)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Names without a base start from dir (above the root) yet stay inside it.
	at := r.At(dir)
	if b, err := at.ReadFile("", "sub/f"); err != nil || string(b) != "y" {
		t.Fatalf("At(dir).ReadFile(sub/f) = %q, %v", b, err)
	}
	var esc *EscapeError
	if _, err := at.ReadFile("", "f"); err == nil {
		t.Fatal("a name outside the root was read")
	} else if _, err := at.Rel("", "../x"); !errors.As(err, &esc) {
		t.Fatalf("At(dir).Rel(../x) = %v, want an EscapeError", err)
	}
	if (*Root)(nil).At(dir) != nil {
		t.Fatal("At of a nil root is not nil")
	}
}
