package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoActorsErrors checks what sluice run says when a graph's Go actors
// are missing: without a go: key, to add one; with one but no Go
// toolchain on PATH, to install it.
func TestGoActorsErrors(t *testing.T) {
	dir := t.TempDir()
	graph := func(goKey string) string {
		p := filepath.Join(dir, "g"+goKey+".yaml")
		src := "kind: graph\nname: g\n" + goKey + "actors:\n  a: {out: {o: {type: f32, rate: 1}}, kernel: {go: nosuch.source}}\n  b: {in: {i: {type: f32, rate: 1}}, cost: 1us}\nchannels:\n  - {from: a.o, to: b.i}\n"
		if goKey != "" {
			if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(file string) (int, string) {
		root := newRoot()
		var out bytes.Buffer
		root.SetArgs([]string{"run", file, "-n", "1", "--progress", "off"})
		root.SetOut(&out)
		root.SetErr(&out)
		err := root.Execute()
		if err != nil {
			out.WriteString(err.Error())
		}
		return codeOf(err), out.String()
	}
	code, msg := run(graph(""))
	if code != 1 || !strings.Contains(msg, "actor a runs the Go function nosuch.source") || !strings.Contains(msg, "`go: [.]`") {
		t.Errorf("no go: key: exit %d, %q; want 1 and the go: key to add", code, msg)
	}
	t.Setenv("PATH", t.TempDir()) // no go command
	code, msg = run(graph("go: [.]\n"))
	if code != 1 || !strings.Contains(msg, "go is not on PATH") || !strings.Contains(msg, "install Go") {
		t.Errorf("no Go toolchain: exit %d, %q; want 1 and how to get one", code, msg)
	}
}

// A run starts the Go-actor program through a link of its own: the same
// file as the program, unchanged when the program is replaced; the links
// of processes that have ended are removed, a live process's kept.
func TestOwnLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "sluice-run")
	if err := os.WriteFile(bin, []byte("one"), 0o755); err != nil {
		t.Fatal(err)
	}
	const gone = 1 << 30 // above Linux's pid_max: no such process
	stale := fmt.Sprintf("%s.%d", bin, gone)
	live := fmt.Sprintf("%s.%d", bin, os.Getppid())
	for _, p := range []string{stale, live} {
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	own, done := ownLink(bin)
	if own != fmt.Sprintf("%s.%d", bin, os.Getpid()) {
		t.Fatalf("own link %s: expected %s.%d", own, bin, os.Getpid())
	}
	// The go command renames a new program into place.
	next := filepath.Join(dir, "next")
	if err := os.WriteFile(next, []byte("two"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, bin); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(own); err != nil || string(b) != "one" {
		t.Fatalf("the run's link after the program was replaced holds %q (%v): expected the program it was made from", b, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the link of an ended process is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the link of a live process was removed: %v", err)
	}
	done()
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("the run's link is still there after it ended (%v)", err)
	}
}
