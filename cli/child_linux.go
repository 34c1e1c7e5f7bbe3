package cli

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the program c starts (the graph's Go-actor build of
// sluice) receive SIGTERM when this process ends, however it ends: a
// `sluice ui` or `sluice run` killed with SIGKILL (or by the OOM killer)
// would otherwise leave it serving its port or running its graph.
func dieWithParent(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
