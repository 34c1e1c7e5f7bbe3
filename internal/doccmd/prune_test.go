package doccmd

import (
	"os"
	"path/filepath"
	"testing"
)

// The folder of a module directory that is gone is removed; those of
// existing directories, of unknown ones (no root file) and the one kept
// stay.
func TestPruneGone(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	mk := func(name, root string) string {
		d := filepath.Join(parent, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if root != "" {
			if err := os.WriteFile(filepath.Join(d, "root"), []byte(root), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	gone := mk("gone", filepath.Join(t.TempDir(), "deleted-clone"))
	live := mk("live", t.TempDir())
	unknown := mk("unknown", "")
	keep := mk("keep", filepath.Join(t.TempDir(), "deleted-too"))
	pruneGone(parent, keep)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the folder of a deleted module directory is still there (%v)", err)
	}
	for _, d := range []string{live, unknown, keep} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: removed (%v), expected it kept", filepath.Base(d), err)
		}
	}
}
