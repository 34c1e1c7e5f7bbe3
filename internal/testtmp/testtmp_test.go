package testtmp

import (
	"os"
	"path/filepath"
	"testing"
)

// Run points TMPDIR at a new directory for run, removes it with what run
// left in it, and puts TMPDIR back (not parallel: it sets the process's
// environment).
func TestRunRemovesWhatIsLeft(t *testing.T) {
	before := os.Getenv("TMPDIR")
	var dir string
	code := Run(func() int {
		dir = os.TempDir()
		if dir == before || filepath.Dir(dir) != filepath.Clean(tempBase(before)) {
			t.Errorf("TMPDIR inside Run = %q: expected a new directory in %q", dir, tempBase(before))
		}
		left, err := os.MkdirTemp("", "left-by-a-killed-process-")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(left, "job"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return 3
	})
	if code != 3 {
		t.Errorf("Run returned %d: expected run's 3", code)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after Run: %v: expected it removed", dir, err)
	}
	if got := os.Getenv("TMPDIR"); got != before {
		t.Errorf("TMPDIR after Run = %q: expected %q back", got, before)
	}
}

// tempBase is where os.MkdirTemp("", …) puts a directory when TMPDIR is tmpdir.
func tempBase(tmpdir string) string {
	if tmpdir == "" {
		return "/tmp"
	}
	return tmpdir
}
