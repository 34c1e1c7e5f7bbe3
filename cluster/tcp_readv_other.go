//go:build !linux

package cluster

import "syscall"

// readv is not used here: without it, the receiver reads a frame's rest
// and the next header in two calls.
var readv func(rc syscall.RawConn, a, b []byte) (int, error)
