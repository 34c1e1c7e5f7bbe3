//go:build !linux

package cli

import "os/exec"

// dieWithParent does nothing where the system has no parent-death signal:
// the program c starts ends with this one on a signal sent to the
// terminal's process group (Ctrl-C), not when this one is killed alone.
func dieWithParent(*exec.Cmd) {}
