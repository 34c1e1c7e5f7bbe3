//go:build !unix

package cluster

import (
	"errors"
	"net"
	"syscall"
)

// rawConn returns nil: without non-blocking reads the sender takes
// credits only when it has none left.
func rawConn(net.Conn) syscall.RawConn { return nil }

func readNonblock(uintptr, []byte) (int, error) {
	return 0, errors.New("non-blocking reads are not supported here")
}
