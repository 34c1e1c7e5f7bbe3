//go:build !unix

package doccmd

import "os/exec"

// KillGroup leaves c as it is where process groups are not available:
// cancelling it kills the shell only.
func KillGroup(c *exec.Cmd) {}
