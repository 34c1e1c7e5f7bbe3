package cluster

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// readv reads from rc into a, then b, in one call (blocking until some
// bytes arrive, as a Read does): the receiver takes the rest of a frame
// and the next frame's header together.
var readv = readvLinux

func readvLinux(rc syscall.RawConn, a, b []byte) (int, error) {
	iov := [][]byte{a, b}
	var n int
	var err error
	if rerr := rc.Read(func(fd uintptr) bool {
		for {
			n, err = unix.Readv(int(fd), iov)
			if err != unix.EINTR {
				break
			}
		}
		return err != unix.EAGAIN
	}); rerr != nil {
		return 0, rerr
	}
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
