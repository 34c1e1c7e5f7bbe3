//go:build unix

package doccmd

import (
	"os/exec"
	"syscall"
)

// KillGroup starts c in a process group of its own and makes its
// cancellation kill the whole group: a shell's children (sluice, a graph's
// program) end with it instead of running on after the test gave up.
func KillGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
}
