//go:build unix

package doccmd

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir holds an exclusive lock on dir/lock until the returned function
// is called: the test binaries of one run (and of runs side by side) build
// the shared sluice one at a time, so that the go command renames each
// binary into place rather than copying it under a process running it.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
