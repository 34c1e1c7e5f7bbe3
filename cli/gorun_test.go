package cli

import (
	"bytes"
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
