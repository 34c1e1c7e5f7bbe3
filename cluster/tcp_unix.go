//go:build unix

package cluster

import (
	"net"
	"syscall"
)

// rawConn returns c's raw connection for non-blocking reads, or nil.
func rawConn(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// readNonblock reads from a socket that is in non-blocking mode (as the
// net package keeps its sockets): syscall.EAGAIN when nothing is there.
func readNonblock(fd uintptr, p []byte) (int, error) { return syscall.Read(int(fd), p) }
